"""Keras layer that averages vectors over the unmasked positions."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="sentzoo")
class MaskedAverage(keras.layers.Layer):
  """Mean of a sequence of vectors over its unmasked (real-token) positions.

  Computes the sentence embedding of Siamese CBOW (Kenter, Borisov and de
  Rijke, ACL 2016): the average of the word embeddings of a sentence, where
  padding is excluded and the sum is divided by the number of real tokens.

  Masking: takes the Keras mask `[..., length]` (from e.g. `SharedEmbedding`)
  through the `mask` argument; `True` (or non-zero) marks a real position.
  Masked positions are selected away with `where`, so their values never
  matter, even if they are not finite. A row with no unmasked position gives
  an all-zero vector with finite (zero) gradients, never NaN. With
  `mask=None` every position is averaged. The output carries no mask
  (`compute_mask` returns None).

  Args:
    **kwargs: keyword arguments passed to `keras.layers.Layer`, including
      `name` and `dtype`.

  Input shape:
    Float tensor `[..., length, dim]`, and optionally a mask `[..., length]`.

  Output shape:
    Float tensor `[..., dim]`.

  Example:

  >>> vectors = np.array([[[1., 2.], [3., 4.], [9., 9.]]])
  >>> mask = np.array([[True, True, False]])
  >>> MaskedAverage()(vectors, mask=mask)
  <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[2., 3.]], ...)>
  """

  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self.supports_masking = True

  def call(self, inputs, mask=None):
    if mask is None:
      return ops.mean(inputs, axis=-2)
    mask = ops.expand_dims(ops.cast(mask, "bool"), axis=-1)
    masked = ops.where(mask, inputs, ops.zeros_like(inputs))
    total = ops.sum(masked, axis=-2)
    count = ops.sum(ops.cast(mask, inputs.dtype), axis=-2)
    # An empty row has total 0 and count 0: dividing by max(count, 1) gives 0.
    return total / ops.maximum(count, ops.ones_like(count))

  def compute_mask(self, inputs, mask=None):
    return None

  def compute_output_shape(self, input_shape):
    return (*input_shape[:-2], input_shape[-1])
