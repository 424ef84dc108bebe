#!/usr/bin/env bash
# Draws docs/siamese_cbow_word_norms.png and rewrites the "Word-vector norm
# against frequency" section of docs/siamese_cbow.md: the demo model
# (`make demo`: 1 epoch of part01) against the same configuration after one
# step (`--train_steps=1`), on one pair of axes. The binned curves are kept
# in docs/records/word_norms/siamese_cbow_demo.json, so when the two runs are
# not on the machine the plot and caption are drawn again from that record.
#   TRAINED=runs/siamese_cbow_demo UNTRAINED=runs/siamese_cbow_demo_untrained \
#     bash docs/make_word_norms.sh
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
trained="${TRAINED:-runs/siamese_cbow_demo}"
untrained="${UNTRAINED:-runs/siamese_cbow_demo_untrained}"
record=docs/records/word_norms/siamese_cbow_demo.json
png=docs/siamese_cbow_word_norms.png
mkdir -p "$(dirname "$record")"
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
caption=$($py -m reports.word_norms "${args[@]}" --output_png="$png" \
          2>/dev/null | tail -1)
$py - "$caption" <<'PY'
import re
import sys
from sentzoo.reports import doc_sections
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
    "`bash docs/make_word_norms.sh` (its record: "
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
.venv/bin/python -m reports.formatting docs/siamese_cbow.md
echo "wrote $png and the word-norm section of docs/siamese_cbow.md"
