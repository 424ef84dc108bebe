"""Model directories as trainers leave them, for export tests."""

import os
import re

import numpy as np
import tensorflow as tf

from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import averaging_encoder
from sentzoo.export import saved_model_writer
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import siamese_cbow

WORDS = ["the", "cat", ",", "sat", "on", "mat", "café", "猫", "."]
DIM = 4
SENTENCES = ["The cat sat on the mat.", "", "   ", "dog bird", "Café, 猫!",
             "THE", b"\xff cat \xfe".decode("utf-8", "replace"), ", , ,"]


def siamese_cbow_reference(table, sentence):
  """Numpy encoder: Python tokens (punctuation kept), known words averaged."""
  index = {w: i + 1 for i, w in enumerate(WORDS)}
  ids = [index[t] for t in re.findall(r"\w+|[^\w\s]", sentence.lower())
         if t in index]
  if not ids:
    return np.zeros(table.shape[1], np.float32)
  return table[ids].mean(0)


def make_siamese_cbow_model_dir(model_dir, checkpoints=2):
  """A model directory as trainers/siamese_cbow.py leaves it."""
  os.makedirs(model_dir, exist_ok=True)
  vocabulary = vocabulary_lib.Vocabulary(
      WORDS, list(range(20, 20 - len(WORDS), -1)))
  vocabulary.save(os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE))
  tokenizer = tokenizer_lib.Tokenizer(keep_punctuation=True)
  model = siamese_cbow.SiameseCBOW(vocabulary.size_with_padding, DIM,
                                   init_stddev=0.3)
  model(tf.zeros([1, 4, 1], tf.int32))
  model_dir_lib.write_model_config(model_dir, "siamese_cbow", {
      "model": model.get_config(), "tokenizer": tokenizer.get_config(),
      "training": {"corpus_files": ["part01.txt.gz"], "total_steps": 10,
                   "batch_size": 2, "num_epochs": 1}})
  manager = tf.train.CheckpointManager(
      tf.train.Checkpoint(model=model),
      os.path.join(model_dir, model_dir_lib.CHECKPOINT_SUBDIR), max_to_keep=3)
  rng = np.random.default_rng(0)
  for _ in range(checkpoints):
    model.embedding.embeddings.assign(
        rng.normal(size=(len(WORDS) + 1, DIM)).astype(np.float32))
    manager.save()
  return model.embedding.embeddings.numpy()


def write_averaging_export(text_to_ids, table, export_dir):
  """Exports an averaging sentence encoder of `table` [vocab + 1, dim] to a
  new version under `export_dir`; returns the version's path."""
  return saved_model_writer.write(
      averaging_encoder.AveragingSentenceEncoder(text_to_ids, table, {}),
      export_dir)
