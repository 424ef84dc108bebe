#!/usr/bin/env bash
# The Sent2Vec speed runs docs/make_sent2vec_results.sh tabulates, as one
# sequence on one machine (compare rows of the same sequence). Blocks of 64
# lines (the book configs):
#   - tokenising the text every epoch, 1 or 16 steps per graph call;
#   - reading word ids from the token cache with 16 (the trainer's
#     settings), with the trainer's threads (1 per op, the input on its own
#     thread) and with TensorFlow's default threads (the baseline);
#   - the uni+bi settings (2M buckets, t 5e-6, min target count 5, 7
#     dropped bigram positions).
# Blocks of 128 and 1,024 lines with the trainer's settings. Each run
# measures 204,800 lines after 64 warm-up steps, 5 times in a row, and
# reports the median (this machine's speed varies by up to ~15% from one
# short run to the next). Needs runs/sent2vec_books_uni/vocab.txt (the uni
# run's vocabulary) and ~8 GB of memory for the uni+bi row; writes
# runs/sent2vec_train_speed_<row>.json and the token caches under
# runs/token_cache/ (written once, ~2 minutes each).
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
rm -f runs/sent2vec_train_speed*.json
unibi=(--word_ngrams=2 --num_buckets=2000000 --sample=5e-6 --min_count_label=5 --dropout_k=7)
# name, block lines, steps per call, input, extra flags
while read -r name n s input extra; do
  flags=()
  if [[ $input == ids ]]; then
    flags=(--token_cache=runs/token_cache/blocks_$n.tfrecord)
  fi
  case $extra in
    tf_threads) flags+=(--op_threads=0 --input_threads=0) ;;
    unibi) flags+=("${unibi[@]}") ;;
  esac
  $py -m benchmarks.sent2vec_train --data_dir="${SENTZOO_DATA_DIR:-../shared/data}" \
    --vocabulary=runs/sent2vec_books_uni/vocab.txt --block_lines=$n \
    --steps=$((204800 / n)) --warmup_steps=64 --steps_per_call=$s --repeats=5 \
    "${flags[@]}" --output_json=runs/sent2vec_train_speed_$name.json 2>&1 \
    | grep -E "^\||training speed|token cache"
done <<'RUNS'
b64_s1_text 64 1 text -
b64_s16_text 64 16 text -
b64_s16_ids 64 16 ids -
b64_s16_ids_tf_threads 64 16 ids tf_threads
b64_s16_ids_unibi 64 16 ids unibi
b128_s16_ids 128 16 ids -
b1024_s16_ids 1024 16 ids -
RUNS
