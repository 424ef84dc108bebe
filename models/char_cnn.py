"""charCNN: the character CNN baseline of CHARAGRAM (Wieting et al., EMNLP 2016, Table 1)."""

import keras
import tensorflow as tf


def dense_character_ids(ids):
  """int RaggedTensor [batch, (chars)] or dense -> (int32 [batch, length], bool mask).

  Ragged rows are padded with 0; dense inputs take 0 as padding.
  """
  if isinstance(ids, tf.RaggedTensor):
    ids = ids.to_tensor(default_value=0)
  ids = tf.cast(ids, tf.int32)
  return ids, tf.not_equal(ids, 0)


@keras.saving.register_keras_serializable(package="sentzoo")
class CharCNN(keras.Model):
  """Character embeddings -> convolutions -> max over time -> dense.

  The CHARAGRAM paper's charCNN baseline: 300-d character embeddings, filters
  of several widths (the reference code: widths 2-4, 175 filters each),
  max-over-time pooling, then one fully connected layer to d; the filter and
  output activations are tuned (relu/tanh, tanh/linear).

  Characters come from `inputs.char_ngrams.CharNgramFeaturizer` with
  ngram_sizes=(1,) (boundary spaces, lower-cased, unknown characters mapped
  to one id). Convolutions are "same"-padded; positions past a text's end
  never win the max; a text with no character pools to zeros, so its output
  is activation(bias), never NaN.

  Args:
    num_ids: character table rows (padding row 0 included).
    char_dim: character embedding size (the paper: 300).
    filter_widths: convolution widths.
    filters_per_width: filters of each width.
    filter_activation: "relu" or "tanh".
    embedding_dim: d.
    output_activation: "tanh" or "linear".

  Call:
    ids: int RaggedTensor [batch, (chars)] or dense [batch, length] (0 pads).
    Returns float32 [batch, d].
  """

  def __init__(self, num_ids, char_dim=300, filter_widths=(2, 3, 4),
               filters_per_width=175, filter_activation="relu",
               embedding_dim=300, output_activation="tanh", **kwargs):
    super().__init__(**kwargs)
    self.num_ids = int(num_ids)
    self.char_dim = int(char_dim)
    self.filter_widths = tuple(int(w) for w in filter_widths)
    self.filters_per_width = int(filters_per_width)
    self.filter_activation = filter_activation
    self.embedding_dim = int(embedding_dim)
    self.output_activation = output_activation
    self.char_embedding = keras.layers.Embedding(
        self.num_ids, self.char_dim, name="char_embedding")
    # One attribute per convolution: a Python list of layers is tracked by
    # Keras but not by tf.train.Checkpoint, whose checkpoints would then
    # lack the filters.
    for width in self.filter_widths:
      setattr(self, f"conv{width}", keras.layers.Conv1D(
          self.filters_per_width, width, padding="same",
          activation=filter_activation, name=f"conv{width}"))
    self.projection = keras.layers.Dense(
        self.embedding_dim, activation=output_activation, name="projection")

  @property
  def convolutions(self):
    return [getattr(self, f"conv{width}") for width in self.filter_widths]

  def call(self, ids):
    ids, mask = dense_character_ids(ids)
    # On an empty input (no texts, or only empty texts) Conv1D returns the
    # input's channels instead of its filters; one extra empty row and one
    # extra masked position keep the shapes right and change no output (the
    # extra row is dropped at the end).
    batch_size = tf.shape(ids)[0]
    short = tf.maximum(1 - tf.shape(ids)[1], 0)
    ids = tf.pad(ids, [[0, 1], [0, short]])
    mask = tf.pad(mask, [[0, 1], [0, short]])
    # Zero vectors past the end, as the convolutions' own "same" padding, so
    # a text's output does not depend on the batch's padded length.
    chars = self.char_embedding(ids) * tf.cast(mask, tf.float32)[..., None]
    pooled = []
    has_any = tf.reduce_any(mask, axis=1, keepdims=True)
    for conv in self.convolutions:
      features = conv(chars)
      features = tf.where(mask[..., None], features,
                          tf.fill(tf.shape(features), features.dtype.min))
      best = tf.reduce_max(features, axis=1)
      pooled.append(tf.where(has_any, best, tf.zeros_like(best)))
    return self.projection(tf.concat(pooled, axis=-1))[:batch_size]

  def get_config(self):
    config = super().get_config()
    config.update({"num_ids": self.num_ids, "char_dim": self.char_dim,
                   "filter_widths": list(self.filter_widths),
                   "filters_per_width": self.filters_per_width,
                   "filter_activation": self.filter_activation,
                   "embedding_dim": self.embedding_dim,
                   "output_activation": self.output_activation})
    return config
