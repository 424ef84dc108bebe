"""Reads a SavedModel's SignatureDefs from saved_model.pb, without loading it.

What a serving client sees: the signature's input/output keys, the graph
tensor names they map to (the C API and TF Serving's gRPC API use these), the
dtypes and the method name.

It also checks, in pure Python, that inputs match the signature's contract
(every exported signature takes 1-D tf.string inputs [batch]) before they
are sent or fed: `sentence_batch` and `check_inputs` turn a wrong rank,
dtype or key into one clear `InputError` instead of a TensorFlow traceback,
or, for a bare string, instead of silently encoding each of its characters.
"""

import collections.abc
import dataclasses
import os
from typing import Dict

from tensorflow.core.protobuf import saved_model_pb2

from sentzoo.common import errors

PREDICT_METHOD = "tensorflow/serving/predict"


@dataclasses.dataclass(frozen=True)
class TensorInfo:
  tensor_name: str  # "op_name:index" in the serving graph.
  dtype: str  # e.g. "DT_STRING".
  shape: tuple  # -1 for unknown dimensions; None for unknown rank.


@dataclasses.dataclass(frozen=True)
class SignatureInfo:
  method_name: str
  inputs: Dict[str, TensorInfo]
  outputs: Dict[str, TensorInfo]


def read_saved_model_proto(export_path):
  path = os.path.join(export_path, "saved_model.pb")
  if not os.path.isfile(path):
    raise errors.UserError(f"{export_path!r} holds no saved_model.pb")
  proto = saved_model_pb2.SavedModel()
  with open(path, "rb") as f:
    data = f.read()
  try:
    proto.ParseFromString(data)
  except Exception as e:  # pylint: disable=broad-except
    # protobuf's DecodeError (its module differs between protobuf builds).
    raise errors.DataDirError(
        f"{path!r} is damaged ({type(e).__name__}: {e}); export the model "
        "again (python -m export.export_model)") from e
  return proto


def _tensor_info(proto):
  from tensorflow.core.framework import types_pb2  # pylint: disable=g-import-not-at-top
  shape = (None if proto.tensor_shape.unknown_rank else
           tuple(d.size for d in proto.tensor_shape.dim))
  return TensorInfo(proto.name, types_pb2.DataType.Name(proto.dtype), shape)


def read_signature(export_path, key="serving_default"):
  """The SignatureDef `key` of the meta graph tagged "serve"."""
  for meta_graph in read_saved_model_proto(export_path).meta_graphs:
    if "serve" in meta_graph.meta_info_def.tags:
      if key not in meta_graph.signature_def:
        raise errors.UserError(
            f"{export_path!r} has no signature {key!r}; it has "
            f"{sorted(meta_graph.signature_def)}")
      signature = meta_graph.signature_def[key]
      return SignatureInfo(
          signature.method_name,
          {k: _tensor_info(v) for k, v in signature.inputs.items()},
          {k: _tensor_info(v) for k, v in signature.outputs.items()})
  raise errors.UserError(f"{export_path!r} has no meta graph tagged 'serve'")


class InputError(errors.UserError, TypeError):
  """Inputs that do not match a signature: wrong key, rank or dtype."""


def _preview(value, limit=40):
  text = repr(value)
  return text if len(text) <= limit else text[:limit - 3] + "..."


def _rank_and_dtype(values):
  """(rank or None, dtype name, is a string dtype) of an array or tensor."""
  shape = values.shape
  rank = getattr(shape, "rank", None) if hasattr(shape, "rank") else len(shape)
  dtype = values.dtype
  name = getattr(dtype, "name", str(dtype))
  is_string = name == "string" or getattr(dtype, "kind", "") in ("U", "S", "O")
  return rank, name, is_string


def sentence_batch(values, name="sentences"):
  """`values` as a list of str / bytes, if it is a 1-D batch of strings.

  Pure Python (no TensorFlow op runs): what every signature input of this
  project takes, `tf.string [batch]`, one string per sentence.

  Args:
    values: a list or tuple (or other iterable that is not a string) of str
      or bytes; a 1-D numpy array of str, bytes or object strings; or an
      eager 1-D tf.string tensor.
    name: the input's name, for messages.

  Returns:
    list of str / bytes, one per sentence (bytes stay bytes).

  Raises:
    InputError: a single string (which would otherwise be read as a batch of
      its characters), a rank other than 1, a non-string dtype, or an
      element that is not a str or bytes; the message says which.
  """
  if isinstance(values, (str, bytes, bytearray)):
    raise InputError(
        f"{name} must be a 1-D batch of strings, got a single "
        f"{type(values).__name__} {_preview(values)}; pass a list of "
        f"sentences, e.g. [{_preview(values)}]")
  if hasattr(values, "shape") and hasattr(values, "dtype"):
    rank, dtype, is_string = _rank_and_dtype(values)
    if rank != 1:
      raise InputError(
          f"{name} must be 1-D [batch] (one string per sentence), got rank "
          f"{rank} (shape {list(values.shape)})")
    if not is_string:
      raise InputError(f"{name} must hold strings (tf.string), got dtype "
                       f"{dtype}")
    values = (values.numpy() if hasattr(values, "numpy") else values).tolist()
  elif values is None or not isinstance(values, collections.abc.Iterable):
    raise InputError(f"{name} must be a 1-D batch of strings (a list of "
                     f"sentences), got {type(values).__name__} "
                     f"{_preview(values)}")
  values = list(values)
  for i, value in enumerate(values):
    if isinstance(value, bytearray):
      values[i] = bytes(value)
    elif not isinstance(value, (str, bytes)):
      nested = isinstance(value, (list, tuple)) or (
          hasattr(value, "shape") and len(getattr(value, "shape", ())) > 0)
      raise InputError(
          f"{name}[{i}] is a {type(value).__name__} {_preview(value)}, not a "
          f"str or bytes: {name} must be "
          + ("1-D [batch], not nested" if nested else
             "a 1-D batch of strings"))
  return values


def check_inputs(signature, inputs):
  """Checks `inputs` against a signature's inputs; returns them as lists.

  Args:
    signature: a `SignatureInfo` (`read_signature`) whose inputs are 1-D
      tf.string, as every export of this project's are.
    inputs: dict input key -> a batch of sentences (see `sentence_batch`).

  Returns:
    dict input key -> list of str / bytes.

  Raises:
    InputError: a missing or unknown key, a batch that is not 1-D strings,
      or inputs of different batch sizes.
  """
  expected = sorted(signature.inputs)
  if not isinstance(inputs, collections.abc.Mapping):
    raise InputError(f"inputs must be a dict with the keys {expected}, got "
                     f"{type(inputs).__name__}")
  missing = sorted(set(expected) - set(inputs))
  unknown = sorted(set(inputs) - set(expected))
  if missing or unknown:
    raise InputError(
        f"the signature takes the inputs {expected}"
        + (f"; missing {missing}" if missing else "")
        + (f"; unknown {unknown}" if unknown else ""))
  checked = {}
  for key, info in sorted(signature.inputs.items()):
    if info.dtype != "DT_STRING" or info.shape != (-1,):
      raise InputError(f"input {key!r} is {info.dtype} {info.shape}; only "
                       "1-D string inputs can be checked here")
    checked[key] = sentence_batch(inputs[key], key)
  sizes = {key: len(batch) for key, batch in checked.items()}
  if len(set(sizes.values())) > 1:
    raise InputError(f"inputs must have one batch size, got {sizes}")
  return checked
