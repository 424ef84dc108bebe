"""charLSTM: the character LSTM baseline of CHARAGRAM (Wieting et al., EMNLP 2016, Table 1)."""

import keras
import tensorflow as tf

from sentzoo.models import char_cnn


@keras.saving.register_keras_serializable(package="sentzoo")
class CharLSTM(keras.Model):
  """Character embeddings -> LSTM -> the last hidden state.

  The CHARAGRAM paper's charLSTM baseline (300-d character embeddings, the
  hidden state after the last character as the embedding). The paper tunes
  whether the LSTM has an output gate; Keras' LSTM always has one, so only
  the gated variant is built here.

  Characters come from `inputs.char_ngrams.CharNgramFeaturizer` with
  ngram_sizes=(1,). Padding (id 0) is masked, so the state is the one after a
  text's own last character; a text with no character gives zeros (never
  NaN).

  Args:
    num_ids: character table rows (padding row 0 included).
    char_dim: character embedding size.
    embedding_dim: d, the LSTM's units.

  Call:
    ids: int RaggedTensor [batch, (chars)] or dense [batch, length] (0 pads).
    Returns float32 [batch, d].
  """

  def __init__(self, num_ids, char_dim=300, embedding_dim=300, **kwargs):
    super().__init__(**kwargs)
    self.num_ids = int(num_ids)
    self.char_dim = int(char_dim)
    self.embedding_dim = int(embedding_dim)
    self.char_embedding = keras.layers.Embedding(
        self.num_ids, self.char_dim, name="char_embedding")
    self.lstm = keras.layers.LSTM(self.embedding_dim, name="lstm")

  def call(self, ids):
    ids, mask = char_cnn.dense_character_ids(ids)
    ids = tf.pad(ids, [[0, 0], [0, 1]])  # Length >= 1 even for empty batches.
    mask = tf.pad(mask, [[0, 0], [0, 1]])
    state = self.lstm(self.char_embedding(ids), mask=mask)
    has_any = tf.reduce_any(mask, axis=1, keepdims=True)
    return tf.where(has_any, state, tf.zeros_like(state))

  def get_config(self):
    config = super().get_config()
    config.update({"num_ids": self.num_ids, "char_dim": self.char_dim,
                   "embedding_dim": self.embedding_dim})
    return config
