"""Keras layer base: the last state of a left-to-right RNN over the real tokens."""

import keras
from keras import ops


class LastStateRNNEncoder(keras.layers.Layer):
  """Base of `LSTMEncoder` and `GRUEncoder`: an RNN's last state encodes.

  Subclasses set `rnn_class` (a Keras RNN layer class) and `rnn_name` (the
  sub-layer's name, kept stable for checkpoints).

  Masking: with a mask, masked steps leave the state unchanged (Keras RNN
  masking), so the encoding is the state after the last real token, whatever
  the amount of padding after it. A row with no real token encodes to the
  zero vector. Masked positions' values are never read.

  Args:
    units: int. State size.
    **kwargs: passed to `keras.layers.Layer` (`name`, `dtype`, ...).

  Input shape:
    Float tensor `[batch, length, dim]` and optionally a boolean mask
    `[batch, length]` (True = real token).

  Output shape:
    Float tensor `[batch, units]`; no mask.
  """

  rnn_class = None
  rnn_name = None

  def __init__(self, units=200, **kwargs):
    super().__init__(**kwargs)
    self.units = int(units)
    self.supports_masking = True
    self.rnn = self.rnn_class(self.units, name=self.rnn_name)

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
