#!/usr/bin/env bash
# Draws the two plots of docs/siamese_cbow.md and rewrites their sections.
# 1. docs/siamese_cbow_dev_curves.png ("STS-B dev during training"): STS-B
#    dev against step of the ablation runs, from their committed records.
# 2. docs/siamese_cbow_word_norms.png ("Word-vector norm against
#    frequency"): the demo model
# (`make demo`: 1 epoch of part01) against the same configuration after one
# step (`--train_steps=1`), on one pair of axes. The binned curves are kept
# in docs/records/word_norms/siamese_cbow_demo.json, so when the two runs are
# not on the machine the plot and caption are drawn again from that record.
#   TRAINED=runs/siamese_cbow_demo UNTRAINED=runs/siamese_cbow_demo_untrained \
#     bash docs/make_siamese_cbow_plots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
trained="${TRAINED:-runs/siamese_cbow_demo}"
untrained="${UNTRAINED:-runs/siamese_cbow_demo_untrained}"
record=docs/records/word_norms/siamese_cbow_demo.json
png=docs/siamese_cbow_word_norms.png
mkdir -p "$(dirname "$record")"

dev_caption=$($py -m lab.reports.siamese_cbow_ablation \
  --runs=untrained,paper,lr1e-3,lr1e-2,lr1e-3_document,lr1e-3_nearby \
  --plot_runs=paper,lr1e-3,lr1e-2,lr1e-3_document,lr1e-3_nearby \
  --output_png=docs/siamese_cbow_dev_curves.png 2>/dev/null | tail -1)
$py - "$dev_caption" <<'PY'
import sys
from lab.reports import doc_sections
doc_sections.replace_section("docs/siamese_cbow.md", "STS-B dev during training", "\n".join([
    "## STS-B dev during training", "",
    "The paper's flags, learning rates 1e-3 and 1e-2, and 1e-3 with "
    "negatives from the same book or nearby; drawn by "
    "`bash docs/make_siamese_cbow_plots.sh` from the runs' records.", "",
    "![STS-B dev Pearson against training step, one line per run]"
    "(siamese_cbow_dev_curves.png)", "", f"*{sys.argv[1]}*", ""]))
PY
if [ -f "$trained/export/1/saved_model.pb" ] \
   && [ -f "$untrained/export/1/saved_model.pb" ]; then
  args=(--model_dir="$untrained" --export="$untrained/export/1"
        --model_dir="$trained" --export="$trained/export/1"
        "--names=after 1 step,after 1 epoch of part01"
        --output_record="$record")
else
  echo "no runs at $trained and $untrained: drawing from $record" >&2
  args=(--from_record="$record")
fi
caption=$($py -m lab.reports.word_norms "${args[@]}" --output_png="$png" \
          2>/dev/null | tail -1)
$py - "$caption" <<'PY'
import re
import sys
from lab.reports import doc_sections
path, title = "docs/siamese_cbow.md", "Word-vector norm against frequency"
with open(path, encoding="utf-8") as f:
  page = f.read()
old = page.split("## " + title, 1)[1].split("\n## ", 1)[0]
# The ablation runs' band medians: the section's last fenced block.
blocks = re.findall(r"^```\n.*?^```$", old, re.M | re.S)
medians = blocks[-1] if blocks and "Spearman" in blocks[-1] else ""
section = "\n".join([
    "## Word-vector norm against frequency", "",
    "The demo model (`make demo`, 1 epoch of part01) against the same "
    "configuration after one step (`--train_steps=1`); drawn by "
    "`bash docs/make_siamese_cbow_plots.sh` (its record: "
    "`docs/records/word_norms/siamese_cbow_demo.json`).", "",
    "![Relative word-vector norm against log frequency, one line per model]"
    "(siamese_cbow_word_norms.png)", "",
    f"*{sys.argv[1]}*", "",
    "Below: the band medians of the ablation runs (untrained, paper flags, "
    "the run selected on STS-B dev), printed by the run of "
    "`bash docs/make_siamese_cbow_results.sh` that made this page.", "",
    medians, ""])
doc_sections.replace_section(path, title, section)
PY
.venv/bin/python -m lab.reports.formatting docs/siamese_cbow.md
echo "wrote docs/siamese_cbow_dev_curves.png, $png and their sections of docs/siamese_cbow.md"
