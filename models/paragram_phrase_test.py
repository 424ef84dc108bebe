"""Tests for models.paragram_phrase."""

import numpy as np
import tensorflow as tf

from sentzoo.models import paragram_phrase


class ParagramPhraseTest(tf.test.TestCase):

  def test_average_and_empty_phrase(self):
    model = paragram_phrase.ParagramPhrase(5, 3)
    out = model(tf.ragged.constant([[1, 3], [], [4, 4, 2]], dtype=tf.int32))
    table = model.word_embedding.embeddings.numpy()
    self.assertAllClose(out[0], (table[1] + table[3]) / 2)
    self.assertAllEqual(out[1], np.zeros(3))
    self.assertAllClose(out[2], (2 * table[4] + table[2]) / 3)
    self.assertLen(model.trainable_weights, 1)

  def test_config_round_trip(self):
    model = paragram_phrase.ParagramPhrase(9, 4, init_scale=0.05)
    ids = tf.ragged.constant([[1, 8]], dtype=tf.int32)
    out = model(ids)
    revived = paragram_phrase.ParagramPhrase.from_config(model.get_config())
    revived(ids)
    self.assertEqual(revived.get_config(), model.get_config())
    revived.set_weights(model.get_weights())
    self.assertAllClose(revived(ids), out)


if __name__ == "__main__":
  tf.test.main()
