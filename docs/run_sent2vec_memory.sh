#!/usr/bin/env bash
# Peak memory of Sent2Vec training, a fresh and a resumed run: the "Training
# memory" section of docs/sent2vec.md (issue 17's bound: peak RSS <= 1.3 x
# (source + target table bytes) + 1 GB).
#
#   bash docs/run_sent2vec_memory.sh              # 300k buckets (~1 GB of tables)
#   BUCKETS=2000000 bash docs/run_sent2vec_memory.sh   # the book configs' 2M
#
# Runs `python -m lab.benchmarks.table_memory --model=sent2vec --train` (the
# uni+bi book flagfile on part01, STEPS steps fresh, then resumed to twice as
# many; each run exports and evaluates as every run does), writes
# runs/sent2vec_memory_<buckets>.{json,md}, records the section in
# docs/records/table_memory/sent2vec.md and `make docs` puts it into
# docs/sent2vec.md. 2M buckets need ~8-13 GB of free memory. DOC_ONLY=1: only
# record the section from the runs/sent2vec_memory_<buckets>.* already
# there.
set -uo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
buckets=${BUCKETS:-300000}
steps=${STEPS:-300}
data_dir=${SENTZOO_DATA_DIR:-../shared/data}
out=runs/sent2vec_memory_$buckets
mkdir -p runs
if [[ ${DOC_ONLY:-0} != 1 ]]; then
  $py -m lab.benchmarks.table_memory --model=sent2vec --train --buckets="$buckets" \
    --train_steps="$steps" --data_dir="$data_dir" --work_dir=runs/sent2vec_memory \
    --output_json="$out.json" --output_markdown="$out.md"
  echo "benchmark exit status $? (1: a run's peak is above the bound)"
fi
OUT=$out $py -m lab.reports.sent2vec_sections memory
$py -m lab.docs
