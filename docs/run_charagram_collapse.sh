#!/usr/bin/env bash
# The collapse probes quoted in the preamble of docs/charagram.md: charCNN
# MAX at lr 1e-3 and 1e-4, charCNN MIX and charLSTM MAX, 300 steps each of
# the trainer's own plan
# (lab/benchmarks/charagram_collapse.py). Each table is written to
# docs/records/charagram_collapse/<probe>.md (committed); about 4-10 minutes
# each on 2 shared cores.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR="${SENTZOO_DATA_DIR:-../shared/data}"
OUT=docs/records/charagram_collapse
mkdir -p "$OUT"
probe() {
  local name=$1
  shift
  echo "$name: python -m lab.benchmarks.charagram_collapse $*"
  .venv/bin/python -m lab.benchmarks.charagram_collapse "$@" \
      --data_dir="$DATA_DIR" --steps=300 > "$OUT/$name.md.tmp"
  mv "$OUT/$name.md.tmp" "$OUT/$name.md"
}
probe char_cnn_max --flagfile=configs/charagram_char_cnn.flags
probe char_cnn_max_lr1e-4 --flagfile=configs/charagram_char_cnn.flags --learning_rate=1e-4
probe char_cnn_mix --flagfile=configs/charagram_char_cnn.flags --sampling=mix
probe char_lstm_max --flagfile=configs/charagram_char_lstm.flags
