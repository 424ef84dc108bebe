"""CHARAGRAM (Wieting, Bansal, Gimpel, Livescu, EMNLP 2016): texts embedded by their character n-grams."""

import keras

from sentzoo.layers import char_ngram_embedding


@keras.saving.register_keras_serializable(package="sentzoo")
class Charagram(keras.Model):
  """g(x) = h(b + sum of the vectors of the character n-grams of x).

  The n-grams and their ids come from `inputs.char_ngrams.CharNgramFeaturizer`
  (boundary spaces, n in {2, 3, 4} for phrases and {2, ..., 6} for words in
  the paper); this model is the table W, the bias b and the activation h
  (tanh for CHARAGRAM-PHRASE, linear for CHARAGRAM words).

  Args:
    num_ids: rows of W (the featuriser's `num_ids`).
    embedding_dim: d (the paper: 300).
    activation: h, "tanh" or "linear".
    use_bias: add b.
    init_scale: W ~ U(-init_scale, init_scale); 0 for Glorot uniform.

  Call:
    ids: int tf.RaggedTensor [batch, (ids)] (or dense [batch, length] with 0
      as padding). Returns float32 [batch, d]; a text without known n-grams
      gives h(b), never NaN.
  """

  def __init__(self, num_ids, embedding_dim=300, activation="tanh",
               use_bias=True, init_scale=0.0, **kwargs):
    super().__init__(**kwargs)
    self.num_ids = int(num_ids)
    self.embedding_dim = int(embedding_dim)
    self.activation = activation
    self.use_bias = bool(use_bias)
    self.init_scale = float(init_scale)
    initializer = (keras.initializers.RandomUniform(-init_scale, init_scale)
                   if init_scale else "glorot_uniform")
    self.ngram_embedding = char_ngram_embedding.CharNgramEmbedding(
        self.num_ids, self.embedding_dim, activation=activation,
        use_bias=use_bias, embeddings_initializer=initializer,
        name="ngram_embedding")

  def call(self, ids):
    return self.ngram_embedding(ids)

  def get_config(self):
    config = super().get_config()
    config.update({"num_ids": self.num_ids,
                   "embedding_dim": self.embedding_dim,
                   "activation": self.activation, "use_bias": self.use_bias,
                   "init_scale": self.init_scale})
    return config
