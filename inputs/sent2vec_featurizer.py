"""Sent2Vec features: unigram ids plus hashed word n-gram ids, one mapping.

Sent2Vec (Pagliardini, Gupta, Jaggi, NAACL 2018) embeds a sentence as the
mean of the source vectors of its unigrams and word n-grams, the n-grams
hashed into `num_buckets` rows after the vocabulary. The same hash
(`hash_ngrams`, core integer ops on word ids) runs in the training pipeline
(`inputs.sent2vec_data`) and inside the exported graph (this module), so the
two cannot drift apart.

Ids: 0 is the padding/placeholder row, words are 1..V (`Vocabulary` ids),
n-grams are V + 1 + (hash mod num_buckets): the C++ code's layout, whose
dictionary starts with its placeholder word, so a table and its hash buckets
mean the same in both. Unknown words are dropped before
n-grams are formed (as the reference C++ code does).
"""

import tensorflow as tf

from sentzoo.inputs import ragged_rows
from sentzoo.inputs import tokenizer as tokenizer_lib

# The multiplier of fastText's word n-gram hash (h = h * 116049371 + id).
HASH_MULTIPLIER = 116049371


def hash_ngrams(windows, num_buckets):
  """Hashes word-id windows into buckets: int [..., n] -> int64 [...].

  The C++ sent2vec hash (`Dictionary::addNgrams`): h = a_1, then
  h = h * 116049371 + a_k in uint64 arithmetic (wrapping modulo 2^64) for
  k = 2..n, and the bucket is h mod num_buckets. The ids are the same as the
  C++ dictionary's, whose word 0 is its placeholder.

  Args:
    windows: integer tensor [..., n] of non-negative word ids (0 may stand
      for the placeholder token).
    num_buckets: positive int, number of hash buckets.

  Returns:
    int64 tensor [...] in [0, num_buckets).
  """
  windows = tf.cast(windows, tf.uint64)
  h = windows[..., 0]
  for k in range(1, windows.shape[-1]):
    h = h * HASH_MULTIPLIER + windows[..., k]
  return tf.cast(tf.math.floormod(h, num_buckets), tf.int64)


def _shifted(word_ids, k, order):
  """Rows of `word_ids[i][k : len_i - order + 1 + k]` (empty if too short)."""
  counts = tf.maximum(word_ids.row_lengths() - order + 1, 0)
  starts = word_ids.row_starts() + k
  return tf.gather(word_ids.flat_values,
                   tf.ragged.range(starts, starts + counts))


class Sent2VecFeaturizer(tf.Module):
  """Raw sentences -> source-table ids (unigrams, then hashed n-grams).

  A `TextToIds`-like module: `export.averaging_encoder` averages the rows it
  names, and the training pipeline calls `word_ids_and_line_tokens` and
  `hash_ngrams` of the same object. No n-gram dropout here (inference uses
  every n-gram).

  Example:
    >>> f = Sent2VecFeaturizer(Vocabulary(["a", "cat"], [9, 5]),
    ...                        word_ngrams=2, num_buckets=10)
    >>> f(tf.constant(["a cat", "dog"]))  # [[1, 2, 3 + h(1, 2)], []]

  Args:
    vocabulary: `inputs.vocabulary.Vocabulary`.
    tokenizer: `inputs.tokenizer.Tokenizer` (default settings if None).
    word_ngrams: largest n-gram order (1: unigrams only).
    num_buckets: hash buckets for n-grams (ignored when word_ngrams is 1).
  """

  def __init__(self, vocabulary, tokenizer=None, word_ngrams=1,
               num_buckets=0, name=None):
    super().__init__(name=name)
    if word_ngrams < 1:
      raise ValueError(f"word_ngrams must be >= 1, got {word_ngrams}")
    if word_ngrams > 1 and num_buckets < 1:
      raise ValueError("n-grams need num_buckets >= 1")
    self.tokenizer = tokenizer or tokenizer_lib.Tokenizer()
    # Word -> id (1-based), -1 if unknown; a tracked resource, so exports
    # carry it (core ops only).
    self.table = vocabulary.lookup_table()
    self.word_ngrams = word_ngrams
    self.num_buckets = num_buckets if word_ngrams > 1 else 0
    # Rows of the word part of the source table (padding row + V words).
    self.vocabulary_size = vocabulary.size_with_padding

  @property
  def source_rows(self):
    """Rows the source table needs: padding + words + buckets."""
    return self.vocabulary_size + self.num_buckets

  def word_ids_and_line_tokens(self, sentences, max_bytes=None,
                               max_tokens=None):
    """(int32 ragged [batch, (known words)], int64 [batch] tokens per line,
    unknown words included) of the lines capped by `Tokenizer.tokenize`."""
    tokens = self.tokenizer.tokenize(sentences, max_bytes=max_bytes,
                                     max_tokens=max_tokens)
    ids = tokens.with_flat_values(self.table.lookup(tokens.flat_values))
    ids = ragged_rows.keep_values(ids, ids.flat_values > 0)
    return tf.cast(ids, tf.int32), tokens.row_lengths()

  def __call__(self, sentences, max_bytes=None, max_tokens=None):
    """tf.string [batch] -> int32 ragged [batch, (ids)] of source rows:
    each row's unigram ids, then its hashed 2..word_ngrams-gram ids (the
    n-gram starting at word j is entry j of its order's part).

    With `max_tokens`, the n-grams are those of the first `max_tokens`
    tokens only (at most max_tokens x word_ngrams ids per sentence).
    """
    word_ids, _ = self.word_ids_and_line_tokens(sentences, max_bytes,
                                                max_tokens)
    pieces = [word_ids]
    for order in range(2, self.word_ngrams + 1):
      windows = tf.stack([_shifted(word_ids, k, order) for k in range(order)],
                         axis=-1)
      hashed = hash_ngrams(windows.flat_values, self.num_buckets)
      pieces.append(windows.with_flat_values(
          tf.cast(hashed + self.vocabulary_size, tf.int32)))
    return tf.concat(pieces, axis=1) if len(pieces) > 1 else word_ids
