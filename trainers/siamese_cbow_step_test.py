"""Tests for trainers.siamese_cbow_step: the update against a hand-derived gradient."""

import keras
import numpy as np
import tensorflow as tf

from sentzoo.models import siamese_cbow
from sentzoo.trainers import lazy_optimizers
from sentzoo.trainers import siamese_cbow_step

VOCAB, DIM, NEGATIVES = 25, 5, 2


def _numpy_loss_and_gradient(table, ids, num_positives):
  """The paper's loss and its gradient with respect to W, derived by hand.

  s_k = mean of W[id] over the non-zero ids of sentence k; u_k = s_k / |s_k|;
  c_k = u_0 . u_k (k >= 1); p = softmax(c); L = -sum_k t_k log p_k with
  t = (1/|S+|, ..., 0, ...), averaged over the batch. Then
  dL/dc_k = (p_k - t_k) / B, du/ds = (I - u u^T) / |s|, and every real id
  occurrence of sentence k receives dL/ds_k / n_k.
  """
  table = table.astype(np.float64)
  batch, members, _ = ids.shape
  target = np.zeros(members - 1)
  target[:num_positives] = 1.0 / num_positives
  gradient = np.zeros_like(table)
  total = 0.0
  for b in range(batch):
    counts = (ids[b] != 0).sum(axis=1)
    sums = np.stack([table[row[row != 0]].sum(axis=0) for row in ids[b]])
    averages = sums / np.maximum(counts, 1)[:, None]
    norms = np.linalg.norm(averages, axis=1)
    unit = averages / norms[:, None]
    cosines = unit[1:] @ unit[0]
    p = np.exp(cosines - cosines.max())
    p /= p.sum()
    total += -(target * np.log(p)).sum()
    d_cos = (p - target) / batch
    d_unit = np.zeros_like(unit)
    d_unit[0] = d_cos @ unit[1:]
    d_unit[1:] = d_cos[:, None] * unit[0]
    for k, row in enumerate(ids[b]):
      u = unit[k]
      d_average = (d_unit[k] - u * (u @ d_unit[k])) / norms[k]
      for i in row[row != 0]:
        gradient[i] += d_average / counts[k]
  return total / batch, gradient


def _ids(rng, batch=3, length=6):
  ids = rng.integers(1, VOCAB - 3, size=(batch, 3 + NEGATIVES, length))
  lengths = rng.integers(1, length + 1, size=ids.shape[:2])
  ids[np.arange(length)[None, None] >= lengths[..., None]] = 0
  ids[0, 1, :3] = [7, 7, 7]  # A repeated word counts once per occurrence.
  return ids.astype(np.int32)


class SiameseCbowStepTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    keras.utils.set_random_seed(3)
    self.ids = _ids(np.random.default_rng(1))
    self.model = siamese_cbow.SiameseCBOW(VOCAB, DIM, init_stddev=0.5)
    self.model(self.ids)

  def _step(self, optimizer, jit_compile, apply_in_xla=True):
    optimizer.build(self.model.trainable_variables)
    step = siamese_cbow_step.make_train_step(
        self.model, optimizer, NEGATIVES, jit_compile=jit_compile,
        apply_in_xla=apply_in_xla)
    before = self.model.embedding.embeddings.numpy()
    loss = step(tf.constant(self.ids))["loss"].numpy()
    return before, loss, self.model.embedding.embeddings.numpy()

  def test_sgd_update_is_the_hand_derived_gradient(self):
    for jit_compile in (False, True):
      with self.subTest(jit_compile=jit_compile):
        before, loss, after = self._step(
            keras.optimizers.SGD(learning_rate=1.0), jit_compile)
        expected_loss, gradient = _numpy_loss_and_gradient(before, self.ids,
                                                           2)
        self.assertAllClose(loss, expected_loss, rtol=1e-5)
        self.assertAllClose(before - after, gradient, atol=1e-6, rtol=1e-4)

  def test_padding_and_unused_rows_do_not_move(self):
    before, _, after = self._step(keras.optimizers.SGD(learning_rate=1.0),
                                  jit_compile=True)
    used = np.unique(self.ids[self.ids != 0])
    unused = np.setdiff1d(np.arange(VOCAB), used)
    self.assertIn(0, unused)
    self.assertGreater(len(unused), 1)
    self.assertAllEqual(before[unused], after[unused])
    self.assertTrue((np.abs(before[used] - after[used]).sum(axis=1) > 0).all())

  def test_target_puts_mass_on_the_neighbours_only(self):
    # Moving a negative onto the centre raises the loss; moving a neighbour
    # onto it lowers the loss.
    table = self.model.embedding.embeddings.numpy()
    base, _ = _numpy_loss_and_gradient(table, self.ids, 2)
    for member, lower in ((1, True), (3, False)):
      ids = self.ids.copy()
      ids[:, member] = ids[:, 0]
      loss, _ = _numpy_loss_and_gradient(table, ids, 2)
      self.assertEqual(loss < base, lower, f"member {member}")

  def test_lazy_adagrad_outside_xla_is_adagrad_on_the_looked_up_rows(self):
    optimizer = lazy_optimizers.LazyAdagrad(learning_rate=0.1)
    before, _, after = self._step(optimizer, jit_compile=True,
                                  apply_in_xla=False)
    _, gradient = _numpy_loss_and_gradient(before, self.ids, 2)
    accumulator = optimizer.initial_accumulator_value + gradient ** 2
    expected = before - 0.1 * gradient / np.sqrt(accumulator
                                                 + optimizer.epsilon)
    self.assertAllClose(after, expected, atol=1e-6)

if __name__ == "__main__":
  tf.test.main()
