"""Tests for models.charagram."""

import json

import keras
import numpy as np
import tensorflow as tf

from sentzoo.models import charagram


class CharagramTest(tf.test.TestCase):

  def test_output_is_tanh_of_bias_plus_sum(self):
    model = charagram.Charagram(6, 4, activation="tanh")
    ids = tf.ragged.constant([[1, 2, 2], [], [5]], dtype=tf.int32)
    out = model(ids)
    self.assertEqual(out.shape, (3, 4))
    layer = model.ngram_embedding
    table, bias = layer.embeddings.numpy(), layer.bias.numpy()
    self.assertAllClose(out[0], np.tanh(table[1] + 2 * table[2] + bias))
    self.assertAllClose(out[1], np.tanh(bias))  # Empty phrase: h(b).
    self.assertTrue(np.all(np.isfinite(out.numpy())))

  def test_linear_word_model(self):
    model = charagram.Charagram(4, 3, activation="linear", init_scale=0.1)
    out = model(tf.ragged.constant([[3]], dtype=tf.int32))
    table = model.ngram_embedding.embeddings.numpy()
    self.assertAllClose(out[0], table[3])
    self.assertLessEqual(np.abs(table).max(), 0.1)

  def test_config_round_trip(self):
    model = charagram.Charagram(7, 5, activation="linear", use_bias=False,
                                init_scale=0.2)
    ids = tf.ragged.constant([[1, 6], []], dtype=tf.int32)
    out = model(ids)
    config = model.get_config()
    revived = charagram.Charagram.from_config(config)
    revived(ids)
    self.assertEqual(revived.get_config(), config)
    revived.set_weights(model.get_weights())
    self.assertAllClose(revived(ids), out)
    restored = keras.saving.deserialize_keras_object(
        json.loads(json.dumps(keras.saving.serialize_keras_object(model))))
    self.assertIsInstance(restored, charagram.Charagram)


if __name__ == "__main__":
  tf.test.main()
