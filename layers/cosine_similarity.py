"""Keras layer that scores candidates by cosine similarity to a query."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="sentzoo")
class CosineSimilarity(keras.layers.Layer):
  """Cosine similarity of a query vector against one or `k` candidates.

  Siamese CBOW (Kenter, Borisov and de Rijke, ACL 2016) scores a sentence
  against its neighbours and sampled negatives by the cosine of their averaged
  embeddings; those cosines feed a softmax (`SoftmaxHead`).

  Each vector is normalised as `x * rsqrt(max(sum(x**2), epsilon))`, so an
  all-zero vector (for example the average of an empty sentence) has cosine 0
  with anything and finite gradients. Half-precision inputs are computed in
  float32 (an `epsilon` of 1e-12 underflows in float16) and cast back to the
  layer's compute dtype.

  Masking: not supported; the inputs are expected to be already pooled (e.g.
  by `MaskedAverage`, which does not propagate a mask).

  Args:
    epsilon: float. Lower bound on the squared norm used for normalisation.
      Defaults to `1e-12`.
    **kwargs: keyword arguments passed to `keras.layers.Layer`, including
      `name` and `dtype`.

  Call arguments:
    inputs: list `[query, candidates]`.

  Input shape:
    query `[batch, dim]`; candidates `[batch, k, dim]` or `[batch, dim]`.
    (More generally query `[..., dim]` and candidates `[..., k, dim]` or
    `[..., dim]` with the same leading dimensions.)

  Output shape:
    `[batch, k]` for candidates `[batch, k, dim]`, `[batch]` for candidates
    `[batch, dim]`.

  Example:

  >>> query = np.array([[1., 0.]])
  >>> candidates = np.array([[[2., 0.], [0., 3.], [0., 0.]]])
  >>> CosineSimilarity()([query, candidates])
  <tf.Tensor: shape=(1, 3), dtype=float32, numpy=array([[1., 0., 0.]], ...)>
  """

  def __init__(self, epsilon=1e-12, **kwargs):
    super().__init__(**kwargs)
    self.epsilon = float(epsilon)

  def _normalize(self, x):
    squared_norm = ops.sum(ops.square(x), axis=-1, keepdims=True)
    return x * ops.rsqrt(ops.maximum(squared_norm, self.epsilon))

  def call(self, inputs):
    query, candidates = inputs
    query_rank = len(query.shape)
    candidates_rank = len(candidates.shape)
    if candidates_rank not in (query_rank, query_rank + 1):
      raise ValueError(
          "`candidates` must have the rank of `query` ([batch, dim]) or one "
          f"more ([batch, k, dim]). Received query shape {query.shape} and "
          f"candidates shape {candidates.shape}.")
    dtype = query.dtype
    if dtype in ("float16", "bfloat16"):
      dtype = "float32"
    query = self._normalize(ops.cast(query, dtype))
    candidates = self._normalize(ops.cast(candidates, dtype))
    if candidates_rank == query_rank + 1:
      query = ops.expand_dims(query, axis=-2)
    cosine = ops.sum(query * candidates, axis=-1)
    return ops.cast(cosine, self.compute_dtype)

  def compute_output_shape(self, input_shape):
    query_shape, candidates_shape = input_shape
    if len(candidates_shape) == len(query_shape) + 1:
      return tuple(candidates_shape[:-1])
    return tuple(query_shape[:-1])

  def get_config(self):
    config = super().get_config()
    config.update({"epsilon": self.epsilon})
    return config
