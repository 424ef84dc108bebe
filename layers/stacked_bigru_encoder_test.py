"""Tests for StackedBiGRUEncoder."""

import tensorflow as tf

from sentzoo.layers.stacked_bigru_encoder import StackedBiGRUEncoder
from sentzoo.tests import encoder_test_util
from sentzoo.tests import layer_test_case


class StackedBiGRUEncoderTest(layer_test_case.LayerTestCase):

  def test_layer_basics_with_mask_and_empty_row(self):
    _, _, _, (x, mask) = encoder_test_util.padding_invariance_inputs()
    self.run_layer_test(
        StackedBiGRUEncoder, init_kwargs={"units": 3, "num_layers": 2},
        input_data=x, input_mask=mask, expected_output_shape=(3, 6),
        expected_num_trainable_weights=12)

  def test_padding_never_changes_the_encoding(self):
    encoder_test_util.assert_padding_invariance(
        self, StackedBiGRUEncoder(units=3, num_layers=2))

  def test_default_is_the_papers(self):
    layer = StackedBiGRUEncoder()
    self.assertEqual((layer.units, layer.num_layers), (200, 2))
    self.assertEqual(layer.compute_output_shape((2, 50, 300)), (2, 400))


if __name__ == "__main__":
  tf.test.main()
