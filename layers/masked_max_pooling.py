"""Keras layer: element-wise maximum over the unmasked positions of a sequence."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="sentzoo")
class MaskedMaxPooling(keras.layers.Layer):
  """Max over time of a sequence of vectors, ignoring masked positions.

  The pooling of the CNN and stacked-BiGRU encoders of the hybrid siamese
  network (Nicosia and Moschitti, CIKM 2017, §4.1): "the maximum values
  across the dimensions of the output states are selected".

  Masking: masked positions are replaced by the lowest finite value before
  the maximum, so they never win and their values (even inf/NaN) never
  matter. A row with no unmasked position gives the zero vector with zero
  gradients, never -inf or NaN. With `mask=None` every position counts.

  Args:
    **kwargs: passed to `keras.layers.Layer`.

  Input shape:
    Float tensor `[..., length, dim]` and optionally a mask `[..., length]`.

  Output shape:
    Float tensor `[..., dim]`; no mask.
  """

  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self.supports_masking = True

  def call(self, inputs, mask=None):
    if mask is None:
      return ops.max(inputs, axis=-2)
    mask = ops.expand_dims(ops.cast(mask, "bool"), axis=-1)
    lowest = ops.full_like(inputs, -3.0e38 if inputs.dtype == "float32"
                           else -6.0e4)
    pooled = ops.max(ops.where(mask, inputs, lowest), axis=-2)
    has_token = ops.any(mask, axis=-2)
    return ops.where(has_token, pooled, ops.zeros_like(pooled))

  def compute_mask(self, inputs, mask=None):
    return None

  def compute_output_shape(self, input_shape):
    return (*input_shape[:-2], input_shape[-1])
