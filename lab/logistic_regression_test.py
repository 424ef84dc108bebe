"""Tests for lab.logistic_regression."""

import numpy as np
import tensorflow as tf

from lab import logistic_regression


def _separable(n=200, d=5, k=2, seed=0, margin=1.0):
  """Linearly separable data: labels of argmax(x @ w) with a margin."""
  rng = np.random.default_rng(seed)
  w = rng.normal(size=(d, k))
  x = rng.normal(size=(4 * n, d)) * 3.0 + 10.0  # offset/scale: standardise
  scores = (x - 10.0) @ w
  top2 = np.sort(scores, axis=1)[:, -2:]
  keep = (top2[:, 1] - top2[:, 0]) > margin
  x, scores = x[keep][:n], scores[keep][:n]
  return x, np.argmax(scores, axis=1)


class LossAndGradientTest(tf.test.TestCase):

  def test_gradient_matches_finite_differences(self):
    rng = np.random.default_rng(1)
    n, d, k, f = 13, 4, 3, 2
    x = rng.normal(size=(n, d))
    onehot = np.eye(k)[rng.integers(0, k, n)]
    masks = rng.random((f, n)) < 0.7
    weights = (masks / masks.sum(1, keepdims=True)).T
    theta = rng.normal(size=d * f * k + f * k)
    l2 = 0.3

    def loss(t):
      value, _ = logistic_regression._loss_and_gradient(
          tf.constant(t), tf.constant(x), tf.constant(onehot),
          tf.constant(weights), tf.constant(l2, tf.float64))
      return float(value)

    _, grad = logistic_regression._loss_and_gradient(
        tf.constant(theta), tf.constant(x), tf.constant(onehot),
        tf.constant(weights), tf.constant(l2, tf.float64))
    eps = 1e-6
    numeric = np.array([
        (loss(theta + eps * e) - loss(theta - eps * e)) / (2 * eps)
        for e in np.eye(theta.size)])
    self.assertAllClose(grad.numpy(), numeric, atol=1e-6)

  def test_loss_is_mean_cross_entropy_plus_penalty(self):
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    onehot = np.eye(2)[[0, 1, 1]]
    w = np.array([[0.5, -0.2], [0.1, 0.3]])
    b = np.array([0.05, -0.05])
    theta = np.concatenate([w.ravel(), b])
    logits = x @ w + b
    nll = -np.log(np.exp(logits) / np.exp(logits).sum(1, keepdims=True))
    expected = np.mean(np.sum(onehot * nll, 1)) + 0.5 * 0.1 * np.sum(w * w)
    value, _ = logistic_regression._loss_and_gradient(
        tf.constant(theta), tf.constant(x), tf.constant(onehot),
        tf.constant(np.full([3, 1], 1 / 3)), tf.constant(0.1, tf.float64))
    self.assertAllClose(float(value), expected)


class LogisticRegressionTest(tf.test.TestCase):

  def test_separable_binary_and_multiclass(self):
    for k in (2, 4):
      x, y = _separable(k=k, seed=k)
      clf = logistic_regression.LogisticRegression(l2=1e-4).fit(x, y)
      self.assertEqual(clf.num_classes, k)
      self.assertEqual(clf.accuracy(x, y), 1.0, f"k={k}")
      xt, yt = _separable(k=k, seed=k + 10)
      # Fresh samples of the same w differ: use the training w's labels.
      self.assertGreater(clf.accuracy(x[:50], y[:50]), 0.99)
      self.assertEqual(clf.predict(xt).shape, (len(xt),))
      del yt

  def test_stronger_penalty_shrinks_weights(self):
    x, y = _separable(seed=3)
    norms = [np.linalg.norm(logistic_regression.LogisticRegression(
        l2=l2).fit(x, y).weights) for l2 in (1e-3, 1e-1, 10.0)]
    self.assertGreater(norms[0], norms[1])
    self.assertGreater(norms[1], norms[2])

  def test_warm_start_reaches_the_same_solution(self):
    x, y = _separable(seed=4)
    mean, scale = logistic_regression.standardization(x)
    x = (x - mean) / scale
    rng = np.random.default_rng(0)
    y = np.where(rng.random(y.size) < 0.1, 1 - y, y)  # noise: finite optimum
    cold, _, _ = logistic_regression.fit_weights(x, y, 2, 1e-2)
    start_w, start_b, _ = logistic_regression.fit_weights(x, y, 2, 1.0)
    warm, _, _ = logistic_regression.fit_weights(
        x, y, 2, 1e-2, initial=(start_w, start_b))
    self.assertAllClose(cold, warm, atol=1e-3)

  def test_joint_fits_equal_separate_fits(self):
    x, y = _separable(n=120, k=3, seed=5)
    mean, scale = logistic_regression.standardization(x)
    x = (x - mean) / scale  # as senteval does: well-conditioned
    rng = np.random.default_rng(1)
    y = np.where(rng.random(y.size) < 0.1, (y + 1) % 3, y)
    masks = np.stack([rng.random(y.size) < 0.8 for _ in range(3)])
    weights, bias, _ = logistic_regression.fit_weights(
        x, y, 3, 0.05, train_masks=masks, tolerance=1e-9)
    for j in range(3):
      w, b, _ = logistic_regression.fit_weights(
          x[masks[j]], y[masks[j]], 3, 0.05, tolerance=1e-9)
      self.assertAllClose(weights[j], w[0], atol=1e-3)
      # Softmax biases are unpenalised and defined up to a shared constant.
      self.assertAllClose(bias[j] - bias[j].mean(), b[0] - b[0].mean(),
                          atol=1e-3)

  def test_constant_feature_and_no_standardisation(self):
    x, y = _separable(seed=6)
    x = np.concatenate([x, np.full([len(x), 1], 7.0)], axis=1)
    clf = logistic_regression.LogisticRegression(l2=1e-4).fit(x, y)
    self.assertTrue(np.all(np.isfinite(clf.weights)))
    self.assertEqual(clf.accuracy(x, y), 1.0)
    raw = logistic_regression.LogisticRegression(
        l2=1e-4, standardize=False).fit(x - 10.0, y)
    self.assertGreater(raw.accuracy(x - 10.0, y), 0.97)

  def test_errors(self):
    with self.assertRaises(ValueError):
      logistic_regression.LogisticRegression(l2=-1.0)
    clf = logistic_regression.LogisticRegression()
    with self.assertRaises(ValueError):
      clf.predict(np.zeros([2, 3]))
    with self.assertRaises(ValueError):
      clf.fit(np.zeros([3, 2]), np.array([0, 1]))
    with self.assertRaises(ValueError):
      clf.fit(np.zeros([2, 2]), np.array([0, 5]), num_classes=2)


if __name__ == "__main__":
  tf.test.main()
