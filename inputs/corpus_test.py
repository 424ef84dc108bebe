"""Tests for inputs.corpus."""

import gzip
import os

import tensorflow as tf

from sentzoo.common import errors
from sentzoo.inputs import corpus
from sentzoo.inputs import data_integrity


def _write(path, lines):
  text = "".join(line + "\n" for line in lines)
  if path.endswith(".gz"):
    with gzip.open(path, "wt", encoding="utf-8") as f:
      f.write(text)
  else:
    with open(path, "w", encoding="utf-8") as f:
      f.write(text)


class CorpusTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.dir = self.get_temp_dir()
    self.a = os.path.join(self.dir, "part02.txt.gz")
    self.b = os.path.join(self.dir, "part01.txt")
    self.c = os.path.join(self.dir, "other.txt")
    _write(self.a, ["gz one", "", "gz two"])
    _write(self.b, ["plain one", "plain two"])
    _write(self.c, ["other"])

  def test_list_files_sorted_glob(self):
    self.assertEqual(corpus.list_files(os.path.join(self.dir, "part*")),
                     [self.b, self.a])

  def test_list_files_comma_separated_and_list(self):
    patterns = f"{self.c},{os.path.join(self.dir, 'part*')}"
    self.assertEqual(corpus.list_files(patterns), [self.c, self.b, self.a])
    self.assertEqual(corpus.list_files([self.a, self.c]), [self.a, self.c])
    # Empty pieces of a comma-separated string are ignored.
    self.assertEqual(corpus.list_files(f"{self.a},,"), [self.a])

  def test_list_files_missing_pattern_raises(self):
    missing = os.path.join(self.dir, "nothing*.txt")
    with self.assertRaisesRegex(errors.DataDirError, "nothing"):
      corpus.list_files(f"{self.a},{missing}")
    with self.assertRaises(errors.UserError):
      corpus.list_files([missing])

  def test_book_corpus_pattern(self):
    self.assertEqual(corpus.book_corpus_pattern("/d"),
                     os.path.join("/d", "gutenberg", "part*.txt.gz"))
    self.assertEqual(
        corpus.book_corpus_pattern("/d", [1, 12]),
        os.path.join("/d", "gutenberg", "part01.txt.gz") + ","
        + os.path.join("/d", "gutenberg", "part12.txt.gz"))

  def _write_index(self, rows, header=("part", "book_order_in_part",
                                        "first_line_in_part")):
    data_dir = os.path.join(self.get_temp_dir(), "indexed")
    os.makedirs(os.path.join(data_dir, "gutenberg"), exist_ok=True)
    with open(data_integrity.book_index_path(data_dir), "w") as f:
      f.write("\t".join(header) + "\n")
      for row in rows:
        f.write("\t".join(str(x) for x in row) + "\n")
    return data_dir

  def test_last_books_start(self):
    # Part 2's books start at lines 1, 40 and 95 (1-based).
    data_dir = self._write_index(
        [(1, 0, 1), (1, 1, 10), (2, 0, 1), (2, 1, 40), (2, 2, 95)])
    self.assertEqual(corpus.last_books_start(data_dir, 2, 1), 94)
    self.assertEqual(corpus.last_books_start(data_dir, 2, 2), 39)
    self.assertEqual(corpus.last_books_start(data_dir, 1, 1), 9)

  def test_last_books_start_errors(self):
    data_dir = self._write_index([(1, 0, 1), (1, 1, 10)])
    with self.assertRaisesRegex(errors.DataDirError, "cannot hold out 2"):
      corpus.last_books_start(data_dir, 1, 2)
    with self.assertRaisesRegex(errors.DataDirError, "not found"):
      corpus.last_books_start(self.get_temp_dir() + "/none", 1, 1)
    data_dir = self._write_index([(1, 0, 1), (1, "x", "ten")])
    with self.assertRaisesRegex(errors.DataFormatError, r"index.tsv:3:"):
      corpus.last_books_start(data_dir, 1, 1)
    data_dir = self._write_index([(1, 0)], header=("part", "order"))
    with self.assertRaisesRegex(errors.DataFormatError, r"index.tsv:1:"):
      corpus.last_books_start(data_dir, 1, 1)

  def test_line_dataset_single_file(self):
    lines = [l.decode() for l in
             corpus.line_dataset([self.a]).as_numpy_iterator()]
    self.assertEqual(lines, ["gz one", "", "gz two"])

  def test_line_dataset_inserts_empty_line_between_files(self):
    lines = [l.decode() for l in corpus.line_dataset(
        [self.a, self.b, self.c]).as_numpy_iterator()]
    self.assertEqual(lines, ["gz one", "", "gz two", "",
                             "plain one", "plain two", "",
                             "other"])

  def test_line_dataset_and_what_is_made_from_it_have_no_autotune_thread(self):
    dataset = corpus.line_dataset([self.a, self.b]).batch(2).map(
        tf.strings.length, num_parallel_calls=tf.data.AUTOTUNE)
    self.assertIs(dataset.options().autotune.enabled, False)
    # Unset (None: autotuning on) elsewhere.
    self.assertIsNone(tf.data.Dataset.range(2).options().autotune.enabled)

  def test_line_dataset_from_tensor(self):
    for path, expected in ((self.a, ["gz one", "", "gz two"]),
                           (self.b, ["plain one", "plain two"])):
      dataset = corpus.line_dataset_from_tensor(tf.constant(path))
      self.assertEqual([l.decode() for l in dataset.as_numpy_iterator()],
                       expected)


if __name__ == "__main__":
  tf.test.main()
