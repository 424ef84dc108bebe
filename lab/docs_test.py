"""The committed pages are what `make docs` writes from the records."""

import os
import shutil
import tempfile

from absl.testing import absltest

from lab import docs
from sentzoo.common import errors


def _context(root, data_dir=""):
  return docs.Context(root, "docs/records", data_dir, "", {})


class WritePartsTest(absltest.TestCase):

  def test_a_part_runs_from_its_line_to_its_end_line(self):
    page = "# T\n\nkept\n\n## A\nold\n\n## B\nkept too\n"
    part = docs.Part("## A", "## ", lambda context: "## A\nnew\n\n")
    self.assertEqual(docs.split_part(page, part),
                     ("# T\n\nkept\n\n", "## A\nold\n\n", "## B\nkept too\n"))
    self.assertEqual(docs.write_parts(page, [part], None),
                     "# T\n\nkept\n\n## A\nnew\n\n## B\nkept too\n")

  def test_to_the_page_end_and_to_a_blank_line(self):
    page = "intro\n| a |\n| b |\n\n## Tail\nx\n"
    self.assertEqual(docs.write_parts(page, [
        docs.Part("| a |", "", lambda c: "| c |\n"),
        docs.Part("## Tail", None, lambda c: "## Tail\ny\n")], None),
                     "intro\n| c |\n\n## Tail\ny\n")

  def test_a_missing_line_is_a_user_error(self):
    with self.assertRaisesRegex(errors.UserError, "page.md: no line"):
      docs.write_parts("text\n", [docs.Part("## A", None, str)], None,
                       "page.md")
    with self.assertRaisesRegex(errors.UserError, "'## B'"):
      docs.write_parts("## A\n", [docs.Part("## A", "## B", str)], None)

  def test_recorded_parts_are_read_from_the_records(self):
    root = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, root)
    os.makedirs(os.path.join(root, "docs", "records", "x"))
    with open(os.path.join(root, "docs", "records", "x", "y.md"), "w",
              encoding="utf-8") as f:
      f.write("## Y\nmeasured\n")
    render = docs.recorded("x/y.md")
    self.assertEqual(render(_context(root)._replace(
        records=os.path.join(root, "docs", "records"))), "## Y\nmeasured\n")
    render = docs.recorded("x/z.md", absent="## Z\nnot yet\n")
    self.assertEqual(render(_context(root)._replace(
        records=os.path.join(root, "docs", "records"))), "## Z\nnot yet\n")


class CommittedPagesTest(absltest.TestCase):

  def test_the_committed_pages_are_what_make_docs_writes(self):
    data_dir = os.environ.get("SENTZOO_DATA_DIR") or os.path.join(
        docs.ROOT, "..", "shared", "data")
    if not os.path.isdir(os.path.join(data_dir, "sts")):
      self.skipTest("no data directory: the CHARAGRAM tests need its gold")
    context = docs.context_for(data_dir)
    for path, text in docs.pages(context).items():
      with open(os.path.join(docs.ROOT, path), encoding="utf-8") as f:
        self.assertEqual(f.read(), text, f"{path} is not what `make docs` "
                         "writes: run it")


if __name__ == "__main__":
  absltest.main()
