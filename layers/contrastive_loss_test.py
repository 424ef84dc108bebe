"""Tests for the contrastive loss."""

import numpy as np
import tensorflow as tf

from sentzoo.layers import contrastive_loss


class ContrastiveLossTest(tf.test.TestCase):

  def test_matches_the_papers_formula(self):
    y = np.array([1, 0, 0, 1, 0], "float32")
    d = np.array([0.3, 0.2, 1.5, 2.0, 1.0], "float32")
    expected = y * d**2 + (1 - y) * np.maximum(0.7 - d, 0) ** 2
    self.assertAllClose(
        contrastive_loss.contrastive_loss(y, d, margin=0.7), expected)
    # A trailing axis of size 1 (the distance layer's output) is accepted.
    self.assertAllClose(
        contrastive_loss.contrastive_loss(y[:, None], d[:, None], 0.7),
        expected)

  def test_gradient_pushes_only_inside_the_margin(self):
    d = tf.constant([0.5, 1.5, 0.5])
    with tf.GradientTape() as tape:
      tape.watch(d)
      loss = tf.reduce_sum(contrastive_loss.contrastive_loss(
          tf.constant([0.0, 0.0, 1.0]), d))
    self.assertAllClose(tape.gradient(loss, d), [-1.0, 0.0, 1.0])


if __name__ == "__main__":
  tf.test.main()
