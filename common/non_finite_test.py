"""Tests for common.non_finite."""

import os
from unittest import mock

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import non_finite


class NonFiniteTest(tf.test.TestCase):

  def test_check_step_names_the_step_and_the_checkpoint(self):
    non_finite.check_step(7, True, loss=0.5)
    non_finite.check_step(7, np.bool_(True))
    with self.assertRaises(non_finite.NonFiniteError) as caught:
      non_finite.check_step(42, tf.constant(False), loss=float("nan"),
                            last_checkpoint="m/checkpoints/ckpt-40")
    self.assertIsInstance(caught.exception, errors.UserError)
    self.assertEqual(caught.exception.step, 42)
    message = str(caught.exception)
    self.assertIn("training diverged at step 42", message)
    self.assertIn("(loss nan)", message)
    self.assertIn("the last checkpoint, m/checkpoints/ckpt-40, was written "
                  "before and is kept", message)
    self.assertNotIn("\n", message)
    with self.assertRaisesRegex(non_finite.NonFiniteError,
                                "no checkpoint was written"):
      non_finite.check_step(1, False)

  def test_global_norm_matches_tf_in_row_chunks(self):
    table = tf.Variable(tf.random.normal([1000, 7], seed=1))
    bias = tf.Variable([3.0, 4.0])
    scalar = tf.Variable(2.0, dtype=tf.float64)
    ids = tf.Variable([5, 6])
    expected = float(tf.linalg.global_norm([table, bias, tf.cast(scalar,
                                                                  tf.float32)]))
    with mock.patch.object(non_finite, "_NORM_CHUNK", 100):
      self.assertAllClose(non_finite.global_norm([table, bias, scalar, ids]),
                          expected, rtol=1e-6)
    self.assertAllClose(non_finite.global_norm([table, bias, scalar]),
                        expected, rtol=1e-6)
    self.assertEqual(non_finite.global_norm([]), 0.0)
    overflowed = tf.Variable([[1e30, 1e30]] * 3)
    with mock.patch.object(non_finite, "_NORM_CHUNK", 2):
      # Summed in float64: large float32 values do not overflow.
      self.assertAllClose(non_finite.global_norm([overflowed]), 6**0.5 * 1e30)

  def test_check_variables_refuses_a_nan_table(self):
    good = tf.Variable(tf.ones([3, 2]), name="table")
    ids = tf.Variable([1, 2], name="ids")
    non_finite.check_variables([good, ids], "checkpoint ckpt-20")
    bad = tf.Variable([[1.0, np.nan], [np.inf, 0.0]], name="words")
    with self.assertRaisesRegex(
        non_finite.NonFiniteError,
        "^checkpoint ckpt-20 holds non-finite values \\(2 of 4 in words"):
      non_finite.check_variables([good, bad], "checkpoint ckpt-20")
    with self.assertRaisesRegex(
        non_finite.NonFiniteError,
        "\\(2 of 4 in words.*\\): not exported. Export an earlier "
        "checkpoint, or train again with a lower --learning_rate$"):
      non_finite.check_variables([bad], "step 30")

  def test_a_loop_that_diverges_stops_at_the_step_and_keeps_its_checkpoint(
      self):
    # The contract: check_step runs before the step is saved.
    table = tf.Variable(tf.ones([4, 2]))
    step_counter = tf.Variable(0, dtype=tf.int64)
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(table=table, step=step_counter),
        os.path.join(self.get_temp_dir(), "loop"), max_to_keep=2)

    @tf.function
    def train_step(learning_rate):
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(table))
      gradient = tape.gradient(loss, table)
      table.assign_sub(learning_rate * gradient)
      step_counter.assign_add(1)
      return loss, tf.reduce_all([tf.reduce_all(tf.math.is_finite(t))
                                  for t in (loss, gradient, table)])

    learning_rates = [0.01] * 5 + [float("inf")] + [0.01] * 4
    with self.assertRaises(non_finite.NonFiniteError) as caught:
      for learning_rate in learning_rates:
        loss, finite = train_step(tf.constant(learning_rate))
        step = int(step_counter.numpy())
        non_finite.check_step(step, finite, loss, manager.latest_checkpoint)
        if step % 2 == 0:
          manager.save(checkpoint_number=step)
    self.assertEqual(caught.exception.step, 6)
    self.assertIn("the last checkpoint, ", str(caught.exception))
    self.assertTrue(manager.latest_checkpoint.endswith("ckpt-4"))
    restored = tf.Variable(tf.zeros([4, 2]))
    tf.train.Checkpoint(table=restored, step=tf.Variable(
        0, dtype=tf.int64)).restore(manager.latest_checkpoint)
    self.assertTrue(np.isfinite(restored.numpy()).all())
    self.assertAllClose(restored, np.full([4, 2], 0.98 ** 4))


if __name__ == "__main__":
  tf.test.main()
