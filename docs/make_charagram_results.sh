#!/usr/bin/env bash
# Regenerates docs/charagram.md from the runs trained by docs/run_charagram.sh
# (runs/charagram/<run>/seed<k>/, one folder per seed; SEEDS=0,1,2 by
# default, the seeds present are used and counted in each column). Runs that
# are absent are left out of the table; each seed's evaluation is cached in
# its folder (charagram_eval.json), so a rebuild after more seeds only
# evaluates the new ones. A seed whose run folder is not on this machine is
# read from its committed record, docs/records/charagram/<run>/seed<k>/
# (written when the run finished), so the page can be built over several
# sittings on different machines.
set -euo pipefail
cd "$(dirname "$0")/.."
source docs/zoo_word_vectors.sh
R=runs/charagram
RECORDS=docs/records/charagram
SEEDS="${SEEDS:-0,1,2}"
runs=(
  "CHARAGRAM-PHRASE MAX=$R/charagram_phrase_max"
  "CHARAGRAM-PHRASE MIX=$R/charagram_phrase_mix"
  "CHARAGRAM-PHRASE + task paraphrases MAX=$R/charagram_phrase_tasks_max"
  "CHARAGRAM-PHRASE + PPDB-XL word pairs MAX=$R/charagram_phrase_lexicon_max"
  "PARAGRAM-PHRASE MAX=$R/paragram_phrase_max"
  "PARAGRAM-PHRASE MIX=$R/paragram_phrase_mix"
  "charCNN MAX=$R/char_cnn_max"
  "charCNN MIX=$R/char_cnn_mix"
  "charLSTM MAX=$R/char_lstm_max"
  "charLSTM MIX=$R/char_lstm_mix"
  "PARAGRAM-PHRASE random init MAX=$R/paragram_phrase_random_max"
  "PARAGRAM-PHRASE L2 1e-6 MAX=$R/paragram_phrase_max_l2"
  "CHARAGRAM word (lexicon) MAX=$R/charagram_word_max"
  "PARAGRAM-PHRASE initial word vectors=$WORD_VECTORS"
)
args=()
for run in "${runs[@]}"; do
  dir=${run#*=}
  if [ -d "$dir/export" ] || compgen -G "$dir/seed*/export" > /dev/null \
     || compgen -G "$RECORDS/$(basename "$dir")/seed*/pearson.json" > /dev/null \
     || [ -f "$RECORDS/$(basename "$dir")/pearson.json" ]; then
    args+=("--run=$run")
  fi
done
preamble=$(mktemp)
trap 'rm -f "$preamble"' EXIT
cat > "$preamble" <<'TEXT'
# CHARAGRAM family: results (Wieting, Bansal, Gimpel, Livescu, EMNLP 2016, supplement Table 1)

**Training data.** Wieting's PPDB-XL phrasal training file is not available offline. Every phrase
model here (CHARAGRAM-PHRASE, PARAGRAM-PHRASE, charCNN, charLSTM) trains on the same pairs: the
PPDB 2.0 human-rated pairs of `ppdb/ppdb-2.0-human-labels.ppdb-sample.tsv` and
`ppdb/ppdb-2.0-human-labels.wiki-sample.tsv` with mean rating >= 3.0, deduplicated (either order)
and without identical pairs; the count is in the "Runs" list below. The CHARAGRAM word model trains
on all word pairs of the PPDB-XL lexical lexicon (`ppdb/retrofitting-lexicon-ppdb-xl.txt.gz`:
its ~374k lines list each pair both ways, 187,276 distinct pairs). The row "CHARAGRAM-PHRASE +
task paraphrases" adds the paraphrase pairs of the TRAINING splits of MSRP (label 1), SICK
(relatedness >= 4), STS 2012 train (score >= 4) and Twitter PIT dev (>= 3 of 5 votes),
without any pair that also occurs in a test split (`inputs/task_paraphrases.py`). The row
"CHARAGRAM-PHRASE + PPDB-XL word pairs" trains the phrase model (its flagfile, 2 epochs instead of
10: 2 x 1,988 steps) on the human-rated pairs and the lexicon's 187,276 word pairs together
(`--lexicon_files`), so that it uses every PPDB pair the data directory has. This
is a much smaller and differently distributed training set than the paper's, so absolute numbers
are not comparable with the paper; the comparison that matters is between the variants, which
share data, loss (margin 0.4, in-batch MAX or MIX negatives), optimiser and budget (10 epochs,
batches of 100, Adam 1e-3).

**PARAGRAM-PHRASE initialisation.** The paper starts from PARAGRAM-SL999 vectors (not available
offline). Here the word vectors start from the zoo's own: of Siamese CBOW (best flags) and
Sent2Vec uni trained on the book corpus, the one with the higher STS-B dev Pearson
(`bash docs/train_zoo_word_vectors.sh`, which writes runs/zoo_word_vectors.json; the trainer flag
is `--word_vectors=<its model dir>`); one extra run starts from random vectors over the training
vocabulary. PARAGRAM-PHRASE trains without L2 (see configs/charagram_paragram_phrase.flags); the
run with the reference's L2 1e-6 is listed to show why. The column "PARAGRAM-PHRASE initial word
vectors" is that initialisation before any paraphrase training.

**Collapse.** The margin loss has a degenerate point: every text mapped to the same direction gives
equal positive and negative cosines and a loss of exactly 2 x 0.4 = 0.8 per pair. charCNN and
charLSTM with MAX negatives fall into it within the first ~50 steps; this is the method, not a
defect of the code. The probe `python -m lab.benchmarks.charagram_collapse` builds the trainer's own
plan from the same flags, trains 300 steps and prints, every 50 steps, cosines on a fixed held-out
batch of 100 pairs. The four runs quoted here (seed 0; `bash docs/run_charagram_collapse.sh` runs
them and writes their tables to `docs/records/charagram_collapse/`):

    python -m lab.benchmarks.charagram_collapse --flagfile=configs/charagram_char_cnn.flags --data_dir=../shared/data --steps=300
    python -m lab.benchmarks.charagram_collapse --flagfile=configs/charagram_char_cnn.flags --data_dir=../shared/data --steps=300 --learning_rate=1e-4
    python -m lab.benchmarks.charagram_collapse --flagfile=configs/charagram_char_cnn.flags --data_dir=../shared/data --steps=300 --sampling=mix
    python -m lab.benchmarks.charagram_collapse --flagfile=configs/charagram_char_lstm.flags --data_dir=../shared/data --steps=300

At initialisation the outputs already share one large common direction (relu filters max-pooled
over time are all positive; the LSTM's last states alike): the mean cosine between two different
texts of the batch is 0.9088 (charCNN) and 0.6581 (charLSTM), and on average the hardest in-batch
negative is closer than the paraphrase (cosines 0.9545 vs 0.9307, 0.9299 vs 0.7994; for 76% and
78% of the phrases). With MAX every such hinge pushes neg - pos down, and the cheapest way is to
make every cosine 1: the shared direction grows (mean output norm 1.05 -> 10.42 for charCNN, 0.15
-> 5.72 for charLSTM after 300 steps), the mean cosine between different texts reaches 0.9996
(charCNN; 0.9991 already at step 50) and 0.9999 (charLSTM), the training loss sits at 0.8000 and
the gradient vanishes. It is not the learning rate: at 1e-4 instead of 1e-3 charCNN goes the same
way, more slowly (mean cosine 0.9861 after 50 steps, 0.9958 after 300, loss 0.8005). Nor is it a
tie or a saturated unit at the start: at step 0 no phrase's hardest negative and positive cosines
are within 1e-6 of each other (ties 0.00) and the share of output coordinates above 0.99 in
absolute value is 0.000 (ties come only after the collapse: 0.33 of charLSTM's phrases at step
300). MIX from the very same initialisation escapes: half its negatives are random, and a random
other text (mean cosine 0.9088) is less similar than the paraphrase (0.9307), so they push the
shared direction down: the mean cosine between different texts falls to 0.3117 after 50 steps and
0.1200 after 300, the training loss to 0.4467. A run whose logged training loss stays at 0.8
(`runs/charagram/<run>/seed<k>/train.log`) is stuck there; its correlations are then near chance.

**Seeds and tests.** Every trained column is the mean ± standard deviation over the training
seeds present (n in its header); the claims below the table are decided by paired tests, never
by the means alone.

**Evaluation.** Cosine similarity of the exported encoders (raw strings in), Pearson's r x 100,
on the SemEval STS 2012-2015 test sets (2013 SMT is not redistributable and missing), SICK 2014
test and the SemEval-2015 PIT Twitter test set (graded expert score 0-5, all 972 pairs).
TEXT
cmd=(python -m lab.reports.charagram_results "${args[@]}"
     --data_dir="${SENTZOO_DATA_DIR:-../shared/data}" --seeds="$SEEDS"
     --records_dir="$RECORDS"
     --preamble="$preamble" --output_markdown=docs/charagram.md)
.venv/bin/"${cmd[@]}" --command_note="bash docs/make_charagram_results.sh"
.venv/bin/python -m lab.reports.formatting docs/charagram.md  # no machine path, no overlong line
