"""What a trainer leaves in a model directory, and reading it back.

A model directory holds model_config.json (model type, model and tokeniser
configs, training facts), the vocabulary and checkpoints/. Trainers write it
with `write_model_config`; exporters read it back.
"""

import json
import os
import platform

import keras
import tensorflow as tf

from sentzoo.common import errors

MODEL_CONFIG_FILE = "model_config.json"
VOCABULARY_FILE = "vocab.txt"
CHECKPOINT_SUBDIR = "checkpoints"


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


def restore_latest(model_dir, **objects):
  """Restores `objects` (e.g. model=...) from the newest checkpoint.

  Returns:
    The checkpoint path restored.

  Raises:
    errors.UserError: when `model_dir` holds no checkpoint.
  """
  checkpoint_dir = os.path.join(model_dir, CHECKPOINT_SUBDIR)
  latest = tf.train.latest_checkpoint(checkpoint_dir)
  if latest is None:
    raise errors.UserError(f"no checkpoint in {checkpoint_dir!r}: train first")
  tf.train.Checkpoint(**objects).restore(latest).expect_partial()
  return latest


def base_model_card(model_type, paper, config, checkpoint, signature):
  """Model card fields every export has; exporters add their own."""
  return {
      "model_type": model_type,
      "paper": paper,
      "training": config.get("training", {}),
      "checkpoint": os.path.basename(checkpoint),
      "signature": {"serving_default": signature},
      "versions": {"tensorflow": tf.__version__, "keras": keras.__version__,
                   "python": platform.python_version()},
  }
