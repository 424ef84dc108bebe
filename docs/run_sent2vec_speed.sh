#!/usr/bin/env bash
# The Sent2Vec speed runs docs/make_sent2vec_results.sh tabulates, as one
# sequence on one machine (compare rows of the same sequence): blocks of 64
# lines (the book configs) tokenising the text every epoch with 1 or 16
# steps per graph call, and reading word ids from the token cache with 16
# (the trainer's settings); blocks of 128 and 1,024 lines with the trainer's
# settings. Each run measures 204,800 lines after 64 warm-up steps, 5 times
# in a row, and reports the median (this machine's speed varies by up to
# ~15% from one short run to the next). Needs runs/sent2vec_books_uni/
# vocab.txt (the uni run's vocabulary); writes
# runs/sent2vec_train_speed_b<N>_s<S>[_ids].json and the token caches under
# runs/token_cache/ (written once, ~2 minutes each).
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
rm -f runs/sent2vec_train_speed*.json
for run in "64 1 text" "64 16 text" "64 16 ids" "128 16 ids" "1024 16 ids"; do
  set -- $run
  n=$1
  shift
  out=runs/sent2vec_train_speed_b${n}_s$1
  extra=()
  if [[ $2 == ids ]]; then
    out=${out}_ids
    extra=(--token_cache=runs/token_cache/blocks_$n.tfrecord)
  fi
  $py -m benchmarks.sent2vec_train --data_dir="${SENTZOO_DATA_DIR:-../shared/data}" \
    --vocabulary=runs/sent2vec_books_uni/vocab.txt --block_lines=$n \
    --steps=$((204800 / n)) --warmup_steps=64 --steps_per_call=$1 --repeats=5 \
    "${extra[@]}" --output_json=$out.json 2>&1 | grep -E "^\||training speed|token cache"
done
