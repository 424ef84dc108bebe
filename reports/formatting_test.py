"""Tests for reports.formatting."""

import math

from absl.testing import absltest

from sentzoo.reports import formatting


class FormattingTest(absltest.TestCase):

  def test_numbers(self):
    self.assertEqual(formatting.number(1.234), "1.23")
    self.assertEqual(formatting.number(1.25, 1), "1.2")
    self.assertEqual(formatting.number(math.nan), "\u2013")
    self.assertEqual(formatting.number(None), "\u2013")
    self.assertIsNone(formatting.number_or_none(math.nan))
    self.assertEqual(formatting.number_or_none(3), 3.0)

  def test_pvalue(self):
    self.assertEqual(formatting.pvalue(0.04567), "0.046")
    self.assertEqual(formatting.pvalue(0.0001), "<0.001")
    self.assertEqual(formatting.pvalue(None), "\u2013")

  def test_mean_std(self):
    self.assertEqual(formatting.mean_std((1.0, 0.5, 3)), "1.00 \u00b1 0.50")
    self.assertEqual(formatting.mean_std((1.0, 0.5, 3), 1, count=True),
                     "1.0 \u00b1 0.5 (n=3)")
    self.assertEqual(formatting.mean_std((math.nan, math.nan, 0)), "\u2013")

  def test_code_and_commands(self):
    self.assertEqual(formatting.code("a`b"), "``a`b``")
    self.assertEqual(formatting.code("`x"), "`` `x ``")
    section = formatting.commands_section(["bash a.sh", "python -m b"])
    self.assertTrue(section.startswith("<details><summary>"))
    self.assertIn("```\nbash a.sh\npython -m b\n```", section)
    self.assertTrue(section.rstrip().endswith("</details>"))

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
    out = formatting.readable(page)
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
    self.assertEqual(formatting.readable(out), out)


if __name__ == "__main__":
  absltest.main()
