"""Tests for GRUEncoder."""

import numpy as np
import tensorflow as tf

from sentzoo.layers.gru_encoder import GRUEncoder
from sentzoo.tests import encoder_test_util
from sentzoo.tests import layer_test_case


class GRUEncoderTest(layer_test_case.LayerTestCase):

  def test_layer_basics_with_mask_and_empty_row(self):
    _, _, _, (x, mask) = encoder_test_util.padding_invariance_inputs()
    self.run_layer_test(
        GRUEncoder, init_kwargs={"units": 5}, input_data=x, input_mask=mask,
        expected_output_shape=(3, 5), expected_num_trainable_weights=3)

  def test_layer_basics_without_mask(self):
    self.run_layer_test(
        GRUEncoder, init_kwargs={"units": 4},
        input_data=np.random.default_rng(1).normal(size=(2, 7, 3)).astype(
            "float32"),
        expected_output_shape=(2, 4), run_xla_check=False)

  def test_padding_never_changes_the_encoding(self):
    encoder_test_util.assert_padding_invariance(self, GRUEncoder(units=5))

  def test_default_units_are_the_papers(self):
    layer = GRUEncoder()
    self.assertEqual(layer.units, 200)
    self.assertEqual(layer.compute_output_shape((2, 50, 300)), (2, 200))


if __name__ == "__main__":
  tf.test.main()
