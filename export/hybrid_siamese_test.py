"""Tests for the hybrid siamese exporter: pair classifier and encoder."""

import os

import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import export_model
from sentzoo.export import hybrid_siamese as hybrid_siamese_export
from sentzoo.export import saved_model_writer
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import hybrid_siamese
from sentzoo.tests import export_test_case

WORDS = ["a", "man", "plays", "guitar", "dog", "runs", "the"]
SENTENCES_A = ["A man plays the guitar.", "", "zzz unknown", "The dog runs"]
SENTENCES_B = ["The man plays a guitar!", "", "A dog", "a man"]


def make_model_dir(model_dir, encoder="gru", mode="joint", best=True):
  """A trained-looking model dir: vocab, model_config.json, a checkpoint."""
  os.makedirs(model_dir, exist_ok=True)
  vocabulary_lib.Vocabulary(WORDS, [1] * len(WORDS)).save(
      os.path.join(model_dir, "vocab.txt"))
  keras.utils.set_random_seed(0)
  model = hybrid_siamese.HybridSiamese(len(WORDS) + 1, 6, encoder,
                                       encoder_units=5, cnn_filters=3,
                                       mlp_units=(4, 4))
  model.build()
  model_dir_lib.write_model_config(model_dir, "hybrid_siamese", {
      "model": model.get_config(),
      "tokenizer": tokenizer_lib.Tokenizer().get_config(),
      "mode": mode, "threshold": 0.5, "max_length": 3,
      "training": {"task": "test"}})
  checkpoint = tf.train.Checkpoint(model=model)
  if best:
    checkpoint.write(os.path.join(model_dir, "best", "ckpt"))
  else:
    tf.train.CheckpointManager(checkpoint, os.path.join(
        model_dir, "checkpoints"), 1).save(checkpoint_number=7)
  return model


class HybridSiameseExportTest(export_test_case.ExportTestCase):

  def setUp(self):
    super().setUp()
    self.root = os.path.join(self.get_temp_dir(), self.id())

  def _reference(self, model, sentences):
    """Encodings from the model on hand-made ids (truncated to 3)."""
    ids = [[WORDS.index(w) + 1 for w in s.lower().replace(".", " ")
            .replace("!", " ").split() if w in WORDS][:3] for s in sentences]
    dense = np.zeros((len(ids), 3), np.int32)
    for i, row in enumerate(ids):
      dense[i, :len(row)] = row
    return model.encode(tf.constant(dense)).numpy()

  def test_pair_export_reloads_equal_to_the_in_memory_model(self):
    model_dir = os.path.join(self.root, "model")
    model = make_model_dir(model_dir, "gru")
    module = export_model.build_module(model_dir)
    a, b = tf.constant(SENTENCES_A), tf.constant(SENTENCES_B)
    in_memory = module.serve(a, b)
    expected_a = self._reference(model, SENTENCES_A)
    self.assertAllClose(module(a), expected_a, atol=1e-6)
    self.assertAllEqual(module(a)[1:3], np.zeros((2, 5)))  # Empty, unknown.
    self.assertAllClose(
        in_memory["distance"],
        np.linalg.norm(expected_a - self._reference(model, SENTENCES_B),
                       axis=-1), atol=1e-5)
    self.assertEqual(float(in_memory["distance"][1]), 0.0)

    path = export_model.export(model_dir, os.path.join(self.root, "export"))
    loaded = tf.saved_model.load(path)
    served = loaded.signatures["serving_default"](sentences_a=a,
                                                  sentences_b=b)
    self.assertEqual(sorted(served), ["distance", "match", "probability"])
    for key in ("probability", "distance"):
      self.assertAllClose(served[key], in_memory[key], atol=1e-6)
    self.assertAllEqual(served["match"], in_memory["match"])
    self.assertAllClose(served["probability"] > 0.5, served["match"])
    self.assertAllClose(loaded(a), expected_a, atol=1e-6)
    self.assertAllClose(loaded.encode(a)["embeddings"], expected_a, atol=1e-6)
    self.assertEqual(loaded(tf.constant([], tf.string)).shape, (0, 5))
    self.assertLen(loaded.variables, len(model.weights))
    self.assertLen(loaded.trainable_variables, len(model.trainable_weights))
    # Every consumer: signature, hub.load, PredictRequest, warm-up, bad
    # input, core ops only (fresh process), the C API loader.
    self.run_export_test(path, module.serve,
                         {"sentences_a": SENTENCES_A,
                          "sentences_b": SENTENCES_B})

  def test_encoder_only_export(self):
    model_dir = os.path.join(self.root, "model")
    model = make_model_dir(model_dir, "cnn", best=False)
    module = hybrid_siamese_export.build_module(
        model_dir, model_dir_lib.read_model_config(model_dir),
        encoder_only=True)
    self.assertEqual(module.metadata["checkpoint"], "ckpt-7")
    path = saved_model_writer.write(module, os.path.join(self.root, "enc"))
    loaded = tf.saved_model.load(path)
    a = tf.constant(SENTENCES_A)
    served = loaded.signatures["serving_default"](sentences=a)["embeddings"]
    self.assertAllClose(served, self._reference(model, SENTENCES_A),
                        atol=1e-6)
    self.assertAllClose(served, module(a), atol=1e-6)
    self.run_export_test(
        path, lambda sentences: {"embeddings": module(sentences)},
        {"sentences": SENTENCES_A})
    self.run_finetune_test(path, SENTENCES_A)

  def test_quantize_is_refused_with_one_error(self):
    model_dir = os.path.join(self.root, "model")
    make_model_dir(model_dir, "cnn")
    with self.assertRaisesRegex(
        errors.UserError,
        "--quantize=int8: a hybrid_siamese export cannot be quantised"):
      export_model.build_module(model_dir, quantize="int8")

  def test_contrastive_mode_decides_by_distance(self):
    model_dir = os.path.join(self.root, "model")
    make_model_dir(model_dir, "lstm", mode="contrastive")
    module = export_model.build_module(model_dir)
    out = module.serve(tf.constant(SENTENCES_A), tf.constant(SENTENCES_B))
    self.assertAllEqual(out["match"], out["distance"] < 0.5)
    self.assertAllEqual(out["probability"],
                        tf.cast(out["match"], tf.float32))
    self.assertEqual(module.metadata["mode"], "contrastive")


if __name__ == "__main__":
  tf.test.main()
