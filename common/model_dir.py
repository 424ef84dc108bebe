"""The model directory: the one place that names its files, for every reader.

A trainer's --model_dir holds model_config.json (model type, model and
tokeniser configs, training facts), flags.txt (the flags of the run),
vocab.txt, corpus_stats.json (where the model counts its corpus),
checkpoints/, tensorboard/, train_log.jsonl and eval_log.jsonl (the loss and
evaluation curves), export/<version>/ and sts_results.{json,md}. Trainers,
exporters, input readers, benchmarks and reports all take the names from
here.
"""

import json
import os

import tensorflow as tf

from sentzoo.common import errors

MODEL_CONFIG_FILE = "model_config.json"
FLAGS_FILE = "flags.txt"
VOCABULARY_FILE = "vocab.txt"
CORPUS_STATS_FILE = "corpus_stats.json"
CHECKPOINT_SUBDIR = "checkpoints"
TRAIN_LOG_FILE = "train_log.jsonl"
EVAL_LOG_FILE = "eval_log.jsonl"
EXPORT_SUBDIR = "export"
STS_RESULTS_FILE = "sts_results.json"
STS_TABLE_FILE = "sts_results.md"


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
  latest = latest_checkpoint(model_dir)
  if latest is None:
    raise errors.UserError(
        f"no checkpoint in {os.path.join(model_dir, CHECKPOINT_SUBDIR)!r}: "
        "train first")
  tf.train.Checkpoint(**objects).restore(latest).expect_partial()
  return latest


def latest_checkpoint(model_dir):
  """The newest checkpoint's path prefix in `model_dir`, or None."""
  return tf.train.latest_checkpoint(os.path.join(model_dir, CHECKPOINT_SUBDIR))
