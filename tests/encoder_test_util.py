"""Checks shared by the tests of the hybrid siamese sentence encoders."""

import numpy as np
import tensorflow as tf


def padding_invariance_inputs(seed=0, dim=6):
  """Sentences of lengths 3, 1, 0 (empty) padded to 4 and to 9 with garbage."""
  rng = np.random.default_rng(seed)
  lengths = [3, 1, 0]
  real = rng.normal(size=(3, 3, dim)).astype("float32")

  def padded(total):
    x = 100.0 * rng.normal(size=(3, total, dim)).astype("float32")
    mask = np.zeros((3, total), bool)
    for i, n in enumerate(lengths):
      x[i, :n] = real[i, :n]
      mask[i, :n] = True
    return x, mask

  return lengths, real, padded(4), padded(9)


def assert_padding_invariance(test, layer, dim=6):
  """Encodings equal the unpadded ones, whatever the padding; empty -> 0."""
  lengths, real, (x4, m4), (x9, m9) = padding_invariance_inputs(dim=dim)
  out4 = layer(tf.constant(x4), mask=tf.constant(m4))
  out9 = layer(tf.constant(x9), mask=tf.constant(m9))
  test.assertAllClose(out4, out9, rtol=1e-5, atol=1e-5)
  for i, n in enumerate(lengths):
    if n:
      alone = layer(tf.constant(real[i:i + 1, :n]))
      test.assertAllClose(out9[i:i + 1], alone, rtol=1e-5, atol=1e-5)
    else:
      test.assertAllEqual(out9[i], np.zeros(out9.shape[-1]))
  # Gradients stay finite with an empty row, and padding gets none.
  x = tf.constant(x9)
  with tf.GradientTape() as tape:
    tape.watch(x)
    loss = tf.reduce_sum(layer(x, mask=tf.constant(m9)))
  grad = tape.gradient(loss, x).numpy()
  test.assertTrue(np.all(np.isfinite(grad)))
  test.assertAllEqual(grad[~m9], np.zeros_like(grad[~m9]))
