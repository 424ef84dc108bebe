"""Adam, Adagrad and Adadelta whose update of an embedding table touches only the looked-up rows.

Keras 3 densifies an `IndexedSlices` gradient in most optimizers and then
updates every row of the table (and its slots) each step: on CPU, 0.1-0.3 s
per step for a 100k-300k x 300 table (../shared/notes/tensorflow.md). These
subclasses apply the same per-row rule to the looked-up rows only ("lazy"
updates, as TensorFlow's sparse Adagrad/Adadelta kernels and TensorFlow
Addons' LazyAdam do); dense gradients follow the Keras parent class
unchanged.
"""

import keras
import tensorflow as tf


def looked_up_rows(gradient, variable, learning_rate):
  """(distinct indices, their summed gradient rows, learning rate), in the
  variable's dtype."""
  indices, positions = tf.unique(gradient.indices)
  values = tf.math.unsorted_segment_sum(gradient.values, positions,
                                        tf.shape(indices)[0])
  return (indices, tf.cast(values, variable.dtype),
          tf.cast(learning_rate, variable.dtype))


@keras.saving.register_keras_serializable(package="sentzoo")
class LazyAdagrad(keras.optimizers.Adagrad):
  """Keras 3 Adagrad with lazy updates for `tf.IndexedSlices` gradients.

  For looked-up rows i (duplicates summed first):
    a[i] += g[i]^2;  w[i] -= lr * g[i] / sqrt(a[i] + eps).
  The same as dense Adagrad, whose untouched rows have g = 0 and so do not
  change either.
  """

  def update_step(self, gradient, variable, learning_rate):
    if not isinstance(gradient, tf.IndexedSlices):
      return super().update_step(gradient, variable, learning_rate)
    indices, values, lr = looked_up_rows(gradient, variable, learning_rate)
    accumulator = self._accumulators[self._get_variable_index(variable)]
    rows = tf.gather(accumulator.value, indices) + tf.square(values)
    self.assign(accumulator, tf.IndexedSlices(rows, indices, accumulator.shape))
    self.assign_sub(variable, tf.IndexedSlices(
        lr * values / tf.sqrt(rows + self.epsilon), indices, variable.shape))


@keras.saving.register_keras_serializable(package="sentzoo")
class LazyAdadelta(keras.optimizers.Adadelta):
  """Keras 3 Adadelta with lazy updates for `tf.IndexedSlices` gradients.

  For looked-up rows i (duplicates summed first), Zeiler's rule:
    A[i] = rho*A[i] + (1-rho)*g^2;  d = -sqrt(D[i]+eps)/sqrt(A[i]+eps) * g
    D[i] = rho*D[i] + (1-rho)*d^2;  w[i] += lr * d.
  Unlike dense Adadelta, rows not looked up keep their accumulators (no
  decay by rho), as TensorFlow's sparse Adadelta kernel does. The Siamese
  CBOW authors' code defaults to Adadelta with lr 1.0 (dense, in Theano).
  """

  def update_step(self, gradient, variable, learning_rate):
    if not isinstance(gradient, tf.IndexedSlices):
      return super().update_step(gradient, variable, learning_rate)
    indices, values, lr = looked_up_rows(gradient, variable, learning_rate)
    index = self._get_variable_index(variable)
    grads = self._accumulated_grads[index]
    deltas = self._accumulated_delta_vars[index]
    rho = self.rho
    grad_rows = rho * tf.gather(grads.value, indices) + (1 - rho) * tf.square(
        values)
    delta_rows = tf.gather(deltas.value, indices)
    step = -tf.sqrt(delta_rows + self.epsilon) / tf.sqrt(
        grad_rows + self.epsilon) * values
    self.assign(grads, tf.IndexedSlices(grad_rows, indices, grads.shape))
    self.assign(deltas, tf.IndexedSlices(
        rho * delta_rows + (1 - rho) * tf.square(step), indices, deltas.shape))
    self.assign_add(variable, tf.IndexedSlices(lr * step, indices,
                                               variable.shape))


@keras.saving.register_keras_serializable(package="sentzoo")
class LazyAdam(keras.optimizers.Adam):
  """Keras 3 Adam with lazy (sparse) updates for `tf.IndexedSlices` gradients.

  Keras 3 Adam densifies a sparse gradient and updates every row (~250 ms
  per step on CPU for a 315k x 300 table). Here duplicate indices are
  summed and only those rows of the moments and of the variable are
  updated, as TensorFlow Addons' LazyAdam:
    m[i] = b1·m[i] + (1 − b1)·g[i];  v[i] = b2·v[i] + (1 − b2)·g[i]²
    w[i] −= lr·√(1 − b2^t)/(1 − b1^t) · m[i] / (√v[i] + ε)   for looked-up i.
  Rows not looked up keep their moments (no decay), which is the only
  difference from dense Adam. Dense gradients follow plain Keras Adam.
  `amsgrad` is not supported for sparse gradients.
  """

  def update_step(self, gradient, variable, learning_rate):
    if not isinstance(gradient, tf.IndexedSlices):
      return super().update_step(gradient, variable, learning_rate)
    if self.amsgrad:
      raise ValueError("LazyAdam does not support amsgrad for sparse "
                       "gradients")
    dtype = variable.dtype
    indices, values, lr = looked_up_rows(gradient, variable, learning_rate)
    step = tf.cast(self.iterations + 1, dtype)
    beta_1 = tf.cast(self.beta_1, dtype)
    beta_2 = tf.cast(self.beta_2, dtype)
    alpha = lr * tf.sqrt(1 - tf.pow(beta_2, step)) / (1 - tf.pow(beta_1, step))
    m = self._momentums[self._get_variable_index(variable)]
    v = self._velocities[self._get_variable_index(variable)]
    m_rows = beta_1 * tf.gather(m.value, indices) + (1 - beta_1) * values
    v_rows = (beta_2 * tf.gather(v.value, indices)
              + (1 - beta_2) * tf.square(values))
    self.assign(m, tf.IndexedSlices(m_rows, indices, m.shape))
    self.assign(v, tf.IndexedSlices(v_rows, indices, v.shape))
    self.assign_sub(variable, tf.IndexedSlices(
        alpha * m_rows / (tf.sqrt(v_rows) + self.epsilon), indices,
        variable.shape))
