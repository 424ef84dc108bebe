"""Tests for scored_pairs: the PairSet checks and the line reader."""

import os

import numpy as np
import tensorflow as tf

from sentzoo.inputs import scored_pairs


class PairSetTest(tf.test.TestCase):

  def test_scores_become_float64_vectors(self):
    pair_set = scored_pairs.PairSet("toy", ["a", "b"], ["c", "d"], [[1], [2]])
    self.assertLen(pair_set, 2)
    self.assertEqual(pair_set.scores.dtype, np.float64)
    self.assertAllEqual(pair_set.scores, [1.0, 2.0])

  def test_lengths_must_agree(self):
    with self.assertRaisesRegex(ValueError, "toy: 2 / 1 sentences and 2"):
      scored_pairs.PairSet("toy", ["a", "b"], ["c"], [1.0, 2.0])


class ReadLinesTest(tf.test.TestCase):

  def _write(self, data):
    path = os.path.join(self.get_temp_dir(), "lines.txt")
    with open(path, "wb") as f:
      f.write(data)
    return path

  def test_splits_on_newline_only(self):
    path = self._write("a\u2028b\r\nc\n\nd\n".encode("utf-8"))
    self.assertEqual(scored_pairs.read_lines(path), ["a\u2028b", "c", "", "d"])

  def test_last_line_without_newline_and_invalid_bytes(self):
    path = self._write(b"x\n\xff y")
    self.assertEqual(scored_pairs.read_lines(path), ["x", "\ufffd y"])

  def test_empty_file(self):
    self.assertEqual(scored_pairs.read_lines(self._write(b"")), [])


if __name__ == "__main__":
  tf.test.main()
