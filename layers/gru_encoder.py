"""Keras layer: the last state of a left-to-right GRU over the real tokens."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="sentzoo")
class GRUEncoder(keras.layers.Layer):
  """Sentence encoder: a GRU read left to right; its last state encodes it.

  The GRU encoder of the hybrid siamese network (Nicosia and Moschitti,
  "Accurate Sentence Matching with Hybrid Siamese Networks", CIKM 2017,
  §4.1): 200 units, "the last state is used to encode the sentence".

  Masking: with a mask, masked steps leave the state unchanged (Keras RNN
  masking), so the encoding is the state after the last real token, whatever
  the amount of padding after it. A row with no real token encodes to the
  zero vector (the initial state). Masked positions' values are never read.

  Args:
    units: int. State size (the paper: 200).
    **kwargs: passed to `keras.layers.Layer` (`name`, `dtype`, ...).

  Input shape:
    Float tensor `[batch, length, dim]` and optionally a boolean mask
    `[batch, length]` (True = real token).

  Output shape:
    Float tensor `[batch, units]`; no mask.
  """

  def __init__(self, units=200, **kwargs):
    super().__init__(**kwargs)
    self.units = int(units)
    self.supports_masking = True
    self.rnn = keras.layers.GRU(self.units, name="gru")

  def build(self, input_shape):
    self.rnn.build(input_shape)
    self.built = True

  def call(self, inputs, mask=None):
    outputs = self.rnn(inputs, mask=mask)
    if mask is not None:
      has_token = ops.any(ops.cast(mask, "bool"), axis=-1, keepdims=True)
      outputs = ops.where(has_token, outputs, ops.zeros_like(outputs))
    return outputs

  def compute_mask(self, inputs, mask=None):
    return None

  def compute_output_shape(self, input_shape):
    return (input_shape[0], self.units)

  def get_config(self):
    config = super().get_config()
    config.update({"units": self.units})
    return config
