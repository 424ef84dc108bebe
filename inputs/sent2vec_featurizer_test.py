"""Tests for the Sent2Vec featurizer: unigram ids and hashed n-gram ids."""

import numpy as np
import tensorflow as tf

from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib

_VOCAB = vocabulary_lib.Vocabulary(["a", "cat", "sat", "on", "mat", "."],
                                   [9, 5, 3, 3, 2, 2])


def _numpy_hash(window, buckets):
  """The C++ hash: uint64 wrapping arithmetic, the bucket taken at the end."""
  h = window[0]
  for x in window[1:]:
    h = (h * sent2vec_featurizer.HASH_MULTIPLIER + x) % 2**64
  return h % buckets


class HashTest(tf.test.TestCase):

  def test_matches_the_written_formula_and_stays_in_range(self):
    rng = np.random.default_rng(0)
    for order in (2, 3, 4):
      windows = rng.integers(0, 2_000_000, size=(200, order))
      got = sent2vec_featurizer.hash_ngrams(windows, 2_000_000).numpy()
      want = [_numpy_hash([int(x) for x in w], 2_000_000) for w in windows]
      self.assertAllEqual(got, want)
      self.assertTrue(((got >= 0) & (got < 2_000_000)).all())

  def test_equals_values_printed_by_the_cpp_expression(self):
    # uint64_t h = w[0]; h = h * 116049371 + w[j]; h % buckets, compiled
    # with g++ (trigrams and 4-grams overflow 2^64 here).
    windows = [[1, 2], [2, 1], [5000, 17], [1999999, 1999998]]
    self.assertAllEqual(
        sent2vec_featurizer.hash_ngrams(windows, 2_000_000),
        [49373, 98743, 855017, 1950627])
    self.assertAllEqual(
        sent2vec_featurizer.hash_ngrams(
            [[1500, 1501, 1502], [1999999, 0, 1999999]], 2_000_000),
        [17257, 1144998])
    self.assertAllEqual(
        sent2vec_featurizer.hash_ngrams([[123456, 654321, 42, 7]], 1000),
        [198])

  def test_order_matters(self):
    h = sent2vec_featurizer.hash_ngrams([[1, 2], [2, 1]], 1000).numpy()
    self.assertNotEqual(h[0], h[1])


class Sent2VecFeaturizerTest(tf.test.TestCase):

  def test_unigrams_then_bigrams(self):
    f = sent2vec_featurizer.Sent2VecFeaturizer(
        _VOCAB, tokenizer_lib.Tokenizer(keep_punctuation=True),
        word_ngrams=2, num_buckets=100)
    ids = f(tf.constant(["A cat sat.", "cat"])).to_list()
    offset = _VOCAB.size_with_padding
    self.assertEqual(ids[0][:4], [1, 2, 3, 6])
    self.assertEqual(ids[0][4:], [offset + _numpy_hash([1, 2], 100),
                                  offset + _numpy_hash([2, 3], 100),
                                  offset + _numpy_hash([3, 6], 100)])
    self.assertEqual(ids[1], [2])
    self.assertEqual(f.source_rows, offset + 100)

  def test_caps_apply_before_ngrams_are_formed(self):
    f = sent2vec_featurizer.Sent2VecFeaturizer(_VOCAB, word_ngrams=2,
                                               num_buckets=100)
    offset = _VOCAB.size_with_padding
    sentences = tf.constant(["a cat sat on mat " * 100_000, "a cat"])
    ids = f(sentences, max_tokens=2).to_list()
    self.assertEqual(ids, [[1, 2, offset + _numpy_hash([1, 2], 100)]] * 2)
    self.assertEqual(f(sentences, max_bytes=6).to_list(), ids)  # "a cat "
    words, line_tokens = f.word_ids_and_line_tokens(sentences, max_tokens=3)
    self.assertEqual(words.to_list(), [[1, 2, 3], [1, 2]])
    self.assertAllEqual(line_tokens, [3, 2])

  def test_unknown_words_are_dropped_before_ngrams(self):
    f = sent2vec_featurizer.Sent2VecFeaturizer(_VOCAB, word_ngrams=2,
                                               num_buckets=100)
    ids = f(tf.constant(["a dog cat"])).to_list()[0]
    self.assertEqual(ids, [1, 2, _VOCAB.size_with_padding
                           + _numpy_hash([1, 2], 100)])

  def test_empty_and_unknown_sentences_have_no_ids(self):
    for ngrams in (1, 2, 3):
      f = sent2vec_featurizer.Sent2VecFeaturizer(
          _VOCAB, word_ngrams=ngrams, num_buckets=10 if ngrams > 1 else 0)
      ids = f(tf.constant(["", "   ", "dog zebra", "a"]))
      self.assertEqual(ids.to_list()[:3], [[], [], []])
      self.assertEqual(ids.to_list()[3], [1])
      self.assertEqual(ids.dtype, tf.int32)

  def test_trigram_counts(self):
    f = sent2vec_featurizer.Sent2VecFeaturizer(_VOCAB, word_ngrams=3,
                                               num_buckets=50)
    ids = f(tf.constant(["a cat sat on mat", "a cat"])).to_list()
    self.assertLen(ids[0], 5 + 4 + 3)
    self.assertLen(ids[1], 2 + 1)
    self.assertTrue(all(i >= _VOCAB.size_with_padding for i in ids[0][5:]))

  def test_unigram_model_ignores_buckets_and_counts_tokens(self):
    f = sent2vec_featurizer.Sent2VecFeaturizer(_VOCAB, word_ngrams=1,
                                               num_buckets=1000)
    self.assertEqual(f.num_buckets, 0)
    ids, line_tokens = f.word_ids_and_line_tokens(
        tf.constant(["a dog", "x y z"]))
    self.assertEqual(ids.to_list(), [[1], []])
    self.assertEqual(line_tokens.numpy().tolist(), [2, 3])

  def test_bad_arguments(self):
    with self.assertRaises(ValueError):
      sent2vec_featurizer.Sent2VecFeaturizer(_VOCAB, word_ngrams=0)
    with self.assertRaises(ValueError):
      sent2vec_featurizer.Sent2VecFeaturizer(_VOCAB, word_ngrams=2,
                                             num_buckets=0)


if __name__ == "__main__":
  tf.test.main()
