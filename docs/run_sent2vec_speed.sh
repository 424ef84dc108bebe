#!/usr/bin/env bash
# Sent2Vec training speed side by side with the C++ code, in one alternating
# sequence on this machine: the "Training speed" section of docs/sent2vec.md.
#
#   bash docs/run_sent2vec_speed.sh /path/to/sent2vec/fasttext
#   SENT2VEC_FASTTEXT=/path/to/sent2vec/fasttext bash docs/run_sent2vec_speed.sh
#
# The C++ binary is the user's own build of the public epfml/sent2vec
# repository (git clone https://github.com/epfml/sent2vec && cd sent2vec &&
# make); nothing here builds, downloads or commits it, and no test needs it.
#
# For the uni and the uni+bi book settings (configs/sent2vec_books_{uni,
# unibi}.flags, read by the benchmark as the trainer reads them),
# `python -m lab.benchmarks.sent2vec_train --reference_binary=...` tokenises the
# corpus parts CORPUS_PARTS once (default 1: part01, ~0.54M lines and ~12M
# tokens, a fixed prefix of the book corpus; CORPUS_PARTS= : all 7 parts,
# ~5 minutes per run) and runs REPEATS (default 3) alternating pairs of
# fresh processes on those lines: ours, then `fasttext sent2vec ... -epoch 1
# -thread 2`; for uni, then REPEATS alternating pairs of whole one-epoch
# jobs (the trainer on the corpus, the C++ command on the lines). Writes
# runs/sent2vec_speed_{uni,unibi}.{json,md}, records the side-by-side part
# of docs/sent2vec.md's "## Training speed" section in
# docs/records/sent2vec_train/side_by_side.md and `make docs` puts it into
# the page (its "### Ours only, another day" subsection is the page's own).
#
# Without a binary: ours only at the same settings (words/s and peak RSS,
# no ratio), and docs/sent2vec.md is left alone. DOC_ONLY=1: only record
# the section from the runs/sent2vec_speed_*.json already there.
# STEP_THREADS=N (default 1): ours runs N step loops at once (the trainer's
# --step_threads, Hogwild; not deterministic); with N > 1 the uni sequence is
# run again at the trainer's default, 1, into
# runs/sent2vec_speed_uni_default_threads.*. A model not rerun keeps its
# subsection of the page as it was, labelled so.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
binary=${1:-${SENT2VEC_FASTTEXT:-}}
data_dir=${SENTZOO_DATA_DIR:-../shared/data}
parts=${CORPUS_PARTS-1}
repeats=${REPEATS:-3}
step_threads=${STEP_THREADS:-1}
mkdir -p runs
for model in uni unibi; do
  [[ ${DOC_ONLY:-0} == 1 ]] && break
  common=(--flagfile="configs/sent2vec_books_$model.flags" --data_dir="$data_dir"
          --corpus_parts="$parts" --repeats="$repeats" --step_threads="$step_threads")
  if [[ -n $binary ]]; then
    small_job=--small_job
    [[ $model == uni ]] || small_job=--nosmall_job
    $py -m lab.benchmarks.sent2vec_train "${common[@]}" --reference_binary="$binary" $small_job \
      --output_json="runs/sent2vec_speed_$model.json" \
      --output_markdown="runs/sent2vec_speed_$model.md"
    if [[ $model == uni && $step_threads != 1 ]]; then
      # The trainer's default, one step loop, in the same sequence.
      $py -m lab.benchmarks.sent2vec_train "${common[@]}" --step_threads=1 \
        --reference_binary="$binary" --nosmall_job \
        --output_json=runs/sent2vec_speed_uni_default_threads.json \
        --output_markdown=runs/sent2vec_speed_uni_default_threads.md
    fi
  else
    $py -m lab.benchmarks.sent2vec_train "${common[@]}" \
      --model_dir="runs/sent2vec_speed_$model" --steps=3200 --warmup_steps=64
  fi
done
if [[ -z $binary && ${DOC_ONLY:-0} != 1 ]]; then
  echo "ours only (no C++ binary given): docs/sent2vec.md left as it is"
  exit 0
fi
$py -m lab.reports.sent2vec_sections speed
$py -m lab.docs
