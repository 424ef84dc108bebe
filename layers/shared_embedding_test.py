"""Tests for SharedEmbedding."""

import os
from unittest import mock

import keras
import numpy as np
import tensorflow as tf

from sentzoo.layers import shared_embedding
from sentzoo.layers.masked_average import MaskedAverage
from sentzoo.layers.shared_embedding import SharedEmbedding
from sentzoo.tests import layer_test_case


class SharedEmbeddingTest(layer_test_case.LayerTestCase):

  def setUp(self):
    super().setUp()
    self.ids = np.array([[3, 5, 0, 0], [7, 1, 2, 9], [0, 0, 0, 0]], "int32")

  def test_layer_basics(self):
    self.run_layer_test(
        SharedEmbedding,
        init_kwargs={
            "vocab_size": 10,
            "embedding_dim": 4,
            "embeddings_initializer": keras.initializers.RandomNormal(
                stddev=0.01),
            "padding_id": 0,
        },
        input_data=self.ids,
        expected_output_shape=(3, 4, 4),
        expected_num_trainable_weights=1,
    )

  def test_default_arguments(self):
    layer = SharedEmbedding(vocab_size=10, embedding_dim=4, name="table")
    layer.build()
    self.assertEqual(layer.padding_id, 0)
    self.assertIsInstance(
        layer.embeddings_initializer, keras.initializers.RandomUniform)
    self.assertEqual(layer.embeddings.shape, (10, 4))
    self.assertEqual(layer.embeddings.path, "table/embeddings")

  def test_lookup_matches_numpy(self):
    layer = SharedEmbedding(vocab_size=10, embedding_dim=4)
    output = layer(self.ids)
    self.assertDTypeEqual(output, np.float32)
    self.assertAllClose(output, layer.get_weights()[0][self.ids])

  def test_higher_rank_and_int64_ids(self):
    layer = SharedEmbedding(vocab_size=10, embedding_dim=4)
    ids = np.stack([self.ids, self.ids[::-1]]).astype("int64")  # [2, 3, 4].
    self.assertEqual(tuple(layer(ids).shape), (2, 3, 4, 4))
    self.assertEqual(tuple(layer.compute_mask(ids).shape), (2, 3, 4))
    self.assertEqual(layer.compute_output_shape((2, 3, 4)), (2, 3, 4, 4))

  def test_mask(self):
    layer = SharedEmbedding(vocab_size=10, embedding_dim=4)
    mask = layer.compute_mask(self.ids)
    self.assertDTypeEqual(mask, bool)
    self.assertAllEqual(mask, self.ids != 0)
    # The mask is attached to the output of an eager call too.
    self.assertAllEqual(layer(self.ids)._keras_mask, self.ids != 0)

  def test_custom_and_disabled_padding_id(self):
    layer = SharedEmbedding(vocab_size=10, embedding_dim=4, padding_id=9)
    self.assertAllEqual(layer.compute_mask(self.ids), self.ids != 9)
    layer = SharedEmbedding(vocab_size=10, embedding_dim=4, padding_id=None)
    self.assertIsNone(layer.compute_mask(self.ids))
    self.assertFalse(layer.supports_masking)

  def test_gradient_is_indexed_slices(self):
    layer = SharedEmbedding(vocab_size=10, embedding_dim=4)
    layer.build()
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(layer(self.ids))
    (grad,) = tape.gradient(loss, layer.trainable_weights)
    self.assertIsInstance(grad, tf.IndexedSlices)
    self.assertAllEqual(
        np.sort(grad.indices.numpy()), np.sort(self.ids.ravel()))
    # Row r gets one unit of gradient per occurrence of id r.
    counts = np.bincount(self.ids.ravel(), minlength=10)[:, None]
    self.assertAllClose(tf.convert_to_tensor(grad), np.tile(counts, [1, 4]))

  def test_a_call_reads_only_the_looked_up_rows(self):
    # A read of the whole table copies it once the table is in
    # copy-on-read mode (after a sparse update): 110 MB per call for the
    # Siamese CBOW book model.
    layer = SharedEmbedding(vocab_size=10, embedding_dim=4)
    layer.build()
    graph = tf.function(layer).get_concrete_function(
        tf.TensorSpec([None, 3], tf.int32)).graph
    ops = {op.type for op in graph.get_operations()}
    self.assertIn("ResourceGather", ops)
    self.assertNotIn("ReadVariableOp", ops)



class RecordingRandomNormal(keras.initializers.RandomNormal):
  """RandomNormal that records the shapes it draws, plus `offset` (which
  makes the draws differ from the TensorFlow ops the layer uses)."""

  def __init__(self, offset=0.0, **kwargs):
    super().__init__(**kwargs)
    self.offset = offset
    self.shapes = []

  def __call__(self, shape, dtype=None):
    self.shapes.append(tuple(shape))
    return super().__call__(shape, dtype) + self.offset


class NormalTableInBlocksTest(tf.test.TestCase):
  """A RandomNormal table is drawn a block of rows at a time, in place."""

  def setUp(self):
    super().setUp()
    # 100 rows in blocks of 16: six whole blocks and a part.
    self.enter_context(
        mock.patch.object(shared_embedding, "_INIT_ROWS", 16))

  def _table(self, initializer, vocab_size=100, embedding_dim=8):
    layer = SharedEmbedding(vocab_size, embedding_dim,
                            embeddings_initializer=initializer)
    layer.build()
    self.assertLen(layer.weights, 1)
    return layer.embeddings.numpy()

  def test_blocks_are_the_initializers_draws_bit_for_bit(self):
    for seed in (1, 123456789, 2**31 + 5):
      initializer = RecordingRandomNormal(mean=0.5, stddev=0.01, seed=seed)
      table = self._table(initializer)
      expected = keras.initializers.RandomNormal(
          mean=0.5, stddev=0.01, seed=seed)((100, 8)).numpy()
      self.assertAllEqual(table.view(np.uint32), expected.view(np.uint32))
      # Only the probe is drawn through the initializer: never the table.
      self.assertEqual(initializer.shapes, [(16, 8)])

  def test_the_table_is_drawn_at_once_where_blocks_would_differ(self):
    initializer = RecordingRandomNormal(offset=1.0, stddev=0.01, seed=7)
    table = self._table(initializer)
    self.assertEqual(initializer.shapes, [(16, 8), (100, 8)])
    expected = keras.initializers.RandomNormal(stddev=0.01, seed=7)(
        (100, 8)).numpy() + 1.0
    self.assertAllEqual(table, expected)

  def test_other_initializers_small_tables_and_strategies_draw_at_once(self):
    self.assertFalse(shared_embedding._fills_normal_rows(
        keras.initializers.RandomUniform(seed=1), (100, 8)))
    normal = keras.initializers.RandomNormal(seed=1)
    self.assertTrue(shared_embedding._fills_normal_rows(normal, (100, 8)))
    self.assertFalse(shared_embedding._fills_normal_rows(normal, (16, 8)))
    self.assertFalse(shared_embedding._fills_normal_rows(normal, (100, 6)))
    with tf.distribute.MirroredStrategy(["/cpu:0"]).scope():
      self.assertFalse(shared_embedding._fills_normal_rows(normal, (100, 8)))

  def test_a_trained_row_is_read_as_updated(self):
    # The table is an ordinary variable after the in-place fill: a sparse
    # update and then a dense read see the update.
    layer = SharedEmbedding(100, 8, embeddings_initializer=(
        keras.initializers.RandomNormal(stddev=0.01, seed=3)))
    layer.build()
    before = layer.embeddings.numpy()
    layer.embeddings.value.scatter_add(
        tf.IndexedSlices(tf.ones([1, 8]), tf.constant([40])))
    before[40] += 1.0
    self.assertAllEqual(layer(np.array([[40, 41]]))[0], before[[40, 41]])


class SharedEmbeddingWithMaskedAverageTest(layer_test_case.LayerTestCase):
  """SharedEmbedding + MaskedAverage composed in a functional model."""

  def _build_model(self):
    ids = keras.Input(shape=(None,), dtype="int32")
    embedded = SharedEmbedding(
        vocab_size=12, embedding_dim=3, name="embedding")(ids)
    average = MaskedAverage(name="average")(embedded)
    return keras.Model(ids, average)

  def test_mask_propagates_end_to_end(self):
    model = self._build_model()
    ids = np.array([[3, 5, 0, 0], [7, 1, 2, 9], [0, 0, 0, 0]], "int32")
    table = model.get_layer("embedding").get_weights()[0]
    expected = np.stack([
        table[[3, 5]].mean(0), table[[7, 1, 2, 9]].mean(0), np.zeros(3)])
    self.assertAllClose(model(ids), expected)
    # The value of the padding row does not matter, even if not finite.
    table[0] = np.nan
    model.get_layer("embedding").set_weights([table])
    self.assertAllClose(model(ids), expected)
    xla_model = tf.function(model, jit_compile=True)
    self.assertAllClose(xla_model(tf.constant(ids)), expected)

  def test_saved_model_round_trip(self):
    model = self._build_model()
    ids = np.array([[3, 5, 0, 0], [0, 0, 0, 0]], "int32")
    path = os.path.join(self.get_temp_dir(), "model.keras")
    model.save(path)
    restored = keras.models.load_model(path)
    self.assertIsInstance(restored.get_layer("embedding"), SharedEmbedding)
    self.assertIsInstance(restored.get_layer("average"), MaskedAverage)
    self.assertAllClose(restored(ids), model(ids))

  def test_sgd_step_changes_only_looked_up_rows(self):
    model = self._build_model()
    ids = np.array([[3, 5, 0, 0], [7, 3, 0, 0], [0, 0, 0, 0]], "int32")
    optimizer = keras.optimizers.SGD(learning_rate=0.5)
    before = model.get_layer("embedding").get_weights()[0]
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(tf.square(model(ids) - 1.0))
    grads = tape.gradient(loss, model.trainable_weights)
    self.assertIsInstance(grads[0], tf.IndexedSlices)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    after = model.get_layer("embedding").get_weights()[0]
    changed = np.flatnonzero(np.any(before != after, axis=1))
    # Padding (id 0) is looked up but masked out: its row stays put.
    self.assertAllEqual(changed, [3, 5, 7])
    self.assertAllFinite(after)


if __name__ == "__main__":
  tf.test.main()
