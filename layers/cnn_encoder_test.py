"""Tests for CNNEncoder."""

import numpy as np
import tensorflow as tf

from sentzoo.layers.cnn_encoder import CNNEncoder
from sentzoo.tests import encoder_test_util
from sentzoo.tests import layer_test_case


class CNNEncoderTest(layer_test_case.LayerTestCase):

  def test_layer_basics_with_mask_and_empty_row(self):
    _, _, _, (x, mask) = encoder_test_util.padding_invariance_inputs()
    self.run_layer_test(
        CNNEncoder, init_kwargs={"filters": 4, "kernel_sizes": [1, 3],
                                 "activation": "tanh"},
        input_data=x, input_mask=mask, expected_output_shape=(3, 8),
        expected_num_trainable_weights=4)

  def test_padding_never_changes_the_encoding(self):
    encoder_test_util.assert_padding_invariance(
        self, CNNEncoder(filters=4, kernel_sizes=(1, 3, 5)))

  def test_matches_numpy_convolution_and_max(self):
    layer = CNNEncoder(filters=2, kernel_sizes=(3,), activation="linear")
    x = np.random.default_rng(2).normal(size=(1, 4, 3)).astype("float32")
    out = layer(x).numpy()
    kernel, bias = [w.numpy() for w in layer.convolutions[0].weights]
    padded = np.pad(x[0], ((1, 1), (0, 0)))
    conv = np.stack([np.einsum("kd,kdf->f", padded[t:t + 3], kernel) + bias
                     for t in range(4)])
    self.assertAllClose(out[0], conv.max(0), rtol=1e-5, atol=1e-5)

  def test_default_is_the_papers(self):
    layer = CNNEncoder()
    self.assertEqual(layer.kernel_sizes, [1, 3, 5])
    self.assertEqual(layer.compute_output_shape((2, 50, 300)), (2, 300))


if __name__ == "__main__":
  tf.test.main()
