"""Tests for evaluation.senteval_data."""

import os

import numpy as np
import tensorflow as tf

from lab import senteval_data
from sentzoo.common import errors
from sentzoo.tests import senteval_fixtures
from sentzoo.tests import test_util


class LoadersOnFixturesTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.data_dir = test_util.make_tempdir(self)
    self.sizes = senteval_fixtures.write_senteval_fixture(self.data_dir)

  def test_binary_tasks_sizes_labels_and_encodings(self):
    for task in ("MR", "CR", "SUBJ", "MPQA"):
      data = senteval_data.load_task(self.data_dir, task)
      self.assertLen(data, self.sizes[task], task)
      self.assertEqual(set(np.unique(data.labels)), {0, 1})
      self.assertLen(data.label_names, 2)
    mr = senteval_data.load_task(self.data_dir, "MR")
    # latin-1 file: the e-acute decodes as one character.
    self.assertTrue(any(s.startswith("caf\u00e9 ") for s in mr.sentences))
    self.assertEqual(mr.label_names, ("negative", "positive"))
    self.assertEqual(mr.labels[mr.sentences.index(
        next(s for s in mr.sentences if s.startswith("caf")))], 1)
    cr = senteval_data.load_task(self.data_dir, "CR")
    self.assertIn("", cr.sentences)  # empty lines are samples, as in SentEval

  def test_trec(self):
    trec = senteval_data.load_trec(self.data_dir)
    self.assertLen(trec["train"], self.sizes["TREC"][0])
    self.assertLen(trec["test"], self.sizes["TREC"][1])
    self.assertEqual(trec["train"].label_names, senteval_data.TREC_LABELS)
    self.assertEqual(set(trec["train"].labels.tolist()), set(range(6)))
    self.assertIn("na\u00efve", trec["train"].sentences[1])
    self.assertFalse(trec["train"].sentences[0].startswith("fine"))

  def test_msrp_train_is_train_plus_val_bom_and_crlf(self):
    msrp = senteval_data.load_msrp(self.data_dir)
    self.assertLen(msrp["train"], self.sizes["MSRP"][0])
    self.assertLen(msrp["test"], self.sizes["MSRP"][1])
    for s in msrp["train"].sentences1 + msrp["test"].sentences2:
      self.assertNotIn("\r", s)
    self.assertEqual(set(msrp["train"].labels.tolist()), {0, 1})

  def test_availability(self):
    for task in senteval_data.TASKS:
      self.assertTrue(senteval_data.task_available(self.data_dir, task))
    os.remove(os.path.join(self.data_dir, "msrp", "msr-para-test.tsv"))
    self.assertFalse(senteval_data.task_available(self.data_dir, "MSRP"))


class MalformedLinesTest(tf.test.TestCase):

  def _path(self, name, content):
    return test_util.write_file(
        os.path.join(test_util.make_tempdir(self), name), content)

  def assert_error_at(self, fn, path, line):
    with self.assertRaises(errors.DataFormatError) as ctx:
      fn(path)
    self.assertEqual(ctx.exception.line_number, line)
    self.assertIn(f"{path}:{line}:", str(ctx.exception))

  def test_trec_errors(self):
    path = self._path("t.label", "HUM:ind Who ?\nno label here\n")
    self.assert_error_at(senteval_data.load_trec_file, path, 2)
    path = self._path("t.label", "HUM:ind Who ?\nFOO:bar What ?\n")
    self.assert_error_at(senteval_data.load_trec_file, path, 2)
    path = self._path("t.label", "HUM:ind Who ?\n\nLOC:city Where ?\n")
    self.assert_error_at(senteval_data.load_trec_file, path, 2)

  def test_msrp_errors(self):
    header = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    path = self._path("m.tsv", header + "1\t1\t2\ta\tb\n2\t3\t4\tc\td\n")
    self.assert_error_at(senteval_data.load_msrp_file, path, 3)
    path = self._path("m.tsv", header + "1\t1\t2\ta b c\n")
    self.assert_error_at(senteval_data.load_msrp_file, path, 2)
    path = self._path("m.tsv", "1\t1\t2\ta\tb\n")
    self.assert_error_at(senteval_data.load_msrp_file, path, 1)

  def test_binary_errors(self):
    empty = self._path("e.pos", b"")
    with self.assertRaises(errors.DataFormatError):
      senteval_data.load_binary_files([empty], ["x"])
    nul = self._path("n.pos", b"fine\nbad\x00line\n")
    with self.assertRaises(errors.DataFormatError) as ctx:
      senteval_data.load_binary_files([nul], ["x"])
    self.assertEqual(ctx.exception.line_number, 2)
    with self.assertRaises(errors.DataDirError):
      senteval_data.read_lines(os.path.join(test_util.make_tempdir(self),
                                            "absent"))

  def test_read_lines_decoding(self):
    utf8 = self._path("u.txt", "caf\u00e9\r\nb\n".encode("utf-8"))
    self.assertEqual(senteval_data.read_lines(utf8), ["caf\u00e9", "b"])
    latin = self._path("l.txt", "caf\u00e9\nb".encode("latin-1"))
    self.assertEqual(senteval_data.read_lines(latin), ["caf\u00e9", "b"])


class RealDataTest(tf.test.TestCase):
  """The shared data's sizes are SentEval's (skipped without the data)."""

  def test_sizes(self):
    data_dir = test_util.real_data_dir()
    if data_dir is None or not os.path.isdir(
        os.path.join(data_dir, "senteval")):
      self.skipTest("../shared/data (or $SENTZOO_DATA_DIR) with senteval/ "
                    "is not available")
    expected = {"MR": 10662, "CR": 3775, "SUBJ": 10000, "MPQA": 10606}
    for task, size in expected.items():
      self.assertLen(senteval_data.load_task(data_dir, task), size, task)
    trec = senteval_data.load_trec(data_dir)
    self.assertEqual((len(trec["train"]), len(trec["test"])), (5452, 500))
    msrp = senteval_data.load_msrp(data_dir)
    self.assertEqual((len(msrp["train"]), len(msrp["test"])), (4076, 1725))
    self.assertEqual(int(msrp["test"].labels.sum()), 1147)


if __name__ == "__main__":
  tf.test.main()
