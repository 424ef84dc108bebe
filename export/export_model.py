r"""The one export path: a trained model directory -> a versioned SavedModel.

  python -m export.export_model --model_dir=runs/siamese_cbow_demo \
      --export_dir=exports/siamese_cbow

Reads <model_dir>/model_config.json (which model, its tokeniser), the
vocabulary and the latest checkpoint, and writes <export_dir>/<version>/:
a SavedModel whose `serving_default` takes `sentences` (1-D tf.string) and
returns `embeddings` (float32 [batch, dim]), with a model card in
assets.extra/model_card.json.
"""

import json
import os
import platform

from absl import flags
import keras
import tensorflow as tf

from common import cli
from common import errors
from export import averaging_encoder
from export import saved_model_writer
from inputs import text_to_ids as text_to_ids_lib
from inputs import tokenizer as tokenizer_lib
from inputs import vocabulary as vocabulary_lib
from models import siamese_cbow

MODEL_CONFIG_FILE = "model_config.json"
VOCABULARY_FILE = "vocab.txt"

PAPERS = {
    "siamese_cbow": "Kenter, Borisov, de Rijke. Siamese CBOW: Optimizing Word "
                    "Embeddings for Sentence Representations. ACL 2016.",
}


def write_model_config(model_dir, model_type, config):
  """Records what `export` needs to rebuild the model from `model_dir`."""
  with open(os.path.join(model_dir, MODEL_CONFIG_FILE), "w") as f:
    json.dump({"model_type": model_type, **config}, f, indent=2)


def read_model_config(model_dir):
  path = os.path.join(model_dir, MODEL_CONFIG_FILE)
  if not os.path.exists(path):
    raise errors.UserError(
        f"{model_dir!r} is not a trained model directory (no "
        f"{MODEL_CONFIG_FILE}); pass the --model_dir a trainer wrote")
  with open(path) as f:
    return json.load(f)


def make_encoder(vocabulary, tokenizer, model, metadata):
  """An `AveragingSentenceEncoder` with the model's current word vectors.

  No truncation: an exported encoder averages every known word.
  """
  return averaging_encoder.AveragingSentenceEncoder(
      text_to_ids_lib.TextToIds(vocabulary, tokenizer),
      model.embedding.embeddings.numpy(), metadata)


def _restore_siamese_cbow(model_dir, config):
  model = siamese_cbow.SiameseCBOW.from_config(config["model"])
  model(tf.zeros([1, 3, 1], tf.int32))
  checkpoint_dir = os.path.join(model_dir, "checkpoints")
  latest = tf.train.latest_checkpoint(checkpoint_dir)
  if latest is None:
    raise errors.UserError(f"no checkpoint in {checkpoint_dir!r}: train first")
  tf.train.Checkpoint(model=model).restore(latest).expect_partial()
  return model, latest


def model_card(model_type, config, vocabulary, dim, checkpoint):
  return {
      "model_type": model_type,
      "paper": PAPERS.get(model_type, ""),
      "embedding_dim": dim,
      "vocabulary_size": len(vocabulary),
      "tokenization": {**config.get("tokenizer", {}),
                       "description": "lower-case; tokens \\w+ and single "
                                      "punctuation characters; unknown words "
                                      "dropped; sentence = mean of word "
                                      "vectors (zero if none known)"},
      "training": config.get("training", {}),
      "checkpoint": os.path.basename(checkpoint),
      "signature": {"serving_default": {"inputs": {"sentences": "tf.string [batch]"},
                                        "outputs": {"embeddings": f"float32 [batch, {dim}]"}}},
      "versions": {"tensorflow": tf.__version__, "keras": keras.__version__,
                   "python": platform.python_version()},
  }


def build_encoder(model_dir):
  """The in-memory encoder a model directory exports."""
  config = read_model_config(model_dir)
  model_type = config["model_type"]
  if model_type != "siamese_cbow":
    raise errors.UserError(f"cannot export model type {model_type!r}")
  vocabulary = vocabulary_lib.Vocabulary.load(
      os.path.join(model_dir, VOCABULARY_FILE))
  tokenizer = tokenizer_lib.Tokenizer.from_config(config["tokenizer"])
  model, checkpoint = _restore_siamese_cbow(model_dir, config)
  card = model_card(model_type, config, vocabulary, model.embedding_dim,
                    checkpoint)
  return make_encoder(vocabulary, tokenizer, model, card)


def export(model_dir, export_dir, version=None):
  """Exports the latest checkpoint of `model_dir`; returns the version path."""
  return saved_model_writer.write(build_encoder(model_dir), export_dir,
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
