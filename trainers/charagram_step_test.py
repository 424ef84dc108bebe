"""Tests for trainers.charagram_step."""

import numpy as np
import tensorflow as tf

from sentzoo.inputs import char_ngrams
from sentzoo.trainers import charagram_step


class CharagramStepTest(tf.test.TestCase):

  def test_featurized_text_batches_drop_the_remainder(self):
    featurizer = char_ngrams.CharNgramFeaturizer((2,), num_buckets=11)
    texts1 = [f"a{i}" for i in range(7)]
    texts2 = [f"b{i}" for i in range(7)]
    batches = list(charagram_step.featurize_batches(
        charagram_step.text_batches(texts1, texts2, batch_size=3,
                                    num_epochs=2, seed=1), featurizer))
    self.assertLen(batches, 4)  # 2 full batches per epoch.
    ids1, ids2 = batches[0]
    self.assertIsInstance(ids1, tf.RaggedTensor)
    self.assertEqual(ids1.nrows(), 3)
    self.assertEqual(ids1.dtype, tf.int32)
    # Pairs stay aligned through the shuffle: "ai" -> " a","ai","i " and
    # "bi" -> " b","bi","i ": the last ids match.
    self.assertAllEqual(ids1.to_tensor()[:, 2], ids2.to_tensor()[:, 2])
    self.assertAllEqual(ids1.row_lengths(), [3, 3, 3])

  def test_featurize_batches_caps_tokens_per_phrase(self):
    featurizer = char_ngrams.CharNgramFeaturizer((1,), num_buckets=11)
    long_line = " ".join(["ab"] * 10000)
    texts = [long_line, "ab", "ab ab"]
    batches = charagram_step.text_batches(texts, texts, batch_size=3,
                                          shuffle=False)
    capped, = list(charagram_step.featurize_batches(batches, featurizer,
                                                    max_tokens=2))
    uncapped, = list(charagram_step.featurize_batches(batches, featurizer))
    # Two tokens' characters (and the separators) at most, not 10,000.
    self.assertLess(int(tf.reduce_max(capped[0].row_lengths())), 10)
    self.assertGreater(int(tf.reduce_max(uncapped[0].row_lengths())), 20000)
    self.assertAllEqual(capped[0][1:], uncapped[0][1:])

  def test_text_batches_are_aligned_raw_pairs(self):
    texts1 = [f"a{i}" for i in range(7)]
    texts2 = [f"b{i}" for i in range(7)]
    raw = list(charagram_step.text_batches(texts1, texts2, batch_size=3,
                                           num_epochs=2, seed=1))
    self.assertLen(raw, 4)
    self.assertEqual(raw[0][0].dtype, tf.string)
    self.assertAllEqual([t[-1:] for t in raw[0][0].numpy()],
                        [t[-1:] for t in raw[0][1].numpy()])

  def test_l2_penalty(self):
    value = charagram_step.l2_penalty([tf.constant([1.0, 2.0]),
                                       tf.constant([[3.0]])])
    self.assertAllClose(value, 0.5 * (1 + 4 + 9))


if __name__ == "__main__":
  tf.test.main()
