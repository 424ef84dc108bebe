"""Tests for inputs.char_ngrams."""

import os
import tempfile

import numpy as np
import tensorflow as tf

from sentzoo.inputs import char_ngrams
from sentzoo.inputs import vocabulary as vocabulary_lib


def _strings(ragged):
  return [[g.decode("utf-8") for g in row] for row in ragged.to_list()]


class CharNgramFeaturizerTest(tf.test.TestCase):

  def test_boundary_spaces_and_sizes(self):
    f = char_ngrams.CharNgramFeaturizer((2, 3), num_buckets=10)
    grams = _strings(f.ngrams(tf.constant(["ab", "a b"])))
    self.assertEqual(sorted(grams[0]), sorted([" a", "ab", "b ", " ab", "ab "]))
    # n-grams span word boundaries; 5 characters " a b " -> 4 + 3.
    self.assertEqual(sorted(grams[1]), sorted(
        [" a", "a ", " b", "b ", " a ", "a b", " b "]))

  def test_sizes_longer_than_text_give_nothing_of_that_size(self):
    f = char_ngrams.CharNgramFeaturizer((2, 6), num_buckets=10)
    self.assertEqual(_strings(f.ngrams(tf.constant(["ab"])))[0],
                     [" a", "ab", "b "])

  def test_normalisation(self):
    f = char_ngrams.CharNgramFeaturizer((1,), num_buckets=10)
    # Lower-cased; punctuation split off by the project tokeniser.
    self.assertEqual(f.normalize(tf.constant(["Don't  GO!"])).numpy()[0],
                     b"don ' t go !")
    raw = char_ngrams.CharNgramFeaturizer((1,), num_buckets=10,
                                          tokenize=False)
    self.assertEqual(raw.normalize(tf.constant([" Don't \t GO! "])).numpy()[0],
                     b"don't go!")

  def test_caps_bound_a_one_megabyte_text(self):
    text = "Two words " * 100_000  # 1 MB.
    for tokenize in (True, False):
      f = char_ngrams.CharNgramFeaturizer((1, 2), num_buckets=50,
                                          tokenize=tokenize)
      self.assertEqual(f.normalize(tf.constant([text]), max_tokens=3)
                       .numpy().tolist(), [b"two words two"])
      # 7 bytes: "Two wor" -> "two wor".
      self.assertEqual(f.normalize(tf.constant([text]), max_bytes=7)
                       .numpy().tolist(), [b"two wor"])
      ids = f(tf.constant([text, "ab"]), max_bytes=1000, max_tokens=3)
      # " two words two " has 15 characters: 15 unigrams + 14 bigrams.
      self.assertAllEqual(ids.row_lengths(), [29, 7])
      self.assertEqual(ids.to_tensor().shape, (2, 29))
      self.assertAllEqual(
          ids[0], f(tf.constant(["two words two"]))[0])

  def test_empty_and_whitespace_texts_have_no_ngrams(self):
    vocabulary = vocabulary_lib.Vocabulary([" a"], [1])
    for f in (char_ngrams.CharNgramFeaturizer((2,), num_buckets=10),
              char_ngrams.CharNgramFeaturizer((2,), vocabulary=vocabulary)):
      ids = f(tf.constant(["", "   ", "a"]))
      self.assertEqual(ids.row_lengths().numpy().tolist()[:2], [0, 0])

  def test_vocabulary_ids_counts_and_unknowns(self):
    vocabulary = vocabulary_lib.Vocabulary([" a", "ab", "b "], [3, 2, 1])
    f = char_ngrams.CharNgramFeaturizer((2,), vocabulary=vocabulary)
    self.assertEqual(f.num_ids, 4)
    # " abab " -> " a", "ab", "ba" (unknown, dropped), "ab", "b ".
    self.assertEqual(f(tf.constant(["abab"])).to_list(), [[1, 2, 2, 3]])
    with_unknown = char_ngrams.CharNgramFeaturizer(
        (2,), vocabulary=vocabulary, unknown_id=True)
    self.assertEqual(with_unknown.num_ids, 5)
    self.assertEqual(with_unknown(tf.constant(["abab"])).to_list(),
                     [[1, 2, 4, 2, 3]])

  def test_hashed_ids_in_range_and_deterministic(self):
    f = char_ngrams.CharNgramFeaturizer((2, 3, 4), num_buckets=7)
    ids = f(tf.constant(["hello world", "hello world"]))
    flat = ids.flat_values.numpy()
    self.assertTrue(np.all((flat >= 1) & (flat <= 7)))
    self.assertEqual(f.num_ids, 8)
    self.assertAllEqual(ids[0], ids[1])
    self.assertEqual(ids.dtype, tf.int32)

  def test_exactly_one_of_vocabulary_and_buckets(self):
    with self.assertRaises(ValueError):
      char_ngrams.CharNgramFeaturizer((2,))
    with self.assertRaises(ValueError):
      char_ngrams.CharNgramFeaturizer(
          (2,), vocabulary=vocabulary_lib.Vocabulary(["ab"], [1]),
          num_buckets=3)

  def test_vocabulary_cutoff_and_order(self):
    texts = ["ab", "ab", "ac"]
    vocabulary = char_ngrams.build_ngram_vocabulary(texts, (2,), min_count=2)
    # " a" x3, "ab" x2, "b " x2; "ac", "c " once.
    self.assertEqual(vocabulary.words, [" a", "ab", "b "])
    self.assertEqual(vocabulary.counts.tolist(), [3, 2, 2])
    everything = char_ngrams.build_ngram_vocabulary(texts, (2,), min_count=1)
    self.assertLen(everything, 5)
    capped = char_ngrams.build_ngram_vocabulary(texts, (2,), max_size=1)
    self.assertEqual(capped.words, [" a"])

  def test_vocabulary_file_round_trip_with_spaces(self):
    vocabulary = char_ngrams.build_ngram_vocabulary(["a b"], (2, 3))
    path = os.path.join(tempfile.mkdtemp(), char_ngrams.NGRAM_VOCABULARY_FILE)
    vocabulary.save(path)
    loaded = vocabulary_lib.Vocabulary.load(path)
    self.assertEqual(loaded.words, vocabulary.words)

  def test_training_and_export_featurisation_agree(self):
    texts = ["A man plays the flute.", "", "Ünïcödé wörds", "x"]
    vocabulary = char_ngrams.build_ngram_vocabulary(texts, (2, 3, 4))
    f = char_ngrams.CharNgramFeaturizer((2, 3, 4), vocabulary=vocabulary)
    eager = f(tf.constant(texts))
    # The tf.data pipeline of the trainer and the traced export function.
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(4).map(f)
    from_data = next(iter(dataset))
    traced = tf.function(
        f, input_signature=[tf.TensorSpec([None], tf.string)])(
            tf.constant(texts))
    self.assertEqual(eager.to_list(), from_data.to_list())
    self.assertEqual(eager.to_list(), traced.to_list())
    # Every n-gram of training text is in its own vocabulary: none dropped.
    self.assertEqual(eager.row_lengths().numpy().tolist(),
                     f.ngrams(tf.constant(texts)).row_lengths().numpy()
                     .tolist())

  def test_saved_model_round_trip(self):
    vocabulary = char_ngrams.build_ngram_vocabulary(["hello there"], (2, 3))
    f = char_ngrams.CharNgramFeaturizer((2, 3), vocabulary=vocabulary)
    module = tf.Module()
    module.f = f
    module.call = tf.function(
        lambda s: f(s).to_tensor(), input_signature=[
            tf.TensorSpec([None], tf.string)])
    path = os.path.join(tempfile.mkdtemp(), "m")
    tf.saved_model.save(module, path)
    loaded = tf.saved_model.load(path)
    texts = tf.constant(["hello", "there you"])
    self.assertAllEqual(loaded.call(texts), f(texts).to_tensor())

  def test_config_round_trip(self):
    f = char_ngrams.CharNgramFeaturizer((4, 2), num_buckets=9,
                                        tokenize=False)
    g = char_ngrams.CharNgramFeaturizer.from_config(f.get_config())
    self.assertEqual(g.get_config(), f.get_config())
    self.assertEqual(f.get_config()["ngram_sizes"], [2, 4])


if __name__ == "__main__":
  tf.test.main()
