"""Keras layer h(b + sum of n-gram vectors): the CHARAGRAM embedding."""

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="sentzoo")
class CharNgramEmbedding(keras.layers.Layer):
  """Sums the rows of an n-gram table named by each text's ids, adds a bias, applies h.

  CHARAGRAM (Wieting, Bansal, Gimpel, Livescu, EMNLP 2016) embeds a text x
  as g(x) = h(b + sum_{t in ngrams(x)} W_t). The reference code multiplies a
  dense |V|-wide count vector by W; this layer computes the same function as
  a sparse gather-sum (`tf.gather` + `unsorted_segment_sum`), so its cost is
  the number of n-grams, not |V|, and the gradient of W is an
  `IndexedSlices` of the gathered rows. With `activation="linear"`,
  `use_bias=False` and a mean instead of a sum it would be a word average;
  PARAGRAM-PHRASE uses `combiner="mean"`.

  Masking: the ids come as a `tf.RaggedTensor` (the output of
  `inputs.char_ngrams.CharNgramFeaturizer`), or as a dense padded tensor
  with a boolean `mask` (positions where the mask is False, or ids equal to
  `padding_id` when no mask is given, are left out). A text with no id gives
  h(b) (the zero vector with a linear h and no bias), never NaN.

  Args:
    num_ids: rows of the table W (ids must lie in [0, num_ids)).
    embedding_dim: d (the paper: 300).
    activation: h, a Keras activation name ("tanh" for phrases, "linear" for
      words in the paper).
    use_bias: add the bias b.
    combiner: "sum" (CHARAGRAM) or "mean" (average of the rows; empty rows
      give h(b)).
    embeddings_initializer: initializer of W.
    padding_id: id treated as "no n-gram" in dense inputs without a mask.

  Input shape:
    int tf.RaggedTensor [batch, (ids)], or int Tensor [batch, length] with an
    optional bool mask [batch, length].

  Output shape:
    float [batch, embedding_dim].
  """

  def __init__(self, num_ids, embedding_dim=300, activation="tanh",
               use_bias=True, combiner="sum",
               embeddings_initializer="glorot_uniform", padding_id=0,
               **kwargs):
    super().__init__(**kwargs)
    if combiner not in ("sum", "mean"):
      raise ValueError(f"combiner must be 'sum' or 'mean', got {combiner!r}")
    self.num_ids = int(num_ids)
    self.embedding_dim = int(embedding_dim)
    self.activation = keras.activations.get(activation)
    self.use_bias = bool(use_bias)
    self.combiner = combiner
    self.embeddings_initializer = keras.initializers.get(
        embeddings_initializer)
    self.padding_id = None if padding_id is None else int(padding_id)
    self.supports_masking = True

  def build(self, input_shape=None):
    self.embeddings = self.add_weight(
        name="embeddings", shape=(self.num_ids, self.embedding_dim),
        initializer=self.embeddings_initializer, trainable=True)
    if self.use_bias:
      self.bias = self.add_weight(name="bias", shape=(self.embedding_dim,),
                                  initializer="zeros", trainable=True)
    self.built = True

  def call(self, ids, mask=None):
    if isinstance(ids, tf.RaggedTensor):
      rows = tf.gather(self.embeddings, ids.flat_values)
      sums = tf.math.unsorted_segment_sum(rows, ids.value_rowids(),
                                          num_segments=ids.nrows())
      counts = tf.cast(ids.row_lengths(), sums.dtype)[:, None]
    else:
      ids = tf.convert_to_tensor(ids)
      if mask is None:
        mask = (tf.ones_like(ids, tf.bool) if self.padding_id is None
                else tf.not_equal(ids, self.padding_id))
      weights = tf.cast(mask, self.embeddings.dtype)[..., None]
      safe_ids = tf.where(mask, ids, tf.zeros_like(ids))
      sums = tf.reduce_sum(tf.gather(self.embeddings, safe_ids) * weights,
                           axis=-2)
      counts = tf.reduce_sum(weights, axis=-2)
    if self.combiner == "mean":
      sums = sums / tf.maximum(counts, 1.0)
    if self.use_bias:
      sums = sums + self.bias
    return tf.cast(self.activation(sums), self.compute_dtype)

  def compute_mask(self, ids, mask=None):
    return None

  def compute_output_shape(self, input_shape):
    return (input_shape[0], self.embedding_dim)

  def get_config(self):
    config = super().get_config()
    config.update({
        "num_ids": self.num_ids,
        "embedding_dim": self.embedding_dim,
        "activation": keras.activations.serialize(self.activation),
        "use_bias": self.use_bias,
        "combiner": self.combiner,
        "embeddings_initializer": keras.initializers.serialize(
            self.embeddings_initializer),
        "padding_id": self.padding_id,
    })
    return config
