r"""Checks that an export uses only ops of core TensorFlow.

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

from sentzoo.export import signature_info


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
  return 0


if __name__ == "__main__":
  app.run(main)
