"""Tests for lab.reports.baselines."""

import os
import re

from absl.testing import absltest

from lab.reports import baselines
from sentzoo.common import errors
from sentzoo.tests import test_util

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The shared folder holds data/ and baselines/: the parent of
# $SENTZOO_DATA_DIR (which `make bazel-test` sets and .bazelrc passes to
# Bazel's tests, whose runfiles tree has no ../shared), else <repo>/../shared.
SHARED_BASELINES = os.path.join(
    os.path.dirname(os.path.abspath(os.environ["SENTZOO_DATA_DIR"]))
    if os.environ.get("SENTZOO_DATA_DIR") else
    os.path.join(REPO_ROOT, "..", "shared"), "baselines")

PAGE = """# A baseline

Some prose | with a pipe, and another table that is not the results:

| speed | value |
|---|---:|
| CBOW | 2.04M |

| set | pairs | CBOW Pearson | CBOW Spearman | skip-gram Pearson | skip-gram Spearman |
|---|---:|---:|---:|---:|---:|
| STS2012.MSRpar | 750 | 24.20 | 27.36 | 28.13 | 32.76 |
| STS2012.SMTeuroparl | 459 | 0.58 | 33.07 | -5.05 | 43.57 |
| SICK.test | 4927 | 59.18 | 53.41 | | |
| **mean of the 19 STS 2012\u20132015 sets (2013 SMT not available)** | | 41.56 | 44.78 | 49.11 | 53.22 |
| **STS 2014 mean (6 sets)** | | 44.65 | 45.87 | 53.50 | 54.22 |

Trailing prose.
"""

NO_SPEARMAN = """| set | pairs | 9 epochs Pearson | 9 epochs Spearman | 1 epoch Pearson |
|---|---:|---:|---:|---:|
| **2012** | | | | |
| STS2012.MSRpar | 750 | 32.45 | 33.70 | 13.30 |
| **STS 2012 mean (1 sets)** | | 32.45 | 33.70 | 13.30 |
"""


class LoadBaselineFileTest(absltest.TestCase):

  def write(self, text):
    return test_util.write_file(
        os.path.join(test_util.make_tempdir(self), "page.md"), text)

  def test_pairs_columns_and_keys(self):
    columns = baselines.load_baseline_file(self.write(PAGE), "word2vec")
    self.assertEqual(list(columns), ["word2vec CBOW", "word2vec skip-gram"])
    cbow, skip = columns["word2vec CBOW"], columns["word2vec skip-gram"]
    self.assertEqual(list(cbow), ["STS2012.MSRpar", "STS2012.SMTeuroparl",
                                  "SICK.test", "STS.mean", "STS2014.mean"])
    self.assertEqual(cbow["STS2012.MSRpar"], (24.20, 27.36))
    self.assertEqual(skip["STS2012.SMTeuroparl"], (-5.05, 43.57))
    self.assertEqual(cbow["STS.mean"], (41.56, 44.78))
    self.assertEqual(skip["STS2014.mean"], (53.50, 54.22))
    self.assertNotIn("SICK.test", skip)  # Empty cells: no value.

  def test_missing_spearman_and_headings(self):
    columns = baselines.load_baseline_file(self.write(NO_SPEARMAN))
    self.assertEqual(columns, {
        "9 epochs": {"STS2012.MSRpar": (32.45, 33.70),
                     "STS2012.mean": (32.45, 33.70)},
        "1 epoch": {"STS2012.MSRpar": (13.30, None),
                    "STS2012.mean": (13.30, None)}})

  def test_malformed(self):
    header = "| set | pairs | A Pearson | A Spearman |\n|---|---:|---:|---:|\n"
    cases = [
        ("# nothing here\n", 1, "no results table"),
        (header + "| STS2012.MSRpar | 750 | 1.0 |\n", 3, "3 cells"),
        (header + "| STS2012.MSRpar | 750 | x | 2 |\n", 3, "not a correl"),
        (header + "| a | 1 | 1 | 2 |\n| a | 1 | 1 | 2 |\n", 4, "twice"),
        (header + "| **best of all** | | 1 | 2 |\n", 3, "unknown row"),
        ("| set | A Spearman |\n|---|---:|\n", 1, "no 'A Pearson'"),
        ("| set | A Pearson | A score |\n|---|---:|---:|\n", 1, "'A score'"),
        ("| set | A Pearson |\n| a | 1 |\n", 2, "separator"),
        (header + "| a | 1 | 1 | 2 |\n\n" + header, 4, "more than one"),
    ]
    for text, line, message in cases:
      path = self.write(text)
      with self.assertRaisesRegex(errors.DataFormatError,
                                  f"^{re.escape(path)}:{line}: .*{message}"):
        baselines.load_baseline_file(path)

  def test_load_references(self):
    path = self.write(PAGE)
    references = baselines.load_references([f"w2v={path}",
                                            f" other = {path}"])
    self.assertEqual(list(references), ["w2v CBOW", "w2v skip-gram",
                                        "other CBOW", "other skip-gram"])
    with self.assertRaisesRegex(errors.UserError, "already given"):
      baselines.load_references([f"w2v={path}", f"w2v={path}"])
    for spec in ["nopath", "=x.md", "w2v="]:
      with self.assertRaisesRegex(errors.UserError, "PREFIX=PATH"):
        baselines.load_references([spec])
    with self.assertRaisesRegex(errors.UserError, "cannot read"):
      baselines.load_references([f"w2v={path}.absent"])


class SharedBaselinesTest(absltest.TestCase):
  """Parses the project's real baseline pages when they are there."""

  def setUp(self):
    super().setUp()
    if not os.path.isdir(SHARED_BASELINES):
      self.skipTest(f"no {SHARED_BASELINES}")

  def test_word2vec(self):
    columns = baselines.load_baseline_file(
        os.path.join(SHARED_BASELINES, "word2vec_books_sts.md"), "word2vec")
    self.assertEqual(list(columns), ["word2vec CBOW", "word2vec skip-gram"])
    for column in columns.values():
      self.assertLen(column, 22)  # 19 STS sets, SICK.test, 2 means.
    self.assertEqual(columns["word2vec skip-gram"]["STS.mean"][0], 49.11)
    self.assertEqual(columns["word2vec CBOW"]["STS2014.mean"][0], 44.65)

  def test_sent2vec(self):
    columns = baselines.load_baseline_file(
        os.path.join(SHARED_BASELINES, "sent2vec_books_sts.md"), "sent2vec")
    self.assertEqual(list(columns), ["sent2vec 9 epochs", "sent2vec 1 epoch"])
    self.assertEqual(columns["sent2vec 9 epochs"]["SICK.test"][0], 64.15)
    self.assertEqual(columns["sent2vec 1 epoch"]["STS.mean"], (33.84, None))


if __name__ == "__main__":
  absltest.main()
