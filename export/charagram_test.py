"""Tests for export.charagram and export.featurized_encoder: every variant exports and reloads."""

import json
import os

import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import charagram as charagram_export
from sentzoo.export import export_model
from sentzoo.export import featurized_encoder
from sentzoo.inputs import char_ngrams
from sentzoo.inputs import text_to_ids
from sentzoo.inputs import tokenizer
from sentzoo.inputs import vocabulary
from sentzoo.tests import export_test_case

TEXTS = ["a man plays a flute", "someone plays music", "", "zzz ☃",
         "A MAN, playing!"]


def _write_model_dir(model_dir, variant, num_buckets=0):
  """A model directory as the trainer leaves it (config, vocabulary, checkpoint)."""
  os.makedirs(model_dir, exist_ok=True)
  if variant == "paragram_phrase":
    vocab = vocabulary.Vocabulary(["a", "man", "plays", "music"], [4, 3, 2, 1])
    vocab.save(os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE))
    featurizer = text_to_ids.TextToIds(vocab, tokenizer.Tokenizer())
  else:
    sizes = (1,) if variant in ("char_cnn", "char_lstm") else (2, 3, 4)
    vocab = None
    if not num_buckets:
      vocab = char_ngrams.build_ngram_vocabulary(TEXTS[:2], sizes)
      vocab.save(char_ngrams.vocabulary_path(model_dir))
    featurizer = char_ngrams.CharNgramFeaturizer(
        sizes, vocabulary=vocab, num_buckets=num_buckets,
        unknown_id=sizes == (1,))
  cls = charagram_export.VARIANTS[variant]
  if variant == "paragram_phrase":
    model = cls(featurizer.vocabulary_size, 6)
  elif variant == "char_cnn":
    model = cls(featurizer.num_ids, 4, filter_widths=(2,),
                filters_per_width=3, embedding_dim=6)
  elif variant == "char_lstm":
    model = cls(featurizer.num_ids, 4, 6)
  else:
    model = cls(featurizer.num_ids, 6)
  model(tf.ragged.constant([[1]], dtype=tf.int32))
  # Non-zero biases, so that "empty text -> h(b)" is exercised.
  for w in model.weights:
    if "bias" in w.path:
      w.assign(np.full(w.shape, 0.1, np.float32))
  tf.train.Checkpoint(model=model).save(
      os.path.join(model_dir, "checkpoints", "ckpt"))
  model_dir_lib.write_model_config(model_dir, "charagram", {
      "variant": variant, "model": model.get_config(),
      "featurizer": charagram_export.featurizer_config(featurizer),
      "training": {"num_pairs": 0}})
  return featurized_encoder.FeaturizedEncoder(featurizer, model)


class CharagramExportTest(export_test_case.ExportTestCase):

  def _check(self, variant, num_buckets=0):
    keras.utils.set_random_seed(0)
    model_dir = os.path.join(self.get_temp_dir(), f"{variant}{num_buckets}")
    in_memory = _write_model_dir(model_dir, variant, num_buckets)
    path = export_model.export(model_dir,
                               os.path.join(model_dir, "export"))
    loaded = tf.saved_model.load(path)
    texts = tf.constant(TEXTS)
    expected = in_memory(texts)
    self.assertAllClose(loaded(texts), expected, atol=1e-6)
    served = loaded.signatures["serving_default"](sentences=texts)
    self.assertAllClose(served["embeddings"], expected, atol=1e-6)
    self.assertTrue(np.all(np.isfinite(expected.numpy())))
    self.assertEqual(len(loaded.variables), len(in_memory.variables))
    self.assertNotEmpty(loaded.trainable_variables)
    with open(os.path.join(path, "assets.extra", "model_card.json")) as f:
      card = json.load(f)
    self.assertEqual(card["variant"], variant)
    self.assertEqual(card["embedding_dim"], 6)
    # Every consumer: signature, hub.load, PredictRequest, warm-up, bad
    # input, core ops only (fresh process), the C API loader.
    self.run_export_test(
        path, lambda sentences: {"embeddings": in_memory(sentences)},
        {"sentences": TEXTS})
    return loaded, expected

  def test_charagram(self):
    loaded, expected = self._check("charagram")
    # The empty sentence (row 2) embeds to tanh(b).
    self.assertAllClose(expected[2], np.tanh(np.full(6, 0.1)), atol=1e-6)

  def test_charagram_fine_tunes(self):
    keras.utils.set_random_seed(0)
    model_dir = os.path.join(self.get_temp_dir(), "finetune")
    _write_model_dir(model_dir, "charagram", 0)
    path = export_model.export(model_dir, os.path.join(model_dir, "export"))
    self.run_finetune_test(path, ["the cat", "a dog", "cats", "dogs !"])

  def test_charagram_hashed(self):
    self._check("charagram", num_buckets=50)

  def test_paragram_phrase(self):
    _, expected = self._check("paragram_phrase")
    self.assertAllEqual(expected[2], np.zeros(6))  # No known word.

  def test_char_cnn(self):
    self._check("char_cnn")

  def test_char_lstm(self):
    _, expected = self._check("char_lstm")
    self.assertAllEqual(expected[2], np.zeros(6))

  def test_paragram_phrase_quantized(self):
    # Glorot-uniform rows of a 5 x 6 table (|value| < 0.75): float16 errs by
    # <= 2^-11 x 0.75 ~ 4e-4 per value, int8 by <= max|row| / 254 < 3e-3.
    keras.utils.set_random_seed(0)
    model_dir = os.path.join(self.get_temp_dir(), "paragram_quantized")
    in_memory = _write_model_dir(model_dir, "paragram_phrase")
    texts = tf.constant(TEXTS)
    expected = in_memory(texts).numpy()
    for mode, tolerance in (("float16", 1e-3), ("int8", 5e-3)):
      with self.subTest(mode):
        path = export_model.export(model_dir,
                                   os.path.join(model_dir, mode),
                                   evaluate=False, quantize=mode)
        loaded = tf.saved_model.load(path)
        got = loaded(texts).numpy()
        self.assertAllClose(got, expected, atol=tolerance, rtol=0)
        self.assertAllEqual(got[2], np.zeros(6))  # No known word.
        self.assertEmpty(loaded.trainable_variables)
        with open(os.path.join(path, "assets.extra", "model_card.json")) as f:
          card = json.load(f)
        self.assertEqual(card["variant"], "paragram_phrase")
        self.assertEqual(card["quantization"]["mode"], mode)
        if mode == "int8":
          quantized = export_model.build_module(model_dir, quantize=mode)
          self.run_export_test(
              path, lambda sentences: {"embeddings": quantized(sentences)},
              {"sentences": TEXTS}, inference_only=True)

  def test_other_variants_refuse_quantization(self):
    keras.utils.set_random_seed(0)
    model_dir = os.path.join(self.get_temp_dir(), "charagram_quantized")
    _write_model_dir(model_dir, "charagram")
    with self.assertRaisesRegex(errors.UserError,
                                "a charagram export cannot be quantised"):
      export_model.build_module(model_dir, quantize="int8")


if __name__ == "__main__":
  tf.test.main()
