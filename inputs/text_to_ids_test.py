"""Tests for inputs.text_to_ids."""

import tensorflow as tf

from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib


def _vocabulary():
  return vocabulary_lib.Vocabulary(["a", "cat", "sat", ",", "café"],
                                   [9, 5, 4, 3, 1])


class TextToIdsTest(tf.test.TestCase):

  def test_maps_words_and_drops_unknown(self):
    to_ids = text_to_ids_lib.TextToIds(_vocabulary())
    ids = to_ids(tf.constant(["A dog, a cat.", "Café SAT", "cat dog cat"]))
    self.assertEqual(ids.dtype, tf.int32)
    self.assertEqual(ids.to_list(), [[1, 1, 2], [5, 3], [2, 2]])
    self.assertEqual(to_ids.vocabulary_size, 6)

  def test_keep_punctuation_tokenizer(self):
    to_ids = text_to_ids_lib.TextToIds(
        _vocabulary(), tokenizer_lib.Tokenizer(keep_punctuation=True))
    self.assertEqual(to_ids(tf.constant(["a, cat!"])).to_list(), [[1, 4, 2]])

  def test_empty_whitespace_and_unknown_give_no_ids(self):
    to_ids = text_to_ids_lib.TextToIds(_vocabulary())
    ids = to_ids(tf.constant(["", "   \t", "dog bird", "!!!", "\u00a0", "a"]))
    self.assertEqual(ids.to_list(), [[], [], [], [], [], [1]])
    self.assertEqual(ids.dtype, tf.int32)
    empty = to_ids(tf.constant([], tf.string))
    self.assertEqual(int(empty.nrows()), 0)
    self.assertEqual(empty.dtype, tf.int32)

  def test_truncation(self):
    to_ids = text_to_ids_lib.TextToIds(_vocabulary(), max_length=3)
    ids = to_ids(tf.constant(["dog a cat dog sat cat a", "cat", ""]))
    # Truncation counts known words only (unknown ones are dropped first).
    self.assertEqual(ids.to_list(), [[1, 2, 3], [2], []])
    self.assertEqual(ids.dtype, tf.int32)

  def test_shared_table(self):
    # A truncating and a whole-sentence mapping over one lookup table.
    truncating = text_to_ids_lib.TextToIds(_vocabulary(), max_length=2)
    whole = text_to_ids_lib.TextToIds(_vocabulary(), table=truncating.table)
    self.assertIs(whole.table, truncating.table)
    sentences = tf.constant(["a cat sat", "dog"])
    self.assertEqual(whole(sentences).to_list(), [[1, 2, 3], []])
    self.assertEqual(truncating(sentences).to_list(), [[1, 2], []])
    self.assertEqual(
        whole(sentences).to_list(),
        text_to_ids_lib.TextToIds(_vocabulary())(sentences).to_list())

  def test_byte_and_token_caps(self):
    to_ids = text_to_ids_lib.TextToIds(_vocabulary(), max_length=2)
    sentences = tf.constant(["dog a cat sat", "café a", "a cat"])
    # The token cap counts tokens, unknown ones included; max_length then
    # counts the known ones that are left.
    self.assertEqual(to_ids(sentences, max_tokens=2).to_list(),
                     [[1], [5, 1], [1, 2]])
    # 4 bytes: "dog " / "caf" + half of "é" (dropped) / "a ca".
    self.assertEqual(to_ids(sentences, max_bytes=4).to_list(), [[], [], [1]])
    one_mb = tf.constant(["a cat " * 200_000])
    ids = to_ids(one_mb, max_bytes=1000, max_tokens=100)
    self.assertEqual(ids.to_list(), [[1, 2]])

  def test_ids_in_range(self):
    to_ids = text_to_ids_lib.TextToIds(_vocabulary())
    ids = to_ids(tf.constant(["a cat sat café , x y z " * 50]))
    flat = ids.flat_values.numpy()
    self.assertLen(flat, 4 * 50)
    self.assertTrue(((flat >= 1) & (flat < 6)).all())

  def test_inside_tf_function_and_tracks_table(self):
    to_ids = text_to_ids_lib.TextToIds(_vocabulary())

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def f(sentences):
      return to_ids(sentences).to_tensor()

    self.assertAllEqual(f(tf.constant(["cat a", "sat"])), [[2, 1], [3, 0]])
    self.assertNotEmpty(list(to_ids._flatten(
        predicate=lambda x: isinstance(x, tf.lookup.StaticHashTable))))


if __name__ == "__main__":
  tf.test.main()
