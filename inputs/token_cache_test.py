"""Tests for the tokenised-corpus cache: it reads back what tokenising
computes, batches made from it equal those made from text (whole blocks and
distributed pieces), and it is rebuilt when stale or partial."""

import gzip
import os

import numpy as np
import tensorflow as tf

from sentzoo.inputs import sent2vec_data
from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import token_cache
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib

_WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "."]
_COUNTS = [1000, 400, 90, 60, 30, 20, 9, 4, 300]
_VOCAB = vocabulary_lib.Vocabulary(_WORDS, _COUNTS)
_LINES = ["The cat sat on the mat.", "a dog ran", "", "the dog sat on a cat",
          "cat", "zzz unknown words only", "a mat, the cat the dog ran on",
          "mat zzz on"]


def _featurizer():
  return sent2vec_featurizer.Sent2VecFeaturizer(
      _VOCAB, tokenizer_lib.Tokenizer(keep_punctuation=True), word_ngrams=2,
      num_buckets=97)


class TokenCacheTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.corpus = os.path.join(self.get_temp_dir(), "corpus.txt.gz")
    with gzip.open(self.corpus, "wt") as f:
      f.write("\n".join(_LINES * 9) + "\n")  # 72 lines.
    self.path = os.path.join(self.get_temp_dir(), "cache", "blocks.tfrecord")
    self.logs = []

  def _ensure(self, block_lines=20, featurizer=None):
    return token_cache.ensure(self.path, [self.corpus],
                              featurizer or _featurizer(), _VOCAB,
                              block_lines, log=self.logs.append)

  def test_cached_blocks_equal_tokenised_blocks(self):
    self._ensure()
    raw = list(token_cache.raw_blocks([self.corpus], _featurizer(), 20))
    cached = list(token_cache.blocks(self.path))
    self.assertLen(raw, 4)  # 20 + 20 + 20 + 12 lines.
    self.assertLen(cached, len(raw))
    for (raw_words, raw_tokens), (words, tokens) in zip(raw, cached):
      self.assertAllEqual(words.flat_values, raw_words.flat_values)
      self.assertAllEqual(words.row_lengths(), raw_words.row_lengths())
      self.assertAllEqual(tokens, raw_tokens)
      self.assertEqual(tokens.dtype, tf.int64)
    # Unknown words count as tokens but are not ids: "zzz unknown words
    # only" is 4 tokens, no word.
    self.assertEqual(int(cached[0][1][5]), 4)
    self.assertEqual(int(cached[0][0].row_lengths()[5]), 0)

  def test_batches_from_the_cache_equal_batches_from_text(self):
    self._ensure()
    keep = sent2vec_data.keep_probabilities(_COUNTS, sum(_COUNTS), 0.1, 1)
    cdf = sent2vec_data.negative_cdf(_COUNTS)
    args = dict(file_patterns=self.corpus, featurizer=_featurizer(),
                keep_prob=keep, cdf=cdf, dropout_k=1, block_lines=20,
                num_epochs=2, seed=3, negative_group=2)
    for extra in ({}, {"pieces": 4, "piece_lines": 5}):
      text = list(sent2vec_data.batch_dataset(**args, **extra))
      cached = list(sent2vec_data.batch_dataset(**args, **extra,
                                                token_cache=self.path))
      self.assertLen(cached, len(text))
      self.assertLen(text, 8 * (4 if extra else 1))
      for a, b in zip(text, cached):
        self.assertEqual(set(a), set(b))
        for name in a:
          self.assertAllEqual(a[name], b[name], msg=name)
      self.assertGreater(sum(int(tf.size(b["target_ids"])) for b in text), 50)

  def test_current_cache_is_reused_and_stale_one_rebuilt(self):
    self._ensure()
    written = os.stat(self.path).st_mtime_ns
    self.assertLen([l for l in self.logs if "tokenising" in l], 1)
    self._ensure()  # Current: not rewritten.
    self.assertEqual(os.stat(self.path).st_mtime_ns, written)
    self.assertLen([l for l in self.logs if "tokenising" in l], 1)
    self._ensure(block_lines=7)  # Another block size: rebuilt.
    self.assertLen(list(token_cache.blocks(self.path)), 11)  # ceil(72 / 7)
    other = sent2vec_featurizer.Sent2VecFeaturizer(
        _VOCAB, tokenizer_lib.Tokenizer(keep_punctuation=False))
    self._ensure(block_lines=7, featurizer=other)  # Another tokenizer.
    self.assertLen([l for l in self.logs if "tokenising" in l], 3)
    words = np.concatenate(
        [w.flat_values.numpy() for w, _ in token_cache.blocks(self.path)])
    self.assertNotIn(_WORDS.index(".") + 1, words)

  def test_partial_cache_is_rebuilt(self):
    # An interrupted run leaves its temporary file and, had it been
    # renamed, a cache without its fingerprint.
    os.makedirs(os.path.dirname(self.path))
    with open(self.path + ".tmp-1234", "wb") as f:
      f.write(b"partial")
    with open(self.path, "wb") as f:
      f.write(b"partial")
    self._ensure()
    self.assertFalse(os.path.exists(self.path + ".tmp-1234"))
    self.assertLen(list(token_cache.blocks(self.path)), 4)
    self.assertTrue(token_cache.is_current(
        self.path, token_cache.fingerprint([self.corpus], _featurizer(),
                                           _VOCAB, 20)))


if __name__ == "__main__":
  tf.test.main()
