"""Tests for MaskedAverage."""

import numpy as np
import tensorflow as tf

from sentzoo.layers.masked_average import MaskedAverage
from sentzoo.tests import layer_test_case


def _numpy_masked_average(x, mask):
  mask = mask.astype(x.dtype)[..., None]
  count = mask.sum(-2)
  return (x * mask).sum(-2) / np.maximum(count, 1.0)


class MaskedAverageTest(layer_test_case.LayerTestCase):

  def setUp(self):
    super().setUp()
    rng = np.random.default_rng(0)
    self.inputs = rng.normal(size=(3, 5, 4)).astype("float32")
    self.mask = np.array([
        [True, True, True, False, False],
        [True, True, True, True, True],
        [False, False, False, False, False],  # An empty sentence.
    ])

  def test_layer_basics_with_mask(self):
    output = self.run_layer_test(
        MaskedAverage,
        init_kwargs={},
        input_data=self.inputs,
        input_mask=self.mask,
        expected_output_shape=(3, 4),
        expected_num_trainable_weights=0,
    )
    self.assertAllClose(output, _numpy_masked_average(self.inputs, self.mask))

  def test_layer_basics_without_mask(self):
    output = self.run_layer_test(
        MaskedAverage,
        init_kwargs={},
        input_data=self.inputs,
        expected_output_shape=(3, 4),
    )
    self.assertAllClose(output, self.inputs.mean(1))

  def test_empty_row_is_zero_with_finite_gradients(self):
    inputs = tf.constant(self.inputs)
    mask = tf.zeros((3, 5), tf.bool)
    for jit_compile in (False, True):
      @tf.function(jit_compile=jit_compile)
      def forward_backward(x, m):
        with tf.GradientTape() as tape:
          tape.watch(x)
          out = MaskedAverage()(x, mask=m)
          loss = tf.reduce_sum(out)
        return out, tape.gradient(loss, x)

      output, grad = forward_backward(inputs, mask)
      self.assertAllEqual(output, np.zeros((3, 4)))
      self.assertAllEqual(grad, np.zeros_like(self.inputs))

  def test_partial_mask_gradient(self):
    inputs = tf.constant(self.inputs)
    with tf.GradientTape() as tape:
      tape.watch(inputs)
      loss = tf.reduce_sum(MaskedAverage()(inputs, mask=self.mask))
    grad = tape.gradient(loss, inputs)
    count = np.maximum(self.mask.sum(1, keepdims=True), 1)
    expected = np.broadcast_to((self.mask / count)[..., None], (3, 5, 4))
    self.assertAllClose(grad, expected)

  def test_masked_values_do_not_matter(self):
    inputs = self.inputs.copy()
    inputs[~self.mask] = np.nan
    output = MaskedAverage()(inputs, mask=self.mask)
    self.assertAllClose(output, _numpy_masked_average(self.inputs, self.mask))

  def test_integer_mask_and_extra_batch_dims(self):
    inputs = np.stack([self.inputs, 2 * self.inputs])  # [2, 3, 5, 4].
    mask = np.stack([self.mask, self.mask[::-1]])
    output = MaskedAverage()(inputs, mask=mask.astype("int32"))
    self.assertAllClose(output, _numpy_masked_average(inputs, mask))

  def test_mask_not_propagated(self):
    layer = MaskedAverage()
    self.assertTrue(layer.supports_masking)
    self.assertIsNone(layer.compute_mask(self.inputs, self.mask))
    self.assertEqual(layer.compute_output_shape((3, 5, 4)), (3, 4))


if __name__ == "__main__":
  tf.test.main()
