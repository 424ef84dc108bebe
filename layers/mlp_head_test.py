"""Tests for MLPHead."""

import numpy as np
import tensorflow as tf

from sentzoo.layers.mlp_head import MLPHead
from sentzoo.tests import layer_test_case


class MLPHeadTest(layer_test_case.LayerTestCase):

  def setUp(self):
    super().setUp()
    self.x = np.random.default_rng(0).normal(size=(4, 7)).astype("float32")

  def test_layer_basics(self):
    out = self.run_layer_test(
        MLPHead, init_kwargs={"hidden_units": [5, 3], "activation": "tanh",
                              "return_logits": False},
        input_data=self.x, expected_output_shape=(4, 1),
        expected_num_trainable_weights=6)
    self.assertTrue(np.all((out > 0) & (out < 1)))

  def test_logits_are_the_probability_before_sigmoid(self):
    head = MLPHead(hidden_units=[5, 3])
    probability = head(self.x)
    head.return_logits = True
    self.assertAllClose(tf.sigmoid(head(self.x)), probability)

  def test_default_is_the_papers(self):
    head = MLPHead()
    head.build((None, 401))
    self.assertEqual(head.hidden_units, [200, 200])
    self.assertEqual(head.count_params(), 401 * 200 + 200 + 200 * 200 + 200
                     + 200 + 1)


if __name__ == "__main__":
  tf.test.main()
