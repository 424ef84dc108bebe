"""Tests for trainers.lazy_optimizers."""

import keras
import numpy as np
import tensorflow as tf

from sentzoo.trainers import lazy_optimizers

ROWS, DIM = 6, 3


def _sparse_gradient():
  # Row 2 twice (summed before the update), rows 4 and 0 once; 1, 3, 5 never.
  values = np.array([[1.0, -2.0, 0.5], [0.5, 1.0, 1.0], [-1.0, 0.0, 2.0],
                     [0.25, 0.25, 0.25]], np.float32)
  return tf.IndexedSlices(tf.constant(values), tf.constant([2, 4, 2, 0]),
                          tf.constant([ROWS, DIM])), values


class LazyOptimizersTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.start = np.arange(ROWS * DIM, dtype=np.float32).reshape(ROWS, DIM)
    self.gradient, values = _sparse_gradient()
    self.summed = np.zeros((ROWS, DIM), np.float32)
    np.add.at(self.summed, [2, 4, 2, 0], values)

  def _apply(self, optimizer, steps=2):
    variable = keras.Variable(self.start)
    optimizer.build([variable])
    for _ in range(steps):
      optimizer.apply([self.gradient], [variable])
    return variable.numpy()

  def test_looked_up_rows_sums_duplicate_rows(self):
    indices, values, lr = lazy_optimizers.looked_up_rows(
        self.gradient, tf.Variable(self.start, dtype=tf.float64), 0.5)
    self.assertAllEqual(indices, [2, 4, 0])
    self.assertAllClose(values, self.summed[[2, 4, 0]])
    self.assertEqual(values.dtype, tf.float64)
    self.assertEqual(lr.dtype, tf.float64)

  def test_adagrad_is_dense_adagrad_on_the_summed_gradient(self):
    lazy = self._apply(lazy_optimizers.LazyAdagrad(learning_rate=0.1))
    dense = self._apply_dense(keras.optimizers.Adagrad(learning_rate=0.1))
    self.assertAllClose(lazy, dense, atol=1e-6)
    self.assertAllEqual(lazy[[1, 3, 5]], self.start[[1, 3, 5]])

  def test_adadelta_follows_zeilers_rule_on_looked_up_rows(self):
    rho, eps, lr = 0.95, 1e-7, 1.0
    lazy = self._apply(lazy_optimizers.LazyAdadelta(
        learning_rate=lr, rho=rho, epsilon=eps))
    w = self.start.astype(np.float64).copy()
    a = np.zeros_like(w)
    d = np.zeros_like(w)
    rows = [0, 2, 4]
    for _ in range(2):
      g = self.summed[rows]
      a[rows] = rho * a[rows] + (1 - rho) * g ** 2
      step = -np.sqrt(d[rows] + eps) / np.sqrt(a[rows] + eps) * g
      d[rows] = rho * d[rows] + (1 - rho) * step ** 2
      w[rows] += lr * step
    self.assertAllClose(lazy, w, atol=1e-6)
    self.assertAllEqual(lazy[[1, 3, 5]], self.start[[1, 3, 5]])

  def test_dense_gradients_use_the_keras_rule(self):
    for lazy_class, dense_class in (
        (lazy_optimizers.LazyAdagrad, keras.optimizers.Adagrad),
        (lazy_optimizers.LazyAdadelta, keras.optimizers.Adadelta)):
      with self.subTest(lazy_class.__name__):
        self.assertAllClose(self._apply_dense(lazy_class(learning_rate=0.1)),
                            self._apply_dense(dense_class(learning_rate=0.1)))

  def test_config_round_trip(self):
    optimizer = lazy_optimizers.LazyAdadelta(learning_rate=0.5, rho=0.9)
    restored = lazy_optimizers.LazyAdadelta.from_config(
        optimizer.get_config())
    self.assertEqual(restored.get_config(), optimizer.get_config())
    restored = keras.optimizers.deserialize(
        keras.optimizers.serialize(lazy_optimizers.LazyAdagrad(0.2)))
    self.assertIsInstance(restored, lazy_optimizers.LazyAdagrad)

  def _apply_dense(self, optimizer, steps=2):
    variable = keras.Variable(self.start)
    optimizer.build([variable])
    for _ in range(steps):
      optimizer.apply([tf.constant(self.summed)], [variable])
    return variable.numpy()


if __name__ == "__main__":
  tf.test.main()
