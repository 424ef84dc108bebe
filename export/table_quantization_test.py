"""Tests for export.table_quantization: float16 and row-wise int8 tables."""

from unittest import mock

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.export import table_quantization


def _reference_int8(table):
  """Plain NumPy, one row at a time: scale = max|row| / 127, round."""
  values = np.zeros(table.shape, np.int8)
  scales = np.zeros(table.shape[0], np.float32)
  for r, row in enumerate(table.astype(np.float32)):
    scale = np.float32(np.max(np.abs(row)) / np.float32(127))
    scales[r] = scale
    if scale > 0:
      values[r] = np.clip(np.rint(row / scale), -127, 127)
  return values, scales


class Int8RowsTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    rng = np.random.default_rng(0)
    self.table = rng.normal(size=(40, 16)).astype(np.float32)
    self.table[3] = 0.0  # An all-zero row (e.g. padding).
    self.table[5] *= 1e-6  # A tiny row keeps its own scale.
    self.table[7] *= 50.0

  def test_matches_numpy_reference(self):
    values, scales = table_quantization.quantize_int8_rows(self.table)
    expected_values, expected_scales = _reference_int8(self.table)
    self.assertEqual(values.dtype, np.int8)
    self.assertEqual(scales.dtype, np.float32)
    self.assertEqual(values.shape, (40, 16))
    self.assertEqual(scales.shape, (40,))
    self.assertAllEqual(values, expected_values)
    self.assertAllClose(scales, expected_scales, rtol=1e-7)

  def test_round_trip_error_is_at_most_half_a_step_per_row(self):
    values, scales = table_quantization.quantize_int8_rows(self.table)
    restored = table_quantization.dequantize_int8_rows(values, scales)
    self.assertEqual(restored.dtype, np.float32)
    error = np.abs(restored - self.table)
    self.assertTrue(np.all(error <= scales[:, None] * 0.5 * (1 + 1e-5)))
    # Each non-zero row uses the full range: its largest value is +-127.
    nonzero = np.any(self.table != 0, axis=1)
    self.assertAllEqual(np.max(np.abs(values[nonzero].astype(np.int32)),
                               axis=1), np.full(nonzero.sum(), 127))
    self.assertAllClose(restored[5], self.table[5], atol=1e-8)

  def test_all_zero_row_dequantises_to_zeros_not_nan(self):
    values, scales = table_quantization.quantize_int8_rows(
        np.zeros((3, 4), np.float32))
    self.assertAllEqual(scales, np.zeros(3))
    self.assertAllEqual(values, np.zeros((3, 4)))
    restored = table_quantization.gather_int8_rows(
        tf.constant(values), tf.constant(scales), tf.constant([0, 2, 2]))
    self.assertAllEqual(restored, np.zeros((3, 4)))

  def test_chunked_equals_whole(self):
    whole = table_quantization.quantize_int8_rows(self.table)
    with mock.patch.object(table_quantization, "_CHUNK_ROWS", 7):
      chunked = table_quantization.quantize_int8_rows(self.table)
      half = table_quantization.quantize_float16(self.table)
    self.assertAllEqual(chunked[0], whole[0])
    self.assertAllEqual(chunked[1], whole[1])
    self.assertAllEqual(half, self.table.astype(np.float16))

  def test_gather_dequantises_only_the_named_rows(self):
    values, scales = table_quantization.quantize_int8_rows(self.table)
    ids = tf.constant([7, 0, 3, 7, 39])
    got = table_quantization.gather_int8_rows(tf.constant(values),
                                              tf.constant(scales), ids)
    self.assertEqual(got.dtype, tf.float32)
    self.assertEqual(got.shape, (5, 16))
    self.assertAllClose(got, table_quantization.dequantize_int8_rows(
        values, scales)[ids.numpy()], atol=1e-7)
    empty = table_quantization.gather_int8_rows(
        tf.constant(values), tf.constant(scales), tf.zeros([0], tf.int32))
    self.assertEqual(empty.shape, (0, 16))

  def test_non_finite_table_is_a_user_error(self):
    self.table[2, 1] = np.nan
    with self.assertRaisesRegex(errors.UserError, "NaN or infinite"):
      table_quantization.quantize_int8_rows(self.table)
    with self.assertRaisesRegex(errors.UserError, "NaN or infinite"):
      table_quantization.quantize_float16(self.table)


class Float16Test(tf.test.TestCase):

  def test_gather_casts_to_float32(self):
    table = np.random.default_rng(1).normal(size=(10, 3)).astype(np.float32)
    half = table_quantization.quantize_float16(table)
    self.assertEqual(half.dtype, np.float16)
    got = table_quantization.gather_float16_rows(tf.constant(half),
                                                 tf.constant([1, 9]))
    self.assertEqual(got.dtype, tf.float32)
    # float16 keeps 11 significant bits: relative error <= 2^-11.
    self.assertAllClose(got, table[[1, 9]], rtol=2**-11, atol=1e-7)

  def test_values_beyond_float16_range_are_a_user_error(self):
    with self.assertRaisesRegex(errors.UserError, "float16"):
      table_quantization.quantize_float16(np.array([[1.0, 7e4]], np.float32))


class ModesTest(tf.test.TestCase):

  def test_check_mode(self):
    for mode in ("none", "float16", "int8"):
      self.assertEqual(table_quantization.check_mode(mode), mode)
    with self.assertRaisesRegex(errors.UserError,
                                "one of none, float16, int8, got 'int4'"):
      table_quantization.check_mode("int4")

  def test_model_card_entry(self):
    entry = table_quantization.model_card_entry("int8", 10_000, 100)
    self.assertEqual(entry["mode"], "int8")
    self.assertEqual(entry["table_shape"], [10_000, 100])
    self.assertEqual(entry["table_bytes"], 10_000 * 104)
    self.assertTrue(entry["inference_only"])
    self.assertFalse(table_quantization.model_card_entry(
        "none", 1, 1)["inference_only"])
    self.assertEqual(table_quantization.model_card_entry(
        "float16", 10, 4)["table_bytes"], 80)


class StoredTableTest(tf.test.TestCase):

  def test_variables_filled_in_chunks_equal_the_whole_table(self):
    table = np.random.default_rng(1).normal(size=(70, 6)).astype(np.float32)
    table[4] = 0.0
    want = {"none": [table],
            "float16": [table_quantization.quantize_float16(table)],
            "int8": list(table_quantization.quantize_int8_rows(table))}
    for mode, expected in want.items():
      variables = table_quantization.table_variables(70, 6, mode)
      self.assertEqual([v.trainable for v in variables],
                       [mode == "none"] * len(variables))
      for start, end in ((50, 70), (0, 20), (20, 50)):  # Any order.
        table_quantization.assign_rows(variables, start, table[start:end],
                                       mode)
      for variable, part in zip(variables, expected):
        self.assertAllEqual(variable.numpy(), part)
      with mock.patch.object(table_quantization, "_CHUNK_ROWS", 16):
        stored = table_quantization.stored_table(table, mode)
      for variable, part in zip(stored, expected):
        self.assertAllEqual(variable.numpy(), part)

  def test_assign_refuses_values_a_mode_cannot_store(self):
    variables = table_quantization.table_variables(2, 2, "int8")
    with self.assertRaises(errors.UserError):
      table_quantization.assign_rows(variables, 0, [[1, np.nan]], "int8")


if __name__ == "__main__":
  tf.test.main()
