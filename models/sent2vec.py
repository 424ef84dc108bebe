"""Sent2Vec (Pagliardini, Gupta, Jaggi, NAACL 2018): sentences as mean n-gram vectors."""

import keras
from keras import ops
import tensorflow as tf

_INIT_CHUNK_ROWS = 1 << 13


@keras.saving.register_keras_serializable(package="sentzoo")
class Sent2Vec(keras.Model):
  """Source vectors for words and hashed n-grams, target vectors for words.

  The sentence embedding v_S is the mean of the source vectors of the
  sentence's unigrams and n-grams R(S) (paper eq. 2). Training predicts each
  kept target word w_t from v_{S \\ {w_t}} with negative sampling
  (`trainers.sent2vec_step`), which updates the target vectors u_w.

  Source rows: 0 is padding/placeholder (kept at zero), 1..V words, then
  `num_buckets` hashed n-gram rows (`inputs.sent2vec_featurizer` ids).
  Init as the reference C++ code: source ~ uniform(-1/d, 1/d), targets zero.

  Masking: id 0 is padding; a sentence with no id embeds to zeros (no NaN).

  Args:
    vocab_size: word rows including the padding row (V + 1).
    num_buckets: hashed n-gram rows (0 for a unigram model).
    embedding_dim: d (the paper's book models: 700).

  Call:
    ids: int [batch, length] source ids, 0 = padding.
    Returns float32 [batch, d] sentence embeddings.

  Example:
    >>> model = Sent2Vec(vocab_size=100, num_buckets=50, embedding_dim=8)
    >>> model(np.array([[1, 2, 120, 0]])).shape
    TensorShape([1, 8])
  """

  def __init__(self, vocab_size, num_buckets=0, embedding_dim=700, **kwargs):
    super().__init__(**kwargs)
    self.vocab_size = vocab_size
    self.num_buckets = num_buckets
    self.embedding_dim = embedding_dim
    bound = 1.0 / embedding_dim
    self.source_embeddings = self.add_weight(
        shape=(vocab_size + num_buckets, embedding_dim), initializer="zeros",
        name="source_embeddings")
    # uniform(-1/d, 1/d) written in place, chunk by chunk, so a 5.9 GB table
    # never exists twice; row 0 (padding/placeholder) stays zero. Under a
    # tf.distribute strategy the table is mirrored: every local copy
    # (`.values`) gets the same chunk. A scatter, not `copy[a:b].assign`:
    # the slice assign first reads the whole table, and the next write then
    # copies it (copy on write), which left a second table's worth of memory
    # in the process.
    seed = keras.random.SeedGenerator()
    rows = vocab_size + num_buckets
    table = self.source_embeddings.value
    copies = getattr(table, "values", None) or (table,)
    for start in range(1, rows, _INIT_CHUNK_ROWS):
      end = min(rows, start + _INIT_CHUNK_ROWS)
      chunk = keras.random.uniform((end - start, embedding_dim), -bound,
                                   bound, seed=seed)
      for copy in copies:
        copy.scatter_update(tf.IndexedSlices(chunk, tf.range(start, end)))
    self.target_embeddings = self.add_weight(
        shape=(vocab_size, embedding_dim), initializer="zeros",
        name="target_embeddings")

  @property
  def source_rows(self):
    return self.vocab_size + self.num_buckets

  def call(self, ids):
    ids = ops.convert_to_tensor(ids, "int32")
    mask = ops.cast(ids > 0, "float32")
    # A lookup in the variable reads only the named rows; `ops.take`
    # reads the whole table first, a copy of it (the table is in
    # copy-on-read mode after its scattered init) that the CPU allocator
    # keeps in the process afterwards: 5.9 GB for the uni+bi table.
    # `embedding_lookup` (a gather for a tf.Variable) also reads a
    # ShardedVariable (--strategy=parameter_server) shard by shard.
    vectors = tf.nn.embedding_lookup(self.source_embeddings.value, ids)
    total = ops.sum(vectors * mask[..., None], axis=-2)
    count = ops.sum(mask, axis=-1, keepdims=True)
    return total / ops.maximum(count, 1.0)

  def get_config(self):
    config = super().get_config()
    config.update({"vocab_size": self.vocab_size,
                   "num_buckets": self.num_buckets,
                   "embedding_dim": self.embedding_dim})
    return config
