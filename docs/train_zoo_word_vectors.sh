#!/usr/bin/env bash
# Trains the zoo's two kinds of averaged word vectors on the whole book corpus
# and picks the one the hybrid matcher and PARAGRAM-PHRASE start from:
#   runs/siamese_cbow_best     configs/siamese_cbow_best.flags
#   runs/sent2vec_books_uni    configs/sent2vec_books_uni.flags (unigrams)
# A finished run is not trained again (the trainer says "nothing to do"), an
# interrupted one resumes. The choice, the higher STS-B dev Pearson, goes to
# docs/records/zoo_word_vectors.json (lab.reports.word_vector_choice), which
# docs/run_charagram.sh, the pages (`make docs`) and lab.reports.hybrid_sweep's
# --word_vector_choice read.
#
#   bash docs/train_zoo_word_vectors.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR="${SENTZOO_DATA_DIR:-../shared/data}"
PY=.venv/bin/python

$PY -m trainers.siamese_cbow --flagfile=configs/siamese_cbow_best.flags \
    --data_dir="$DATA_DIR" --model_dir=runs/siamese_cbow_best
$PY -m trainers.sent2vec --flagfile=configs/sent2vec_books_uni.flags \
    --data_dir="$DATA_DIR" --model_dir=runs/sent2vec_books_uni
$PY -m lab.reports.word_vector_choice \
    "--candidate=Siamese CBOW (configs/siamese_cbow_best.flags)=runs/siamese_cbow_best" \
    "--candidate=Sent2Vec uni (configs/sent2vec_books_uni.flags)=runs/sent2vec_books_uni" \
    --output_json=docs/records/zoo_word_vectors.json
