"""Raw text -> character n-gram ids: shared by CHARAGRAM training and exports.

CHARAGRAM (Wieting, Bansal, Gimpel, Livescu, "CHARAGRAM: Embedding Words and
Sentences via Character n-grams", EMNLP 2016) represents a text by the
character n-grams of the text padded with one space on each side; n-grams
span word boundaries. The reference code (jwieting/charagram) builds a dense
|V|-wide count vector; here a text becomes a ragged row of n-gram ids (one id
per occurrence, so counts are kept), and the model gathers and sums rows of
its n-gram table. With sizes (1,) the same featuriser yields the character
sequence of the charCNN / charLSTM baselines.

Only core TensorFlow ops are used (`tf.strings.unicode_split`,
`tf.strings.ngrams`, `tf.lookup.StaticHashTable`,
`tf.strings.to_hash_bucket_fast`), so an export that calls the featuriser
loads in TF Serving and in processes that never imported tensorflow_text.
"""

import collections
import os

import tensorflow as tf

from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib

NGRAM_VOCABULARY_FILE = "ngrams.txt"


class CharNgramFeaturizer(tf.Module):
  """Maps raw strings to ragged character n-gram ids.

  Text normalisation: invalid UTF-8 is replaced; with `tokenize` the text
  goes through the project's one tokeniser (`inputs.tokenizer.Tokenizer`,
  punctuation kept as separate tokens) and its tokens are joined by single
  spaces; without it the text is only lower-cased (if `lowercase`) and its
  whitespace runs collapsed to single spaces. A non-empty normalised text t
  is padded to " " + t + " " (the boundary spaces) and split into Unicode
  characters; every n-gram of every size in `ngram_sizes` is one id. An
  empty (or whitespace-only) text has no n-grams.

  Ids (int32): 0 is never produced (it is the padding id of dense batches).
  * vocabulary mode (`vocabulary` given): n-gram k of the vocabulary (0-based)
    is id k + 1; unknown n-grams are dropped, or mapped to the one id
    `len(vocabulary) + 1` when `unknown_id`.
  * hashed mode (`num_buckets` > 0): id = 1 + fingerprint(n-gram) mod
    num_buckets; nothing is unknown.
  `num_ids` is the number of table rows a model needs (padding row included).

  Args:
    ngram_sizes: the n of the n-grams, e.g. (2, 3, 4) for phrases, (2, ..., 6)
      for words, (1,) for characters.
    vocabulary: `inputs.vocabulary.Vocabulary` of n-grams, or None.
    num_buckets: > 0 for hashed mode (then `vocabulary` must be None).
    unknown_id: map unknown n-grams to one extra id instead of dropping them.
    lowercase: lower-case the text.
    tokenize: normalise through the project tokeniser (see above).

  Example:
    >>> f = CharNgramFeaturizer((2,), num_buckets=100)
    >>> f.ngrams(tf.constant(["ab", ""]))
    <tf.RaggedTensor [[b' a', b'ab', b'b '], []]>
  """

  def __init__(self, ngram_sizes=(2, 3, 4), vocabulary=None, num_buckets=0,
               unknown_id=False, lowercase=True, tokenize=True, name=None):
    super().__init__(name=name)
    self.ngram_sizes = tuple(sorted({int(n) for n in ngram_sizes}))
    if not self.ngram_sizes or self.ngram_sizes[0] < 1:
      raise ValueError(f"ngram_sizes must be positive, got {ngram_sizes}")
    if (vocabulary is None) == (not num_buckets):
      raise ValueError("give exactly one of vocabulary and num_buckets > 0")
    self.num_buckets = int(num_buckets)
    self.unknown_id = bool(unknown_id)
    self.lowercase = bool(lowercase)
    self.tokenize = bool(tokenize)
    self.vocabulary_size = 0 if vocabulary is None else len(vocabulary)
    self._tokenizer = tokenizer_lib.Tokenizer(lowercase=self.lowercase,
                                              keep_punctuation=True)
    self.table = None if vocabulary is None else vocabulary.lookup_table()

  @property
  def num_ids(self):
    """Rows of an n-gram table: padding row 0, the ids, the unknown id."""
    if self.num_buckets:
      return self.num_buckets + 1
    return self.vocabulary_size + 1 + int(self.unknown_id)

  def normalize(self, texts, max_bytes=None, max_tokens=None):
    """tf.string [batch] -> normalised tf.string [batch] (no boundary pad).

    `max_bytes` cuts each text before anything else runs
    (`tokenizer.truncate_utf8`); `max_tokens` keeps its first tokens (the
    tokeniser's, or without `tokenize` its space-separated words). None: no
    cap.
    """
    texts = tf.convert_to_tensor(texts, tf.string)
    if self.tokenize:
      tokens = self._tokenizer.tokenize(texts, max_bytes=max_bytes,
                                        max_tokens=max_tokens)
      return tf.strings.reduce_join(tokens, axis=-1, separator=" ")
    if max_bytes:
      texts = tokenizer_lib.truncate_utf8(texts, max_bytes)
    texts = tokenizer_lib.clean_utf8(texts)
    if self.lowercase:
      texts = tf.strings.lower(texts, encoding="utf-8")
    texts = tf.strings.regex_replace(texts, r"[\s\pZ]+", " ")
    texts = tf.strings.strip(texts)
    if max_tokens:
      # Words are now separated by exactly one space.
      words = tf.strings.split(texts, sep=" ")[:, :max_tokens]
      texts = tf.strings.reduce_join(words, axis=-1, separator=" ")
    return texts

  def ngrams(self, texts, max_bytes=None, max_tokens=None):
    """tf.string [batch] -> n-gram strings [batch, (k)] of the capped text
    (`normalize`)."""
    texts = self.normalize(texts, max_bytes, max_tokens)
    padded = tf.where(tf.strings.length(texts) > 0,
                      tf.strings.join([" ", texts, " "]), texts)
    chars = tf.strings.unicode_split(padded, "UTF-8")
    return tf.strings.ngrams(chars, list(self.ngram_sizes), separator="")

  def __call__(self, texts, max_bytes=None, max_tokens=None):
    """tf.string [batch] -> int32 ragged [batch, (ids)], ids >= 1, of the
    capped text (`normalize`); an empty text has no ids."""
    grams = self.ngrams(texts, max_bytes, max_tokens)
    if self.num_buckets:
      ids = tf.strings.to_hash_bucket_fast(grams.flat_values,
                                           self.num_buckets) + 1
      return tf.cast(grams.with_flat_values(ids), tf.int32)
    ids = grams.with_flat_values(self.table.lookup(grams.flat_values))
    if self.unknown_id:
      ids = tf.where(ids > 0, ids,
                     tf.cast(self.vocabulary_size + 1, ids.dtype))
    else:
      ids = tf.ragged.boolean_mask(ids, ids > 0)
    return tf.cast(ids, tf.int32)

  def get_config(self):
    """The settings, without the vocabulary (stored in its own file)."""
    return {"ngram_sizes": list(self.ngram_sizes),
            "num_buckets": self.num_buckets, "unknown_id": self.unknown_id,
            "lowercase": self.lowercase, "tokenize": self.tokenize}

  @classmethod
  def from_config(cls, config, vocabulary=None):
    return cls(vocabulary=vocabulary, **config)


def build_ngram_vocabulary(texts, ngram_sizes, min_count=1, max_size=None):
  """The n-grams of `texts` seen at least `min_count` times, most frequent
  first (ties broken by the n-gram's text), counted with exactly the
  featuriser's code: an `inputs.vocabulary.Vocabulary`."""
  featurizer = CharNgramFeaturizer(ngram_sizes, num_buckets=1)
  ngrams_fn = tf.function(featurizer.ngrams,
                          input_signature=[tf.TensorSpec([None], tf.string)])
  counter = collections.Counter()
  texts = list(texts)
  for start in range(0, len(texts), 4096):
    grams = ngrams_fn(tf.constant(texts[start:start + 4096], tf.string))
    unique, _, counts = tf.unique_with_counts(grams.flat_values)
    counter.update(dict(zip(unique.numpy().tolist(), counts.numpy().tolist())))
  return vocabulary_lib.Vocabulary.from_counts(
      {g.decode("utf-8"): c for g, c in counter.items()}, min_count, max_size)


def vocabulary_path(model_dir):
  return os.path.join(model_dir, NGRAM_VOCABULARY_FILE)
