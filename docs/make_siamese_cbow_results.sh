#!/usr/bin/env bash
# Regenerates docs/siamese_cbow.md (and docs/siamese_cbow_word_norms.png) from
# the runs that `bash docs/run_siamese_cbow_ablation.sh` trains: the ablation
# table (from the committed records, docs/records/siamese_cbow_ablation/), the
# run selected on STS-B dev, and, from the exports in
# runs/siamese_cbow_ablation/ of the untrained, paper and selected runs, the
# word-norm analysis and the per-set table beside word2vec.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
data_dir="${SENTZOO_DATA_DIR:-../shared/data}"
runs_dir=runs/siamese_cbow_ablation
records_dir=docs/records/siamese_cbow_ablation
reference=word2vec=../shared/baselines/word2vec_books_sts.md
out=docs/siamese_cbow.md
names=$(bash docs/run_siamese_cbow_ablation.sh --list | paste -sd, -)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ablation=(python -m lab.reports.siamese_cbow_ablation --runs_dir=$records_dir
          --runs="$names" --reference=$reference
          --output_json=$tmp/ablation.json)
.venv/bin/"${ablation[@]}" > $tmp/ablation.md
best=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['selected'])" \
       $tmp/ablation.json)
absent=()
for name in untrained paper "$best"; do
  if [ ! -f "$runs_dir/$name/export/1/saved_model.pb" ]; then
    absent+=("\`$runs_dir/$name\`")
  fi
done
if [[ ${#absent[@]} != 0 ]]; then
  # The word norms and the per-set table need those exports: the page keeps
  # its numbers and loses every older mark.
  echo "missing ${absent[*]}: taking the marks out of $out" >&2
  $py - "$out" "untrained paper $best" "${absent[@]}" <<'PY'
import sys
from lab.reports import sts_tables
path, names, absent = sys.argv[1], sys.argv[2], sys.argv[3:]
note = ("Nothing in this table is marked: a mark needs each column's per-pair "
        f"scores, {', '.join(absent)} {'are' if len(absent) > 1 else 'is'} not on this machine (`bash "
        f"docs/run_siamese_cbow_ablation.sh {names}`, then `bash "
        "docs/make_siamese_cbow_results.sh`), and the word2vec columns are "
        "stored scores without per-pair scores.")
page = open(path, encoding="utf-8").read()
with open(path, "w", encoding="utf-8") as f:
  f.write(sts_tables.without_marks(page, note))
PY
  .venv/bin/python -m lab.reports.formatting "$out"
  exit 0
fi

norms=(python -m lab.reports.word_norms
       --model_dir=$runs_dir/untrained --export=$runs_dir/untrained/export/1
       --model_dir=$runs_dir/paper --export=$runs_dir/paper/export/1
       --model_dir=$runs_dir/$best --export=$runs_dir/$best/export/1
       --names="untrained,paper flags,$best (selected)"
       --output_record=docs/records/word_norms/siamese_cbow_ablation.json)
.venv/bin/"${norms[@]}" 2>/dev/null > $tmp/norms.txt

per_set=(python -m lab.reports.sts_tables --model=$runs_dir/$best/export
         --model=$runs_dir/paper/export --model=$runs_dir/untrained/export
         "--names=Siamese CBOW $best (selected on STS-B dev),Siamese CBOW (paper flags),Siamese CBOW before training"
         --data_dir="$data_dir" --sets=sts,sick --reference=$reference
         --wilcoxon --output_markdown=$tmp/per_set.md)
.venv/bin/"${per_set[@]}" > /dev/null 2>&1

{
  echo "# Siamese CBOW on the book corpus"
  echo
  echo "Produced by \`bash docs/make_siamese_cbow_results.sh\` from the runs of"
  echo "\`bash docs/run_siamese_cbow_ablation.sh\` (each: \`python -m trainers.siamese_cbow"
  echo "--flagfile=configs/siamese_cbow_paper.flags\` plus the flags in its row, on all 7 parts"
  echo "of the corpus less the 20 held-out books). The table reads each run's record in"
  echo "\`docs/records/siamese_cbow_ablation/<run>/\` (its flags, STS results, logs and wall time,"
  echo "copied there by the runner when the run finished)."
  echo
  echo "## Ablations"
  echo
  echo "\`${ablation[*]}\`"
  echo
  echo "Pearson's r × 100 on the test sets (STS 2012–2015, 19 sets, and SICK); STS-B dev and the"
  echo "neighbour ranking are the run's last evaluation. Neighbour ranking: on 5,000 groups from"
  echo "the 20 held-out books, the share of (true neighbour, random held-out sentence) pairs in"
  echo "which the neighbour has the higher cosine with the sentence (0.5 = chance). Sets > best"
  echo "word2vec: STS sets on which the run beats both word2vec CBOW and skip-gram averaging on"
  echo "the same corpus (\`../shared/baselines/word2vec_books_sts.md\`). Minutes: wall time of"
  echo "the whole command (vocabulary, training, export and evaluation) on 2 shared cores."
  echo
  sed 's/^ *//' $tmp/ablation.md
  echo
  echo "## Word-vector norm against frequency"
  echo
  echo "\`${norms[*]}\`"
  echo
  echo '```'
  cat $tmp/norms.txt
  echo '```'
  echo
  echo "## Per set"
  echo
  echo "\`${per_set[*]}\`"
  echo
  cat $tmp/per_set.md
} > $out
.venv/bin/python -m lab.reports.formatting "$out"  # no machine path, no overlong line
bash docs/make_siamese_cbow_plots.sh  # the two plots and their captions
echo "wrote $out"
