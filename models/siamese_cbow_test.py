"""Tests for models.siamese_cbow."""

import os
from unittest import mock

import keras
import numpy as np
import tensorflow as tf

from sentzoo.layers import shared_embedding
from sentzoo.models import siamese_cbow
from sentzoo.tests import layer_test_case

VOCAB, DIM = 30, 6


def _numpy_forward(table, ids):
  """Reference: average embeddings ignoring id 0, cosine, softmax."""
  mask = (ids != 0)[..., None].astype(np.float64)
  vectors = table.astype(np.float64)[ids] * mask
  averages = vectors.sum(-2) / np.maximum(mask.sum(-2), 1.0)
  norms = np.sqrt(np.maximum((averages ** 2).sum(-1, keepdims=True), 1e-12))
  unit = averages / norms
  cosines = (unit[:, :1] * unit[:, 1:]).sum(-1)
  exp = np.exp(cosines - cosines.max(-1, keepdims=True))
  return exp / exp.sum(-1, keepdims=True)


def _random_ids(rng, batch, k, length):
  ids = rng.integers(1, VOCAB, size=(batch, k, length))
  lengths = rng.integers(1, length + 1, size=(batch, k))
  ids[np.arange(length)[None, None, :] >= lengths[..., None]] = 0
  return ids.astype(np.int32)


def _loss(model, ids, target):
  probabilities = model(ids, training=True)
  return tf.reduce_mean(keras.losses.categorical_crossentropy(
      tf.broadcast_to(target, tf.shape(probabilities)), probabilities))


class SiameseCbowTest(layer_test_case.LayerTestCase):

  def setUp(self):
    super().setUp()
    self.rng = np.random.default_rng(0)
    self.ids = _random_ids(self.rng, batch=4, k=5, length=7)

  def _model(self, **kwargs):
    model = siamese_cbow.SiameseCBOW(VOCAB, DIM, **kwargs)
    model(self.ids)
    return model

  def test_layer_basics(self):
    self.run_layer_test(
        siamese_cbow.SiameseCBOW,
        init_kwargs={"vocab_size": VOCAB, "embedding_dim": DIM,
                     "init_stddev": 0.1},
        input_data=self.ids,
        expected_output_shape=(4, 4),
        expected_num_trainable_weights=1)

  def test_output_shape_and_rows_sum_to_one(self):
    model = self._model()
    out = model(self.ids)
    self.assertEqual(out.shape, (4, 4))
    self.assertAllClose(tf.reduce_sum(out, -1), np.ones(4))
    self.assertTrue(np.all(out.numpy() > 0))

  def test_matches_numpy_reference(self):
    model = self._model(init_stddev=0.5)
    table = model.embedding.embeddings.numpy()
    self.assertEqual(table.shape, (VOCAB, DIM))
    for ids in (self.ids, _random_ids(self.rng, batch=3, k=8, length=11)):
      self.assertAllClose(model(ids), _numpy_forward(table, ids),
                          rtol=1e-5, atol=1e-6)

  def test_padding_row_is_ignored(self):
    model = self._model(init_stddev=0.5)
    before = model(self.ids).numpy()
    table = model.embedding.embeddings
    table.assign(tf.tensor_scatter_nd_update(
        table, [[0]], tf.fill([1, DIM], 1e3)))
    self.assertAllClose(model(self.ids), before)

  def test_init_stddev(self):
    model = siamese_cbow.SiameseCBOW(2000, 50, init_stddev=0.01)
    model(self.ids)
    std = float(np.std(model.embedding.embeddings.numpy()))
    self.assertBetween(std, 0.008, 0.012)

  def test_first_call_draws_the_table_in_blocks(self):
    # Without `build`, Keras first builds the layers while tracing `call`,
    # where SharedEmbedding draws the whole table at once.
    fill = mock.Mock(wraps=shared_embedding._fill_normal_rows)
    with mock.patch.object(shared_embedding, "_INIT_ROWS", 16), \
        mock.patch.object(shared_embedding, "_fill_normal_rows", fill):
      keras.utils.set_random_seed(5)
      model = siamese_cbow.SiameseCBOW(vocab_size=100, embedding_dim=8)
      model(np.zeros([1, 5, 1], "int32"))
    fill.assert_called_once()
    self.assertLen(model.trainable_variables, 1)
    keras.utils.set_random_seed(5)
    expected = keras.initializers.RandomNormal(stddev=0.01)((100, 8))
    self.assertAllEqual(model.embedding.embeddings, expected)

  def test_all_padding_group_is_uniform_with_finite_gradients(self):
    model = self._model(init_stddev=0.5)
    ids = self.ids.copy()
    ids[0] = 0  # Group 0: every sentence is padding.
    ids[1, 0] = 0  # Group 1: the center sentence is padding.
    ids[2, 1:] = 0  # Group 2: every candidate is padding.
    target = siamese_cbow.target_distribution(2, 2)[None]
    with tf.GradientTape() as tape:
      out = model(ids)
      loss = _loss(model, ids, target)
    gradient = tape.gradient(loss, model.embedding.embeddings)
    self.assertAllFinite(out)
    self.assertAllClose(out[:3], np.full((3, 4), 0.25))
    self.assertTrue(np.isfinite(float(loss)))
    self.assertAllFinite(tf.convert_to_tensor(gradient))

  def test_config_round_trip(self):
    model = self._model(init_stddev=0.2)
    config = model.get_config()
    self.assertEqual(config["vocab_size"], VOCAB)
    self.assertEqual(config["embedding_dim"], DIM)
    self.assertEqual(config["init_stddev"], 0.2)
    revived = siamese_cbow.SiameseCBOW.from_config(config)
    revived(self.ids)
    self.assertEqual(revived.get_config(), config)
    revived.set_weights(model.get_weights())
    self.assertAllClose(revived(self.ids), model(self.ids))

  def test_target_distribution(self):
    self.assertAllClose(siamese_cbow.target_distribution(2, 3),
                        [0.5, 0.5, 0.0, 0.0, 0.0])
    self.assertAllClose(siamese_cbow.target_distribution(1, 1), [1.0, 0.0])

  def test_sgd_step_lowers_loss_and_touches_only_looked_up_rows(self):
    model = self._model(init_stddev=0.3)
    ids = _random_ids(self.rng, batch=3, k=5, length=4)
    ids = np.where(ids >= 20, 0, ids)  # Rows 20.. are never looked up.
    ids[:, :, 0] = np.maximum(ids[:, :, 0], 1)
    target = siamese_cbow.target_distribution(2, 2)[None]
    optimizer = keras.optimizers.SGD(learning_rate=0.5)
    optimizer.build(model.trainable_variables)
    before = model.embedding.embeddings.numpy()
    loss_before = float(_loss(model, ids, target))
    with tf.GradientTape() as tape:
      loss = _loss(model, ids, target)
    gradients = tape.gradient(loss, model.trainable_variables)
    self.assertIsInstance(gradients[0], tf.IndexedSlices)
    optimizer.apply(gradients, model.trainable_variables)
    after = model.embedding.embeddings.numpy()
    self.assertLess(float(_loss(model, ids, target)), loss_before)
    looked_up = set(np.unique(ids).tolist()) - {0}
    changed = set(np.where(np.any(after != before, axis=1))[0].tolist())
    changed.discard(0)
    self.assertNotEmpty(changed)
    self.assertContainsSubset(changed, looked_up)
    untouched = [r for r in range(1, VOCAB) if r not in looked_up]
    self.assertAllEqual(after[untouched], before[untouched])
    self.assertNotEmpty(untouched)

  def test_xla_matches_eager(self):
    model = self._model(init_stddev=0.5)
    target = siamese_cbow.target_distribution(2, 2)[None]

    def forward_backward(ids):
      with tf.GradientTape() as tape:
        loss = _loss(model, ids, target)
      gradient = tape.gradient(loss, model.embedding.embeddings)
      return model(ids), loss, tf.convert_to_tensor(gradient)

    eager = forward_backward(tf.constant(self.ids))
    compiled = tf.function(forward_backward, jit_compile=True)(
        tf.constant(self.ids))
    for a, b in zip(compiled, eager):
      self.assertAllClose(a, b, rtol=1e-5, atol=1e-6)

  def test_encode(self):
    model = self._model(init_stddev=0.5)
    table = model.embedding.embeddings.numpy()
    ids = np.array([[3, 4, 0, 0], [0, 0, 0, 0], [7, 7, 7, 1]], np.int32)
    encoded = model.encode(ids)
    self.assertEqual(encoded.shape, (3, DIM))
    self.assertAllClose(encoded, [(table[3] + table[4]) / 2, np.zeros(DIM),
                                  (3 * table[7] + table[1]) / 4])
    self.assertEqual(model.encode(self.ids).shape, (4, 5, DIM))

  def test_keras_save_load_round_trip(self):
    model = self._model(init_stddev=0.5)
    path = os.path.join(self.get_temp_dir(), "model.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    self.assertIsInstance(loaded, siamese_cbow.SiameseCBOW)
    self.assertEqual(loaded.get_config(), model.get_config())
    self.assertAllClose(loaded.embedding.embeddings,
                        model.embedding.embeddings)
    self.assertAllClose(loaded(self.ids), model(self.ids))


if __name__ == "__main__":
  tf.test.main()
