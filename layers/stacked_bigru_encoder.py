"""Keras layer: stacked bidirectional GRUs with masked max-over-time pooling."""

import keras

from sentzoo.layers import masked_max_pooling


@keras.saving.register_keras_serializable(package="sentzoo")
class StackedBiGRUEncoder(keras.layers.Layer):
  """Sentence encoder: a stack of bidirectional GRUs, max over time.

  The stacked BiGRU encoder of the hybrid siamese network (Nicosia and
  Moschitti, CIKM 2017, §4.1): 2 layers of bidirectional GRUs of 200 units;
  the states of both directions are concatenated and fed to the next layer;
  the top layer's states are max-pooled over time (400-d).

  Masking: the mask reaches every GRU (the backward direction starts at the
  last real token, masked steps leave states unchanged) and the max skips
  masked positions, so padding never changes an encoding. A row with no real
  token encodes to the zero vector.

  Args:
    units: int. GRU units per direction (the paper: 200).
    num_layers: int. Stacked bidirectional layers (the paper: 2).
    **kwargs: passed to `keras.layers.Layer`.

  Input shape:
    Float tensor `[batch, length, dim]` and optionally a mask
    `[batch, length]`.

  Output shape:
    Float tensor `[batch, 2 * units]`; no mask.
  """

  def __init__(self, units=200, num_layers=2, **kwargs):
    super().__init__(**kwargs)
    self.units = int(units)
    self.num_layers = int(num_layers)
    self.supports_masking = True
    # One attribute per layer: TensorFlow checkpoints do not follow lists
    # of Keras 3 layers.
    for i in range(self.num_layers):
      setattr(self, f"bigru_{i}", keras.layers.Bidirectional(
          keras.layers.GRU(self.units, return_sequences=True),
          merge_mode="concat", name=f"bigru_{i}"))
    self.pool = masked_max_pooling.MaskedMaxPooling(name="max_over_time")

  @property
  def bigrus(self):
    return [getattr(self, f"bigru_{i}") for i in range(self.num_layers)]

  def build(self, input_shape):
    shape = tuple(input_shape)
    for bigru in self.bigrus:
      bigru.build(shape)
      shape = (*shape[:-1], 2 * self.units)
    self.built = True

  def call(self, inputs, mask=None):
    states = inputs
    for bigru in self.bigrus:
      states = bigru(states, mask=mask)
    return self.pool(states, mask=mask)

  def compute_mask(self, inputs, mask=None):
    return None

  def compute_output_shape(self, input_shape):
    return (input_shape[0], 2 * self.units)

  def get_config(self):
    config = super().get_config()
    config.update({"units": self.units, "num_layers": self.num_layers})
    return config
