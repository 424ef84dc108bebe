"""Multinomial logistic regression with an L2 penalty, fitted by full-batch L-BFGS.

The classifier of the SentEval transfer tasks (Conneau & Kiela, 2018; the
Sent2Vec paper, Pagliardini et al., 2018, section 4, uses the same protocol
through Kiros et al.'s code): a linear softmax layer on frozen sentence
embeddings. No scikit-learn: the loss and its analytic gradient are one
TensorFlow function (float64), minimised by scipy's L-BFGS-B, which needs few
iterations on these small, smooth, convex problems (and fewer still when
warm-started from the solution for a neighbouring penalty).

Objective, for n examples x_i with labels y_i in [0, k), weights W [d, k]
and bias b [k] (the bias is not penalised):

    mean_i(-log softmax(x_i W + b)[y_i]) + l2 / 2 * ||W||^2

Features are standardised with the training set's mean and standard
deviation (a constant feature is only centred) unless `standardize=False`.

`fit_weights` also fits the k classifiers of a k-fold cross-validation at
once (each with its own training subset and mean loss; their objectives are
summed), so one [n, d] x [d, k * classes] product per L-BFGS step serves all
folds; lab/senteval.py tunes the penalty that way.

Usage:

  clf = LogisticRegression(l2=1e-3).fit(train_x, train_y)
  accuracy = clf.accuracy(test_x, test_y)
"""

import contextlib
import ctypes
from typing import Optional

import numpy as np
from scipy import optimize
import tensorflow as tf


@tf.function(input_signature=[
    tf.TensorSpec([None], tf.float64),        # theta: [d * f * k + f * k]
    tf.TensorSpec([None, None], tf.float64),  # x: [n, d]
    tf.TensorSpec([None, None], tf.float64),  # one-hot labels: [n, k]
    tf.TensorSpec([None, None], tf.float64),  # example weights: [n, f]
    tf.TensorSpec([], tf.float64),            # l2
])
def _loss_and_gradient(theta, x, onehot, example_weights, l2):
  """Sum over f problems of the objective above, and its gradient.

  Problem j has weights W_j [d, k] and bias b_j [k]; theta holds
  [W.ravel(); b.ravel()] for W = [W_1 ... W_f] ([d, f * k]) and
  b = [b_1 ... b_f]. Example i enters problem j's mean loss with weight
  example_weights[i, j] (1 / n_j on its training examples, else 0), so all
  f problems share one [n, d] x [d, f * k] matrix product per evaluation.
  """
  d = tf.shape(x)[1]
  n = tf.shape(x)[0]
  k = tf.shape(onehot)[1]
  f = tf.shape(example_weights)[1]
  weights = tf.reshape(theta[:d * f * k], [d, f * k])
  bias = theta[d * f * k:]
  logits = tf.reshape(tf.matmul(x, weights) + bias, [n, f, k])
  log_norm = tf.reduce_logsumexp(logits, axis=2)              # [n, f]
  nll = log_norm - tf.reduce_sum(onehot[:, None, :] * logits, axis=2)
  loss = (tf.reduce_sum(nll * example_weights) +
          0.5 * l2 * tf.reduce_sum(weights * weights))
  residual = ((tf.exp(logits - log_norm[:, :, None]) - onehot[:, None, :])
              * example_weights[:, :, None])                  # [n, f, k]
  residual = tf.reshape(residual, [n, f * k])
  grad_w = tf.matmul(x, residual, transpose_a=True) + l2 * weights
  grad = tf.concat([tf.reshape(grad_w, [-1]),
                    tf.reduce_sum(residual, axis=0)], axis=0)
  return loss, grad


def _openblas_libraries() -> list:
  """(set_num_threads, get_num_threads) of each OpenBLAS loaded (Linux)."""
  found = []
  try:
    with open("/proc/self/maps", encoding="utf-8") as f:
      paths = {line.split()[-1] for line in f
               if "openblas" in line.split()[-1].lower()}
  except OSError:
    return found
  for path in sorted(paths):
    try:
      lib = ctypes.CDLL(path)
    except OSError:
      continue
    for prefix in ("scipy_openblas", "openblas"):
      for suffix in ("64_", ""):
        try:
          setter = getattr(lib, f"{prefix}_set_num_threads{suffix}")
          getter = getattr(lib, f"{prefix}_get_num_threads{suffix}")
        except AttributeError:
          continue
        found.append((setter, getter))
        break
      else:
        continue
      break
  return found


@contextlib.contextmanager
def single_threaded_blas():
  """Runs the block with every loaded OpenBLAS limited to one thread.

  scipy's L-BFGS-B does BLAS calls on vectors of a few thousand numbers;
  with OpenBLAS threads on a busy machine each such call waits for thread
  hand-offs (docs/design_measurements.md). The matrix products run in
  TensorFlow, whose threads this does not touch. A no-op where no OpenBLAS is found.
  """
  libraries = _openblas_libraries()
  saved = []
  for setter, getter in libraries:
    try:
      saved.append((setter, int(getter())))
      setter(1)
    except Exception:  # pylint: disable=broad-except
      pass
  try:
    yield
  finally:
    for setter, threads in saved:
      setter(threads)


def standardization(features) -> tuple:
  """(mean [d], scale [d]) of features [n, d]; a zero std gives scale 1."""
  x = np.asarray(features, np.float64)
  scale = x.std(axis=0)
  return x.mean(axis=0), np.where(scale > 0, scale, 1.0)


def fit_weights(features, labels, num_classes: int, l2: float,
                train_masks=None, initial=None, tolerance: float = 1e-6
                ) -> tuple:
  """Fits f independent L2 logistic regressions on subsets of one data set.

  Used for k-fold cross-validation: problem j trains on the examples where
  train_masks[j] is True. The f problems are minimised jointly (their
  objectives are summed; each keeps its own mean loss), which costs one
  matrix product per L-BFGS step instead of f.

  Args:
    features: float [n, d] (already standardised if wanted).
    labels: int [n] in [0, num_classes).
    num_classes: k.
    l2: the penalty (see the module docstring).
    train_masks: bool [f, n]; default one problem on all examples.
    initial: (weights [f, d, k], bias [f, k]) to start from; zeros default.
    tolerance: L-BFGS `ftol` (relative objective change); `gtol` is
      tolerance / 10.

  Returns:
    (weights float64 [f, d, k], bias float64 [f, k], L-BFGS iterations).
  """
  x = np.asarray(features, np.float64)
  y = np.asarray(labels, np.int64).reshape([-1])
  n, d = x.shape
  k = int(num_classes)
  masks = (np.ones([1, n], bool) if train_masks is None else
           np.asarray(train_masks, bool).reshape([-1, n]))
  f = masks.shape[0]
  counts = masks.sum(axis=1)
  if np.any(counts == 0):
    raise ValueError("a problem has no training examples")
  example_weights = (masks / counts[:, None]).T              # [n, f]
  if initial is None:
    theta0 = np.zeros([d * f * k + f * k])
  else:
    w0, b0 = initial
    w0 = np.asarray(w0, np.float64).reshape([f, d, k])
    theta0 = np.concatenate([w0.transpose(1, 0, 2).reshape([-1]),
                             np.asarray(b0, np.float64).reshape([-1])])
  x_t = tf.constant(x)
  onehot_t = tf.constant(np.eye(k)[y])
  weights_t = tf.constant(example_weights)
  l2_t = tf.constant(float(l2), tf.float64)

  def objective(theta):
    loss, grad = _loss_and_gradient(tf.constant(theta), x_t, onehot_t,
                                    weights_t, l2_t)
    return float(loss), grad.numpy()

  with single_threaded_blas():
    result = optimize.minimize(
        objective, theta0, jac=True, method="L-BFGS-B",
        options={"maxiter": 1000, "ftol": float(tolerance),
                 "gtol": float(tolerance) / 10})
  theta = result.x
  weights = theta[:d * f * k].reshape([d, f, k]).transpose(1, 0, 2)
  bias = theta[d * f * k:].reshape([f, k])
  return weights, bias, int(result.nit)


class LogisticRegression:
  """Softmax regression [n, d] -> k classes, L2-penalised, L-BFGS fitted.

  Args:
    l2: the penalty weight (see the module docstring), >= 0.
    standardize: scale features by the training set's mean and std.

  Attributes (after `fit`):
    weights: np.ndarray float64 [d, k] (on standardised features).
    bias: np.ndarray float64 [k].
    num_classes: k.
  """

  def __init__(self, l2: float = 1e-4, standardize: bool = True):
    if l2 < 0:
      raise ValueError(f"l2 must be >= 0, got {l2}")
    self.l2 = float(l2)
    self.standardize = standardize
    self.weights = None
    self.bias = None
    self.num_classes = None
    self._mean = None
    self._scale = None

  def _transform(self, features) -> np.ndarray:
    x = np.asarray(features, np.float64)
    if x.ndim != 2:
      raise ValueError(f"features must be [n, d], got shape {x.shape}")
    if self._mean is not None:
      x = (x - self._mean) / self._scale
    return x

  def fit(self, features, labels, num_classes: Optional[int] = None
          ) -> "LogisticRegression":
    """Fits the classifier on features float [n, d] and labels int [n] in
    [0, num_classes) (default: max label + 1, at least 2); returns self."""
    x = np.asarray(features, np.float64)
    y = np.asarray(labels, np.int64).reshape([-1])
    if x.ndim != 2 or x.shape[0] != y.size:
      raise ValueError(f"features {x.shape} and labels {y.shape} disagree")
    if y.size == 0:
      raise ValueError("cannot fit on zero examples")
    if y.min() < 0:
      raise ValueError("labels must be >= 0")
    k = int(num_classes or max(2, int(y.max()) + 1))
    if y.max() >= k:
      raise ValueError(f"label {y.max()} >= num_classes {k}")
    if self.standardize:
      self._mean, self._scale = standardization(x)
    else:
      self._mean = self._scale = None
    weights, bias, _ = fit_weights(self._transform(x), y, k, self.l2)
    self.weights, self.bias = weights[0], bias[0]
    self.num_classes = k
    return self

  def predict(self, features) -> np.ndarray:
    """int64 [n] most probable classes (argmax of the float64 [n, k] logits)."""
    if self.weights is None:
      raise ValueError("the classifier is not fitted yet")
    logits = self._transform(features) @ self.weights + self.bias
    return np.argmax(logits, axis=1).astype(np.int64)

  def accuracy(self, features, labels) -> float:
    """Fraction of correct predictions, in [0, 1] (nan for n == 0)."""
    labels = np.asarray(labels).reshape([-1])
    if labels.size == 0:
      return float("nan")
    return float(np.mean(self.predict(features) == labels))
