"""Every docs page reads on a screen and its marks mean what they say.

No machine paths, no overlong lines, and no Wilcoxon mark (\u2020) outside a
table labelled as the Siamese CBOW paper's test: a dagger on a score says
"better" to a reader, and the Wilcoxon test does not test that (issue 35).

The generated pages are written by `make docs` (lab/docs.py), which makes
them readable; this checks every committed page.
"""

import glob
import os
import re

from absl.testing import absltest

_DOCS = os.path.dirname(os.path.abspath(__file__))
_MACHINE_PATH = re.compile(r"/tmp/|/var/folders/|/work/[\w.-]+/|/home/\w+/")


def _pages():
  pages = sorted(glob.glob(os.path.join(_DOCS, "*.md")))
  assert pages, f"no pages in {_DOCS}"
  return pages


def _outside_code(text):
  """(line number, line) of the lines outside fenced code blocks."""
  code = False
  for number, line in enumerate(text.split("\n"), 1):
    if line.lstrip().startswith("```"):
      code = not code
    elif not code:
      yield number, line


def _blocks(text):
  """The paragraphs and tables outside code, each (kind, lines); a
  paragraph's wrapped lines are one block."""
  blocks = []
  for _, line in _outside_code(text):
    kind = "table" if line.startswith("|") else "text" if line.strip() else ""
    if kind and blocks and blocks[-1][0] == kind:
      blocks[-1][1].append(line)
    elif kind:
      blocks.append((kind, [line]))
    else:
      blocks.append(("", []))
  return [b for b in blocks if b[0]]


def wilcoxon_marks_unlabelled(text):
  """Lines carrying a dagger outside a table (and its caption, the
  paragraph right above it) that names the Wilcoxon test and says that no
  "better" mark rests on it."""
  bad, caption = [], ""
  for kind, lines in _blocks(text):
    if kind == "text":
      caption = " ".join(lines)
      if not _WILCOXON_LABEL.search(caption):
        bad += [line for line in lines if DAGGER in line]
    else:
      if not _WILCOXON_LABEL.search(caption):
        bad += [row for row in lines if DAGGER in row]
      caption = ""
  return bad


DAGGER = "\u2020"
_WILCOXON_LABEL = re.compile(r"Wilcoxon.*not behind any mark")


class PagesTest(absltest.TestCase):

  def test_no_unlabelled_wilcoxon_mark(self):
    for path in _pages():
      with open(path, encoding="utf-8") as f:
        bad = wilcoxon_marks_unlabelled(f.read())
      self.assertEqual(bad, [], f"{os.path.basename(path)}: Wilcoxon marks "
                       "outside a table labelled as the paper's test")

  def test_the_wilcoxon_check_fails_on_an_unlabelled_mark(self):
    labelled = ("Kenter et al.'s test (Wilcoxon signed-rank on the cosines; "
                f"{DAGGER}: p < 0.0001). It asks whether ...: it is not "
                "behind any mark above.\n\n| set | B vs A |\n|---|---:|\n"
                f"| STS2012.MSRpar | 1e-9{DAGGER} |\n")
    self.assertEqual(wilcoxon_marks_unlabelled(labelled), [])
    old_score_table = (f"Pearson's r. {DAGGER}: significantly different "
                       "from A (Wilcoxon signed-rank, p < 0.0001).\n\n"
                       "| set | A | B |\n|---|---:|---:|\n"
                       f"| STS2012.MSRpar | 22.94 | 20.07{DAGGER} |\n")
    self.assertLen(wilcoxon_marks_unlabelled(old_score_table), 2)
    old_p_table = ("Wilcoxon signed-rank test p-values "
                   f"({DAGGER}: p < 0.0001)\n\n| set | B vs A |\n|---|---:|\n"
                   f"| SICK.test | 0{DAGGER} |\n")
    self.assertLen(wilcoxon_marks_unlabelled(old_p_table), 2)

  def test_no_machine_path(self):
    for path in _pages():
      with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
          self.assertIsNone(_MACHINE_PATH.search(line),
                            f"{os.path.basename(path)}:{number}: {line[:120]}")

  def test_no_line_over_300_characters_outside_code(self):
    for path in _pages():
      with open(path, encoding="utf-8") as f:
        text = f.read()
      for number, line in _outside_code(text):
        self.assertLessEqual(len(line), 300,
                             f"{os.path.basename(path)}:{number}: "
                             f"{line[:120]}")


if __name__ == "__main__":
  absltest.main()
