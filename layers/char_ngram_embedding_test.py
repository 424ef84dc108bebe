"""Tests for layers.char_ngram_embedding."""

import numpy as np
import tensorflow as tf

from sentzoo.layers import char_ngram_embedding
from sentzoo.tests import layer_test_case


class CharNgramEmbeddingTest(layer_test_case.LayerTestCase):

  def test_layer_basics_dense_with_mask_and_empty_row(self):
    ids = np.array([[1, 2, 3], [4, 0, 0], [0, 0, 0]], np.int32)
    output = self.run_layer_test(
        char_ngram_embedding.CharNgramEmbedding,
        {"num_ids": 5, "embedding_dim": 4, "activation": "tanh",
         "use_bias": True, "combiner": "sum"},
        ids, (3, 4), expected_num_trainable_weights=2,
        input_mask=ids != 0)
    self.assertAllFinite(output)

  def test_layer_basics_mean_linear_no_bias(self):
    ids = np.array([[1, 2], [0, 0]], np.int32)
    self.run_layer_test(
        char_ngram_embedding.CharNgramEmbedding,
        {"num_ids": 3, "embedding_dim": 2, "activation": "linear",
         "use_bias": False, "combiner": "mean"},
        ids, (2, 2), expected_num_trainable_weights=1,
        run_training_check=False)

  def test_sum_is_counts_times_table_and_ragged_equals_dense(self):
    layer = char_ngram_embedding.CharNgramEmbedding(
        5, 3, activation="linear", use_bias=True)
    ragged = tf.ragged.constant([[1, 1, 4], [], [2]], dtype=tf.int32)
    out = layer(ragged)
    table = layer.embeddings.numpy()
    bias = layer.bias.numpy()
    # The reference's dense count vector times W, plus b.
    counts = np.zeros([3, 5], np.float32)
    for row, ids in enumerate(ragged.to_list()):
      for i in ids:
        counts[row, i] += 1
    self.assertAllClose(out, counts @ table + bias)
    # Empty text: h(b), finite.
    self.assertAllClose(out[1], bias)
    dense = ragged.to_tensor(0)
    self.assertAllClose(layer(dense, mask=dense != 0), out)
    self.assertAllClose(layer(dense), out)  # padding_id 0 masked.

  def test_tanh_empty_row_is_tanh_bias_and_gradients_are_sparse(self):
    layer = char_ngram_embedding.CharNgramEmbedding(6, 2)
    ragged = tf.ragged.constant([[], [5]], dtype=tf.int32)
    with tf.GradientTape() as tape:
      out = layer(ragged)
      loss = tf.reduce_sum(out)
    self.assertAllClose(out[0], np.tanh(layer.bias.numpy()))
    grad = tape.gradient(loss, layer.embeddings)
    self.assertIsInstance(grad, tf.IndexedSlices)
    self.assertAllEqual(grad.indices, [5])

  def test_mean_of_empty_row_is_zero(self):
    layer = char_ngram_embedding.CharNgramEmbedding(
        4, 2, activation="linear", use_bias=False, combiner="mean")
    out = layer(tf.ragged.constant([[], [1, 3]], dtype=tf.int32))
    self.assertAllEqual(out[0], [0.0, 0.0])
    table = layer.embeddings.numpy()
    self.assertAllClose(out[1], (table[1] + table[3]) / 2)

  def test_bad_combiner(self):
    with self.assertRaises(ValueError):
      char_ngram_embedding.CharNgramEmbedding(3, 2, combiner="max")


if __name__ == "__main__":
  tf.test.main()
