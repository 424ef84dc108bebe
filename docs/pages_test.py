"""Every docs page reads on a screen: no machine paths, no overlong lines.

The pages are generated (their scripts end with `python -m
reports.formatting PAGE`); this checks what is committed.
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


class PagesTest(absltest.TestCase):

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
