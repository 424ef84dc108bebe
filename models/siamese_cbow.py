"""Siamese CBOW (Kenter, Borisov, de Rijke, ACL 2016): word embeddings trained to be averaged."""

import keras
from keras import ops

from sentzoo.layers import cosine_similarity
from sentzoo.layers import masked_average
from sentzoo.layers import shared_embedding
from sentzoo.layers import softmax_head


@keras.saving.register_keras_serializable(package="sentzoo")
class SiameseCBOW(keras.Model):
  """Predicts a sentence's neighbours from the average of its word embeddings.

  Every sentence of a group is embedded as the average of its word
  embeddings (one shared matrix W, the only trainable parameter; padding and
  unknown words never enter the average). The first sentence of the group is
  scored against the others by cosine, and a plain softmax over those cosines
  (no temperature) gives the predicted distribution that
  `losses.siamese_cbow_loss` compares with (1/|S+|, ..., 0, ...).

  Masking: id 0 is padding; a sentence with no real id embeds to the zero
  vector, whose cosine with anything is 0 (never NaN).

  Args:
    vocab_size: rows of W, including the padding row 0.
    embedding_dim: d (the paper: 300).
    init_stddev: W ~ N(0, init_stddev^2) (the paper and code: 0.01).

  Call:
    ids: int32 [batch, 1 + |S+| + |S-|, length], the sentence first, then
      its positives, then its negatives (`inputs.siamese_cbow_data` order).
    Returns float32 [batch, |S+| + |S-|]: softmax over the cosines.

  Example:
    >>> model = SiameseCBOW(vocab_size=1000, embedding_dim=8)
    >>> model(np.random.randint(0, 1000, size=(4, 5, 12))).shape
    TensorShape([4, 4])
  """

  def __init__(self, vocab_size, embedding_dim=300, init_stddev=0.01,
               **kwargs):
    super().__init__(**kwargs)
    self.vocab_size = vocab_size
    self.embedding_dim = embedding_dim
    self.init_stddev = init_stddev
    self.embedding = shared_embedding.SharedEmbedding(
        vocab_size, embedding_dim,
        embeddings_initializer=keras.initializers.RandomNormal(
            stddev=init_stddev),
        name="word_embeddings")
    self.average = masked_average.MaskedAverage(name="average")
    self.cosine = cosine_similarity.CosineSimilarity(name="cosine")
    self.softmax = softmax_head.SoftmaxHead(name="softmax")

  def build(self, input_shape=None):
    # Eagerly, where Keras would first build the layers while tracing
    # `call`: the table is then drawn a block of rows at a time
    # (`SharedEmbedding.build`).
    self.embedding.build()
    self.built = True

  def encode(self, ids):
    """Sentence embeddings: int ids [..., length] -> float32 [..., d]."""
    vectors = self.embedding(ids)
    return self.average(vectors, mask=self.embedding.compute_mask(ids))

  def score(self, sentences):
    """Sentence embeddings [batch, 1 + k, d] (the first is the centre) ->
    float32 [batch, k]: the softmax over the centre's cosines with the
    others. `call` is `score(encode(ids))`; the train step computes the
    averages its own way (`trainers.siamese_cbow_step`) and scores them
    here."""
    cosines = self.cosine([sentences[:, 0], sentences[:, 1:]])
    return self.softmax(cosines)

  def call(self, ids):
    return self.score(self.encode(ids))

  def get_config(self):
    config = super().get_config()
    config.update({"vocab_size": self.vocab_size,
                   "embedding_dim": self.embedding_dim,
                   "init_stddev": self.init_stddev})
    return config


def target_distribution(num_positives, num_negatives):
  """The paper's target: 1/|S+| on each positive, 0 on each negative: [k]."""
  return ops.concatenate([
      ops.full([num_positives], 1.0 / num_positives),
      ops.zeros([num_negatives])])
