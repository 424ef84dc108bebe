#!/usr/bin/env bash
# Regenerates docs/RESULTS.md: evaluates every export listed below (STS
# 2012-2015, SICK, STS-B dev, SentEval transfer tasks) and writes the page
# with the papers' numbers beside them. Evaluations are cached per export in
# runs/results_cache, so adding an export only evaluates that one.
#
# To add a model: append a --model="NAME=EXPORT_PATH" line (and optionally a
# --train_command="NAME=COMMAND" line) to the list below and rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
SC_TRAIN="python -m trainers.siamese_cbow --flagfile=configs/siamese_cbow_paper.flags --data_dir=../shared/data"
args=(
  --model="Siamese CBOW (paper flags; 1 epoch)=runs/siamese_cbow_paper/export"
  --train_command="Siamese CBOW (paper flags; 1 epoch)=${SC_TRAIN} --model_dir=runs/siamese_cbow_paper (exports to runs/siamese_cbow_paper/export)"
  --model="Siamese CBOW before training (step 1)=runs/siamese_cbow_untrained/export"
  --train_command="Siamese CBOW before training (step 1)=${SC_TRAIN} --model_dir=runs/siamese_cbow_untrained --train_steps=1"
  --model="CHARAGRAM-PHRASE (MAX; PPDB human-label samples)=runs/charagram/charagram_phrase_max/export"
  --train_command="CHARAGRAM-PHRASE (MAX; PPDB human-label samples)=python -m trainers.charagram --flagfile=configs/charagram_phrase.flags --sampling=max --data_dir=../shared/data --model_dir=runs/charagram/charagram_phrase_max"
  --model="Sent2Vec uni (book corpus, 9 epochs)=runs/sent2vec_books_uni/export"
  --train_command="Sent2Vec uni (book corpus, 9 epochs)=python -m trainers.sent2vec --flagfile=configs/sent2vec_books_uni.flags --data_dir=../shared/data --model_dir=runs/sent2vec_books_uni"
  --compare="Siamese CBOW (paper flags; 1 epoch),Siamese CBOW before training (step 1)"
)
.venv/bin/python -m reports.results_page \
  --data_dir="${SENTZOO_DATA_DIR:-../shared/data}" \
  --output=docs/RESULTS.md --cache_dir=runs/results_cache \
  --command_note="bash docs/make_results_page.sh" \
  "${args[@]}" "$@"
