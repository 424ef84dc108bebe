"""Word vocabularies: built by streaming a corpus, stored as `word<TAB>count` lines.

Line k of a vocabulary file (0-based) is word id k + 1; id 0 is reserved for
padding ("no token"). Words are sorted by descending count, then bytes.
"""

import collections
import os
import sys
import time

import numpy as np
import tensorflow as tf
import tqdm

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.inputs import corpus as corpus_lib

PADDING_ID = 0


class Vocabulary:
  """An ordered word list with counts; word id = position + 1."""

  def __init__(self, words, counts):
    if len(words) != len(counts):
      raise ValueError("words and counts differ in length")
    self.words = list(words)
    self.counts = np.asarray(counts, dtype=np.int64)

  def __len__(self):
    return len(self.words)

  @classmethod
  def from_counts(cls, counts, min_count=1, max_size=None):
    """The words of {word: count} seen at least `min_count` times, by
    descending count, then text; the first `max_size` when it is set."""
    kept = sorted(((w, c) for w, c in counts.items() if c >= min_count),
                  key=lambda wc: (-wc[1], wc[0]))
    kept = kept[:max_size] if max_size else kept
    return cls([w for w, _ in kept], [c for _, c in kept])

  @property
  def size_with_padding(self):
    """Rows an embedding table needs: one per word plus the padding row."""
    return len(self.words) + 1

  def save(self, path):
    """Writes `word<TAB>count` lines atomically."""
    model_dir_lib.write_text_atomically(path, "".join(
        f"{word}\t{count}\n"
        for word, count in zip(self.words, self.counts.tolist())))

  @classmethod
  def load(cls, path):
    """Reads a file written by `save`; malformed lines name file and line."""
    if not os.path.exists(path):
      raise errors.UserError(f"vocabulary file {path!r} does not exist")
    words, counts = [], []
    with open(path, encoding="utf-8") as f:
      for line_number, line in enumerate(f, start=1):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 2 or not parts[0] or not parts[1].isdigit():
          raise errors.DataFormatError(
              path, line_number, "expected 'word<TAB>count'")
        words.append(parts[0])
        counts.append(int(parts[1]))
    return cls(words, counts)

  def lookup_table(self):
    """A `tf.lookup.StaticHashTable` word -> id (1-based), -1 if unknown."""
    return tf.lookup.StaticHashTable(_JoinedKeysInitializer(self.words),
                                     default_value=-1)


class _JoinedKeysInitializer(tf.lookup.KeyValueTensorInitializer):
  """Keys: the words, one "\n"-joined string split when the table is made;
  values: 1..n.

  A SavedModel then holds one string constant instead of a constant of n
  strings, which TensorFlow builds a word at a time: saving a vocabulary of
  1.5M words took 3.2 s and 0.3 GB more memory that way, 1.4 s and 0.19 GB
  this way. The words never hold "\n" (vocab.txt has one a line).
  """

  def __init__(self, words):  # pylint: disable=super-init-not-called
    joined = "\n".join(words)
    if joined.count("\n") != max(len(words) - 1, 0):
      raise ValueError("a vocabulary word holds a newline")
    self._joined = tf.constant(joined)
    self._size = len(words)
    # The base of KeyValueTensorInitializer: keys and values are made here.
    super(tf.lookup.KeyValueTensorInitializer, self).__init__(tf.string,
                                                              tf.int64)

  def initialize(self, table):
    keys = tf.strings.split(self._joined, "\n")[:self._size]
    return tf.raw_ops.LookupTableImportV2(
        table_handle=table.resource_handle, keys=keys,
        values=tf.range(1, self._size + 1, dtype=tf.int64))


def count_words(file_patterns, tokenizer, block_lines=8192, progress=True):
  """Counts the tokens of a corpus by streaming it through `tokenizer`.

  Memory holds the counts and one block of lines, whatever the corpus size.

  Returns:
    (collections.Counter of word -> count, number of non-empty lines,
     number of tokens).
  """
  files = corpus_lib.list_files(file_patterns)
  dataset = corpus_lib.line_dataset(files).batch(block_lines)

  @tf.function
  def block_counts(lines):
    tokens = tokenizer.tokenize(lines)
    unique, _, counts = tf.unique_with_counts(tokens.flat_values)
    non_empty = tf.reduce_sum(tf.cast(tokens.row_lengths() > 0, tf.int64))
    return unique, counts, non_empty

  counter = collections.Counter()
  sentences = tokens = 0
  start = time.time()
  # A bar on a terminal; in a log file, only the total.
  bar = tqdm.tqdm(desc="counting words", unit=" sentences", leave=False,
                  disable=not (progress and sys.stderr.isatty()),
                  file=sys.stderr)
  dataset = dataset.map(block_counts, num_parallel_calls=tf.data.AUTOTUNE)
  for unique, counts, non_empty in dataset.prefetch(
      tf.data.AUTOTUNE).as_numpy_iterator():
    counter.update(dict(zip(unique.tolist(), counts.tolist())))
    sentences += int(non_empty)
    tokens += int(counts.sum())
    bar.update(int(non_empty))
  bar.close()
  if progress:
    print(f"counting words: {sentences:,} sentences, {tokens:,} tokens, "
          f"{time.time() - start:.0f}s", file=sys.stderr, flush=True)
  return counter, sentences, tokens


def build_vocabulary(file_patterns, tokenizer, min_count=5, max_size=None,
                     progress=True):
  """Streams a corpus and keeps the words seen at least `min_count` times."""
  counter, _, _ = count_words(file_patterns, tokenizer, progress=progress)
  return from_token_counts(counter, min_count, max_size)


def from_token_counts(counter, min_count=5, max_size=None):
  """The vocabulary of {token bytes: count} (`count_words`' counter)."""
  # UTF-8 bytes sort as their text does: the order is that of the bytes.
  return Vocabulary.from_counts(
      {w.decode("utf-8"): c for w, c in counter.items() if c >= min_count},
      min_count, max_size)
