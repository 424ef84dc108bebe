"""Tests for MaskedMaxPooling."""

import numpy as np
import tensorflow as tf

from sentzoo.layers.masked_max_pooling import MaskedMaxPooling
from sentzoo.tests import layer_test_case


class MaskedMaxPoolingTest(layer_test_case.LayerTestCase):

  def setUp(self):
    super().setUp()
    self.x = np.random.default_rng(0).normal(size=(3, 5, 4)).astype("float32")
    self.mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]],
                         bool)

  def test_layer_basics_with_mask(self):
    out = self.run_layer_test(
        MaskedMaxPooling, init_kwargs={}, input_data=self.x,
        input_mask=self.mask, expected_output_shape=(3, 4),
        expected_num_trainable_weights=0)
    self.assertAllClose(out[0], self.x[0, :3].max(0))
    self.assertAllClose(out[1], self.x[1].max(0))
    self.assertAllEqual(out[2], np.zeros(4))

  def test_without_mask(self):
    self.assertAllClose(MaskedMaxPooling()(self.x), self.x.max(1))

  def test_masked_values_never_matter(self):
    x = self.x.copy()
    x[~self.mask] = np.inf
    out = MaskedMaxPooling()(x, mask=self.mask)
    self.assertAllClose(out[0], self.x[0, :3].max(0))
    self.assertAllEqual(out[2], np.zeros(4))

  def test_empty_row_has_zero_gradient(self):
    x = tf.constant(self.x)
    with tf.GradientTape() as tape:
      tape.watch(x)
      loss = tf.reduce_sum(MaskedMaxPooling()(x, mask=self.mask))
    grad = tape.gradient(loss, x).numpy()
    self.assertAllEqual(grad[2], np.zeros((5, 4)))
    self.assertAllEqual(grad[0, 3:], np.zeros((2, 4)))


if __name__ == "__main__":
  tf.test.main()
