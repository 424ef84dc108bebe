"""PARAGRAM-PHRASE (Wieting, Bansal, Gimpel, Livescu, ICLR 2016): the average of trainable word vectors."""

import keras

from sentzoo.layers import char_ngram_embedding


@keras.saving.register_keras_serializable(package="sentzoo")
class ParagramPhrase(keras.Model):
  """g(x) = mean of the word vectors of the known words of x.

  The baseline of the CHARAGRAM paper's sentence-similarity table (Wieting et
  al., EMNLP 2016, Table 1); the paper initialises the vectors from
  PARAGRAM-SL999, this project from a flag-named export (see
  `trainers/charagram.py`) or at random. Word ids come from
  `inputs.text_to_ids.TextToIds` (unknown words dropped).

  Args:
    vocab_size: rows of the table, including the padding row 0.
    embedding_dim: d.
    init_scale: U(-init_scale, init_scale) initial vectors (0: Glorot).

  Call:
    ids: int tf.RaggedTensor [batch, (ids)] (or dense with 0 as padding).
    Returns float32 [batch, d]; a text with no known word gives zeros.
  """

  def __init__(self, vocab_size, embedding_dim=300, init_scale=0.0,
               **kwargs):
    super().__init__(**kwargs)
    self.vocab_size = int(vocab_size)
    self.embedding_dim = int(embedding_dim)
    self.init_scale = float(init_scale)
    initializer = (keras.initializers.RandomUniform(-init_scale, init_scale)
                   if init_scale else "glorot_uniform")
    self.word_embedding = char_ngram_embedding.CharNgramEmbedding(
        self.vocab_size, self.embedding_dim, activation="linear",
        use_bias=False, combiner="mean", embeddings_initializer=initializer,
        name="word_embedding")

  def call(self, ids):
    return self.word_embedding(ids)

  def get_config(self):
    config = super().get_config()
    config.update({"vocab_size": self.vocab_size,
                   "embedding_dim": self.embedding_dim,
                   "init_scale": self.init_scale})
    return config
