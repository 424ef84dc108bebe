"""Tests for export.sent2vec: model directory -> SavedModel."""

import json
import os

import numpy as np
import tensorflow as tf

from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import export_model
from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import sent2vec
from sentzoo.tests import export_test_case

_WORDS = ["the", "cat", "sat", "on", "mat", "."]
_SENTENCES = ["The cat sat on the mat.", "", "zebra quagga", "cat",
              "the mat , the cat"]
_DIM = 5
_BUCKETS = 11


def _make_model_dir(model_dir, word_ngrams):
  os.makedirs(model_dir, exist_ok=True)
  vocabulary = vocabulary_lib.Vocabulary(_WORDS, [9, 8, 7, 6, 5, 4])
  vocabulary.save(os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE))
  buckets = _BUCKETS if word_ngrams > 1 else 0
  model = sent2vec.Sent2Vec(vocabulary.size_with_padding, buckets, _DIM)
  model(np.zeros([1, 1], np.int32))
  table = np.random.default_rng(1).normal(
      size=model.source_embeddings.shape).astype(np.float32)
  table[0] = 0
  model.source_embeddings.assign(table)
  tokenizer = tokenizer_lib.Tokenizer(keep_punctuation=True)
  model_dir_lib.write_model_config(model_dir, "sent2vec", {
      "model": model.get_config(), "tokenizer": tokenizer.get_config(),
      "featurizer": {"word_ngrams": word_ngrams}, "training": {}})
  tf.train.Checkpoint(model=model).save(
      os.path.join(model_dir, model_dir_lib.CHECKPOINT_SUBDIR, "ckpt"))
  return vocabulary, table


def _reference(vocabulary, table, sentence, word_ngrams):
  """Plain Python: tokens -> ids -> n-gram hashes -> mean of rows."""
  index = {w: i + 1 for i, w in enumerate(vocabulary.words)}
  tokens = tokenizer_lib.Tokenizer(keep_punctuation=True).tokenize(
      tf.constant([sentence])).to_list()[0]
  ids = [index[t.decode()] for t in tokens if t.decode() in index]
  rows = list(ids)
  for n in range(2, word_ngrams + 1):
    for j in range(len(ids) - n + 1):
      h = ids[j]
      for x in ids[j + 1:j + n]:
        h = (h * sent2vec_featurizer.HASH_MULTIPLIER + x) % 2**64
      rows.append(vocabulary.size_with_padding + h % _BUCKETS)
  if not rows:
    return np.zeros(_DIM, np.float32)
  return table[rows].mean(axis=0)


class Sent2VecExportTest(export_test_case.ExportTestCase):

  def test_export_reload_matches_in_memory_and_reference(self):
    for word_ngrams in (1, 2):
      root = os.path.join(self.get_temp_dir(), f"n{word_ngrams}")
      vocabulary, table = _make_model_dir(os.path.join(root, "model"),
                                          word_ngrams)
      encoder = export_model.build_module(os.path.join(root, "model"))
      sentences = tf.constant(_SENTENCES)
      in_memory = encoder(sentences).numpy()
      expected = np.stack([_reference(vocabulary, table, s, word_ngrams)
                           for s in _SENTENCES])
      self.assertAllClose(in_memory, expected, atol=1e-6)
      # Empty and all-unknown sentences embed to zeros.
      self.assertAllEqual(in_memory[1:3], np.zeros((2, _DIM)))

      path = export_model.export(os.path.join(root, "model"),
                                 os.path.join(root, "export"))
      loaded = tf.saved_model.load(path)
      served = loaded.signatures["serving_default"](
          sentences=sentences)["embeddings"]
      self.assertAllClose(served, in_memory, atol=1e-6)
      self.assertAllClose(loaded(sentences), in_memory, atol=1e-6)
      self.assertLen(loaded.trainable_variables, 1)
      with open(os.path.join(path, "assets.extra", "model_card.json")) as f:
        card = json.load(f)
      self.assertEqual(card["model_type"], "sent2vec")
      self.assertEqual(card["word_ngrams"], word_ngrams)
      # Every consumer: signature, hub.load, PredictRequest, warm-up, bad
      # input, core ops only (fresh process), the C API loader.
      self.run_export_test(
          path, lambda sentences: {"embeddings": encoder(sentences)},
          {"sentences": _SENTENCES})
      if word_ngrams == 2:
        self.run_finetune_test(path, ["the cat sat", "on the mat", "cat",
                                      "the mat ."])

  def test_quantized_exports_match_float32_in_every_consumer(self):
    # N(0, 1) rows of dim 5: float16 errs by <= 2^-11 x |value| (~2e-3 at
    # most here), int8 by <= max|row| / 254 (~1.5e-2) per value, and a mean
    # of rows by no more.
    tolerances = {"float16": 2e-3, "int8": 1.5e-2}
    root = self.get_temp_dir()
    model_dir = os.path.join(root, "quantized", "model")
    _, table = _make_model_dir(model_dir, word_ngrams=2)
    sentences = tf.constant(_SENTENCES)
    float32_path = export_model.export(
        model_dir, os.path.join(root, "quantized", "none"), evaluate=False)
    float32 = tf.saved_model.load(float32_path)(sentences).numpy()
    for mode, tolerance in tolerances.items():
      with self.subTest(mode):
        encoder = export_model.build_module(model_dir, quantize=mode)
        self.assertEqual(encoder.quantization_mode, mode)
        in_memory = encoder(sentences).numpy()
        self.assertEqual(in_memory.shape, (len(_SENTENCES), _DIM))
        self.assertAllClose(in_memory, float32, atol=tolerance, rtol=0)
        # Empty and all-unknown sentences: zeros, not NaN.
        self.assertAllEqual(in_memory[1:3], np.zeros((2, _DIM)))
        path = export_model.export(
            model_dir, os.path.join(root, "quantized", mode),
            evaluate=False, quantize=mode)
        loaded = tf.saved_model.load(path)
        self.assertAllClose(loaded(sentences), in_memory, atol=1e-7)
        self.assertAllClose(loaded(sentences), float32, atol=tolerance,
                            rtol=0)
        self.assertEmpty(loaded.trainable_variables)
        with open(os.path.join(path, "assets.extra", "model_card.json")) as f:
          card = json.load(f)
        self.assertEqual(card["quantization"]["mode"], mode)
        self.assertTrue(card["quantization"]["inference_only"])
        self.assertEqual(card["quantization"]["table_shape"],
                         list(table.shape))
        # hub.load, PredictRequest, bad input, core ops only (fresh
        # process), the C API loader.
        self.run_export_test(
            path, lambda sentences: {"embeddings": encoder(sentences)},
            {"sentences": _SENTENCES}, inference_only=True)

  def test_export_refuses_a_module_of_another_mode(self):
    model_dir = os.path.join(self.get_temp_dir(), "mismatch", "model")
    _make_model_dir(model_dir, word_ngrams=1)
    module = export_model.build_module(model_dir)
    with self.assertRaisesRegex(ValueError, "built with quantization 'none'"):
      export_model.export(model_dir, os.path.join(self.get_temp_dir(),
                                                  "mismatch", "export"),
                          module=module, quantize="int8", evaluate=False)


if __name__ == "__main__":
  tf.test.main()
