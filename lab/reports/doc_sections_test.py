"""Tests for lab.reports.doc_sections (generated sections spliced into a page)."""

import os
import shutil
import tempfile

from absl.testing import absltest

from lab.reports import doc_sections

# A page as the docs/run_*.sh scripts find it: sections two blank lines
# apart, one section with a kept subsection, non-ASCII text, a table, and
# uneven spacing that no rewrite of another section may touch.
_INTRO = "# Page (generated)\n\nIntro § with Δ and †.\n\n\n"
_A = "## A\n\nold a\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n\n\n"
_SPEED = ("## Speed\n\nold side by side\n\n### uni\n\nold uni table\n\n\n"
          "### Ours only, another day\n\nstored figures\n\n")
_B = "## B\n\nold b  \n### not a section\n#### nor this\n\n\n"
_LAST = "## Last\n\nold last\n"
_PAGE = _INTRO + _A + _SPEED + _B + _LAST


class DocSectionsTest(absltest.TestCase):

  def _folder(self):
    folder = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, folder)
    return folder

  def _page(self, text=_PAGE):
    path = os.path.join(self._folder(), "page.md")
    with open(path, "w", encoding="utf-8") as f:
      f.write(text)
    return path

  def _read(self, path):
    with open(path, encoding="utf-8") as f:
      return f.read()

  def test_replaces_a_middle_section(self):
    path = self._page()
    doc_sections.replace_section(path, "B", "## B\n\nnew b\n")
    self.assertEqual(self._read(path), _INTRO + _A + _SPEED.rstrip("\n") +
                     "\n\n\n## B\n\nnew b\n\n" + _LAST)
    self.assertEqual(os.listdir(os.path.dirname(path)), ["page.md"])

  def test_replaces_the_last_section(self):
    path = self._page()
    doc_sections.replace_section(path, "Last", "## Last\n\nnew last\n")
    self.assertEqual(self._read(path), _INTRO + _A + _SPEED + _B.rstrip("\n") +
                     "\n\n\n## Last\n\nnew last\n")

  def test_appends_a_missing_section(self):
    path = self._page()
    doc_sections.replace_section(path, "New", "## New\n\nnew\n")
    self.assertEqual(self._read(path), _PAGE + "\n\n## New\n\nnew\n")

  def test_appends_to_a_page_without_a_final_newline(self):
    path = self._page("# Page\n\ntext")
    doc_sections.replace_section(path, "New", "## New\n\nnew\n",
                                 blank_lines=1)
    self.assertEqual(self._read(path), "# Page\n\ntext\n\n## New\n\nnew\n")

  def test_blank_lines_before_the_section(self):
    path = self._page()
    doc_sections.replace_section(path, "B", "## B\n\nnew b\n", blank_lines=1)
    self.assertEqual(self._read(path), _INTRO + _A + _SPEED.rstrip("\n") +
                     "\n\n## B\n\nnew b\n\n" + _LAST)

  def test_keep_from_keeps_the_subsection_and_what_follows(self):
    path = self._page()
    doc_sections.replace_section(path, "Speed",
                                 "## Speed\n\nnew side by side\n\n",
                                 keep_from="### Ours only, another day")
    self.assertEqual(
        self._read(path), _INTRO + _A.rstrip("\n") +
        "\n\n\n## Speed\n\nnew side by side\n\n\n"
        "### Ours only, another day\n\nstored figures\n\n" + _B + _LAST)

  def test_keep_from_absent_from_the_section_keeps_nothing_of_it(self):
    path = self._page()
    # "### not a section" is in section B, after the one replaced: it is not
    # kept from there, and B stays whole.
    doc_sections.replace_section(path, "A", "## A\n\nnew a\n",
                                 keep_from="### not a section")
    self.assertEqual(self._read(path),
                     _INTRO.rstrip("\n") + "\n\n\n## A\n\nnew a\n\n" +
                     _SPEED + _B + _LAST)
    path = self._page()
    doc_sections.replace_section(path, "Speed", "## Speed\n\nnew\n",
                                 keep_from="### Ours only, later")
    self.assertEqual(self._read(path), _INTRO + _A.rstrip("\n") +
                     "\n\n\n## Speed\n\nnew\n\n" + _B + _LAST)

  def test_keep_from_in_a_missing_section(self):
    path = self._page()
    doc_sections.replace_section(path, "New", "## New\n\nnew\n\n",
                                 keep_from="### Ours only, another day")
    self.assertEqual(self._read(path), _PAGE + "\n\n## New\n\nnew\n\n")

  def test_other_sections_untouched_byte_for_byte(self):
    parts = [("A", _A), ("Speed", _SPEED), ("B", _B), ("Last", _LAST)]
    for i, (title, _) in enumerate(parts):
      path = self._page()
      text = f"## {title}\n\nnew {title} §\n"
      doc_sections.replace_section(path, title, text)
      before = _INTRO + "".join(part for _, part in parts[:i])
      after = "".join(part for _, part in parts[i + 1:])
      self.assertEqual(self._read(path), before.rstrip("\n") + "\n\n\n" +
                       text + ("\n" + after if after else ""))
      # Rewriting it with the same text changes nothing.
      doc = self._read(path)
      doc_sections.replace_section(path, title, text)
      self.assertEqual(self._read(path), doc)
    # A section's title is a whole line: "## B" does not match "## Bx", and
    # a heading at the very start of the page is found.
    path = self._page("## Bx\n\nbx\n\n\n## B\n\nb\n")
    doc_sections.replace_section(path, "Bx", "## Bx\n\nnew bx\n")
    self.assertEqual(self._read(path), "## Bx\n\nnew bx\n\n## B\n\nb\n")
    doc_sections.replace_section(path, "B", "## B\n\nnew b\n")
    self.assertEqual(self._read(path),
                     "## Bx\n\nnew bx\n\n\n## B\n\nnew b\n")

  def test_text_must_start_with_the_heading(self):
    path = self._page()
    with self.assertRaisesRegex(ValueError, "must start with the line '## B'"):
      doc_sections.replace_section(path, "B", "## Bx\n\nnew\n")
    with self.assertRaises(ValueError):
      doc_sections.replace_section(path, "B", "new b\n")
    self.assertEqual(self._read(path), _PAGE)


if __name__ == "__main__":
  absltest.main()
