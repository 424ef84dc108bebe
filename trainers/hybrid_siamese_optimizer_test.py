"""Tests for LazyAdam."""

import keras
import numpy as np
import tensorflow as tf

from trainers import hybrid_siamese_optimizer


class LazyAdamTest(tf.test.TestCase):

  def _run(self, optimizer, steps, indices_per_step, jit_compile=False,
           densify=False):
    table = keras.Variable(
        np.random.default_rng(0).normal(size=(6, 3)).astype("float32"))
    optimizer.build([table])

    @tf.function(jit_compile=jit_compile)
    def step(indices):
      with tf.GradientTape() as tape:
        rows = tf.gather(table.value, indices)
        loss = tf.reduce_sum(tf.square(rows - 1.0) * [1.0, 2.0, 3.0])
      gradient = tape.gradient(loss, table.value)
      if densify:
        gradient = tf.convert_to_tensor(gradient)
      optimizer.apply([gradient], [table])
      return gradient

    for s in range(steps):
      gradient = step(tf.constant(indices_per_step[s % len(indices_per_step)]))
    return table.numpy(), gradient

  def test_equals_dense_adam_when_every_row_is_looked_up(self):
    indices = [[0, 1, 2, 3, 4, 5, 2]]  # A duplicate index too.
    lazy, gradient = self._run(
        hybrid_siamese_optimizer.LazyAdam(learning_rate=0.1), 5, indices)
    self.assertIsInstance(gradient, tf.IndexedSlices)
    # Keras Adam squares an IndexedSlices gradient before summing duplicate
    # rows (sum of squares, not square of the sum): compare with the
    # densified gradient, which is Adam's definition.
    dense, _ = self._run(keras.optimizers.Adam(learning_rate=0.1), 5, indices,
                         densify=True)
    self.assertAllClose(lazy, dense, rtol=1e-5, atol=1e-5)

  def test_rows_not_looked_up_never_change(self):
    before = np.random.default_rng(0).normal(size=(6, 3)).astype("float32")
    for jit_compile in (False, True):
      after, _ = self._run(
          hybrid_siamese_optimizer.LazyAdam(learning_rate=0.1), 4,
          [[0, 2], [2, 3, 3]], jit_compile=jit_compile)
      self.assertAllEqual(after[[1, 4, 5]], before[[1, 4, 5]])
      self.assertNotAllClose(after[[0, 2, 3]], before[[0, 2, 3]])

  def test_dense_gradients_are_plain_adam(self):
    variables = [keras.Variable(np.ones(3, "float32")) for _ in range(2)]
    optimizers = [hybrid_siamese_optimizer.LazyAdam(0.01),
                  keras.optimizers.Adam(0.01)]
    for variable, optimizer in zip(variables, optimizers):
      for _ in range(3):
        optimizer.apply([tf.constant([0.5, -1.0, 2.0])], [variable])
    self.assertAllClose(variables[0], variables[1])

  def test_config_round_trip(self):
    optimizer = hybrid_siamese_optimizer.LazyAdam(learning_rate=0.002)
    restored = hybrid_siamese_optimizer.LazyAdam.from_config(
        optimizer.get_config())
    self.assertAllClose(restored.learning_rate, 0.002)


if __name__ == "__main__":
  tf.test.main()
