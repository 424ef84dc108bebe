#!/usr/bin/env bash
# Continued training (--init_from) against training from scratch: the
# "## Results" section of docs/continued_training.md.
#
#   bash docs/run_continued_training.sh
#
# 1. A Sent2Vec uni 700-d model on part01 (one epoch of the book settings),
#    in $PART01_DIR (default runs/s2v_uni_part01_1ep; trained if absent).
# 2. One epoch on parts 02-07 three times, the same flags and so the same
#    steps: from scratch; continued from the part01 model directory (source
#    and target vectors); continued from its float32 export (source vectors
#    only). Model directories under $RUNS_DIR (default runs/).
# 3. `python -m lab.reports.continued_training` prints the table and records
#    the page's "## Results" section in
#    docs/records/continued_training/results.md; `make docs` puts it there.
# A finished run is not trained again (the trainer says "nothing to do").
# DOC_ONLY=1: only step 3. SKIP_EXPORT_RUN=1: no run from the export.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
data_dir=${SENTZOO_DATA_DIR:-../shared/data}
runs=${RUNS_DIR:-runs}
part01=${PART01_DIR:-$runs/s2v_uni_part01_1ep}
flags=(--flagfile=configs/sent2vec_books_uni.flags --num_epochs=1
       --step_threads=2 --data_dir="$data_dir")
later=(--corpus_parts=2,3,4,5,6,7)
if [[ ${DOC_ONLY:-0} != 1 ]]; then
  $py -m trainers.sent2vec "${flags[@]}" --corpus_parts=1 \
    --model_dir="$part01"
  $py -m trainers.sent2vec "${flags[@]}" "${later[@]}" \
    --init_from="$part01" --model_dir="$runs/s2v_p2to7_continued"
  $py -m trainers.sent2vec "${flags[@]}" "${later[@]}" \
    --model_dir="$runs/s2v_p2to7_scratch"
  if [[ ${SKIP_EXPORT_RUN:-0} != 1 ]]; then
    $py -m trainers.sent2vec "${flags[@]}" "${later[@]}" \
      --init_from="$part01/export/1" \
      --model_dir="$runs/s2v_p2to7_continued_export"
  fi
fi
reports=("part01 model=$part01"
         "from scratch on parts 02-07=$runs/s2v_p2to7_scratch"
         "continued from the model directory=$runs/s2v_p2to7_continued")
if [[ -f $runs/s2v_p2to7_continued_export/finished.json ]]; then
  reports+=("continued from the export=$runs/s2v_p2to7_continued_export")
fi
$py -m lab.reports.continued_training "${reports[@]}" \
  --record=docs/records/continued_training/results.md
$py -m lab.docs
