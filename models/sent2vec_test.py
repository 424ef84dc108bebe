"""Tests for the Sent2Vec model: initialisation, masking, config."""

import numpy as np
import tensorflow as tf

from sentzoo.models import sent2vec


class Sent2VecTest(tf.test.TestCase):

  def _model(self):
    model = sent2vec.Sent2Vec(vocab_size=50, num_buckets=30, embedding_dim=8)
    model(np.zeros([1, 1], np.int32))
    return model

  def test_initialisation_follows_the_reference_code(self):
    model = self._model()
    source = model.source_embeddings.numpy()
    self.assertEqual(source.shape, (80, 8))
    self.assertAllEqual(source[0], np.zeros(8))  # Padding/placeholder row.
    self.assertLessEqual(np.abs(source).max(), 1.0 / 8)
    self.assertGreater(np.abs(source[1:]).min(), 0.0)
    self.assertAllEqual(model.target_embeddings.numpy(), np.zeros((50, 8)))

  def test_mean_of_source_rows_and_zero_for_empty_rows(self):
    model = self._model()
    ids = np.array([[1, 2, 60, 0], [0, 0, 0, 0], [3, 0, 0, 0]], np.int32)
    out = model(ids).numpy()
    source = model.source_embeddings.numpy()
    self.assertAllClose(out[0], (source[1] + source[2] + source[60]) / 3)
    self.assertAllEqual(out[1], np.zeros(8))
    self.assertFalse(np.isnan(out).any())
    self.assertAllClose(out[2], source[3])

  def test_config_round_trip(self):
    model = self._model()
    clone = sent2vec.Sent2Vec.from_config(model.get_config())
    self.assertEqual(clone.vocab_size, 50)
    self.assertEqual(clone.num_buckets, 30)
    self.assertEqual(clone.embedding_dim, 8)
    self.assertEqual(clone.source_rows, 80)

  def test_call_reads_only_the_named_rows(self):
    # A read of the whole table would leave a copy of it in the process
    # (5.9 GB for the uni+bi table), and its gradient would be dense.
    model = self._model()
    graph = tf.function(model).get_concrete_function(
        tf.TensorSpec([None, None], tf.int32)).graph
    op_types = {op.type for op in graph.get_operations()}
    self.assertIn("ResourceGather", op_types)
    self.assertNotIn("ReadVariableOp", op_types)
    ids = np.array([[1, 2, 60, 0], [0, 0, 0, 0]], np.int32)
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(model(ids))
    grad = tape.gradient(loss, model.source_embeddings.value)
    self.assertIsInstance(grad, tf.IndexedSlices)
    dense = tf.convert_to_tensor(grad).numpy()
    self.assertAllClose(dense[[1, 2, 60]], np.full((3, 8), 1.0 / 3))
    self.assertAllEqual(dense[0], np.zeros(8))  # Padding: masked out.
    self.assertEqual(np.count_nonzero(dense.sum(1)), 3)


if __name__ == "__main__":
  tf.test.main()
