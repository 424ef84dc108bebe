"""Tests for CosineSimilarity."""

import keras
import numpy as np
import tensorflow as tf

from sentzoo.layers.cosine_similarity import CosineSimilarity
from sentzoo.tests import layer_test_case


def _numpy_cosine(a, b):
  return (a * b).sum(-1) / (
      np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


class CosineSimilarityTest(layer_test_case.LayerTestCase):

  def setUp(self):
    super().setUp()
    rng = np.random.default_rng(0)
    self.query = rng.normal(size=(3, 5)).astype("float32")
    self.candidates = rng.normal(size=(3, 4, 5)).astype("float32")

  def test_layer_basics_one_against_k(self):
    output = self.run_layer_test(
        CosineSimilarity,
        init_kwargs={"epsilon": 1e-12},
        input_data=[self.query, self.candidates],
        expected_output_shape=(3, 4),
        expected_num_trainable_weights=0,
    )
    self.assertAllClose(
        output, _numpy_cosine(self.query[:, None, :], self.candidates))

  def test_layer_basics_one_against_one(self):
    output = self.run_layer_test(
        CosineSimilarity,
        init_kwargs={},
        input_data=[self.query, self.candidates[:, 0]],
        expected_output_shape=(3,),
    )
    self.assertAllClose(output, _numpy_cosine(self.query, self.candidates[:, 0]))

  def test_zero_vectors(self):
    query = self.query.copy()
    query[1] = 0.0
    candidates = self.candidates.copy()
    candidates[0, 2] = 0.0
    # Zero query and zero candidates still pass the full battery (finite
    # outputs and gradients, XLA == eager).
    output = self.run_layer_test(
        CosineSimilarity, {}, [query, candidates], (3, 4))
    expected = _numpy_cosine(self.query[:, None, :], self.candidates)
    expected[1, :] = 0.0
    expected[0, 2] = 0.0
    self.assertAllClose(output, expected)
    zeros = np.zeros((2, 5), "float32")
    self.assertAllEqual(CosineSimilarity()([zeros, zeros]), [0.0, 0.0])

  def test_scale_invariance_and_range(self):
    layer = CosineSimilarity()
    output = layer([self.query, self.candidates])
    scaled = layer([7.0 * self.query, 0.01 * self.candidates])
    self.assertAllClose(output, scaled, atol=1e-6)
    self.assertAllClose(layer([self.query, self.query]), np.ones(3))
    self.assertAllClose(layer([self.query, -self.query]), -np.ones(3))

  def test_mixed_precision(self):
    layer = CosineSimilarity(dtype="mixed_float16")
    query = np.zeros((2, 5), "float16")
    query[0, 0] = 1.0
    output = layer([query, np.ones((2, 3, 5), "float16")])
    self.assertDTypeEqual(output, np.float16)
    self.assertAllClose(output, [[1 / np.sqrt(5)] * 3, [0.0] * 3], atol=1e-3)

  def test_compute_output_shape(self):
    layer = CosineSimilarity()
    self.assertEqual(layer.compute_output_shape([(3, 5), (3, 4, 5)]), (3, 4))
    self.assertEqual(layer.compute_output_shape([(3, 5), (3, 5)]), (3,))
    query = keras.Input(shape=(5,))
    candidates = keras.Input(shape=(4, 5))
    self.assertEqual(tuple(layer([query, candidates]).shape), (None, 4))

  def test_rejects_bad_rank(self):
    with self.assertRaisesRegex(ValueError, "rank"):
      CosineSimilarity()([self.query, self.candidates[:, :, :, None]])


if __name__ == "__main__":
  tf.test.main()
