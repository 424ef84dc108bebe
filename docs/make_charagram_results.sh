#!/usr/bin/env bash
# Regenerates docs/charagram.md from the runs below (each trained by
#   python -m trainers.charagram --flagfile=configs/charagram_<variant>.flags [--sampling=mix] \
#       --data_dir=../shared/data --model_dir=runs/charagram/<run>
# with the extra flags listed in the page's "Runs" section; PARAGRAM-PHRASE runs add
#   --word_vectors=runs/siamese_cbow_paper/export/1 --word_vocab=runs/siamese_cbow_paper/vocab.txt).
# Runs that are absent are left out of the table.
set -euo pipefail
cd "$(dirname "$0")/.."
R=runs/charagram
runs=(
  "CHARAGRAM-PHRASE MAX=$R/charagram_phrase_max"
  "CHARAGRAM-PHRASE MIX=$R/charagram_phrase_mix"
  "PARAGRAM-PHRASE MAX=$R/paragram_phrase_max"
  "PARAGRAM-PHRASE MIX=$R/paragram_phrase_mix"
  "charCNN MAX=$R/char_cnn_max"
  "charCNN MIX=$R/char_cnn_mix"
  "charLSTM MAX=$R/char_lstm_max"
  "charLSTM MIX=$R/char_lstm_mix"
  "PARAGRAM-PHRASE random init MAX=$R/paragram_phrase_random_max"
  "PARAGRAM-PHRASE L2 1e-6 MAX=$R/paragram_phrase_max_l2"
  "CHARAGRAM word (lexicon) MAX=$R/charagram_word_max"
  "Siamese CBOW (PARAGRAM-PHRASE init)=runs/siamese_cbow_paper"
)
args=()
for run in "${runs[@]}"; do
  if [ -d "${run#*=}/export" ]; then args+=("--run=$run"); fi
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
on word pairs of the PPDB-XL lexical lexicon (`ppdb/retrofitting-lexicon-ppdb-xl.txt.gz`). This
is a much smaller and differently distributed training set than the paper's, so absolute numbers
are not comparable with the paper; the comparison that matters is between the variants, which
share data, loss (margin 0.4, in-batch MAX or MIX negatives), optimiser and budget (10 epochs,
batches of 100, Adam 1e-3).

**PARAGRAM-PHRASE initialisation.** The paper starts from PARAGRAM-SL999 vectors (not available
offline). Here the word vectors start from this project's Siamese CBOW run
(`runs/siamese_cbow_paper/export/1`, vocabulary `runs/siamese_cbow_paper/vocab.txt`, flags
`--word_vectors` / `--word_vocab`); one extra run starts from random vectors over the training
vocabulary. PARAGRAM-PHRASE trains without L2 (see configs/charagram_paragram_phrase.flags); the
run with the reference's L2 1e-6 is listed to show why. The column "Siamese CBOW (PARAGRAM-PHRASE
init)" is that initialisation before any paraphrase training.

**Collapse.** The margin loss has a degenerate point: every text mapped to the same direction gives
equal positive and negative cosines and a loss of exactly 2 x 0.4 = 0.8 per pair. A run whose logged
training loss stays at 0.8 (`runs/charagram/<run>.log`, one line per 125 steps) is stuck there; its
correlations are then near chance.

**Evaluation.** Cosine similarity of the exported encoders (raw strings in), Pearson's r x 100,
on the SemEval STS 2012-2015 test sets (2013 SMT is not redistributable and missing), SICK 2014
test and the SemEval-2015 PIT Twitter test set (graded expert score 0-5, all 972 pairs).
TEXT
cmd=(python -m reports.charagram_results "${args[@]}"
     --data_dir="${SENTZOO_DATA_DIR:-../shared/data}"
     --preamble="$preamble" --output_markdown=docs/charagram.md)
.venv/bin/"${cmd[@]}" --command_note="bash docs/make_charagram_results.sh"
