"""Tests for models.char_lstm."""

import numpy as np
import tensorflow as tf

from sentzoo.models import char_lstm


class CharLSTMTest(tf.test.TestCase):

  def test_last_state_ignores_padding_and_empty_row_is_zero(self):
    model = char_lstm.CharLSTM(8, char_dim=4, embedding_dim=5)
    out = model(tf.ragged.constant([[1, 2, 3], [], [4]], dtype=tf.int32))
    self.assertEqual(out.shape, (3, 5))
    self.assertAllEqual(out[1], np.zeros(5))
    alone = model(tf.ragged.constant([[4]], dtype=tf.int32))
    self.assertAllClose(alone[0], out[2], atol=1e-6)
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(model(tf.ragged.constant([[1], []],
                                                    dtype=tf.int32)))
    for g in tape.gradient(loss, model.trainable_variables):
      self.assertTrue(np.all(np.isfinite(tf.convert_to_tensor(g).numpy())))

  def test_config_round_trip(self):
    model = char_lstm.CharLSTM(6, char_dim=3, embedding_dim=4)
    ids = tf.ragged.constant([[1, 5]], dtype=tf.int32)
    out = model(ids)
    revived = char_lstm.CharLSTM.from_config(model.get_config())
    revived(ids)
    self.assertEqual(revived.get_config(), model.get_config())
    revived.set_weights(model.get_weights())
    self.assertAllClose(revived(ids), out)


if __name__ == "__main__":
  tf.test.main()
