"""Tests of the hybrid matcher's batches and train step."""

import keras
import numpy as np
import tensorflow as tf

from sentzoo.models import hybrid_siamese
from sentzoo.trainers import hybrid_siamese_step

IDS_A = tf.ragged.constant([[1, 2, 3], [4], [5, 6], [7, 8, 9, 1, 2]],
                           dtype=tf.int32)
IDS_B = tf.ragged.constant([[2], [3, 4, 5], [], [6, 7]], dtype=tf.int32)
LABELS = np.array([1, 0, 1, 0])


def _model():
  model = hybrid_siamese.HybridSiamese(10, 6, "gru", encoder_units=5,
                                       mlp_units=(4,))
  model.build()
  return model


class PairDatasetTest(tf.test.TestCase):

  def test_batches_are_padded_to_a_multiple_and_the_last_is_smaller(self):
    batches = list(hybrid_siamese_step.pair_dataset(
        IDS_A, IDS_B, LABELS, batch_size=3, max_length=50, pad_multiple=4))
    self.assertLen(batches, 2)
    (a, b), labels = batches[0]
    self.assertEqual(a.shape, (3, 4))  # Longest row 3, rounded up to 4.
    self.assertEqual(b.shape, (3, 4))
    self.assertAllEqual(labels, [1, 0, 1])
    (a, _), labels = batches[1]
    self.assertEqual(a.shape, (1, 8))  # 5 ids -> 8.
    self.assertAllEqual(a[0, :5], [7, 8, 9, 1, 2])
    self.assertAllEqual(a[0, 5:], [0, 0, 0])

  def test_truncated_to_max_length(self):
    (a, _), _ = next(iter(hybrid_siamese_step.pair_dataset(
        IDS_A, IDS_B, LABELS, batch_size=4, max_length=2, pad_multiple=1)))
    self.assertEqual(a.shape[1], 2)

  def test_steps_per_epoch_counts_the_smaller_last_batch(self):
    self.assertEqual(hybrid_siamese_step.steps_per_epoch(4, 3), 2)
    self.assertEqual(hybrid_siamese_step.steps_per_epoch(6, 3), 2)
    self.assertEqual(hybrid_siamese_step.steps_per_epoch(0, 3), 1)

  def test_replica_pieces_cover_each_batch_once(self):
    dataset = hybrid_siamese_step.pair_dataset(
        IDS_A, IDS_B, LABELS, batch_size=4, max_length=50)
    pieces = list(hybrid_siamese_step.replica_pieces(dataset, 2))
    self.assertLen(pieces, 2)
    self.assertAllEqual(
        np.concatenate([labels for _, labels in pieces]), LABELS)


class TrainStepTest(tf.test.TestCase):

  def _batch(self):
    return next(iter(hybrid_siamese_step.pair_dataset(
        IDS_A, IDS_B, LABELS, batch_size=4, max_length=50)))

  def test_sgd_step_moves_each_variable_by_the_loss_gradient(self):
    for mode in hybrid_siamese.MODES:
      with self.subTest(mode):
        model = _model()
        batch = self._batch()
        (ids_a, ids_b), labels = batch
        with tf.GradientTape() as tape:
          total, _, _ = hybrid_siamese.loss(
              model((ids_a, ids_b), training=True), labels, mode,
              margin=1.0, contrastive_weight=0.5)
        variables = model.trainable_variables
        # Contrastive mode leaves the MLP out of the loss: no gradient, no
        # move.
        expected = [v.numpy() if g is None
                    else v.numpy() - 0.1 * tf.convert_to_tensor(g).numpy()
                    for v, g in zip(variables, tape.gradient(total, variables))]
        step = hybrid_siamese_step.make_train_step(
            model, keras.optimizers.SGD(0.1), mode, margin=1.0,
            contrastive_weight=0.5)
        metrics = step(batch)
        self.assertAllClose(metrics["loss"], total, rtol=1e-5)
        for variable, value in zip(variables, expected):
          self.assertAllClose(variable, value, atol=1e-6)

  def test_frozen_embeddings_do_not_move(self):
    model = _model()
    before = model.embedding.embeddings.numpy()
    step = hybrid_siamese_step.make_train_step(
        model, keras.optimizers.SGD(0.1), "joint", train_embeddings=False)
    self.assertFalse(any(v is model.embedding.embeddings
                         for v in step.variables))
    step(self._batch())
    self.assertAllEqual(model.embedding.embeddings, before)


if __name__ == "__main__":
  tf.test.main()
