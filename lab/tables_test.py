"""Tests for lab.reports.tables."""

import math
import os
import tempfile

from absl.testing import absltest

from lab import tables
from sentzoo.common import errors


class FormattingTest(absltest.TestCase):

  def test_numbers(self):
    self.assertEqual(tables.number(1.234), "1.23")
    self.assertEqual(tables.number(1.25, 1), "1.2")
    self.assertEqual(tables.number(math.nan), "\u2013")
    self.assertEqual(tables.number(None), "\u2013")
    self.assertIsNone(tables.number_or_none(math.nan))
    self.assertEqual(tables.number_or_none(3), 3.0)

  def test_pvalue(self):
    self.assertEqual(tables.pvalue(0.04567), "0.046")
    self.assertEqual(tables.pvalue(0.0001), "<0.001")
    self.assertEqual(tables.pvalue(None), "\u2013")

  def test_mean_std(self):
    self.assertEqual(tables.mean_std((1.0, 0.5, 3)), "1.00 \u00b1 0.50")
    self.assertEqual(tables.mean_std((1.0, 0.5, 3), 1, count=True),
                     "1.0 \u00b1 0.5 (n=3)")
    self.assertEqual(tables.mean_std((math.nan, math.nan, 0)), "\u2013")

  def test_median_range(self):
    self.assertEqual(tables.median_range([3000.0, 1000.0, 2500.4]),
                     "2,500 (1,000\u20133,000)")
    self.assertEqual(tables.median_range([1.5, 0.5], ".2f", "x"),
                     "1.00x (0.50\u20131.50)")
    self.assertEqual(tables.median_range([2.0], ".1f", " MB"), "2.0 MB")

  def test_code_and_commands(self):
    self.assertEqual(tables.code("a`b"), "``a`b``")
    self.assertEqual(tables.code("`x"), "`` `x ``")
    section = tables.commands_section(["bash a.sh", "python -m b"])
    self.assertTrue(section.startswith("<details><summary>"))
    self.assertIn("```\nbash a.sh\npython -m b\n```", section)
    self.assertTrue(section.rstrip().endswith("</details>"))

  def test_table_and_name_value(self):
    self.assertEqual(tables.table(["a", "b"], [[1, "x"]]),
                     "| a | b |\n|---|---|\n| 1 | x |\n")
    self.assertEqual(tables.table(["a"], [], "|:-|"), "| a |\n|:-|\n")
    self.assertEqual(tables.name_value(" n = a=b", "--m"), ("n", "a=b"))
    for bad in ("path", "=p", "n="):
      with self.assertRaisesRegex(errors.UserError, "--m='.*': expected N=P"):
        tables.name_value(bad, "--m", "N=P")

  def test_readable(self):
    long_row = "| a | " + "x" * 200 + " | " + "y" * 150 + " |"
    page = "\n".join([
        "# Title", "",
        "Produced by: `python -m reports.x --output=/tmp/tmp.AbC123/out.md "
        + "--flag=1 " * 10 + "`", "",
        "word " * 100, "",
        "- item " + "word " * 80, "",
        "| h | i | j |", "|---|---|---|", long_row, "",
        "```", "code " * 100, "```",
        "run /work/main/.venv/bin/python -m a in /work/wt_x/docs"])
    out = tables.readable(page)
    self.assertNotIn("/tmp/", out)
    self.assertNotIn("/work/", out)
    self.assertIn("--output=$TMPDIR/out.md", out)
    self.assertIn("run python -m a in docs", out)
    self.assertIn("<details><summary>Produced by</summary>", out)
    lines = out.split("\n")
    code = [i for i, l in enumerate(lines) if l == "```"]
    for i, line in enumerate(lines):
      if not any(a < i < b for a, b in zip(code[::2], code[1::2])):
        self.assertLessEqual(len(line), 300, line[:80])
    self.assertIn("code " * 100, out)  # code blocks are kept whole
    self.assertIn("| a | [1] | " + "y" * 150 + " |", out)
    self.assertIn("- [1] " + "x" * 94, out)
    self.assertTrue(any(l.startswith("  word") for l in lines))  # list item
    self.assertEqual(tables.readable(out), out)


class LinePlotTest(absltest.TestCase):

  def test_line_plot_draws_on_labelled_axes(self):
    path = os.path.join(tempfile.mkdtemp(), "plot.png")
    drawn = []

    def draw(axis):
      axis.plot([1, 2, 3], [3, 1, 2], label="a line")
      drawn.append((axis.get_xlabel(), [l.get_label() for l in axis.lines]))

    tables.line_plot(path, "A title", "x label", "y label", draw)
    # draw runs on fresh axes, before the labels are set.
    self.assertEqual(drawn, [("", ["a line"])])
    with open(path, "rb") as f:
      self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
  absltest.main()
