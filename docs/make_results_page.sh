#!/usr/bin/env bash
# Records docs/RESULTS.md's tables: evaluates every export listed below (STS
# 2012-2015, SICK, STS-B dev, SentEval transfer tasks), writes the tables with
# the papers' numbers beside them to docs/records/results/tables.md, and
# `make docs` puts them into the page. Evaluations are cached per export in
# runs/results_cache, so adding an export only evaluates that one.
#
# To add a model: append a --model="NAME=EXPORT_PATH" line (and optionally a
# --train_command="NAME=COMMAND" line) to the list below and rerun.
#
# On a machine without some of the exports nothing is recorded: the page keeps
# the tables of its record.
set -euo pipefail
cd "$(dirname "$0")/.."
# Siamese CBOW: the ablation runs of docs/siamese_cbow.md (paper flags,
# untrained) and the setting selected there on STS-B dev, which
# docs/train_zoo_word_vectors.sh trains into runs/siamese_cbow_best.
SC_BEST="Siamese CBOW (configs/siamese_cbow_best.flags; selected on STS-B dev)"
SC_PAPER="Siamese CBOW (paper flags; 1 epoch)"
SC_UNTRAINED="Siamese CBOW before training (step 1)"
CHARAGRAM="CHARAGRAM-PHRASE (MAX; PPDB human-label samples; seed 0)"
SENT2VEC_UNI="Sent2Vec uni (book corpus, 9 epochs)"
# uni+bi: the book settings of configs/sent2vec_books_unibi.flags, trained
# with two step loops at once (Hogwild).
SENT2VEC_UNIBI="Sent2Vec uni+bi (book corpus, 12 epochs; 2 step threads)"
args=(
  --model="${SC_BEST}=runs/siamese_cbow_best/export"
  --train_command="${SC_BEST}=bash docs/train_zoo_word_vectors.sh (python -m trainers.siamese_cbow --flagfile=configs/siamese_cbow_best.flags --data_dir=../shared/data --model_dir=runs/siamese_cbow_best)"
  --model="${SC_PAPER}=runs/siamese_cbow_ablation/paper/export"
  --train_command="${SC_PAPER}=bash docs/run_siamese_cbow_ablation.sh paper"
  --model="${SC_UNTRAINED}=runs/siamese_cbow_ablation/untrained/export"
  --train_command="${SC_UNTRAINED}=bash docs/run_siamese_cbow_ablation.sh untrained"
  --model="${CHARAGRAM}=runs/charagram/charagram_phrase_max/seed0/export"
  --train_command="${CHARAGRAM}=SEEDS=0 bash docs/run_charagram.sh charagram_phrase_max"
  --model="${SENT2VEC_UNI}=runs/sent2vec_books_uni/export"
  --train_command="${SENT2VEC_UNI}=bash docs/train_zoo_word_vectors.sh (python -m trainers.sent2vec --flagfile=configs/sent2vec_books_uni.flags --data_dir=../shared/data --model_dir=runs/sent2vec_books_uni)"
  --model="${SENT2VEC_UNIBI}=runs/sent2vec_books_unibi_t2/export"
  --train_command="${SENT2VEC_UNIBI}=python -m trainers.sent2vec --flagfile=configs/sent2vec_books_unibi.flags --step_threads=2 --data_dir=../shared/data --model_dir=runs/sent2vec_books_unibi_t2"
  --compare="${SC_UNTRAINED},${SC_BEST}"
  --compare="${SC_UNTRAINED},${SC_PAPER}"
)
for arg in "${args[@]}"; do
  if [[ $arg == --model=* && ! -d ${arg##*=} ]]; then
    echo "${arg##*=} is not on this machine: nothing recorded" >&2
    exit 1
  fi
done
.venv/bin/python -m lab.reports.results_page \
  --data_dir="${SENTZOO_DATA_DIR:-../shared/data}" \
  --cache_dir=runs/results_cache "${args[@]}" "$@"
.venv/bin/python -m lab.docs
