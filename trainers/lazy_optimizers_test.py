"""Tests for trainers.lazy_optimizers (LazyAdam also under MirroredStrategy)."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import tensorflow as tf

from sentzoo.trainers import lazy_optimizers

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run in a subprocess (2 logical CPUs must be configured before TensorFlow
# starts): LazyAdam under MirroredStrategy, each replica looking up other
# rows of a mirrored table, against one device on the union of the rows.
# Prints JSON: the one-device table, each replica's copy, the initial table,
# and the gradient types update_step received.
_MIRRORED_SCRIPT = r"""
import json, sys
import keras
import numpy as np
import tensorflow as tf
from sentzoo.trainers import distribution
from sentzoo.trainers import lazy_optimizers

strategy = distribution.make_strategy("mirrored", 2)
seen = []

class Recording(lazy_optimizers.LazyAdam):
  def update_step(self, gradient, variable, learning_rate):
    seen.append(type(gradient).__name__)
    return super().update_step(gradient, variable, learning_rate)

initial = np.random.default_rng(0).normal(size=(6, 3)).astype("float32")
per_replica = [[[0, 2, 2], [2, 3]], [[3], [0, 3, 3]]]  # Steps x replicas.
weights = tf.constant([1.0, 2.0, 3.0])

def loss_fn(table, indices):
  rows = tf.gather(table, indices)
  return tf.reduce_sum(tf.square(rows - 1.0) * weights)

# One device, on the union of the replicas' rows.
single = keras.Variable(initial)
single_optimizer = lazy_optimizers.LazyAdam(learning_rate=0.1)
single_optimizer.build([single])

@tf.function
def single_step(indices):
  with tf.GradientTape() as tape:
    loss = loss_fn(single, indices)
  single_optimizer.apply(tape.gradient(loss, [single]), [single])

with strategy.scope():
  mirrored = keras.Variable(initial)
  optimizer = Recording(learning_rate=0.1)
  optimizer.build([mirrored])

@tf.function
def mirrored_step(indices):
  def replica(indices):
    with tf.GradientTape() as tape:
      loss = loss_fn(mirrored, indices)
    gradients = tape.gradient(loss, [mirrored])
    optimizer.apply(gradients, [mirrored])
    return type(gradients[0]).__name__ == "IndexedSlices"
  return strategy.run(replica, args=(indices,))

for step in per_replica:
  single_step(tf.constant(step[0] + step[1]))
  values = strategy.experimental_distribute_values_from_function(
      lambda context, step=step: tf.constant(
          step[context.replica_id_in_sync_group]))
  mirrored_step(values)
copies = [v.numpy() for v in strategy.experimental_local_results(
    mirrored.value)]
json.dump({"single": single.numpy().tolist(),
           "copies": [c.tolist() for c in copies],
           "initial": initial.tolist(), "seen": seen,
           "replicas": strategy.num_replicas_in_sync}, sys.stdout)
"""


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
        lazy_optimizers.LazyAdam(learning_rate=0.1), 5, indices)
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
          lazy_optimizers.LazyAdam(learning_rate=0.1), 4,
          [[0, 2], [2, 3, 3]], jit_compile=jit_compile)
      self.assertAllEqual(after[[1, 4, 5]], before[[1, 4, 5]])
      self.assertNotAllClose(after[[0, 2, 3]], before[[0, 2, 3]])

  def test_dense_gradients_are_plain_adam(self):
    variables = [keras.Variable(np.ones(3, "float32")) for _ in range(2)]
    optimizers = [lazy_optimizers.LazyAdam(0.01),
                  keras.optimizers.Adam(0.01)]
    for variable, optimizer in zip(variables, optimizers):
      for _ in range(3):
        optimizer.apply([tf.constant([0.5, -1.0, 2.0])], [variable])
    self.assertAllClose(variables[0], variables[1])

  def test_mirrored_sums_replica_rows_and_updates_only_them(self):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", _MIRRORED_SCRIPT],
                            cwd=REPO_ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    out = json.loads(result.stdout)
    self.assertEqual(out["replicas"], 2)
    # The all-reduced gradient of the table reached update_step as
    # IndexedSlices (duplicate rows from both replicas), on every device.
    self.assertNotEmpty(out["seen"])
    self.assertEqual(set(out["seen"]), {"IndexedSlices"})
    first, second = np.array(out["copies"][0]), np.array(out["copies"][1])
    self.assertAllEqual(first, second)
    # Summed over replicas: one device's update on the union of the rows.
    self.assertAllClose(first, out["single"], rtol=1e-6, atol=1e-6)
    initial = np.array(out["initial"])
    self.assertAllEqual(first[[1, 4, 5]], initial[[1, 4, 5]])
    self.assertNotAllClose(first[[0, 2, 3]], initial[[0, 2, 3]])

  def test_config_round_trip(self):
    optimizer = lazy_optimizers.LazyAdam(learning_rate=0.002)
    restored = lazy_optimizers.LazyAdam.from_config(
        optimizer.get_config())
    self.assertAllClose(restored.learning_rate, 0.002)


if __name__ == "__main__":
  tf.test.main()
