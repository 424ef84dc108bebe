r"""Checks the ops of an export: core TensorFlow only, and an allowlist.

  python -m export.op_check runs/siamese_cbow_demo/export/1

An op from an extension library (tensorflow_text, say) makes an export fail
to load in every process that did not import that library: TF Serving's
model server, `saved_model_cli`, the C API. This walks every node of
saved_model.pb (the graph and its function library) and looks each op type
up in the op registry of this process, which must not have imported any such
library; exits 1 and lists the offenders if there are any.
"""

import sys

from absl import app

from sentzoo.common import errors
from sentzoo.export import signature_info

# The op types the zoo's exports use (every exporter of models/model_specs.py,
# its quantised tables and the hybrid encoders; op_check_test.py checks that
# they stay inside this list), plus a few pure math ops of the same kind. None
# touches a file, a process or the network: an export from someone else
# (`sentzoo install ARCHIVE`) is refused if its graph has an op outside it.
ALLOWED_OP_TYPES = frozenset({
    "Abs", "AddV2", "All", "Any", "Assert", "AssignVariableOp", "BiasAdd",
    "BroadcastArgs", "BroadcastTo", "Cast", "ConcatV2", "Const", "Conv2D",
    "Cumsum", "DecodeRaw", "DenseBincount", "DisableCopyOnRead", "Equal",
    "Exp", "ExpandDims", "Fill", "FloorDiv", "FloorMod", "GatherV2",
    "Greater", "GreaterEqual", "HashTableV2", "Identity", "IdentityN", "If",
    "Less", "LessEqual", "Log", "LogicalAnd", "LogicalNot", "LogicalOr",
    "LookupTableFindV2", "LookupTableImportV2", "MatMul", "Max", "Maximum",
    "Mean", "Min", "Minimum", "Mul", "Neg", "NoOp", "NotEqual", "OnesLike",
    "Pack", "Pad", "PartitionedCall", "Placeholder", "Prod", "RaggedGather",
    "RaggedRange", "RaggedTensorToTensor", "Range", "ReadVariableOp",
    "RealDiv", "Relu", "Reshape", "ResourceGather", "ReverseV2", "Rsqrt",
    "Select", "SelectV2", "Shape", "Sigmoid", "Size", "Slice", "Softmax",
    "Split", "Sqrt", "Square", "Squeeze", "StatefulPartitionedCall",
    "StatelessIf", "StatelessWhile", "StaticRegexFullMatch",
    "StaticRegexReplace", "StopGradient", "StridedSlice", "StringJoin",
    "StringLength", "StringLower", "StringNGrams", "StringSplitV2", "Sub",
    "Substr", "Sum", "Tanh", "TensorListFromTensor", "TensorListGetItem",
    "TensorListReserve", "TensorListSetItem", "TensorListStack", "Tile",
    "Transpose", "UnicodeDecode", "UnicodeEncode", "UnicodeTranscode",
    "Unpack", "UnsortedSegmentJoin", "UnsortedSegmentSum", "VarHandleOp",
    "VarIsInitializedOp", "Where", "While", "ZerosLike",
    # Pure ops of the same families (hashing, strings, math, ragged and
    # list tensors) that an exporter may come to use.
    "ArgMax", "ArgMin", "BatchMatMulV2", "Ceil", "CheckNumerics",
    "ClipByValue", "Cumprod", "DivNoNan", "Einsum", "Elu", "EnsureShape",
    "Erf", "Fingerprint", "Floor", "GatherNd", "InitializeTableV2",
    "L2Loss", "LeakyRelu", "Log1p", "LookupTableSizeV2", "MaxPool",
    "OneHot", "PadV2", "PlaceholderWithDefault", "Pow", "RaggedTensorToSparse",
    "Rank", "Reciprocal", "RegexFullMatch", "RegexReplace", "Relu6", "Round",
    "ScatterNd", "SegmentMean", "SegmentSum", "Selu", "ShapeN", "Sign",
    "Snapshot", "Softplus", "SparseSegmentMean",
    "SparseSegmentMeanWithNumSegments", "SparseSegmentSqrtN",
    "SparseSegmentSqrtNWithNumSegments", "SparseSegmentSum",
    "SparseSegmentSumWithNumSegments", "SparseToDense", "StringStrip",
    "StringToHashBucketFast", "StringToHashBucketStrong", "StringUpper",
    "TensorListConcatV2", "TensorListElementShape", "TensorListLength",
    "TensorListPopBack", "TensorListPushBack", "TopKV2", "Unique", "UpperBound",
    "LowerBound",
    "UnsortedSegmentMax", "UnsortedSegmentMin",
})
# File ops a SavedModel needs to save and restore its own variables: allowed
# only in the functions its saver_def names (TF Serving runs the restore
# with the variables' path), which no other function may call.
SAVER_OP_TYPES = frozenset({"MergeV2Checkpoints", "RestoreV2", "SaveV2",
                            "ShardedFilename"})


def graph_op_types(export_path):
  """Every op type used by the SavedModel's graphs and functions."""
  op_types = set()
  for meta_graph in signature_info.read_saved_model_proto(
      export_path).meta_graphs:
    graph = meta_graph.graph_def
    op_types.update(node.op for node in graph.node)
    for function in graph.library.function:
      op_types.update(node.op for node in function.node_def)
    # Functions may call other functions by name; those are not ops.
    op_types -= {f.signature.name for f in graph.library.function}
  return op_types


def unregistered_op_types(export_path):
  """Op types of the export that core TensorFlow does not register."""
  from tensorflow.python.framework import op_def_registry  # pylint: disable=g-import-not-at-top
  return sorted(op for op in graph_op_types(export_path)
                if op_def_registry.get(op) is None)


def _called_functions(node, functions=()):
  """Names of the functions a node calls: its op, if a function of
  `functions`, and its function-valued attrs."""
  names = [node.op] if node.op in functions else []
  for attr in node.attr.values():
    if attr.HasField("func"):
      names.append(attr.func.name)
    names.extend(f.name for f in attr.list.func)
  return names


def disallowed_ops(export_path):
  """What in the export's graphs is outside the allowlist.

  Every node of every graph and function must have an op type of
  `ALLOWED_OP_TYPES`; `SAVER_OP_TYPES` are allowed as well in the
  functions that the saver_def's save and restore nodes call, and only
  those two nodes may call those functions.

  Returns:
    Sorted descriptions ("ReadFile in function __inference_serve_12"); empty
    when the export passes.

  Raises:
    errors.UserError: no saved_model.pb, or one that does not parse.
  """
  try:
    proto = signature_info.read_saved_model_proto(export_path)
  except errors.UserError:
    raise
  except Exception as e:  # pylint: disable=broad-except
    raise errors.UserError(f"{export_path!r}: saved_model.pb does not parse "
                           f"({type(e).__name__})") from e
  found = set()
  for meta_graph in proto.meta_graphs:
    graph = meta_graph.graph_def
    functions = {f.signature.name: f for f in graph.library.function}
    saver = meta_graph.saver_def
    saver_nodes = {saver.save_tensor_name.split(":")[0],
                   saver.restore_op_name.split(":")[0]} - {""}
    saver_functions = set()
    for node in graph.node:
      if node.name in saver_nodes:
        saver_functions.update(_called_functions(node))
    saver_functions &= set(functions)
    for node in graph.node:
      if node.op not in ALLOWED_OP_TYPES and node.op not in functions:
        found.add(f"{node.op} in the graph")
      if node.name not in saver_nodes and (
          set(_called_functions(node, functions)) & saver_functions):
        found.add(f"node {node.name} calls the saver's functions")
    for name, function in functions.items():
      allowed = ALLOWED_OP_TYPES | (
          SAVER_OP_TYPES if name in saver_functions else frozenset())
      for node in function.node_def:
        if node.op not in allowed and node.op not in functions:
          found.add(f"{node.op} in function {name}")
        if set(_called_functions(node, functions)) & saver_functions:
          found.add(f"function {name} calls the saver's functions")
  return sorted(found)


def main(argv):
  if len(argv) != 2:
    raise app.UsageError("usage: python -m export.op_check EXPORT_DIR")
  extensions = sorted(m for m in sys.modules if m.split(".")[0] in (
      "tensorflow_text", "tensorflow_addons", "tensorflow_io"))
  if extensions:
    print(f"op_check must run without extension libraries; imported: "
          f"{extensions}", file=sys.stderr)
    return 2
  missing = unregistered_op_types(argv[1])
  total = len(graph_op_types(argv[1]))
  if missing:
    print(f"{argv[1]}: {len(missing)} of {total} op types are not core "
          f"TensorFlow ops: {', '.join(missing)}")
    return 1
  print(f"{argv[1]}: all {total} op types are core TensorFlow ops")
  outside = disallowed_ops(argv[1])
  if outside:
    print(f"{argv[1]}: outside the allowlist of install: "
          f"{', '.join(outside)}")
    return 1
  print(f"{argv[1]}: every op is in the allowlist of install")
  return 0


if __name__ == "__main__":
  app.run(main)
