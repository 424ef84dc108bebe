r"""The one export path: a trained model directory -> a versioned SavedModel.

  python -m export.export_model --model_dir=runs/siamese_cbow_demo \
      --export_dir=exports/siamese_cbow

Reads <model_dir>/model_config.json, whose "model_type" X picks the exporter
module `export/X.py`; its `build_module(model_dir, config)` restores
the latest checkpoint and returns the tf.Module to save. Writes
<export_dir>/<version>/ atomically (see `saved_model_writer`), with a model
card in assets.extra/model_card.json.

Every export's `serving_default` takes raw `tf.string` sentences: sentence
encoders take `sentences` [batch] and return `embeddings` float32
[batch, dim]; pair models take two string inputs and return their match
probability and distance.

`--quantize=float16|int8` (default none) stores the table of an averaging
model (Sent2Vec, Siamese CBOW, PARAGRAM-PHRASE) compactly, for inference
only (`export.table_quantization`); the other models refuse it.
"""

import importlib
import math
import os
import time

from absl import flags

from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.common import non_finite
from sentzoo.common import run_lock
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.export import input_limits
from sentzoo.export import saved_model_writer
from sentzoo.export import table_quantization
from sentzoo.models import model_specs


def exporter_for(model_type):
  """The exporter module of `model_type` (models/model_specs.py names it),
  imported lazily, so that exporting one model never imports the others."""
  try:
    spec = model_specs.get(str(model_type))
  except KeyError as e:
    raise errors.UserError(f"cannot export: {e.args[0]}") from e
  return importlib.import_module(f"sentzoo.{spec.export_module}")


def build_module(model_dir, quantize="none", **input_caps):
  """The in-memory tf.Module that `export` saves for `model_dir`.

  `quantize`: how an averaging model's table is stored
  (`export.table_quantization.MODES`). `input_caps`: max_bytes_per_sentence
  and max_tokens_per_sentence of the serving signature (default:
  export/input_limits.py's).
  """
  table_quantization.check_mode(quantize)
  config = model_dir_lib.read_model_config(model_dir)
  model_dir_lib.check_vocabulary(model_dir, config)
  return exporter_for(config["model_type"]).build_module(
      model_dir, config, quantize=quantize, **input_caps)


def is_sentence_encoder(module):
  """Whether `module` serves `sentences` -> `embeddings` (not a pair model)."""
  return [spec.name for spec in module.serve.input_signature] == ["sentences"]


def export_time_scores(module, data_dir):
  """STS-B dev and SICK test correlations of a sentence encoder, for its card.

  Measured on the in-memory module that is about to be saved (the same
  graph), so the card states what the export scores. Returns a dict with a
  "note" instead of scores when there is no data to measure on.
  """
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
           evaluate=True, module=None,
           max_bytes_per_sentence=input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE,
           max_tokens_per_sentence=(
               input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE),
           quantize="none"):
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
    module: the module `build_module(model_dir)` would return, built by the
      caller from the trained model in memory (a trainer, so that a large
      table is not restored from the checkpoint a second time); default:
      built from the latest checkpoint (the caller sets its input caps).
    max_bytes_per_sentence, max_tokens_per_sentence: the serving
      signature's caps on one input sentence (export/input_limits.py).
    quantize: "none", "float16" or "int8": how an averaging model's table
      is stored (`export.table_quantization`); a given `module` must have
      been built with the same mode.
  """
  table_quantization.check_mode(quantize)
  if module is None:
    module = build_module(model_dir, quantize=quantize,
                          max_bytes_per_sentence=max_bytes_per_sentence,
                          max_tokens_per_sentence=max_tokens_per_sentence)
  elif getattr(module, "quantization_mode", "none") != quantize:
    raise ValueError(
        f"export(quantize={quantize!r}) was given a module built with "
        f"quantization {getattr(module, 'quantization_mode', 'none')!r}")
  non_finite.check_variables(
      module.variables, f"the model to export from {model_dir!r}")
  if evaluate and is_sentence_encoder(module) and (
      "evaluation" not in module.metadata):
    module.metadata["evaluation"] = export_time_scores(module, data_dir)
  return saved_model_writer.write(module, export_dir, version)


FLAGS = flags.FLAGS


def main(argv):
  del argv
  model_dir_lib.read_model_config(FLAGS.model_dir)  # A model dir, or say so.
  # One writer per model directory: not while a trainer (or another export)
  # of it runs.
  with run_lock.hold(FLAGS.model_dir, "export", read_only_ok=True):
    path = export(FLAGS.model_dir, FLAGS.export_dir, FLAGS.version,
                  data_dir=FLAGS.data_dir, evaluate=FLAGS.evaluate,
                  max_bytes_per_sentence=FLAGS.max_bytes_per_sentence,
                  max_tokens_per_sentence=FLAGS.max_tokens_per_sentence,
                  quantize=FLAGS.quantize)
  print(f"exported to {path}")
  note = card_scores_note(path)
  if note:
    print(f"note: the model card has no STS scores ({note})", flush=True)


def card_scores_note(path):
  """Why the model card of the export at `path` has no scores, or None."""
  card = model_dir_lib.read_json(
      os.path.join(path, saved_model_writer.MODEL_CARD), "the model card")
  evaluation = card.get("evaluation") or {}
  return evaluation.get("note")


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
  flags.DEFINE_integer("max_bytes_per_sentence",
                       input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE,
                       "Each input sentence is cut to this many bytes before "
                       "tokenisation (recorded in the model card).",
                       lower_bound=1, upper_bound=2**31 - 1)
  flags.DEFINE_integer("max_tokens_per_sentence",
                       input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE,
                       "At most this many tokens of each input sentence are "
                       "kept (recorded in the model card).", lower_bound=1,
                       upper_bound=2**31 - 1)
  flags.DEFINE_enum("quantize", "none", table_quantization.MODES,
                    "Store the table of an averaging model (sent2vec, "
                    "siamese_cbow, paragram_phrase) as float16 or row-wise "
                    "int8: a smaller, inference-only export (recorded in "
                    "the model card; export/table_quantization.py).")
  cli.run(main)
