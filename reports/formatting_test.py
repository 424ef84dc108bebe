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


if __name__ == "__main__":
  absltest.main()
