#!/usr/bin/env bash
# Compact exports of one trained Sent2Vec model: float32, float16 and int8
# tables side by side, the "## Compact exports" section of docs/sent2vec.md.
#
#   bash docs/run_quantized_export.sh [MODEL_DIR]
#
# MODEL_DIR (default runs/sent2vec_uni_part01_3ep, trained with
#   python -m trainers.sent2vec --flagfile=configs/sent2vec_books_uni.flags \
#       --corpus_parts=1 --num_epochs=3 --data_dir=../shared/data \
#       --model_dir=runs/sent2vec_uni_part01_3ep
# ) is exported three times by `python -m lab.benchmarks.quantized_export`, which
# measures size on disk, load time, encode throughput, the STS 2012-2015
# mean and STS-B dev; the table goes to runs/quantized_export.{json,md}, the
# section to docs/records/quantized_export/sent2vec.md (`python -m
# lab.reports.sent2vec_sections compact`) and `make docs` puts it into
# docs/sent2vec.md. DOC_ONLY=1: only record the section from the
# runs/quantized_export.* already there. TRAIN_COMMAND: how MODEL_DIR was
# trained, for the page (default: the command above); MODEL_NOTE: what that
# model is, in a few words. The plot of score against size goes to
# docs/records/quantized_export/sent2vec_compact_exports.png.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
model_dir=${1:-runs/sent2vec_uni_part01_3ep}
data_dir=${SENTZOO_DATA_DIR:-../shared/data}
repeats=${REPEATS:-5}
train_command=${TRAIN_COMMAND:-"python -m trainers.sent2vec --flagfile=configs/sent2vec_books_uni.flags --corpus_parts=1 --num_epochs=3 --data_dir=../shared/data --model_dir=$model_dir"}
mkdir -p runs
if [[ ${DOC_ONLY:-0} != 1 ]]; then
  $py -m lab.benchmarks.quantized_export --model_dir="$model_dir" \
    --data_dir="$data_dir" --repeats="$repeats" \
    --output_json=runs/quantized_export.json \
    --output_markdown=runs/quantized_export.md \
    --output_png=docs/records/quantized_export/sent2vec_compact_exports.png | tee runs/quantized_export.log
  tail -n 1 runs/quantized_export.log > runs/quantized_export_caption.txt
fi
model_note=${MODEL_NOTE:-"the uni book settings on part01 only, 3 epochs instead of 9: a weaker model than the page's main one, trained in minutes"}
TRAIN_COMMAND="$train_command" MODEL_NOTE="$model_note" \
  $py -m lab.reports.sent2vec_sections compact
$py -m lab.docs
