"""Reads a SavedModel's SignatureDefs from saved_model.pb, without loading it.

What a serving client sees: the signature's input/output keys, the graph
tensor names they map to (the C API and TF Serving's gRPC API use these), the
dtypes and the method name.
"""

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
    proto.ParseFromString(f.read())
  return proto


def _tensor_info(proto):
  from tensorflow.core.framework import types_pb2  # pylint: disable=g-import-not-at-top
  shape = (None if proto.tensor_shape.unknown_rank else
           tuple(d.size for d in proto.tensor_shape.dim))
  return TensorInfo(proto.name, types_pb2.DataType.Name(proto.dtype), shape)


def read_signature(export_path, key="serving_default", tag="serve"):
  """The SignatureDef `key` of the meta graph tagged `tag`."""
  for meta_graph in read_saved_model_proto(export_path).meta_graphs:
    if tag in meta_graph.meta_info_def.tags:
      if key not in meta_graph.signature_def:
        raise errors.UserError(
            f"{export_path!r} has no signature {key!r}; it has "
            f"{sorted(meta_graph.signature_def)}")
      signature = meta_graph.signature_def[key]
      return SignatureInfo(
          signature.method_name,
          {k: _tensor_info(v) for k, v in signature.inputs.items()},
          {k: _tensor_info(v) for k, v in signature.outputs.items()})
  raise errors.UserError(f"{export_path!r} has no meta graph tagged {tag!r}")
