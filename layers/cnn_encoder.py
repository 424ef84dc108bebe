"""Keras layer: groups of 1-D convolutions with masked max-over-time pooling."""

import keras
from keras import ops

from sentzoo.layers import masked_max_pooling


@keras.saving.register_keras_serializable(package="sentzoo")
class CNNEncoder(keras.layers.Layer):
  """Sentence encoder: convolutions of several widths, max over time.

  The CNN encoder of the hybrid siamese network (Nicosia and Moschitti,
  CIKM 2017, §4.1): "3 groups of 100 convolutional filters of size 1, 3 and
  5", after Kim (2014); each group is max-pooled over time and the groups are
  concatenated (300-d for the paper's setting). Convolutions use "same"
  padding with zeros, and a bias and `activation` (ReLU, as in Kim 2014).

  Masking: masked positions are set to zero before the convolutions (so a
  window that reaches past the last real token sees zeros, exactly as the
  "same" zero padding of an unpadded sentence) and are excluded from the max,
  so padding never changes an encoding. A row with no real token encodes to
  the zero vector.

  Args:
    filters: int. Filters per width (the paper: 100).
    kernel_sizes: sequence of int. Widths (the paper: 1, 3, 5).
    activation: activation of the convolutions (default "relu").
    **kwargs: passed to `keras.layers.Layer`.

  Input shape:
    Float tensor `[batch, length, dim]` and optionally a mask
    `[batch, length]`.

  Output shape:
    Float tensor `[batch, filters * len(kernel_sizes)]`; no mask.
  """

  def __init__(self, filters=100, kernel_sizes=(1, 3, 5), activation="relu",
               **kwargs):
    super().__init__(**kwargs)
    self.filters = int(filters)
    self.kernel_sizes = [int(k) for k in kernel_sizes]
    self.activation = keras.activations.get(activation)
    self.supports_masking = True
    # One attribute per layer: TensorFlow checkpoints do not follow lists
    # of Keras 3 layers.
    for i, k in enumerate(self.kernel_sizes):
      setattr(self, f"conv_{i}", keras.layers.Conv1D(
          self.filters, k, padding="same", activation=self.activation,
          name=f"conv_{k}"))
    self.pool = masked_max_pooling.MaskedMaxPooling(name="max_over_time")

  @property
  def convolutions(self):
    return [getattr(self, f"conv_{i}") for i in range(len(self.kernel_sizes))]

  def build(self, input_shape):
    for convolution in self.convolutions:
      convolution.build(input_shape)
    self.built = True

  def call(self, inputs, mask=None):
    if mask is not None:
      keep = ops.expand_dims(ops.cast(mask, "bool"), axis=-1)
      inputs = ops.where(keep, inputs, ops.zeros_like(inputs))
    # On an empty batch TensorFlow's convolution returns the input's channels
    # instead of its filters; one extra all-padding row keeps the shapes right
    # and is dropped at the end.
    batch_size = ops.shape(inputs)[0]
    inputs = ops.pad(inputs, [[0, 1], [0, 0], [0, 0]])
    if mask is not None:
      mask = ops.cast(ops.pad(ops.cast(mask, "int32"), [[0, 1], [0, 0]]),
                      "bool")
    pooled = [self.pool(convolution(inputs), mask=mask)
              for convolution in self.convolutions]
    return ops.concatenate(pooled, axis=-1)[:batch_size]

  def compute_mask(self, inputs, mask=None):
    return None

  def compute_output_shape(self, input_shape):
    return (input_shape[0], self.filters * len(self.kernel_sizes))

  def get_config(self):
    config = super().get_config()
    config.update({
        "filters": self.filters,
        "kernel_sizes": list(self.kernel_sizes),
        "activation": keras.activations.serialize(self.activation),
    })
    return config
