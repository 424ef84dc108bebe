"""Tests for export.input_limits: every exported encoder truncates long input.

A 5 MB sentence must embed exactly as its first `max_bytes_per_sentence`
bytes (cut at a character boundary) and its first `max_tokens_per_sentence`
tokens do, with every kind of featuriser, in memory and through a reloaded
export; the caps are in the model card. (Memory is measured by
`lab/benchmarks/serving_memory.py`, not here.)
"""

import json
import os

import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import averaging_encoder
from sentzoo.export import featurized_encoder
from sentzoo.export import hybrid_siamese as hybrid_siamese_export
from sentzoo.export import input_limits
from sentzoo.export import op_check
from sentzoo.export import saved_model_writer
from sentzoo.export import siamese_cbow as siamese_cbow_export
from sentzoo.inputs import char_ngrams
from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import char_cnn
from sentzoo.models import charagram
from sentzoo.models import hybrid_siamese
from sentzoo.tests import model_dir_fixtures

WORDS = ["the", "cat", "sat", "on", "mat", "猫", "кот", "dog"]
FIVE_MB = 5 * 1000 * 1000


def _five_mb_sentence():
  """5 MB of WORDS drawn at random (1- to 3-byte characters)."""
  words = np.random.default_rng(5).choice(WORDS, size=FIVE_MB // 3)
  return " ".join(words).encode("utf-8")[:FIVE_MB]


def _prefix(data, max_bytes):
  """The first `max_bytes` bytes of UTF-8 `data`, without a cut character."""
  return data[:max_bytes].decode("utf-8", "ignore").encode("utf-8")


def _first_tokens(data, max_tokens):
  return " ".join(data.decode("utf-8").split()[:max_tokens]).encode("utf-8")


def _vocabulary():
  return vocabulary_lib.Vocabulary(WORDS, list(range(len(WORDS), 0, -1)))


def _encoders(**limits):
  """(name, in-memory encoder) of every featuriser kind, with `limits`."""
  keras.utils.set_random_seed(0)
  rng = np.random.default_rng(0)
  vocabulary = _vocabulary()
  table = rng.normal(size=(len(WORDS) + 1, 4)).astype(np.float32)
  yield "words", averaging_encoder.AveragingSentenceEncoder(
      text_to_ids_lib.TextToIds(vocabulary), table, **limits)
  s2v = sent2vec_featurizer.Sent2VecFeaturizer(vocabulary, word_ngrams=2,
                                                num_buckets=7)
  s2v_table = rng.normal(size=(s2v.source_rows, 4)).astype(np.float32)
  yield "sent2vec", averaging_encoder.AveragingSentenceEncoder(
      s2v, s2v_table, **limits)
  for tokenize in (True, False):
    ngrams = char_ngrams.CharNgramFeaturizer((2, 3), num_buckets=50,
                                             tokenize=tokenize)
    model = charagram.Charagram(ngrams.num_ids, 4)
    model(tf.ragged.constant([[1]], dtype=tf.int32))
    yield f"charagram tokenize={tokenize}", featurized_encoder.FeaturizedEncoder(
        ngrams, model, **limits)
  chars = char_ngrams.CharNgramFeaturizer((1,), num_buckets=40)
  cnn = char_cnn.CharCNN(chars.num_ids, 3, filter_widths=(2,),
                         filters_per_width=2, embedding_dim=4)
  cnn(tf.ragged.constant([[1]], dtype=tf.int32))
  yield "char_cnn", featurized_encoder.FeaturizedEncoder(chars, cnn, **limits)
  pair_model = hybrid_siamese.HybridSiamese(len(WORDS) + 1, 4, "gru",
                                            encoder_units=3, cnn_filters=2,
                                            mlp_units=(3,))
  pair_model.build()
  yield "hybrid_siamese", hybrid_siamese_export.HybridSiamesePairClassifier(
      text_to_ids_lib.TextToIds(vocabulary, max_length=2000), pair_model,
      "joint", 0.5, **limits)


class CheckTest(tf.test.TestCase):

  def test_good_values_and_card_entry(self):
    self.assertEqual(input_limits.check(1, 2**31 - 1), (1, 2**31 - 1))
    card = input_limits.model_card_entry(100, 10)
    self.assertEqual(card["max_bytes_per_sentence"], 100)
    self.assertEqual(card["max_tokens_per_sentence"], 10)
    self.assertIn("never rejected", card["description"])

  def test_bad_values_are_user_errors_naming_the_cap(self):
    for bad in (0, -5, 2**31, 1.5, "64", None, True):
      with self.assertRaisesRegex(errors.UserError,
                                  "max_bytes_per_sentence must be"):
        input_limits.check(bad, 10)
      with self.assertRaisesRegex(errors.UserError,
                                  "max_tokens_per_sentence must be"):
        input_limits.check(10, bad)
    with self.assertRaisesRegex(errors.UserError, "max_tokens_per_sentence"):
      averaging_encoder.AveragingSentenceEncoder(
          text_to_ids_lib.TextToIds(_vocabulary()), np.zeros([9, 2]),
          max_tokens_per_sentence=0)


class TruncationTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.big = _five_mb_sentence()

  def test_five_mb_sentence_embeds_as_its_first_max_bytes(self):
    # The token cap is out of the way: the byte cap alone decides. 1001 is
    # inside a multi-byte character of the cycle (the cut drops it).
    for max_bytes in (1001, 65536):
      prefix = _prefix(self.big, max_bytes)
      self.assertLess(len(prefix), max_bytes + 1)
      for name, encoder in _encoders(max_bytes_per_sentence=max_bytes,
                                     max_tokens_per_sentence=10**6):
        with self.subTest(encoder=name, max_bytes=max_bytes):
          got = encoder(tf.constant([self.big, b"the cat"])).numpy()
          self.assertTrue(np.all(np.isfinite(got)))
          self.assertAllClose(got, encoder(tf.constant([prefix, b"the cat"])),
                              atol=1e-5)

  def test_five_mb_sentence_embeds_as_its_first_max_tokens(self):
    for name, encoder in _encoders(max_tokens_per_sentence=5):
      with self.subTest(encoder=name):
        got = encoder(tf.constant([self.big])).numpy()
        self.assertAllClose(got, encoder(tf.constant(
            [_first_tokens(_prefix(self.big, 1000), 5)])), atol=1e-5)
        if name != "char_cnn":  # A tiny max-pooling CNN may not notice.
          self.assertNotAllClose(got, encoder(tf.constant(
              [_first_tokens(_prefix(self.big, 1000), 4)])))

  def test_defaults_and_cut_characters(self):
    encoder = dict(_encoders())["words"]
    self.assertEqual(
        (encoder.max_bytes_per_sentence, encoder.max_tokens_per_sentence),
        (65536, 1024))
    self.assertAllClose(encoder(tf.constant([self.big])), encoder(
        tf.constant([_first_tokens(_prefix(self.big, 20000), 1024)])),
                        atol=1e-5)
    # Cuts at every byte of 4-byte, 3-byte and 2-byte characters: no error,
    # no NaN, the cut character is dropped (not a replacement character).
    short = dict(_encoders(max_bytes_per_sentence=7))["words"]
    for text in ("😀😀😀", "猫猫猫", "кот кот", "cat кот", "the 猫 cat"):
      data = text.encode("utf-8")
      got = short(tf.constant([data])).numpy()
      self.assertTrue(np.all(np.isfinite(got)))
      self.assertAllClose(got, short(tf.constant([_prefix(data, 7)])))
    # Invalid bytes before the cut are replaced as in any sentence.
    self.assertAllClose(short(tf.constant([b"\xff\xfecat\xe7\x8c\xabmat"])),
                        short(tf.constant([b"? cat"])))

  def test_export_serves_truncated_and_records_the_caps(self):
    encoder = dict(_encoders(max_bytes_per_sentence=5000,
                             max_tokens_per_sentence=100))["sent2vec"]
    path = saved_model_writer.write(
        encoder, os.path.join(self.get_temp_dir(), "exports"))
    self.assertEqual(op_check.unregistered_op_types(path), [])
    with open(os.path.join(path, saved_model_writer.MODEL_CARD)) as f:
      card = json.load(f)
    self.assertEqual(card["input_limits"],
                     input_limits.model_card_entry(5000, 100))
    serve = tf.saved_model.load(path).signatures["serving_default"]
    sentences = tf.constant([self.big, b"", b"\xc3"])
    served = serve(sentences=sentences)["embeddings"]
    self.assertAllClose(served, encoder(tf.constant(
        [_first_tokens(self.big[:5000], 100), b"", b""])), atol=1e-5)

  def test_exporter_build_module_takes_the_caps(self):
    model_dir = os.path.join(self.get_temp_dir(), "scbow")
    model_dir_fixtures.make_siamese_cbow_model_dir(model_dir)
    config = model_dir_lib.read_model_config(model_dir)
    module = siamese_cbow_export.build_module(
        model_dir, config, max_bytes_per_sentence=10,
        max_tokens_per_sentence=2)
    self.assertEqual(module.metadata["input_limits"],
                     input_limits.model_card_entry(10, 2))
    self.assertAllClose(module(tf.constant(["the cat sat on", "the cat",
                                            "the cat mat mat mat"])),
                        module(tf.constant(["the cat", "the cat",
                                            "the cat"])))


if __name__ == "__main__":
  tf.test.main()
