#!/usr/bin/env bash
# Records docs/sent2vec.md's STS table from the runs below (whichever exist)
# in docs/records/sent2vec/sts_table.md; `make docs` puts it into the page:
#   python -m trainers.sent2vec --flagfile=configs/sent2vec_books_uni.flags \
#       --data_dir=../shared/data --model_dir=runs/sent2vec_books_uni
#   the same with --block_lines=N --model_dir=runs/sent2vec_books_uni_b<N>
#       (N = 1024, 128, 64: other block sizes than the flagfile's)
#   python -m trainers.sent2vec --flagfile=configs/sent2vec_books_unibi.flags \
#       --data_dir=../shared/data --model_dir=runs/sent2vec_books_unibi
#   the same with --num_epochs=1 --model_dir=runs/sent2vec_books_unibi_e1
# The page's other measured sections have their own runners:
# docs/run_sent2vec_speed.sh, docs/run_quantized_export.sh,
# docs/run_sent2vec_memory.sh. The one-epoch ablation's runs (runs/s2vx_*)
# are gone: its table is docs/records/sent2vec/one_epoch_ablation.md.
# A finished run is shown from its export (runs/<name>/export). A run still in
# progress is shown only with SNAPSHOT=1, exported from its newest checkpoint to
# runs/<name>/snapshot_export and labelled "interim: step N of M".
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
models=()
names=()
for run in sent2vec_books_uni sent2vec_books_uni_b64 sent2vec_books_uni_b128 \
           sent2vec_books_uni_b1024 sent2vec_books_unibi sent2vec_books_unibi_e1; do
  dir=runs/$run
  label=${run#sent2vec_books_}
  label=${label%_b*}
  label=${label%_e1}
  blocks=$(sed -n 's/^--block_lines=//p' "$dir/flags.txt" 2>/dev/null || true)
  blocks="blocks of ${blocks:-1024}"
  if [[ -d $dir/export ]]; then
    models+=("--model=$dir/export")
    epochs=$(sed -n 's/.*"num_epochs": \([0-9]*\).*/\1/p' "$dir/model_config.json" | head -1)
    names+=("Sent2Vec $label ($epochs epoch$([[ $epochs == 1 ]] || echo s); $blocks)")
  elif [[ "${SNAPSHOT:-0}" == 1 && -d $dir/checkpoints ]]; then
    step=$(sed -n 's/^model_checkpoint_path: "ckpt-\([0-9]*\)"/\1/p' "$dir/checkpoints/checkpoint")
    total=$(sed -n 's/.*"total_steps": \([0-9]*\).*/\1/p' "$dir/model_config.json" | head -1)
    rm -rf "$dir/snapshot_export"
    $py -m export.export_model --model_dir="$dir" --export_dir="$dir/snapshot_export" --version=1 >/dev/null
    models+=("--model=$dir/snapshot_export")
    names+=("Sent2Vec $label (interim: step $step of $total; $blocks)")
  fi
done
if [[ ${#models[@]} == 0 ]]; then
  echo "no Sent2Vec run under runs/: nothing recorded" >&2
  exit 1
fi
IFS=,; joined="${names[*]}"; unset IFS
cmd=(python -m lab.reports.sts_tables "${models[@]}" "--names=$joined"
     --data_dir="${SENTZOO_DATA_DIR:-../shared/data}" --sets=sts,sick
     --reference=sent2vec_cpp=../shared/baselines/sent2vec_books_sts.md
     --output_markdown=docs/records/sent2vec/sts_table.md)
$py -m "${cmd[@]:2}" --command_note="bash docs/make_sent2vec_results.sh  (runs: ${cmd[*]})" >/dev/null
$py -m lab.docs
