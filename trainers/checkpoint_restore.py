"""Restoring a checkpoint into the variables without a copy of large tables.

`tf.train.Checkpoint.restore` reads each saved tensor whole and assigns it;
a table written by sparse ops is in copy-on-read mode, so the assign copies
it once more: a resumed Sent2Vec run held the table three times, and the
CPU allocator keeps freed buffers (docs/design_measurements.md).

`restore` reads every variable of at least `IN_PLACE_MIN_BYTES` straight
from the checkpoint's data file at the offset its index gives (RestoreV2 of
a slice would read the whole tensor first), `CHUNK_BYTES` of whole rows at
a time, into the variable's own buffer with `scatter_update`, then the rest
the ordinary way. The format is unchanged; the index's checksum is not
verified (a truncated file is an error, and the loop falls back to the
checkpoint before). A tensor that is not one plain block of bytes is
restored the ordinary way.
"""

import sys

import numpy as np
import tensorflow as tf

# Variables at least this large are restored slice by slice.
IN_PLACE_MIN_BYTES = 32 << 20
# Bytes of one slice (whole rows).
CHUNK_BYTES = 4 << 20
_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


def _tf_variable(obj):
  """The tf.Variable behind a Keras 3 variable, a tf.Variable, or None."""
  inner = getattr(obj, "value", None)
  if isinstance(inner, tf.Variable):
    return inner
  return obj if isinstance(obj, tf.Variable) else None


def _copies(variable):
  """The resource variables holding `variable`'s value (one per replica of a
  mirrored variable), or None for a kind not restored here."""
  values = getattr(variable, "values", None)
  copies = tuple(values) if values else (variable,)
  if all(hasattr(c, "scatter_update") and hasattr(c, "handle")
         for c in copies):
    return copies
  return None


def _nbytes(variable):
  if not variable.shape.is_fully_defined() or variable.shape.rank < 1:
    return 0
  return variable.shape.num_elements() * variable.dtype.size


def _children(obj):
  try:
    return dict(obj._trackable_children(save_type="checkpoint"))  # pylint: disable=protected-access
  except (AttributeError, TypeError):
    return {}


def split_large_variables(items, min_bytes=IN_PLACE_MIN_BYTES):
  """(rest, large): `items` ({name: trackable}) with every object holding a
  variable of at least `min_bytes` below it replaced by a stand-in without
  those variables, and {checkpoint key: tf.Variable} of them."""
  large = {}

  def without(obj, path, seen):
    variable = _tf_variable(obj)
    if variable is not None:
      if _nbytes(variable) >= min_bytes and _copies(variable):
        large[path + _VALUE_SUFFIX] = variable
        return None
      return obj
    if id(obj) in seen:
      return obj
    seen = seen | {id(obj)}
    children = _children(obj)
    kept = {name: without(child, f"{path}/{name}", seen)
            for name, child in children.items()}
    if all(kept[name] is child for name, child in children.items()):
      return obj
    stand_in = tf.__internal__.tracking.AutoTrackable()
    for name, child in kept.items():
      if child is not None:
        setattr(stand_in, name, child)
    return stand_in

  rest = {}
  for name, obj in items.items():
    kept = without(obj, name, frozenset())
    if kept is not None:
      rest[name] = kept
  return rest, large


def _varint(data, pos):
  result = shift = 0
  while True:
    byte = data[pos]
    pos += 1
    result |= (byte & 0x7F) << shift
    if byte < 0x80:
      return result, pos
    shift += 7


def _block(data, offset, size):
  """The (key, value) entries of one uncompressed table block."""
  if data[offset + size] != 0:
    raise ValueError("compressed checkpoint index block")
  block = data[offset:offset + size]
  restarts = int.from_bytes(block[-4:], "little")
  end = len(block) - 4 * (restarts + 1)
  pos, key = 0, b""
  while pos < end:
    shared, pos = _varint(block, pos)
    unshared, pos = _varint(block, pos)
    length, pos = _varint(block, pos)
    key = key[:shared] + block[pos:pos + unshared]
    pos += unshared
    yield key, block[pos:pos + length]
    pos += length


def read_index(path):
  """{tensor name: BundleEntryProto} and the BundleHeaderProto of checkpoint
  `path` (its .index file: a LevelDB-format table, uncompressed)."""
  from tensorflow.core.protobuf import tensor_bundle_pb2  # pylint: disable=g-import-not-at-top
  with tf.io.gfile.GFile(path + ".index", "rb") as f:
    data = f.read()
  footer = data[-48:]
  if footer[-8:] != bytes.fromhex("57fb808b247547db"):
    raise ValueError(f"{path}.index is not a checkpoint index")
  _, pos = _varint(footer, 0)
  _, pos = _varint(footer, pos)  # The metaindex handle.
  index_offset, pos = _varint(footer, pos)
  index_size, _ = _varint(footer, pos)
  entries, header = {}, None
  for _, handle in _block(data, index_offset, index_size):
    offset, pos = _varint(handle, 0)
    size, _ = _varint(handle, pos)
    for key, value in _block(data, offset, size):
      if key:
        entries[key.decode("utf-8")] = (
            tensor_bundle_pb2.BundleEntryProto.FromString(value))
      else:
        header = tensor_bundle_pb2.BundleHeaderProto.FromString(value)
  return entries, header


def restore_rows(path, entry, header, variable, chunk_bytes=CHUNK_BYTES):
  """Reads the saved tensor `entry` into every copy of `variable`,
  `chunk_bytes` of whole rows at a time, from the data file."""
  shape = variable.shape.as_list()
  rows = shape[0]
  row_bytes = _nbytes(variable) // max(rows, 1)
  step = max(1, chunk_bytes // max(row_bytes, 1))
  data_path = (f"{path}.data-{entry.shard_id:05d}-of-"
               f"{header.num_shards:05d}")
  dtype = variable.dtype.as_numpy_dtype
  with tf.io.gfile.GFile(data_path, "rb") as f:
    for start in range(0, rows, step):
      count = min(step, rows - start)
      f.seek(entry.offset + start * row_bytes)
      raw = f.read(count * row_bytes)
      if len(raw) != count * row_bytes:
        raise ValueError(f"{data_path} is truncated")
      chunk = np.frombuffer(raw, dtype).reshape([count] + shape[1:])
      indices = tf.range(start, start + count)
      for copy in _copies(variable):
        with tf.device(copy.device):
          copy.scatter_update(tf.IndexedSlices(chunk, indices))


def _readable(entry, header, variable):
  """Whether `entry` holds `variable` as one plain block of bytes."""
  if entry is None or header is None or entry.slices:
    return False
  if header.endianness != 0 or sys.byteorder != "little":
    return False
  shape = [d.size for d in entry.shape.dim]
  return (shape == variable.shape.as_list()
          and entry.dtype == variable.dtype.as_datatype_enum
          and entry.size == _nbytes(variable))


def restore(checkpoint, items, path, chunk_bytes=CHUNK_BYTES):
  """`checkpoint.restore(path)` (`checkpoint` built from `items`) without a
  copy of the large variables; returns the load status of the rest. A
  checkpoint that lacks a large variable, or holds it in another shape or
  dtype, is restored the ordinary way altogether, with its usual errors.
  """
  rest, large = split_large_variables(items)
  if large:
    try:
      entries, header = read_index(path)
    except (ValueError, IndexError, OSError, tf.errors.OpError):
      entries, header = {}, None
    if not all(_readable(entries.get(key), header, variable)
               for key, variable in large.items()):
      large = {}
  if not large:
    return checkpoint.restore(path)
  for key, variable in large.items():
    restore_rows(path, entries[key], header, variable, chunk_bytes)
  stand_in = tf.train.Checkpoint(**rest)
  # expect_partial: the large variables' values were read above (without
  # it, TensorFlow warns that they were not restored).
  status = stand_in.restore(path).expect_partial()
  checkpoint.save_counter.assign(stand_in.save_counter)
  return status
