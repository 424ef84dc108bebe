#!/usr/bin/env bash
# Regenerates docs/siamese_cbow.md from the exports of the two runs below:
#   python -m trainers.siamese_cbow --flagfile=configs/siamese_cbow_paper.flags \
#       --data_dir=../shared/data --model_dir=runs/siamese_cbow_paper
#   python -m trainers.siamese_cbow --flagfile=configs/siamese_cbow_paper.flags \
#       --data_dir=../shared/data --model_dir=runs/siamese_cbow_untrained --train_steps=1
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=(python -m evaluation.sts
     --model=runs/siamese_cbow_paper/export
     --model=runs/siamese_cbow_untrained/export
     "--names=Siamese CBOW (paper flags; 1 epoch),Siamese CBOW before training (step 1)"
     --data_dir="${SENTZOO_DATA_DIR:-../shared/data}" --sets=sts,sick
     --reference=word2vec=../shared/baselines/word2vec_books_sts.md
     --output_markdown=docs/siamese_cbow.md)
.venv/bin/"${cmd[@]}" --command_note="bash docs/make_results.sh  (runs: ${cmd[*]})"
