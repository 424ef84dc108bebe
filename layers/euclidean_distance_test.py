"""Tests for EuclideanDistance."""

import numpy as np
import tensorflow as tf

from sentzoo.layers.euclidean_distance import EuclideanDistance
from sentzoo.tests import layer_test_case


class EuclideanDistanceTest(layer_test_case.LayerTestCase):

  def test_layer_basics(self):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 3)).astype("float32")
    b = rng.normal(size=(4, 3)).astype("float32")
    out = self.run_layer_test(
        EuclideanDistance, init_kwargs={"keepdims": True}, input_data=[a, b],
        expected_output_shape=(4, 1), expected_num_trainable_weights=0)
    self.assertAllClose(out[:, 0], np.linalg.norm(a - b, axis=-1))

  def test_no_keepdims(self):
    out = EuclideanDistance(keepdims=False)([np.ones((2, 3)), np.zeros((2, 3))])
    self.assertAllClose(out, [np.sqrt(3.0)] * 2)

  def test_identical_vectors_give_zero_and_finite_gradient(self):
    a = tf.constant([[1.0, 2.0], [0.0, 0.0]])
    b = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    for jit_compile in (False, True):
      @tf.function(jit_compile=jit_compile)
      def forward_backward(a, b):
        with tf.GradientTape() as tape:
          tape.watch([a, b])
          d = EuclideanDistance()([a, b])
          loss = tf.reduce_sum(d)
        return d, tape.gradient(loss, [a, b])

      d, (ga, gb) = forward_backward(a, b)
      self.assertAllClose(d[:, 0], [0.0, 5.0])
      self.assertAllEqual(ga[0], [0.0, 0.0])
      self.assertAllClose(ga[1], [-0.6, -0.8])
      self.assertAllClose(gb[1], [0.6, 0.8])


if __name__ == "__main__":
  tf.test.main()
