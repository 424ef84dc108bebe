#!/usr/bin/env bash
# Trains the CHARAGRAM runs of docs/charagram.md, one seed at a time, into
# runs/charagram/<name>/seed<k>/ (flagfile configs/charagram_<variant>.flags
# plus the flags on the run's line plus --seed=<k>). A finished run (export/
# present) is skipped and an interrupted one resumes, so the table can be
# built over several sittings; seed 0 of every run comes before seed 1 of
# any. wall_seconds in each folder adds up the time spent on it.
#
# A finished run's evaluation (per-set Pearson, per-pair scores at 4
# decimals, training summary, wall seconds) is recorded in docs/records/charagram/<name>/
# seed<k>/ (`lab.reports.charagram_results --record_only`), which is committed:
# runs/ does not outlive the machine, the table does. A run that has a record
# is trained again only when named on the command line. Then:
#   make docs
#
#   bash docs/run_charagram.sh                    # every run without a record, seeds 0,1,2
#   SEEDS=0,1 bash docs/run_charagram.sh NAME ... # these runs / seeds, recorded or not
#   bash docs/run_charagram.sh --list             # the run names
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR="${SENTZOO_DATA_DIR:-../shared/data}"
RUNS="${RUNS:-runs/charagram}"
RECORDS="${RECORDS:-docs/records/charagram}"
PY="${PY:-.venv/bin/python}"
SEEDS="${SEEDS:-0,1,2}"
source docs/zoo_word_vectors.sh
source docs/wall_time.sh

# name | flagfile | extra flags
CHARAGRAM_RUNS="
charagram_phrase_max        | charagram_phrase          |
charagram_phrase_mix        | charagram_phrase          | --sampling=mix
charagram_phrase_tasks_max  | charagram_phrase          | --task_paraphrases=msrp,sick,sts2012,twitter
charagram_phrase_lexicon_max | charagram_phrase         | --lexicon_files=ppdb/retrofitting-lexicon-ppdb-xl.txt.gz --num_epochs=2
paragram_phrase_max         | charagram_paragram_phrase | $PARAGRAM_INIT
paragram_phrase_mix         | charagram_paragram_phrase | $PARAGRAM_INIT --sampling=mix
char_cnn_max                | charagram_char_cnn        |
char_cnn_mix                | charagram_char_cnn        | --sampling=mix
char_lstm_max               | charagram_char_lstm       |
char_lstm_mix               | charagram_char_lstm       | --sampling=mix
paragram_phrase_random_max  | charagram_paragram_phrase |
paragram_phrase_max_l2      | charagram_paragram_phrase | $PARAGRAM_INIT --l2=1e-6
charagram_word_max          | charagram_word            |
"

failed=0
run_one() {
  local name=$1 config=$2 extra=$3 seed=$4 dir=$RUNS/$1/seed$4
  if [ -d "$dir/export" ]; then
    echo "$name seed $seed: done"
    [ -f "$RECORDS/$name/seed$seed/pearson.json" ] || record "$name" "$seed"
    return
  fi
  mkdir -p "$dir"
  echo "$name seed $seed: training (log: $dir/train.log)"
  local status=0
  wall_time_start "$dir"
  # shellcheck disable=SC2086
  $PY -m trainers.charagram --flagfile="configs/$config.flags" $extra \
      --seed="$seed" --data_dir="$DATA_DIR" --model_dir="$dir" \
      >> "$dir/train.log" 2>&1 || status=$?
  wall_time_stop
  if [ $status -ne 0 ]; then
    echo "$name seed $seed: exit status $status (see $dir/train.log)"
    failed=1
  else
    record "$name" "$seed"
  fi
}

# Evaluates the run's export and writes its record (and the run folder's
# evaluation cache).
record() {
  local status=0
  $PY -m lab.reports.charagram_results --record_only --run="$1=$RUNS/$1" \
      --seeds="$2" --records_dir="$RECORDS" --data_dir="$DATA_DIR" \
      >> "$RUNS/$1/seed$2/record.log" 2>&1 || status=$?
  if [ $status -ne 0 ]; then
    echo "$1 seed $2: recording failed (see $RUNS/$1/seed$2/record.log)"
    failed=1
  else
    echo "$1 seed $2: recorded in $RECORDS/$1/seed$2"
  fi
}

for seed in ${SEEDS//,/ }; do
  while IFS='|' read -r name config extra; do
    name=$(echo "$name" | xargs)
    [ -z "$name" ] && continue
    if [ "${1:-}" == --list ]; then
      [ "$seed" == "${SEEDS%%,*}" ] && echo "$name"
      continue
    fi
    if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
      continue
    fi
    if [ $# -eq 0 ] && [ -f "$RECORDS/$name/seed$seed/pearson.json" ]; then
      echo "$name seed $seed: recorded in $RECORDS/$name/seed$seed (name it to train it again)"
      continue
    fi
    run_one "$name" "$(echo "$config" | xargs)" "$(echo "$extra" | xargs)" "$seed"
  done <<< "$CHARAGRAM_RUNS"
done
exit $failed
