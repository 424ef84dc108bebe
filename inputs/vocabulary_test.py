"""Tests for inputs.vocabulary."""

import collections
import contextlib
import gzip
import io
import os
import re

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib

CORPUS = [
    "The cat sat on the mat.",
    "The dog sat on the log!",
    "",
    "A cat, a dog, a bird: the end.",
    "Zebra zebra ZEBRA yak",
    "",
    "the the cat",
]


def _python_counts(lines, keep_punctuation=False):
  counter = collections.Counter()
  for line in lines:
    for token in re.findall(r"\w+|[^\w\s]", line.lower()):
      if keep_punctuation or re.match(r"\w", token):
        counter[token] += 1
  return counter


class VocabularyTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.dir = self.get_temp_dir()
    self.corpus = os.path.join(self.dir, "corpus.txt.gz")
    with gzip.open(self.corpus, "wt", encoding="utf-8") as f:
      f.write("\n".join(CORPUS) + "\n")

  def _build(self, **kwargs):
    return vocabulary_lib.build_vocabulary(
        self.corpus, tokenizer_lib.Tokenizer(
            keep_punctuation=kwargs.pop("keep_punctuation", False)),
        progress=False, **kwargs)

  def test_count_words(self):
    counter, sentences, tokens = vocabulary_lib.count_words(
        [self.corpus], tokenizer_lib.Tokenizer(), block_lines=2,
        progress=False)
    expected = _python_counts(CORPUS)
    self.assertEqual({w.decode(): c for w, c in counter.items()},
                     dict(expected))
    self.assertEqual(sentences, 5)
    self.assertEqual(tokens, sum(expected.values()))

  def test_progress_is_a_bar_on_a_terminal_and_the_total_in_a_log(self):
    for tty in (False, True):
      stderr = io.StringIO()
      stderr.isatty = lambda tty=tty: tty
      with contextlib.redirect_stderr(stderr):
        vocabulary_lib.count_words([self.corpus], tokenizer_lib.Tokenizer(),
                                   block_lines=2)
      text = stderr.getvalue()
      # The total, last on the line (after the cleared bar on a terminal);
      # a log file gets nothing else.
      self.assertRegex(text.split("\r")[-1], r"^counting words: 5 "
                       r"sentences, 27 tokens, \d+s\n$")
      if tty:
        self.assertStartsWith(text, "\rcounting words: 0 sentences")
      else:
        self.assertNotIn("\r", text)

  def test_build_with_min_count(self):
    vocabulary = self._build(min_count=2)
    # the 7, cat 3, a 3, zebra 3, dog 2, on 2, sat 2; ties sorted by word.
    self.assertEqual(vocabulary.words,
                     ["the", "a", "cat", "zebra", "dog", "on", "sat"])
    self.assertAllEqual(vocabulary.counts, [7, 3, 3, 3, 2, 2, 2])
    self.assertEqual(vocabulary.counts.dtype, np.int64)
    self.assertLen(vocabulary, 7)
    self.assertEqual(vocabulary.size_with_padding, 8)

  def test_build_matches_python_counts(self):
    expected = _python_counts(CORPUS, keep_punctuation=True)
    vocabulary = self._build(min_count=1, keep_punctuation=True)
    order = sorted(expected.items(), key=lambda wc: (-wc[1], wc[0]))
    self.assertEqual(vocabulary.words, [w for w, _ in order])
    self.assertAllEqual(vocabulary.counts, [c for _, c in order])
    self.assertIn(".", vocabulary.words)

  def test_build_with_max_size(self):
    vocabulary = self._build(min_count=1, max_size=3)
    self.assertEqual(vocabulary.words, ["the", "a", "cat"])
    self.assertAllEqual(vocabulary.counts, [7, 3, 3])

  def test_build_min_count_too_high_is_empty(self):
    vocabulary = self._build(min_count=100)
    self.assertEmpty(vocabulary.words)
    self.assertEqual(vocabulary.size_with_padding, 1)

  def test_from_counts_orders_by_count_then_text(self):
    counts = {"b": 3, "é": 3, "a": 3, "z": 5, "rare": 1}
    vocabulary = vocabulary_lib.Vocabulary.from_counts(counts, min_count=2)
    self.assertEqual(vocabulary.words, ["z", "a", "b", "é"])
    self.assertEqual(vocabulary.counts.tolist(), [5, 3, 3, 3])
    capped = vocabulary_lib.Vocabulary.from_counts(counts, max_size=2)
    self.assertEqual(capped.words, ["z", "a"])
    self.assertEmpty(vocabulary_lib.Vocabulary.from_counts({}).words)

  def test_save_load_round_trip(self):
    vocabulary = vocabulary_lib.Vocabulary(
        ["the", "café", "😀", "x_y"], [10, 5, 5, 1])
    path = os.path.join(self.dir, "vocab.txt")
    vocabulary.save(path)
    with open(path, encoding="utf-8") as f:
      self.assertEqual(f.read(), "the\t10\ncafé\t5\n😀\t5\nx_y\t1\n")
    self.assertEqual(
        [n for n in os.listdir(self.dir) if "vocab.txt" in n], ["vocab.txt"])
    loaded = vocabulary_lib.Vocabulary.load(path)
    self.assertEqual(loaded.words, vocabulary.words)
    self.assertAllEqual(loaded.counts, vocabulary.counts)

  def test_load_malformed_raises_data_format_error(self):
    path = os.path.join(self.dir, "bad.txt")
    bad_lines = ["word", "word\tx", "\t3", "a\tb\t3", "word\t-1", "word\t"]
    for bad in bad_lines:
      with open(path, "w", encoding="utf-8") as f:
        f.write(f"good\t5\nfine\t4\n{bad}\nlater\t1\n")
      with self.assertRaises(errors.DataFormatError) as context:
        vocabulary_lib.Vocabulary.load(path)
      self.assertIn(f"{path}:3", str(context.exception), repr(bad))
      self.assertEqual(context.exception.line_number, 3)
      self.assertIsInstance(context.exception, errors.UserError)

  def test_load_missing_file_raises_user_error(self):
    path = os.path.join(self.dir, "missing.txt")
    with self.assertRaisesRegex(errors.UserError, "missing.txt"):
      vocabulary_lib.Vocabulary.load(path)

  def test_words_and_counts_must_match(self):
    with self.assertRaises(ValueError):
      vocabulary_lib.Vocabulary(["a", "b"], [1])

  def test_lookup_table(self):
    vocabulary = vocabulary_lib.Vocabulary(["the", "cat", "café"], [3, 2, 1])
    table = vocabulary.lookup_table()
    ids = table.lookup(tf.constant(["the", "cat", "café", "dog", "", "The"]))
    self.assertEqual(ids.dtype, tf.int64)
    self.assertAllEqual(ids, [1, 2, 3, -1, -1, -1])
    self.assertEqual(vocabulary_lib.PADDING_ID, 0)
    with self.assertRaisesRegex(ValueError, "newline"):
      vocabulary_lib.Vocabulary(["a\nb"], [1]).lookup_table()


if __name__ == "__main__":
  tf.test.main()
