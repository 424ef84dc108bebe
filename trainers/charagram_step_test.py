"""Tests for trainers.charagram_step."""

import numpy as np
import tensorflow as tf

from sentzoo.inputs import char_ngrams
from sentzoo.trainers import charagram_step


class CharagramStepTest(tf.test.TestCase):

  def test_pair_dataset_batches_featurised_pairs_and_drops_remainder(self):
    featurizer = char_ngrams.CharNgramFeaturizer((2,), num_buckets=11)
    texts1 = [f"a{i}" for i in range(7)]
    texts2 = [f"b{i}" for i in range(7)]
    batches = list(charagram_step.pair_dataset(
        texts1, texts2, featurizer, batch_size=3, num_epochs=2, seed=1))
    self.assertLen(batches, 4)  # 2 full batches per epoch.
    ids1, ids2 = batches[0]
    self.assertIsInstance(ids1, tf.RaggedTensor)
    self.assertEqual(ids1.nrows(), 3)
    self.assertEqual(ids1.dtype, tf.int32)
    # Pairs stay aligned through the shuffle: "ai" -> " a","ai","i " and
    # "bi" -> " b","bi","i ": the last ids match.
    self.assertAllEqual(ids1.to_tensor()[:, 2], ids2.to_tensor()[:, 2])
    self.assertAllEqual(ids1.row_lengths(), [3, 3, 3])

  def test_pair_dataset_caps_tokens_per_phrase(self):
    featurizer = char_ngrams.CharNgramFeaturizer((1,), num_buckets=11)
    long_line = " ".join(["ab"] * 10000)
    texts = [long_line, "ab", "ab ab"]
    capped, = list(charagram_step.pair_dataset(
        texts, texts, featurizer, batch_size=3, shuffle=False,
        max_tokens=2))
    uncapped, = list(charagram_step.pair_dataset(
        texts, texts, featurizer, batch_size=3, shuffle=False))
    # Two tokens' characters (and the separators) at most, not 10,000.
    self.assertLess(int(tf.reduce_max(capped[0].row_lengths())), 10)
    self.assertGreater(int(tf.reduce_max(uncapped[0].row_lengths())), 20000)
    self.assertAllEqual(capped[0][1:], uncapped[0][1:])

  def test_pair_dataset_is_featurised_text_batches(self):
    featurizer = char_ngrams.CharNgramFeaturizer((2,), num_buckets=11)
    texts1 = [f"a{i}" for i in range(7)]
    texts2 = [f"b{i}" for i in range(7)]
    raw = list(charagram_step.text_batches(texts1, texts2, batch_size=3,
                                           num_epochs=2, seed=1))
    self.assertLen(raw, 4)
    self.assertEqual(raw[0][0].dtype, tf.string)
    self.assertAllEqual([t[-1:] for t in raw[0][0].numpy()],
                        [t[-1:] for t in raw[0][1].numpy()])
    featurised = list(charagram_step.featurize_batches(
        tf.data.Dataset.from_tensor_slices(
            (tf.stack([r[0] for r in raw]), tf.stack([r[1] for r in raw]))),
        featurizer))
    batches = list(charagram_step.pair_dataset(
        texts1, texts2, featurizer, batch_size=3, num_epochs=2, seed=1))
    # The same seeded order: what the distributed input cuts up.
    for (ids1, ids2), (want1, want2) in zip(featurised, batches):
      self.assertAllEqual(ids1.to_tensor(), want1.to_tensor())
      self.assertAllEqual(ids2.to_tensor(), want2.to_tensor())

  def test_l2_penalty(self):
    value = charagram_step.l2_penalty([tf.constant([1.0, 2.0]),
                                       tf.constant([[3.0]])])
    self.assertAllClose(value, 0.5 * (1 + 4 + 9))


if __name__ == "__main__":
  tf.test.main()
