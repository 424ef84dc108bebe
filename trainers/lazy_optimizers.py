"""Adagrad and Adadelta whose update of an embedding table touches only the looked-up rows.

Keras 3 densifies an `IndexedSlices` gradient in most optimizers and then
updates every row of the table (and its slots) each step: on CPU, 0.1-0.3 s
per step for a 100k-300k x 300 table (../shared/notes/tensorflow.md). These
subclasses apply the same per-row rule to the looked-up rows only ("lazy"
updates, as TensorFlow's sparse Adagrad/Adadelta kernels do); dense gradients
follow the Keras parent class unchanged.
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
