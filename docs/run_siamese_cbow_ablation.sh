#!/usr/bin/env bash
# Trains the Siamese CBOW ablation runs of docs/siamese_cbow.md on the whole
# book corpus, one after the other, into runs/siamese_cbow_ablation/<name>/.
# Each run is the paper flagfile plus the flags on its line. A finished run
# (sts_results.json present) is skipped and an interrupted one resumes, so the
# table can be built over several sittings; wall_seconds in each run folder
# adds up the time spent on it.
#
# A finished run's small result files (flags, STS results, train and eval
# logs, wall time) are copied into docs/records/siamese_cbow_ablation/<name>/,
# which is committed: runs/ does not outlive the machine, the table does.
# A run that has a record is trained again only when named on the command
# line (docs/make_siamese_cbow_results.sh needs the exports of the untrained,
# paper and selected runs). Then: bash docs/make_siamese_cbow_results.sh
#
#   bash docs/run_siamese_cbow_ablation.sh            # every run without a record
#   bash docs/run_siamese_cbow_ablation.sh NAME ...   # these, recorded or not
#   bash docs/run_siamese_cbow_ablation.sh --list     # the run names
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR="${SENTZOO_DATA_DIR:-../shared/data}"
RUNS=runs/siamese_cbow_ablation
RECORDS=docs/records/siamese_cbow_ablation
# What a record keeps of a finished run (lab.reports.siamese_cbow_ablation reads these).
RECORD_FILES="ablation_flags.txt flags.txt sts_results.json eval_log.jsonl train_log.jsonl wall_seconds"
PY=.venv/bin/python
source docs/wall_time.sh

# name | flags added to configs/siamese_cbow_paper.flags
ABLATIONS='
untrained                | --train_steps=1
paper                    |
lr1e-3                   | --learning_rate=1e-3
lr1e-2                   | --learning_rate=1e-2
lr1e-3_document          | --learning_rate=1e-3 --negatives=document
lr1e-2_document          | --learning_rate=1e-2 --negatives=document
lr3e-3_document          | --learning_rate=3e-3 --negatives=document
lr5e-4_document          | --learning_rate=5e-4 --negatives=document
lr1e-3_nearby            | --learning_rate=1e-3 --negatives=nearby
lr1e-3_nearby_consecutive | --learning_rate=1e-3 --negatives=nearby --batch_layout=consecutive
lr1e-3_nearby10          | --learning_rate=1e-3 --negatives=nearby --nearby_window=10
lr1e-3_nearby200         | --learning_rate=1e-3 --negatives=nearby --nearby_window=200
lr3e-3_nearby            | --learning_rate=3e-3 --negatives=nearby
lr1e-2_nearby            | --learning_rate=1e-2 --negatives=nearby
lr1e-3_nearby_epochs3    | --learning_rate=1e-3 --negatives=nearby --num_epochs=3
lr1e-3_nearby_sub1e-5    | --learning_rate=1e-3 --negatives=nearby --subsample=1e-5
lr1e-3_nearby_sub1e-4    | --learning_rate=1e-3 --negatives=nearby --subsample=1e-4
lr3e-3_nearby_sub1e-5    | --learning_rate=3e-3 --negatives=nearby --subsample=1e-5
lr1e-2_nearby_sub1e-5    | --learning_rate=1e-2 --negatives=nearby --subsample=1e-5
lr1e-3_document_minlen5  | --learning_rate=1e-3 --negatives=document --min_sentence_length=5
lr1e-3_document_punct    | --learning_rate=1e-3 --negatives=document --keep_punctuation
lr1e-3_document_neg5     | --learning_rate=1e-3 --negatives=document --num_negatives=5
lr1e-3_blocks64          | --learning_rate=1e-3 --blocks_per_mix=64
adagrad3e-3_nearby       | --optimizer=adagrad --learning_rate=3e-3 --negatives=nearby
adadelta_document        | --optimizer=adadelta --learning_rate=1 --final_learning_rate_fraction=1 --negatives=document
epochs2                  | --num_epochs=2
'

run_one() {
  local name=$1 extra=$2 dir=$RUNS/$1
  mkdir -p "$dir"
  # The row's flags, for the table (lab.reports.siamese_cbow_ablation).
  echo "$extra" > "$dir/ablation_flags.txt"
  if [ -f "$dir/sts_results.json" ]; then
    echo "$name: done"
    record "$name"
    return
  fi
  # The vocabulary and batch count do not depend on the optimizer or the
  # negatives: reuse the first run's (the trainer recounts if its key differs).
  if [[ "$extra" != *keep_punctuation* && -f $RUNS/untrained/vocab.txt ]]; then
    cp -n $RUNS/untrained/vocab.txt $RUNS/untrained/corpus_stats.json "$dir/"
  fi
  echo "$name: training (log: $dir/train.log)"
  local status=0
  wall_time_start "$dir"
  # shellcheck disable=SC2086
  $PY -m trainers.siamese_cbow --flagfile=configs/siamese_cbow_paper.flags \
      --data_dir="$DATA_DIR" --model_dir="$dir" $extra >> "$dir/train.log" 2>&1 \
      || status=$?
  wall_time_stop
  if [ $status -ne 0 ]; then
    echo "$name: exit status $status (see $dir/train.log)"
    failed=1
  else
    record "$name"
  fi
}

record() {
  local dir=$RUNS/$1 out=$RECORDS/$1 file
  mkdir -p "$out"
  for file in $RECORD_FILES; do
    if [ -f "$dir/$file" ]; then cp "$dir/$file" "$out/$file"; fi
  done
  echo "$1: recorded in $out"
}

failed=0
while IFS='|' read -r name extra; do
  name=$(echo "$name" | xargs)
  [ -z "$name" ] && continue
  if [ "${1:-}" == --list ]; then
    echo "$name"
    continue
  fi
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
    continue
  fi
  if [ $# -eq 0 ] && [ -f "$RECORDS/$name/sts_results.json" ]; then
    echo "$name: recorded in $RECORDS/$name (name it to train it again)"
    continue
  fi
  run_one "$name" "$(echo "$extra" | xargs)"
done <<< "$ABLATIONS"
exit $failed
