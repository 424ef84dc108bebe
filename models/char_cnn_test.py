"""Tests for models.char_cnn."""

import os

import numpy as np
import tensorflow as tf

from sentzoo.models import char_cnn


class CharCNNTest(tf.test.TestCase):

  def _model(self):
    return char_cnn.CharCNN(8, char_dim=4, filter_widths=(2, 3),
                            filters_per_width=5, embedding_dim=6)

  def test_shapes_empty_row_and_padding_invariance(self):
    model = self._model()
    ragged = tf.ragged.constant([[1, 2, 3], [], [7]], dtype=tf.int32)
    out = model(ragged)
    self.assertEqual(out.shape, (3, 6))
    self.assertTrue(np.all(np.isfinite(out.numpy())))
    # Empty text: pooled features are zeros, so the output is h(bias).
    bias = model.projection.bias.numpy()
    self.assertAllClose(out[1], np.tanh(bias))
    # A text's embedding does not depend on the batch's padding length.
    alone = model(tf.ragged.constant([[7]], dtype=tf.int32))
    self.assertAllClose(alone[0], out[2], atol=1e-6)
    dense = tf.constant([[1, 2, 3, 0, 0]], tf.int32)
    self.assertAllClose(model(dense)[0], out[0], atol=1e-6)

  def test_gradients_finite(self):
    model = self._model()
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(model(tf.ragged.constant([[1, 2], []],
                                                    dtype=tf.int32)))
    grads = tape.gradient(loss, model.trainable_variables)
    for g in grads:
      self.assertIsNotNone(g)
      self.assertTrue(np.all(np.isfinite(tf.convert_to_tensor(g).numpy())))

  def test_config_round_trip(self):
    model = self._model()
    ids = tf.ragged.constant([[1, 2, 3]], dtype=tf.int32)
    out = model(ids)
    revived = char_cnn.CharCNN.from_config(model.get_config())
    revived(ids)
    self.assertEqual(revived.get_config(), model.get_config())
    revived.set_weights(model.get_weights())
    self.assertAllClose(revived(ids), out)

  def test_checkpoint_holds_every_filter(self):
    model = self._model()
    ids = tf.ragged.constant([[1, 2, 3]], dtype=tf.int32)
    out = model(ids)
    path = tf.train.Checkpoint(model=model).save(
        os.path.join(self.get_temp_dir(), "ckpt"))
    names = [n for n, _ in tf.train.list_variables(path)]
    for width in (2, 3):
      self.assertIn(f"model/conv{width}/_kernel/.ATTRIBUTES/VARIABLE_VALUE",
                    names)
    revived = char_cnn.CharCNN.from_config(model.get_config())
    revived(ids)
    tf.train.Checkpoint(model=revived).restore(path).assert_consumed()
    self.assertAllClose(revived(ids), out)


if __name__ == "__main__":
  tf.test.main()
