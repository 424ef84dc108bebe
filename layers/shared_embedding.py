"""Keras layer that looks up token ids in one shared, trainable matrix."""

import keras
from keras import ops
import tensorflow as tf

# Rows drawn per op when a normal table is filled a block at a time
# (`_fill_normal_rows`): 4096 x 300 floats are 4.9 MB.
_INIT_ROWS = 4096


@keras.saving.register_keras_serializable(package="sentzoo")
class SharedEmbedding(keras.layers.Layer):
  """Word-embedding lookup table shared by every input of a siamese model.

  Maps integer token ids to rows of a single trainable matrix `embeddings` of
  shape `[vocab_size, embedding_dim]`. In Siamese CBOW (Kenter, Borisov and de
  Rijke, "Siamese CBOW: Optimizing Word Embeddings for Sentence
  Representations", ACL 2016) this matrix is the only trainable parameter and
  the same instance embeds the sentence, its neighbours and the negatives.

  The lookup is a gather from the variable itself (`tf.gather` of the
  `tf.Variable`: a sparse read, `ResourceGather`), so the gradient with
  respect to `embeddings` is a sparse `tf.IndexedSlices` holding only the
  looked-up rows, an optimizer step touches only those rows, and a call
  never reads the whole table. `keras.ops.take` reads it first: once a
  sparse update or the in-place fill below has put the table in TensorFlow's
  copy-on-read mode, that read copies it at every call (110 MB for the
  Siamese CBOW book model; the trainer's held-out ranking made 127 such
  copies per evaluation and kept 256 MB of them resident).

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
      A seeded `RandomNormal` table built eagerly is drawn a block of rows
      at a time, in place, with the initializer's values bit for bit.
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
    shape = (self.vocab_size, self.embedding_dim)
    in_place = _fills_normal_rows(self.embeddings_initializer, shape)
    self.embeddings = self.add_weight(
        name="embeddings", shape=shape, trainable=True,
        initializer="zeros" if in_place else self.embeddings_initializer)
    if in_place:
      if not isinstance(self.embeddings.value, tf.Variable):
        # Keras defers making variables in a keras.StatelessScope.
        raise ValueError("a SharedEmbedding with a RandomNormal initializer "
                         "must be built outside a keras.StatelessScope.")
      _fill_normal_rows(self.embeddings.value, self.embeddings_initializer)
    self.built = True

  def call(self, inputs):
    if inputs.dtype not in ("int32", "int64"):
      inputs = ops.cast(inputs, "int32")
    outputs = tf.gather(self.embeddings.value, inputs)
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


def _fills_normal_rows(initializer, shape):
  """Whether `_fill_normal_rows` can set a table of `shape` to
  `initializer(shape)`: a seeded `RandomNormal`, a plain TensorFlow variable
  made now (eagerly, under no distribution strategy; in a traced function
  Keras builds the layer with the initializer itself) and a row of a
  multiple of 4 floats."""
  return (isinstance(initializer, keras.initializers.RandomNormal)
          and isinstance(initializer.seed, int)
          and keras.backend.backend() == "tensorflow"
          and tf.executing_eagerly() and not tf.distribute.has_strategy()
          and shape[1] % 4 == 0 and shape[0] > _INIT_ROWS)


def _fill_normal_rows(variable, initializer):
  """Sets the tf.Variable [n, d] to `initializer((n, d))`, a block of rows
  at a time.

  Drawn at once, `tf.random.stateless_normal` holds three tables (the draws,
  times stddev, plus mean): for Siamese CBOW's 92k x 300 table, 330 MB of
  TensorFlow's CPU memory pool for a 110 MB result, and the pool keeps them
  for the rest of the run. Its Philox draws are counter-based, four floats
  per counter step, so the rows from `start` on are the draws with the
  counter advanced by start * d / 4. A block at an offset is checked against
  the initializer's own draws first; if they differ (another TensorFlow or
  Keras), the table is drawn at once, as before.
  """
  n, d = variable.shape
  # The seed Keras derives from an integer seed (keras.random.normal:
  # draw_seed, then _cast_seed).
  seed = tf.cast(tf.math.floormod(
      tf.constant([initializer.seed, 0], tf.int64), tf.int32.max - 1),
                 tf.int32)
  key, counter, alg = tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=seed)

  def rows(start, count):
    low = counter[0] + tf.constant(start * d // 4, tf.uint64)
    high = counter[1] + tf.cast(low < counter[0], tf.uint64)  # carry
    draws = tf.raw_ops.StatelessRandomNormalV2(
        shape=[count, d], key=key, counter=tf.stack([low, high]), alg=alg,
        dtype=variable.dtype)
    return draws * initializer.stddev + initializer.mean

  probe = 8
  expected = initializer((2 * probe, d), variable.dtype)[probe:]
  if not bool(tf.reduce_all(tf.equal(rows(probe, probe), expected))):
    variable.assign(initializer((n, d), variable.dtype))
    return
  for start in range(0, n, _INIT_ROWS):
    count = min(_INIT_ROWS, n - start)
    # In place. Like a scatter, it leaves the variable in TensorFlow's
    # copy-on-read mode (a dense read copies the table), where training's
    # first sparse update puts it anyway.
    tf.raw_ops.ResourceStridedSliceAssign(
        ref=variable.handle, begin=[start], end=[start + count], strides=[1],
        value=rows(start, count))
