"""Keras layer that turns similarity scores into probabilities."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="sentzoo")
class SoftmaxHead(keras.layers.Layer):
  """Softmax over the last axis of (optionally scaled) similarity scores.

  Siamese CBOW (Kenter, Borisov and de Rijke, ACL 2016) applies a plain
  softmax to the raw cosines between a sentence and its positives and
  negatives, then trains with categorical cross-entropy against the target
  distribution (1/|S+| on each positive, 0 on each negative). That is
  `scale=1.0`: no temperature and no trainable parameters. Other values of
  `scale` multiply the scores before the softmax (an inverse temperature).

  Masking: not supported.

  Args:
    scale: float. Fixed multiplier of the scores. Defaults to `1.0`.
    **kwargs: keyword arguments passed to `keras.layers.Layer`, including
      `name` and `dtype`.

  Input shape:
    Float tensor `[batch, k]` (any rank; the softmax is over the last axis).

  Output shape:
    Same as the input; each row is non-negative and sums to 1.

  Example:

  >>> SoftmaxHead()(np.array([[0.9, 0.8, -0.1, 0.0]]))
  <tf.Tensor: shape=(1, 4), dtype=float32, numpy=...>
  """

  def __init__(self, scale=1.0, **kwargs):
    super().__init__(**kwargs)
    self.scale = float(scale)

  def call(self, inputs):
    if self.scale != 1.0:
      inputs = inputs * ops.cast(self.scale, inputs.dtype)
    return ops.softmax(inputs, axis=-1)

  def compute_output_shape(self, input_shape):
    return input_shape

  def get_config(self):
    config = super().get_config()
    config.update({"scale": self.scale})
    return config
