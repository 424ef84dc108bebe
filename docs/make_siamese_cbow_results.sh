#!/usr/bin/env bash
# Records what docs/siamese_cbow.md shows of runs that are not committed, then
# `make docs` writes the page (the ablation table and the STS-B dev plot come
# from docs/records/siamese_cbow_ablation/, which
# `bash docs/run_siamese_cbow_ablation.sh` writes):
# 1. from the exports in runs/siamese_cbow_ablation/ of the untrained, paper
#    and selected runs: the word norms (docs/records/word_norms/
#    siamese_cbow_ablation.txt) and the per-set table beside word2vec
#    (docs/records/siamese_cbow/per_set.md);
# 2. the demo model (`make demo`: 1 epoch of part01) against the same
#    configuration after one step (`--train_steps=1`): the binned word norms
#    the page's plot draws (docs/records/word_norms/siamese_cbow_demo.json).
#   TRAINED=runs/siamese_cbow_demo UNTRAINED=runs/siamese_cbow_demo_untrained \
#     bash docs/make_siamese_cbow_results.sh
# What is not on this machine is not recorded again.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
data_dir="${SENTZOO_DATA_DIR:-../shared/data}"
runs_dir=runs/siamese_cbow_ablation
reference=word2vec=../shared/baselines/word2vec_books_sts.md
names=$(bash docs/run_siamese_cbow_ablation.sh --list | paste -sd, -)
best=$($py -m lab.reports.siamese_cbow_ablation --runs="$names" \
       | sed -n 's/^Selected on STS-B dev: \*\*\(.*\)\*\*.*/\1/p')
present=1
for name in untrained paper "$best"; do
  [ -f "$runs_dir/$name/export/1/saved_model.pb" ] || present=0
done
if [[ $present == 1 ]]; then
  $py -m lab.reports.word_norms \
      --model_dir=$runs_dir/untrained --export=$runs_dir/untrained/export/1 \
      --model_dir=$runs_dir/paper --export=$runs_dir/paper/export/1 \
      --model_dir=$runs_dir/$best --export=$runs_dir/$best/export/1 \
      "--names=untrained,paper flags,$best (selected)" 2>/dev/null \
      > docs/records/word_norms/siamese_cbow_ablation.txt
  per_set=(python -m lab.reports.sts_tables --model=$runs_dir/$best/export
           --model=$runs_dir/paper/export --model=$runs_dir/untrained/export
           "--names=Siamese CBOW $best (selected on STS-B dev),Siamese CBOW (paper flags),Siamese CBOW before training"
           --data_dir="$data_dir" --sets=sts,sick --reference=$reference
           --wilcoxon)
  { printf '## Per set\n\n`%s`\n\n' "${per_set[*]}"
    .venv/bin/"${per_set[@]}" 2>/dev/null; } > docs/records/siamese_cbow/per_set.md
else
  echo "the exports of untrained, paper and $best are not all in $runs_dir:" \
       "their word norms and per-set table keep their records" >&2
fi
trained="${TRAINED:-runs/siamese_cbow_demo}"
untrained="${UNTRAINED:-runs/siamese_cbow_demo_untrained}"
if [ -f "$trained/export/1/saved_model.pb" ] \
   && [ -f "$untrained/export/1/saved_model.pb" ]; then
  $py -m lab.reports.word_norms \
      --model_dir="$untrained" --export="$untrained/export/1" \
      --model_dir="$trained" --export="$trained/export/1" \
      "--names=after 1 step,after 1 epoch of part01" \
      --output_record=docs/records/word_norms/siamese_cbow_demo.json
else
  echo "no runs at $trained and $untrained: the plot keeps its record" >&2
fi
$py -m lab.docs
