"""Tests for lab.reports.reproduction."""

import os
import re

from absl.testing import absltest

from lab.reports import paper_numbers
from lab.reports import reproduction

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


class CommittedPageTest(absltest.TestCase):

  def test_committed_page_is_the_generators_output(self):
    data_dir = os.environ.get("SENTZOO_DATA_DIR") or os.path.join(
        _ROOT, "..", "shared", "data")
    if not os.path.isdir(os.path.join(data_dir, "sts")):
      self.skipTest("no data directory: the CHARAGRAM tests need its gold")
    cwd = os.getcwd()
    os.chdir(_ROOT)
    self.addCleanup(os.chdir, cwd)
    page = reproduction.run(["reproduction", f"--data_dir={data_dir}",
                             "--output="])
    with open("docs/REPRODUCTION.md", encoding="utf-8") as f:
      self.assertEqual(f.read(), page)
    # Every claim of the papers' tables has its row, each with a verdict.
    verdicts = re.findall(r"^\| \d+ \|.*\| \*\*(.*?)\*\* \|", page, re.M)
    self.assertLen(verdicts, 18)
    self.assertContainsSubset(set(verdicts), {
        reproduction.REPRODUCES, reproduction.DOES_NOT, reproduction.CANNOT})
    for section in ("Siamese CBOW", "CHARAGRAM", "Hybrid siamese",
                    "Sent2Vec"):
      self.assertIn(f"## [{section}]", page)


if __name__ == "__main__":
  absltest.main()
