"""Tests for SoftmaxHead."""

import numpy as np
import tensorflow as tf

from sentzoo.layers.softmax_head import SoftmaxHead
from sentzoo.tests import layer_test_case


def _numpy_softmax(x):
  e = np.exp(x - x.max(-1, keepdims=True))
  return e / e.sum(-1, keepdims=True)


class SoftmaxHeadTest(layer_test_case.LayerTestCase):

  def setUp(self):
    super().setUp()
    rng = np.random.default_rng(0)
    self.scores = rng.uniform(-1.0, 1.0, size=(5, 4)).astype("float32")

  def test_layer_basics(self):
    output = self.run_layer_test(
        SoftmaxHead,
        init_kwargs={"scale": 1.0},
        input_data=self.scores,
        expected_output_shape=(5, 4),
        expected_num_trainable_weights=0,
    )
    self.assertAllClose(output, _numpy_softmax(self.scores))
    self.assertAllClose(np.sum(output, axis=-1), np.ones(5))

  def test_scale(self):
    output = self.run_layer_test(
        SoftmaxHead, {"scale": 20.0}, self.scores, (5, 4))
    self.assertAllClose(output, _numpy_softmax(20.0 * self.scores))
    self.assertAllClose(np.sum(output, axis=-1), np.ones(5))

  def test_default_is_plain_softmax_without_weights(self):
    layer = SoftmaxHead()
    self.assertEqual(layer.scale, 1.0)
    self.assertAllClose(layer(self.scores), _numpy_softmax(self.scores))
    self.assertEmpty(layer.weights)

  def test_siamese_cbow_loss_gradient(self):
    # Two positives, two negatives: target (0.5, 0.5, 0, 0). The gradient of
    # the cross-entropy w.r.t. the cosines is softmax - target.
    scores = tf.constant(self.scores)
    target = np.tile([0.5, 0.5, 0.0, 0.0], (5, 1)).astype("float32")
    with tf.GradientTape() as tape:
      tape.watch(scores)
      probs = SoftmaxHead()(scores)
      loss = -tf.reduce_sum(target * tf.math.log(probs))
    grad = tape.gradient(loss, scores)
    self.assertAllClose(grad, _numpy_softmax(self.scores) - target, atol=1e-6)


if __name__ == "__main__":
  tf.test.main()
