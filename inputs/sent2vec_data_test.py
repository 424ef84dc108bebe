"""Tests for the Sent2Vec batch pipeline: parity with the export featurizer,
subsampling and negative-table statistics, the per-line hash of the draws
(uniformity; a block and its pieces draw the same), n-gram dropout,
contexts, pieces for distributed training."""

import collections
import gzip
import os
import re
from unittest import mock

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.inputs import ragged_rows
from sentzoo.inputs import sent2vec_data
from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.tests import sent2vec_fixtures

_WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran"]
_COUNTS = [1000, 400, 90, 60, 30, 20, 9, 4]
_VOCAB = vocabulary_lib.Vocabulary(_WORDS, _COUNTS)
_LINES = ["the cat sat on the mat", "a dog ran", "", "the dog sat on a cat",
          "cat", "zzz unknown words only", "a mat the cat the dog ran on",
          "mat zzz on"]


def _featurizer(ngrams, buckets=97):
  return sent2vec_featurizer.Sent2VecFeaturizer(
      _VOCAB, word_ngrams=ngrams, num_buckets=buckets if ngrams > 1 else 0)


def _batch(ngrams, sample=0.0, dropout_k=0, context="remove", seed=(1, 2),
           lines=_LINES, group=1, min_count_label=1, first_line=0):
  keep = sent2vec_data.keep_probabilities(_COUNTS, sum(_COUNTS), sample,
                                          min_count_label)
  cdf = sent2vec_data.negative_cdf(_COUNTS)
  return sent2vec_fixtures.make_batch(
      tf.constant(lines), _featurizer(ngrams), keep, cdf, num_negatives=5,
      dropout_k=dropout_k, context=context, seed=seed, negative_group=group,
      first_line=first_line)


# 99.99% quantiles of chi-square (scipy.stats.chi2.ppf(0.9999, df)): a
# correct sampler fails these bounds once in 10,000 runs; the draws are
# deterministic, so a test either always passes or always fails.
_CHI2_9999 = {7: 29.88, 19: 46.72}


def _chi2(observed, expected):
  observed = np.asarray(observed, np.float64)
  expected = np.asarray(expected, np.float64)
  return float(((observed - expected) ** 2 / expected).sum())


def _target_keys(num_lines, per_line, seed=(5, 6)):
  """Keys as `make_batch` makes them: consecutive lines x positions."""
  lines = sent2vec_data.line_keys(seed, sent2vec_data.NEGATIVE_STREAM,
                                  tf.range(num_lines, dtype=tf.int64))
  return tf.reshape(sent2vec_data.splitmix(
      tf.repeat(lines, per_line),
      tf.tile(tf.range(per_line, dtype=tf.int64), [num_lines])), [-1])


def _source_rows(batch):
  """Source ids grouped by sentence: list of sorted lists."""
  rows = collections.defaultdict(list)
  for i, r in zip(batch["source_ids"].numpy(), batch["source_row"].numpy()):
    rows[int(r)].append(int(i))
  return [sorted(rows[r]) for r in sorted(rows)]


class TablesTest(tf.test.TestCase):

  def test_keep_probabilities(self):
    keep = sent2vec_data.keep_probabilities([100, 2, 1], 1000, 1e-3, 2)
    self.assertEqual(keep[0], 0.0)  # Padding is never a target.
    ratio = 1e-3 * 1000 / 100.0
    self.assertAllClose(keep[1], np.sqrt(ratio) + ratio)
    self.assertAllClose(keep[2], 1.0)  # min(1, ...)
    self.assertEqual(keep[3], 0.0)  # Below min_count_label.
    self.assertAllClose(
        sent2vec_data.keep_probabilities([100, 10], 1000, 0.0, 1), [0, 1, 1])

  def test_negative_frequencies_follow_sqrt_counts(self):
    cdf = tf.constant(sent2vec_data.negative_cdf(_COUNTS))
    # Keys of 4,000 consecutive lines x 5 target positions: the structured
    # inputs the hash must scramble.
    keys = _target_keys(4000, 5)
    targets = tf.fill([20000], 0)  # No word has id 0: nothing redrawn.
    negatives, weights = sent2vec_data.sample_negatives(targets, cdf, 5, keys)
    self.assertAllEqual(weights, tf.ones_like(weights))
    counts = np.bincount(negatives.numpy().ravel(), minlength=9)[1:]
    want = np.sqrt(_COUNTS) / np.sqrt(_COUNTS).sum()
    self.assertAllClose(counts / 1e5, want, atol=0.006)
    self.assertLess(_chi2(counts, want * 1e5), _CHI2_9999[7])
    self.assertGreater(negatives.numpy().min(), 0)
    # Each column (draw index) alone follows the table too.
    for column in range(5):
      counts = np.bincount(negatives.numpy()[:, column], minlength=9)[1:]
      self.assertLess(_chi2(counts, want * 2e4), _CHI2_9999[7])

  def test_hashed_uniforms_are_uniform_and_independent(self):
    keys = _target_keys(2000, 10)  # 20,000 keys, 5 counters each.
    for dtype in (tf.float64, tf.float32):
      u = sent2vec_data.uniform(
          keys[:, None], tf.range(5, dtype=tf.int64)[None, :], dtype).numpy()
      self.assertEqual(u.dtype, dtype.as_numpy_dtype)
      self.assertTrue(((u >= 0) & (u < 1)).all())
      counts = np.histogram(u, bins=20, range=(0, 1))[0]
      self.assertLess(_chi2(counts, np.full(20, u.size / 20)),
                      _CHI2_9999[19])
      # Neighbouring counters, positions and lines are uncorrelated
      # (|r| < 4.5 standard errors of 1 / sqrt(n)).
      flat = u.reshape(2000, 10, 5)
      for a, b in ((flat[..., :-1], flat[..., 1:]),
                   (flat[:, :-1], flat[:, 1:]), (flat[:-1], flat[1:])):
        r = np.corrcoef(a.ravel(), b.ravel())[0, 1]
        self.assertLess(abs(r), 4.5 / np.sqrt(a.size))
    # Distinct seeds and streams give distinct draws.
    lines = tf.range(100, dtype=tf.int64)
    a = sent2vec_data.line_keys((0, 0), 1, lines).numpy()
    for seed, stream in (((1, 0), 1), ((0, 1), 1), ((0, 0), 2)):
      b = sent2vec_data.line_keys(seed, stream, lines).numpy()
      self.assertEqual(len(set(a) & set(b)), 0)

  def test_negatives_equal_to_the_target_are_redrawn(self):
    cdf = tf.constant(sent2vec_data.negative_cdf(_COUNTS))
    targets = tf.fill([5000], 1)  # "the": about 1/4 of the draws.
    negatives, weights = sent2vec_data.sample_negatives(
        targets, cdf, 5, _target_keys(1000, 5, seed=(1, 1)))
    equal = negatives.numpy() == 1
    p_the = np.sqrt(1000) / np.sqrt(_COUNTS).sum()
    # Four draws (one + three redraws) all hit "the": p^4 ~ 2%, not p ~ 38%.
    self.assertAllClose(equal.mean(), p_the ** 4, atol=0.006)
    self.assertAllEqual(weights.numpy() == 0, equal)

  def test_shared_negatives(self):
    cdf = tf.constant(sent2vec_data.negative_cdf(_COUNTS))
    targets = tf.constant([1, 2, 3, 4, 5, 6, 7], tf.int32)
    keys = _target_keys(7, 1)
    negatives, weights = sent2vec_data.shared_negatives(
        targets, cdf, 4, 3, keys)
    self.assertEqual(negatives.shape, [3, 4])
    per_target = np.repeat(negatives.numpy(), 3, axis=0)[:7]
    self.assertAllEqual(weights.numpy(),
                        per_target != targets.numpy()[:, None])
    # A group draws from its first target's key.
    alone, _ = sent2vec_data.shared_negatives(targets[3:4], cdf, 4, 3,
                                              keys[3:4])
    self.assertAllEqual(alone[0], negatives[1])

  def test_shared_negatives_follow_sqrt_counts(self):
    cdf = tf.constant(sent2vec_data.negative_cdf(_COUNTS))
    negatives, _ = sent2vec_data.shared_negatives(
        tf.fill([40000], 0), cdf, 5, 8, _target_keys(8000, 5))
    counts = np.bincount(negatives.numpy().ravel(), minlength=9)[1:]
    want = np.sqrt(_COUNTS) / np.sqrt(_COUNTS).sum() * counts.sum()
    self.assertLess(_chi2(counts, want), _CHI2_9999[7])


class MakeBatchTest(tf.test.TestCase):

  def test_source_ids_match_the_export_featurizer(self):
    for ngrams in (1, 2, 3):
      batch = _batch(ngrams)
      kept = [l for l in _LINES
              if len(_featurizer(1)(tf.constant([l])).to_list()[0]) >= 2]
      want = [sorted(r) for r in _featurizer(ngrams)(tf.constant(kept))
              .to_list()]
      self.assertEqual(_source_rows(batch), want)

  def test_sentences_without_context_or_target_are_left_out(self):
    batch = _batch(1)
    # "", "cat", the unknown-only line and "mat zzz on" (2 words, kept).
    self.assertEqual(batch["sentence_size"].numpy().tolist(),
                     [6, 3, 6, 8, 2])
    self.assertEqual(int(batch["num_lines"]), len(_LINES))
    self.assertEqual(int(batch["num_tokens"]), 31)
    # Without subsampling every known word is a target.
    self.assertEqual(int(tf.size(batch["target_ids"])), 25)

  def test_subsampling_statistics(self):
    lines = ["the cat sat on the mat a dog ran"] * 400
    keep = sent2vec_data.keep_probabilities(_COUNTS, sum(_COUNTS), 0.01, 5)
    hits = collections.Counter()
    by_position = np.zeros(9)
    # Three seeds, and blocks further down the corpus (line numbers key the
    # draws): 2,000 lines.
    for seed, first_line in ((0, 0), (1, 0), (2, 0), (0, 400), (0, 10**9)):
      batch = _batch(1, sample=0.01, lines=lines, seed=(seed, 0),
                     min_count_label=5, first_line=first_line)
      hits.update(batch["target_ids"].numpy().tolist())
      rows = batch["target_row"].numpy()
      starts = np.searchsorted(batch["source_row"].numpy(), rows)
      by_position += np.bincount(batch["excluded"].numpy()[:, 0] - starts,
                                 minlength=9)
    for word_id, per_line in [(1, 2), (2, 1), (3, 1), (6, 1)]:
      expected = keep[word_id] * per_line * 400 * 5
      self.assertAllClose(hits[word_id], expected,
                          atol=4 * np.sqrt(expected) + 1)
    # "ran" (count 4 < min_count_label 5) is never a target.
    self.assertEqual(hits[8], 0)
    # Per position (the two "the" at 0 and 4 are kept at the same rate).
    self.assertAllClose(by_position[0], keep[1] * 2000,
                        atol=4 * np.sqrt(keep[1] * 2000))
    self.assertAllClose(by_position[4], keep[1] * 2000,
                        atol=4 * np.sqrt(keep[1] * 2000))

  def test_draws_do_not_depend_on_the_split(self):
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(_WORDS + ["zzz"], rng.integers(0, 10)))
             for _ in range(60)]
    for ngrams, context in ((2, "remove"), (3, "placeholder")):
      whole = _batch(ngrams, sample=0.05, dropout_k=1, context=context,
                     lines=lines, seed=(4, 0), first_line=1000)
      pieces = [_batch(ngrams, sample=0.05, dropout_k=1, context=context,
                       lines=lines[i:i + 15], seed=(4, 0),
                       first_line=1000 + i) for i in range(0, 60, 15)]
      # Targets (subsampling), dropout (source rows), negatives and their
      # redraws, placeholder n-grams: the pieces concatenated are the block.
      for name in ("target_ids", "negatives", "negative_weights",
                   "source_ids", "added_ids", "context_size",
                   "sentence_size"):
        self.assertAllEqual(
            whole[name], np.concatenate([p[name].numpy() for p in pieces]),
            msg=name)
      self.assertGreater(int(tf.size(whole["target_ids"])), 50)
      # Another block position draws differently.
      moved = _batch(ngrams, sample=0.05, dropout_k=1, context=context,
                     lines=lines, seed=(4, 0), first_line=0)
      self.assertNotAllEqual(whole["negatives"], moved["negatives"])

  def test_context_remove(self):
    batch = _batch(2)
    sizes = batch["sentence_size"].numpy()
    rows = batch["target_row"].numpy()
    excluded = batch["excluded"].numpy()
    n = int(tf.size(batch["source_ids"]))
    valid = (excluded < n).sum(axis=1)
    self.assertAllEqual(batch["context_size"].numpy(), sizes[rows] - valid)
    source_ids = batch["source_ids"].numpy()
    # The first excluded entry is the target word itself.
    self.assertAllEqual(source_ids[excluded[:, 0]], batch["target_ids"])
    # Interior words exclude two bigrams, edge words one (+ the unigram).
    self.assertIn(2, valid.tolist())
    self.assertIn(3, valid.tolist())
    self.assertTrue(set(valid.tolist()) <= {2, 3})
    self.assertAllEqual(batch["added_ids"], tf.zeros_like(batch["added_ids"]))

  def test_context_placeholder(self):
    batch = _batch(2, context="placeholder")
    sizes = batch["sentence_size"].numpy()
    self.assertAllEqual(batch["context_size"].numpy(),
                        sizes[batch["target_row"].numpy()])
    # "the cat sat ...": target "cat" (position 1) forms (the, PH), (PH, sat).
    offset = _VOCAB.size_with_padding
    target_1 = batch["added_ids"].numpy()[1]
    h = lambda w: offset + int(sent2vec_featurizer.hash_ngrams([w], 97)[0])
    self.assertEqual(target_1.tolist(), [h([0, 3]), h([1, 0])])

  def test_ngram_dropout(self):
    lines = ["the cat sat on mat", "a dog", "the cat sat"]
    batch = _batch(2, dropout_k=1, lines=lines, seed=(7, 7))
    rows = _source_rows(batch)
    offset = _VOCAB.size_with_padding
    unigrams = [[i for i in r if i < offset] for r in rows]
    bigrams = [[i for i in r if i >= offset] for r in rows]
    self.assertEqual([len(u) for u in unigrams], [5, 2, 3])  # All kept.
    # One position dropped: 4 bigrams lose 2 (interior) or 1 (edge).
    self.assertIn(len(bigrams[0]), (2, 3))
    self.assertLen(bigrams[1], 1)  # Two tokens: no dropout.
    self.assertIn(len(bigrams[2]), (0, 1))
    # Dropout varies with the seed and never touches unigrams.
    sizes = set()
    for seed in range(20):
      b = _batch(2, dropout_k=2, lines=lines, seed=(seed, 1))
      sizes.add(tuple(b["sentence_size"].numpy().tolist()))
      self.assertEqual(
          [len([i for i in r if i < offset]) for r in _source_rows(b)],
          [5, 2, 3])
    self.assertGreater(len(sizes), 1)

  def test_gradient_segments_are_sorted(self):
    batch = _batch(2, dropout_k=1)
    self.assertTrue(np.all(np.diff(batch["grad_segment"].numpy()) >= 0))
    self.assertTrue(np.all(np.diff(batch["source_row"].numpy()) >= 0))
    self.assertTrue(np.all(np.diff(batch["out_grad_segment"].numpy()) >= 0))
    self.assertAllEqual(
        tf.gather(batch["unique_ids"], batch["source_unique"]),
        batch["source_ids"])

  def test_an_all_unknown_block_gives_an_empty_batch(self):
    batch = _batch(2, lines=["zzz yyy", "", "qqq"])
    self.assertEqual(int(tf.size(batch["target_ids"])), 0)
    self.assertEqual(int(tf.size(batch["source_ids"])), 0)
    # An empty piece (the tail of an epoch's last block) too.
    batch = _batch(2, lines=tf.zeros([0], tf.string), dropout_k=1)
    self.assertEqual(int(tf.size(batch["target_ids"])), 0)
    self.assertEqual(int(batch["num_lines"]), 0)


class DatasetTest(tf.test.TestCase):

  def test_batches_cover_the_corpus(self):
    path = os.path.join(self.get_temp_dir(), "c.txt.gz")
    with gzip.open(path, "wt") as f:
      f.write("\n".join(_LINES * 10) + "\n")
    lines = sent2vec_data.count_lines(path)
    self.assertEqual(lines, len(_LINES) * 10)
    keep = sent2vec_data.keep_probabilities(_COUNTS, sum(_COUNTS), 0.0, 1)
    cdf = sent2vec_data.negative_cdf(_COUNTS)
    batches = list(sent2vec_data.batch_dataset(
        path, _featurizer(2), keep, cdf, block_lines=7, num_epochs=2))
    self.assertLen(batches, 2 * sent2vec_data.batches_per_epoch(lines, 7))
    self.assertEqual(sum(int(b["num_tokens"]) for b in batches), 2 * 310)

  def test_count_lines_of_a_truncated_gzip_is_an_error_naming_it(self):
    # Issue 33 row 11: with --noverify_data, an EOFError traceback.
    path = os.path.join(self.get_temp_dir(), "cut.txt.gz")
    data = gzip.compress(("\n".join(_LINES * 50) + "\n").encode())
    with open(path, "wb") as f:
      f.write(data[:len(data) // 2])
    with self.assertRaisesRegex(
        errors.DataDirError,
        f"^{re.escape(path)}: truncated or corrupt gzip \\("):
      sent2vec_data.count_lines(path)
    with open(path, "wb") as f:
      f.write(b"not gzip at all")
    with self.assertRaisesRegex(errors.DataDirError,
                                "truncated or corrupt gzip"):
      sent2vec_data.count_lines(path)

  def test_pieces_are_the_blocks_cut_in_order(self):
    path = os.path.join(self.get_temp_dir(), "p.txt.gz")
    with gzip.open(path, "wt") as f:
      f.write("\n".join(_LINES * 9) + "\n")  # 72 lines.
    keep = sent2vec_data.keep_probabilities(_COUNTS, sum(_COUNTS), 0.1, 1)
    cdf = sent2vec_data.negative_cdf(_COUNTS)
    args = dict(file_patterns=path, featurizer=_featurizer(2),
                keep_prob=keep, cdf=cdf, dropout_k=1, block_lines=20,
                num_epochs=2, seed=3)
    blocks = list(sent2vec_data.batch_dataset(**args))
    # 4 pieces of 5 lines per block; the last block of an epoch (12 lines)
    # gives pieces of 5, 5, 2 and 0 lines.
    pieces = list(sent2vec_data.batch_dataset(**args, pieces=4,
                                              piece_lines=5))
    self.assertLen(pieces, 4 * len(blocks))
    self.assertEqual([int(p["num_lines"]) for p in pieces[12:16]],
                     [5, 5, 2, 0])
    for i, block in enumerate(blocks):
      group = pieces[4 * i:4 * i + 4]
      for name in ("target_ids", "negatives", "source_ids"):
        self.assertAllEqual(
            block[name], np.concatenate([p[name].numpy() for p in group]))
    # One pipeline's share (pieces 2 and 3 of 4): a slice of every block.
    share = list(sent2vec_data.batch_dataset(**args, pieces=2,
                                             piece_offset=10, piece_lines=5))
    self.assertLen(share, 2 * len(blocks))
    for i in range(len(blocks)):
      for j in range(2):
        self.assertAllEqual(share[2 * i + j]["target_ids"],
                            pieces[4 * i + 2 + j]["target_ids"])

  def test_input_threads_run_on_a_private_pool_with_the_same_batches(self):
    path = os.path.join(self.get_temp_dir(), "t.txt.gz")
    with gzip.open(path, "wt") as f:
      f.write("\n".join(_LINES * 5) + "\n")
    args = dict(file_patterns=path, featurizer=_featurizer(2),
                keep_prob=sent2vec_data.keep_probabilities(
                    _COUNTS, sum(_COUNTS), 0.1, 1),
                cdf=sent2vec_data.negative_cdf(_COUNTS), dropout_k=1,
                block_lines=6, seed=5)
    shared = sent2vec_data.batch_dataset(**args)
    private = sent2vec_data.batch_dataset(**args, input_threads=1)
    self.assertIsNone(shared.options().threading.private_threadpool_size)
    self.assertEqual(private.options().threading.private_threadpool_size, 1)
    shared, private = list(shared), list(private)
    self.assertLen(private, len(shared))
    for a, b in zip(shared, private):
      for name in ("target_ids", "negatives", "source_ids", "grad_index"):
        self.assertAllEqual(a[name], b[name])

  def test_one_long_line_in_a_block_needs_no_dense_tensor(self):
    # Issue 33 row 8: value_rowids, the ragged mask and the ragged
    # reduce_sum tiled [lines, longest line] int64: 16,384 x 400,000 here
    # (52 GB), an OOM.
    path = os.path.join(self.get_temp_dir(), "one_long_line.txt")
    with open(path, "w", encoding="utf-8") as f:
      for i in range(16_000):
        f.write("the cat sat\n")
        if i == 5_000:
          f.write("the cat " * 200_000 + "\n")
    keep = sent2vec_data.keep_probabilities(_COUNTS, sum(_COUNTS), 0.0, 1)
    cdf = sent2vec_data.negative_cdf(_COUNTS)
    [batch] = list(sent2vec_data.batch_dataset(
        path, _featurizer(2), keep, cdf, num_negatives=2,
        block_lines=16_384))
    self.assertEqual(int(batch["num_lines"]), 16_001)
    self.assertEqual(int(batch["num_tokens"]), 16_000 * 3 + 400_000)
    self.assertLen(batch["target_ids"], 16_000 * 3 + 400_000)

  def test_batches_are_those_of_tensorflows_ragged_ops(self):
    # The linear row ids and masks (inputs/ragged_rows.py) change no batch:
    # with TensorFlow's own ops in their place, the same batches.
    path = os.path.join(self.get_temp_dir(), "same.txt.gz")
    with gzip.open(path, "wt") as f:
      f.write("\n".join(_LINES * 9) + "\n")
    keep = sent2vec_data.keep_probabilities(_COUNTS, sum(_COUNTS), 0.1, 1)
    cdf = sent2vec_data.negative_cdf(_COUNTS)

    def run():
      return list(sent2vec_data.batch_dataset(
          path, _featurizer(2), keep, cdf, dropout_k=1, block_lines=20,
          seed=3, context="placeholder"))

    batches = run()
    with mock.patch.multiple(
        ragged_rows, row_ids=lambda rt: rt.value_rowids(),
        keep_values=lambda rt, keep: tf.ragged.boolean_mask(
            rt, rt.with_flat_values(keep)),
        keep_rows=tf.ragged.boolean_mask):
      old_batches = run()
    self.assertLen(batches, 4)
    self.assertLen(old_batches, 4)
    for new, old in zip(batches, old_batches):
      self.assertEqual(sorted(new), sorted(old))
      for key in new:
        self.assertAllEqual(new[key], old[key], msg=key)


if __name__ == "__main__":
  tf.test.main()
