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
import math
import os
import re
import time

from absl import flags

from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import saved_model_writer

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
  return importlib.import_module(f"sentzoo.export.{model_type}_export")


def build_module(model_dir):
  """The in-memory tf.Module that `export` saves for `model_dir`."""
  config = model_dir_lib.read_model_config(model_dir)
  return exporter_for(config["model_type"]).build_module(model_dir, config)


# Sentence encoders are called like functions; the name says so.
build_encoder = build_module


def is_sentence_encoder(module):
  """Whether `module` serves `sentences` -> `embeddings` (not a pair model)."""
  return [spec.name for spec in module.serve.input_signature] == ["sentences"]


def export_time_scores(module, data_dir):
  """STS-B dev and SICK test correlations of a sentence encoder, for its card.

  Measured on the in-memory module that is about to be saved (the same
  graph), so the card states what the export scores. Returns a dict with a
  "note" instead of scores when there is no data to measure on.
  """
  # Imported here: evaluation is only needed when a data directory is given.
  from sentzoo.evaluation import encoder as encoder_lib  # pylint: disable=g-import-not-at-top
  from sentzoo.evaluation import sts  # pylint: disable=g-import-not-at-top
  from sentzoo.evaluation import sts_data  # pylint: disable=g-import-not-at-top
  try:
    data_dir = data_dir_lib.resolve_data_dir(data_dir)
    pair_sets = [sts_data.load_stsb_split(data_dir, "dev"),
                 sts_data.load_sick_split(data_dir, "test")]
  except (errors.UserError, OSError) as e:
    return {"note": f"not measured at export time: {e}"}
  start = time.time()
  results = sts.evaluate_pair_sets(encoder_lib.FunctionEncoder(module),
                                   pair_sets)

  def rounded(value):  # NaN (e.g. constant embeddings) is not JSON: None.
    return round(value, 2) if math.isfinite(value) else None

  scores = {name: {"pearson": rounded(r.pearson),
                   "spearman": rounded(r.spearman), "pairs": r.num_pairs}
            for name, r in results.sets.items()}
  return {"measured": "at export time, on the exported graph (x100)",
          "seconds": round(time.time() - start, 1), "sets": scores}


def export(model_dir, export_dir, version=None, data_dir=None,
           evaluate=True):
  """Exports the latest checkpoint of `model_dir`; returns the version path.

  Args:
    model_dir: a trained model directory.
    export_dir: the export base folder (gets <version>/).
    version: integer version; default one more than the highest present.
    data_dir: where STS-B/SICK are, for the card's scores (default
      $SENTZOO_DATA_DIR).
    evaluate: measure sentence encoders on STS-B dev and SICK test and put
      the scores in the model card (an exporter may have set scores of its
      own, e.g. a pair classifier's dev accuracy; those are kept).
  """
  module = build_module(model_dir)
  if evaluate and is_sentence_encoder(module) and (
      "evaluation" not in module.metadata):
    module.metadata["evaluation"] = export_time_scores(module, data_dir)
  return saved_model_writer.write(module, export_dir, version)


FLAGS = flags.FLAGS


def main(argv):
  del argv
  path = export(FLAGS.model_dir, FLAGS.export_dir, FLAGS.version,
                data_dir=FLAGS.data_dir, evaluate=FLAGS.evaluate)
  print(f"exported to {path}")


if __name__ == "__main__":
  flags.DEFINE_string("model_dir", None, "A trained model directory.",
                      required=True)
  flags.DEFINE_string("export_dir", None, "Export base folder (gets "
                      "<version>/).", required=True)
  flags.DEFINE_integer("version", None, "Version number (default: next).")
  flags.DEFINE_string("data_dir", None,
                      "Data directory for the model card's STS-B dev / SICK "
                      f"scores (default ${data_dir_lib.ENV_VAR}).")
  flags.DEFINE_boolean("evaluate", True, "Measure the scores in the model "
                       "card (sentence encoders).")
  cli.run(main)
