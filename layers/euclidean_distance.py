"""Keras layer: Euclidean distance between two batches of vectors."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="sentzoo")
class EuclideanDistance(keras.layers.Layer):
  """d(a, b) = sqrt(sum_i (a_i - b_i)^2), with a finite gradient at d = 0.

  The distance of the hybrid siamese network (Nicosia and Moschitti,
  CIKM 2017, eq. 1) between the two encodings of a pair; it feeds the
  contrastive loss and is concatenated to the MLP input.

  The square root is taken only where the squared distance is positive; at
  a = b the output is exactly 0 and its gradient is 0 (a plain sqrt would
  give an infinite gradient and NaN updates for identical sentences, e.g.
  two empty ones).

  Args:
    keepdims: bool. Keep a trailing axis of size 1 (default True, ready for
      concatenation with the encodings).
    **kwargs: passed to `keras.layers.Layer`.

  Input shape:
    A list of two float tensors `[..., dim]` (broadcastable).

  Output shape:
    Float tensor `[..., 1]` (or `[...]` with `keepdims=False`).
  """

  def __init__(self, keepdims=True, **kwargs):
    super().__init__(**kwargs)
    self.keepdims = bool(keepdims)

  def call(self, inputs):
    a, b = inputs
    squared = ops.sum(ops.square(a - b), axis=-1, keepdims=self.keepdims)
    positive = squared > 0
    safe = ops.where(positive, squared, ops.ones_like(squared))
    return ops.where(positive, ops.sqrt(safe), ops.zeros_like(squared))

  def compute_output_shape(self, input_shape):
    shape = tuple(input_shape[0])
    return (*shape[:-1], 1) if self.keepdims else shape[:-1]

  def get_config(self):
    config = super().get_config()
    config.update({"keepdims": self.keepdims})
    return config
