"""Compact exports: an embedding table stored as float16 or int8.

The averaging exporters (`export.averaging_encoder`, used by Sent2Vec,
Siamese CBOW and PARAGRAM-PHRASE) take `quantize`, one of MODES:

* "none": the float32 table, trainable (the default).
* "float16": the table stored as float16; the gathered rows are cast to
  float32 (half the size; relative error per value <= 2^-11).
* "int8": row-wise symmetric quantisation: row r is stored as int8 values
  q[r] = round(table[r] / scale[r]) in [-127, 127] with one float32
  scale[r] = max|table[r]| / 127 (a quarter of the size, plus 4 bytes a row;
  error per value <= scale[r] / 2). An all-zero row has scale 0 and
  dequantises to zeros, never NaN.

Only the rows a batch gathers are dequantised, in the graph, with core ops
(`tf.gather`, `tf.cast`, a multiply), so the exports still load without any
extension library (`export.op_check`) and in the C API loader. A quantised
export is for inference only: its table is not a float variable, so it holds
no trainable variables (`trainable_variables` is empty) and fine-tuning it
(`hub.KerasLayer(trainable=True)`, `TFSMLayer(trainable=True)`) changes
nothing; fine-tune the float32 export instead.
"""

import numpy as np
import tensorflow as tf

from sentzoo.common import errors

MODES = ("none", "float16", "int8")
INT8_LIMIT = 127
# Rows quantised per NumPy step, so that a multi-GB table needs about one
# extra chunk of memory, not a second copy of itself.
_CHUNK_ROWS = 1 << 16
_FLOAT16_MAX = float(np.finfo(np.float16).max)


def check_mode(mode):
  """`mode` if it is one of MODES; otherwise a UserError naming them."""
  if mode not in MODES:
    raise errors.UserError(f"quantize must be one of {', '.join(MODES)}, "
                           f"got {mode!r}")
  return mode


def _check_finite(table):
  # A float64 sum of float32 values cannot overflow: it is finite exactly
  # when they all are (one pass, no temporary array).
  if not np.isfinite(np.sum(table, dtype=np.float64)):
    raise errors.UserError("cannot quantise a table with NaN or infinite "
                           "values (a diverged model?)")


def quantize_float16(table):
  """float [rows, dim] -> np.float16 [rows, dim]; a UserError if a value is
  not finite or beyond float16's range (65504)."""
  table = np.asarray(table)
  out = np.empty(table.shape, np.float16)
  for start in range(0, table.shape[0], _CHUNK_ROWS):
    chunk = np.asarray(table[start:start + _CHUNK_ROWS], np.float32)
    _check_finite(chunk)
    if chunk.size and float(np.max(np.abs(chunk))) > _FLOAT16_MAX:
      raise errors.UserError(
          f"cannot store the table as float16: a value exceeds "
          f"{_FLOAT16_MAX:g} (use --quantize=int8 or none)")
    out[start:start + _CHUNK_ROWS] = chunk
  return out


def quantize_int8_rows(table):
  """Row-wise symmetric int8 quantisation of a float table.

  Args:
    table: float [rows, dim] (NumPy array or eager tensor), finite.

  Returns:
    (values, scales): np.int8 [rows, dim] in [-127, 127] and np.float32
    [rows] with scales[r] = max|table[r]| / 127 (0 for an all-zero row), so
    that `dequantize_int8_rows(values, scales)` ~= table.
  """
  table = np.asarray(table)
  if table.ndim != 2:
    raise ValueError(f"table must be [rows, dim], got shape {table.shape}")
  rows, dim = table.shape
  values = np.empty((rows, dim), np.int8)
  scales = np.zeros((rows,), np.float32)
  for start in range(0, rows, _CHUNK_ROWS):
    chunk = np.asarray(table[start:start + _CHUNK_ROWS], np.float32)
    _check_finite(chunk)
    if dim:  # max|x| of a row, without an array of |x|.
      chunk_scales = (np.maximum(chunk.max(axis=1), -chunk.min(axis=1)) /
                      np.float32(INT8_LIMIT)).astype(np.float32)
    else:
      chunk_scales = np.zeros((chunk.shape[0],), np.float32)
    divisors = np.where(chunk_scales > 0, chunk_scales, np.float32(1.0))
    scaled = np.divide(chunk, divisors[:, None])  # One temporary, reused.
    np.clip(np.rint(scaled, out=scaled), -INT8_LIMIT, INT8_LIMIT,
            out=scaled)
    values[start:start + _CHUNK_ROWS] = scaled
    scales[start:start + _CHUNK_ROWS] = chunk_scales
  return values, scales


def table_variables(rows, dim, mode):
  """The variables of a [rows, dim] table stored as `mode`, made without
  touching their memory: `assign_rows` must fill every row.

  "none": [float32 `embeddings`, trainable]; "float16": [float16
  `embeddings_float16`]; "int8": [int8 `embeddings_int8`, float32
  `embedding_row_scales` [rows]].
  """
  def empty(shape, dtype, name, trainable=False):
    return tf.Variable(tf.raw_ops.Empty(shape=shape, dtype=dtype),
                       trainable=trainable, name=name)
  if check_mode(mode) == "none":
    return [empty([rows, dim], tf.float32, "embeddings", trainable=True)]
  if mode == "float16":
    return [empty([rows, dim], tf.float16, "embeddings_float16")]
  return [empty([rows, dim], tf.int8, "embeddings_int8"),
          empty([rows], tf.float32, "embedding_row_scales")]


def assign_rows(variables, start, rows, mode):
  """Stores float `rows` [n, dim] as rows start..start + n of a table's
  `table_variables`, quantised as `mode` says, in place (no copy of the
  table)."""
  rows = np.asarray(rows, np.float32)
  parts = {"none": lambda: [rows], "float16": lambda: [quantize_float16(rows)],
           "int8": lambda: quantize_int8_rows(rows)}[mode]()
  for variable, part in zip(variables, parts):
    tf.raw_ops.ResourceStridedSliceAssign(
        ref=variable.handle, begin=[start], end=[start + len(part)],
        strides=[1], value=part)


def stored_table(table, mode):
  """`table_variables` holding float `table` [rows, dim], filled a chunk of
  rows at a time (no second copy of the table)."""
  if not hasattr(table, "shape"):
    table = np.asarray(table, np.float32)
  rows, dim = (int(d) for d in table.shape)
  variables = table_variables(rows, dim, mode)
  for start in range(0, rows, _CHUNK_ROWS):
    assign_rows(variables, start, table[start:start + _CHUNK_ROWS], mode)
  return variables


def dequantize_int8_rows(values, scales):
  """NumPy inverse of `quantize_int8_rows`: float32 [rows, dim]."""
  return (np.asarray(values, np.float32) *
          np.asarray(scales, np.float32)[:, None])


def gather_float16_rows(table, ids):
  """float32 [n, dim] rows `ids` [n] of a float16 table [rows, dim]."""
  return tf.cast(tf.gather(table, ids), tf.float32)


def gather_int8_rows(values, scales, ids):
  """float32 [n, dim] rows `ids` [n] of an int8 table: only those rows are
  dequantised (int8 [rows, dim] `values` x float32 [rows] `scales`)."""
  return (tf.cast(tf.gather(values, ids), tf.float32) *
          tf.gather(scales, ids)[:, None])


def model_card_entry(mode, num_rows, dim):
  """The model card's "quantization" field of a table stored in `mode`."""
  storage = {"none": "float32 [rows, dim]",
             "float16": "float16 [rows, dim], cast to float32 after the "
                        "gather",
             "int8": "int8 [rows, dim] and one float32 scale per row "
                     "(symmetric, scale = max|row| / 127; an all-zero row "
                     "has scale 0); gathered rows dequantised as "
                     "cast(values) * scale"}[check_mode(mode)]
  bytes_per_row = {"none": 4 * dim, "float16": 2 * dim,
                   "int8": dim + 4}[mode]
  return {
      "mode": mode,
      "table": storage,
      "table_shape": [int(num_rows), int(dim)],
      "table_bytes": int(num_rows) * bytes_per_row,
      "inference_only": mode != "none",
      "trainable_variables": ("the float32 table" if mode == "none" else
                              "none: a quantised table cannot be "
                              "fine-tuned; fine-tune the float32 export"),
  }
