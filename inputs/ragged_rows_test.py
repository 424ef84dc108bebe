"""Tests for inputs.ragged_rows: TensorFlow's results, linear memory."""

import numpy as np
import tensorflow as tf

from sentzoo.inputs import ragged_rows


def _random_ragged(rng, rows, max_length, splits_dtype=tf.int64):
  lengths = rng.integers(0, max_length + 1, size=rows)
  lengths[rng.random(rows) < 0.3] = 0  # Many empty rows, runs of them too.
  values = rng.integers(0, 5, size=int(lengths.sum())).astype(np.int32)
  return tf.RaggedTensor.from_row_lengths(
      values, tf.constant(lengths, splits_dtype))


class RaggedRowsTest(tf.test.TestCase):

  def test_same_as_tensorflow_on_random_rows(self):
    rng = np.random.default_rng(0)
    for trial in range(30):
      rows = int(rng.integers(0, 40))
      for dtype in (tf.int64, tf.int32):
        rt = _random_ragged(rng, rows, int(rng.integers(0, 9)), dtype)
        with self.subTest(trial=trial, dtype=dtype):
          self.assertAllEqual(ragged_rows.row_ids(rt), rt.value_rowids())
          keep = rt.flat_values > 1
          got = ragged_rows.keep_values(rt, keep)
          want = tf.ragged.boolean_mask(rt, rt.with_flat_values(keep))
          self.assertAllEqual(got.row_splits, want.row_splits)
          self.assertAllEqual(got.flat_values, want.flat_values)
          self.assertEqual(got.row_splits.dtype, dtype)
          row_keep = tf.constant(rng.random(rows) < 0.5)
          got = ragged_rows.keep_rows(rt, row_keep)
          want = tf.ragged.boolean_mask(rt, row_keep)
          self.assertAllEqual(got.row_splits, want.row_splits)
          self.assertAllEqual(got.flat_values, want.flat_values)

  def test_inside_a_graph(self):
    @tf.function
    def f(rt):
      return (ragged_rows.row_ids(rt),
              ragged_rows.keep_values(rt, rt.flat_values > 0).row_lengths())
    rt = tf.ragged.constant([[0, 1], [], [2, 0, 3]], dtype=tf.int32)
    rows, lengths = f(rt)
    self.assertAllEqual(rows, [0, 0, 2, 2, 2])
    self.assertAllEqual(lengths, [1, 0, 2])

  def test_one_long_row_among_many_needs_no_dense_tensor(self):
    # Issue 33 row 8: value_rowids / tf.ragged.boolean_mask tile a
    # [rows, longest row] int64 tensor: 16,392 x 400,000 is 52 GB (an OOM);
    # these stay linear.
    lengths = np.ones(16_392, np.int64)
    lengths[100] = 400_000
    rt = tf.RaggedTensor.from_row_lengths(
        tf.ones([int(lengths.sum())], tf.int32), lengths)
    rows = ragged_rows.row_ids(rt)
    self.assertEqual(int(rows[100 + 400_000 - 1]), 100)
    kept = ragged_rows.keep_values(rt, tf.ones_like(rt.flat_values) > 0)
    self.assertAllEqual(kept.row_lengths(), lengths)
    self.assertEqual(int(ragged_rows.keep_rows(
        rt, tf.range(16_392) != 100).flat_values.shape[0]), 16_391)


if __name__ == "__main__":
  tf.test.main()
