"""Row ids and masks of 2-D ragged tensors in memory linear in their values.

TensorFlow's `RaggedTensor.value_rowids()` of a tensor built from row
splits, and `tf.ragged.boolean_mask` (through it), repeat each row index
with `ragged_util.repeat`, which tiles a dense [rows, longest row] tensor:
one 1 MB line of 216,217 tokens in a block of 16,392 lines asked for
16,392 x 216,217 int64 (28 GB) and ended Siamese CBOW's `count_batches` in
an OOM. These do the same with O(values + rows) memory and the same
results.
"""

import tensorflow as tf


def row_ids(rt):
  """The row of each value of the 2-D ragged `rt`: [values], its splits'
  dtype; what `rt.value_rowids()` returns."""
  splits = rt.row_splits
  positions = tf.range(tf.shape(rt.flat_values, out_type=splits.dtype)[0],
                       dtype=splits.dtype)
  # Value v is in row r where splits[r] <= v < splits[r + 1]: the number of
  # row ends (splits[1:]) at or before v. Empty rows share an end, so they
  # are skipped.
  return tf.searchsorted(splits[1:], positions, side="right",
                         out_type=splits.dtype)


def keep_values(rt, keep):
  """The values of the 2-D ragged `rt` where the bool `keep` [values] is
  true, each in its row (rows may become empty): what
  `tf.ragged.boolean_mask(rt, rt.with_flat_values(keep))` returns."""
  rows = tf.boolean_mask(row_ids(rt), keep)
  return tf.RaggedTensor.from_value_rowids(
      tf.boolean_mask(rt.flat_values, keep), rows, nrows=rt.nrows(),
      validate=False)


def keep_rows(rt, keep):
  """The rows of the 2-D ragged `rt` where the bool `keep` [rows] is true:
  what `tf.ragged.boolean_mask(rt, keep)` returns."""
  value_keep = tf.gather(keep, row_ids(rt))
  lengths = tf.boolean_mask(rt.row_lengths(), keep)
  return tf.RaggedTensor.from_row_lengths(
      tf.boolean_mask(rt.flat_values, value_keep), lengths, validate=False)
