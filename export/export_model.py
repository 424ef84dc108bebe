r"""The one export path: a trained model directory -> a versioned SavedModel.

  python -m export.export_model --model_dir=runs/siamese_cbow_demo \
      --export_dir=exports/siamese_cbow

Reads <model_dir>/model_config.json, whose "model_type" X picks the exporter
module `export/X_export.py`; its `build_module(model_dir, config)` restores
the latest checkpoint and returns the tf.Module to save. Writes
<export_dir>/<version>/ atomically (see `saved_model_writer`), with a model
card in assets.extra/model_card.json.

Every export's `serving_default` takes raw `tf.string` sentences: sentence
encoders take `sentences` [batch] and return `embeddings` float32
[batch, dim]; pair models take two string inputs and return their match
probability and distance.
"""

import importlib
import os
import re

from absl import flags

from common import cli
from common import errors
from export import model_dir as model_dir_lib
from export import saved_model_writer

# Trainers and tests reach the model-directory helpers through this module too.
MODEL_CONFIG_FILE = model_dir_lib.MODEL_CONFIG_FILE
VOCABULARY_FILE = model_dir_lib.VOCABULARY_FILE
write_model_config = model_dir_lib.write_model_config
read_model_config = model_dir_lib.read_model_config

# Model type X (as its trainer writes it) is exported by export/X_export.py,
# a module with `build_module(model_dir, config) -> tf.Module` (the module has
# a `serve` tf.function and a `metadata` dict). Found by name and imported
# lazily, so adding a model touches no shared file and exporting one model
# never imports the others.
_EXPORTER_SUFFIX = "_export.py"


def known_model_types():
  folder = os.path.dirname(os.path.abspath(__file__))
  return sorted(name[:-len(_EXPORTER_SUFFIX)] for name in os.listdir(folder)
                if name.endswith(_EXPORTER_SUFFIX))


def exporter_for(model_type):
  """The exporter module of `model_type`."""
  known = known_model_types()
  if not re.fullmatch(r"[a-z0-9_]+", str(model_type)) or model_type not in known:
    raise errors.UserError(
        f"cannot export model type {model_type!r}; known: {', '.join(known)}")
  return importlib.import_module(f"export.{model_type}_export")


def build_module(model_dir):
  """The in-memory tf.Module that `export` saves for `model_dir`."""
  config = read_model_config(model_dir)
  return exporter_for(config["model_type"]).build_module(model_dir, config)


# Sentence encoders are called like functions; the name says so.
build_encoder = build_module


def export(model_dir, export_dir, version=None):
  """Exports the latest checkpoint of `model_dir`; returns the version path."""
  return saved_model_writer.write(build_module(model_dir), export_dir,
                                  version)


FLAGS = flags.FLAGS


def main(argv):
  del argv
  path = export(FLAGS.model_dir, FLAGS.export_dir, FLAGS.version)
  print(f"exported to {path}")


if __name__ == "__main__":
  flags.DEFINE_string("model_dir", None, "A trained model directory.",
                      required=True)
  flags.DEFINE_string("export_dir", None, "Export base folder (gets "
                      "<version>/).", required=True)
  flags.DEFINE_integer("version", None, "Version number (default: next).")
  cli.run(main)
