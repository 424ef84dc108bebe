"""Tests for lab.reports.reproduction."""

import re

from absl.testing import absltest

from lab.reports import paper_numbers
from lab.reports import reproduction

class FormatTest(absltest.TestCase):

  def test_page(self):
    rows = [("A > B", "2 > 1", "1.0 vs 2.0", reproduction.DOES_NOT,
             "other data", "t-test p 0.01 " * 30),
            ("A is 3", "3", "2", reproduction.CANNOT, "no corpus", "one run")]
    page = reproduction.format_page([("Paper", "paper.md", rows)], "cmd")
    self.assertIn("Verdicts: reproduces 0, does not reproduce 1, cannot be "
                  "tested here 1.", page)
    self.assertIn("| 1 | A > B | 2 > 1 | 1.0 vs 2.0 | **does not reproduce** "
                  "| other data |", page)
    self.assertIn("2. one run", page)
    self.assertLessEqual(max(len(l) for l in page.splitlines()), 300)
    self.assertIn("<details>", page)

  def test_every_paper_table_has_claims(self):
    with open(reproduction.__file__, encoding="utf-8") as f:
      source = f.read()
    tables = [n for n in dir(paper_numbers)
              if re.fullmatch(r"[A-Z0-9_]+_TABLES?\d*", n)]
    self.assertGreaterEqual(len(tables), 5)
    for name in tables:
      self.assertIn(f"paper_numbers.{name}", source, name)


if __name__ == "__main__":
  absltest.main()
