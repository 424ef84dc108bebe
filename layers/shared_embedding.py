"""Keras layer that looks up token ids in one shared, trainable matrix."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="sentzoo")
class SharedEmbedding(keras.layers.Layer):
  """Word-embedding lookup table shared by every input of a siamese model.

  Maps integer token ids to rows of a single trainable matrix `embeddings` of
  shape `[vocab_size, embedding_dim]`. In Siamese CBOW (Kenter, Borisov and de
  Rijke, "Siamese CBOW: Optimizing Word Embeddings for Sentence
  Representations", ACL 2016) this matrix is the only trainable parameter and
  the same instance embeds the sentence, its neighbours and the negatives.

  The lookup is a plain gather (`keras.ops.take`), so under the TensorFlow
  backend the gradient with respect to `embeddings` is a sparse
  `tf.IndexedSlices` holding only the looked-up rows, and an optimizer step
  touches only those rows.

  Masking: id `padding_id` means "no token". The layer produces a Keras mask
  `ids != padding_id` of shape `[..., length]`, which downstream layers such as
  `MaskedAverage` use to skip padding. The value of row `padding_id` is
  therefore irrelevant (it still exists and is gathered, but is masked out).
  With `padding_id=None` no mask is produced.

  Ids must lie in `[0, vocab_size)`. Out-of-range ids are not checked (the
  TensorFlow gather raises on CPU, returns zeros on GPU and clamps under XLA).

  Args:
    vocab_size: int. Number of rows of the embedding matrix.
    embedding_dim: int. Size of each embedding vector.
    embeddings_initializer: initializer for the matrix: a name, a config dict
      or a `keras.initializers.Initializer`. Defaults to `"uniform"`; the
      Siamese CBOW paper draws from a normal distribution with mean 0 and
      standard deviation 0.01: `keras.initializers.RandomNormal(stddev=0.01)`.
    padding_id: int or None. Token id that is masked out. Defaults to `0`.
    **kwargs: other keyword arguments passed to `keras.layers.Layer`,
      including `name`, `trainable` and `dtype`.

  Input shape:
    Integer tensor `[..., length]` (any integer dtype; non-int32/int64 inputs
    are cast to int32).

  Output shape:
    Float tensor `[..., length, embedding_dim]` in the layer's compute dtype,
    with a boolean Keras mask `[..., length]`.

  Example:

  >>> layer = SharedEmbedding(vocab_size=10, embedding_dim=4)
  >>> ids = np.array([[3, 5, 0], [7, 0, 0]])
  >>> layer(ids).shape
  TensorShape([2, 3, 4])
  >>> layer.compute_mask(ids)
  <tf.Tensor: shape=(2, 3), dtype=bool, numpy=
  array([[ True,  True, False],
         [ True, False, False]])>
  """

  def __init__(
      self,
      vocab_size,
      embedding_dim,
      embeddings_initializer="uniform",
      padding_id=0,
      **kwargs,
  ):
    super().__init__(**kwargs)
    self.vocab_size = int(vocab_size)
    self.embedding_dim = int(embedding_dim)
    self.embeddings_initializer = keras.initializers.get(
        embeddings_initializer)
    self.padding_id = None if padding_id is None else int(padding_id)
    self.supports_masking = self.padding_id is not None

  def build(self, input_shape=None):
    self.embeddings = self.add_weight(
        name="embeddings",
        shape=(self.vocab_size, self.embedding_dim),
        initializer=self.embeddings_initializer,
        trainable=True,
    )
    self.built = True

  def call(self, inputs):
    if inputs.dtype not in ("int32", "int64"):
      inputs = ops.cast(inputs, "int32")
    outputs = ops.take(self.embeddings, inputs, axis=0)
    return ops.cast(outputs, self.compute_dtype)

  def compute_mask(self, inputs, mask=None):
    if self.padding_id is None:
      return None
    return ops.not_equal(inputs, self.padding_id)

  def compute_output_shape(self, input_shape):
    return (*input_shape, self.embedding_dim)

  def get_config(self):
    config = super().get_config()
    config.update({
        "vocab_size": self.vocab_size,
        "embedding_dim": self.embedding_dim,
        "embeddings_initializer": keras.initializers.serialize(
            self.embeddings_initializer),
        "padding_id": self.padding_id,
    })
    return config
