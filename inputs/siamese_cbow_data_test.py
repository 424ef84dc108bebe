"""Tests for inputs.siamese_cbow_data."""

import collections
import gzip
import os
from unittest import mock

import numpy as np
import tensorflow as tf

from sentzoo.inputs import corpus as corpus_lib
from sentzoo.inputs import ragged_rows
from sentzoo.inputs import siamese_cbow_data
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import vocabulary as vocabulary_lib

MAX_LENGTH = 8
BOOK_SIZES = [[7, 9, 6], [8, 5, 10, 4]]  # Lines per book, per file.


# Lines that become empty once unknown words and punctuation are dropped.
OOV_LINES = {5, 9, 16, 27, 35, 38}


def make_groups(lines, text_to_ids, num_negatives, max_length, seed,
                **kwargs):
  """The groups of one block of lines as padded id rows: int32
  [groups, 3 + n, max_length] (center, previous, next, negatives)."""
  # pylint: disable=protected-access
  ids, members = siamese_cbow_data._group_members(
      *siamese_cbow_data._line_ids(text_to_ids, lines), num_negatives,
      max_length, seed, **kwargs)
  return siamese_cbow_data._gather_groups(ids, members, max_length)


def group_dataset(files, to_ids, block_lines=2048, blocks_per_mix=8,
                  line_limits=None, **kwargs):
  """`siamese_cbow_data.group_dataset` of the `line_mixes` of `files`."""
  return siamese_cbow_data.group_dataset(siamese_cbow_data.line_mixes(
      files, to_ids, block_lines, blocks_per_mix, line_limits), **kwargs)


def count_batches(files, to_ids, batch_size=100, max_length=50,
                  block_lines=2048, blocks_per_mix=8, min_sentence_ids=1,
                  line_limits=None):
  """`siamese_cbow_data.count_batches` of the `line_mixes` of `files`."""
  return siamese_cbow_data.count_batches(
      siamese_cbow_data.line_mixes(
          files, to_ids, block_lines, blocks_per_mix, line_limits).map(
              lambda ids, _: ids.row_lengths()),
      batch_size, max_length, min_sentence_ids)


def heldout_groups(file, first_line, to_ids, block_lines=4096, **kwargs):
  """`siamese_cbow_data.heldout_groups` of the lines of `file` from
  `first_line` on."""
  return siamese_cbow_data.heldout_groups(
      *siamese_cbow_data.heldout_lines(file, first_line, to_ids, block_lines),
      **kwargs)


def _is_oov_line(g):
  return g in OOV_LINES


def _repeats(g):
  """1..4 words, and 11 (more than MAX_LENGTH) on every 7th line."""
  return 11 if g % 7 == 3 else 1 + g % 4


def _line_text(g):
  """Line g: the word `l<g>` `_repeats(g)` times, plus noise."""
  if _is_oov_line(g):
    # Becomes empty once unknown words and punctuation are dropped.
    return ["unknownword other", "...!!!", "Zzz, qqq?"][g % 3]
  words = [f"L{g}" if i % 2 else f"l{g}" for i in range(_repeats(g))]
  if g % 3 == 0:
    words.insert(1, "unknownword")
    words.append("!")
  return " ".join(words)


class _Corpus:
  """A synthetic corpus whose word ids identify their lines."""

  def __init__(self, directory):
    self.files = []
    self.lines = []  # Per file, raw lines with "" between books.
    self.info = {}  # g -> (file, book, position in book).
    g = 0
    for f, books in enumerate(BOOK_SIZES):
      lines = []
      for b, size in enumerate(books):
        if b:
          lines.append("")
        for pos in range(size):
          self.info[g] = (f, b, pos)
          lines.append(_line_text(g))
          g += 1
      # Files end without an empty line: only line_dataset/group_dataset
      # keep the files apart.
      name = os.path.join(directory, f"part{f:02d}.txt" + (".gz" if f else ""))
      text = "\n".join(lines) + "\n"
      if name.endswith(".gz"):
        with gzip.open(name, "wt", encoding="utf-8") as fh:
          fh.write(text)
      else:
        with open(name, "w", encoding="utf-8") as fh:
          fh.write(text)
      self.files.append(name)
      self.lines.append(lines)
    self.by_position = {v: k for k, v in self.info.items()}
    valid = [g for g in self.info if not _is_oov_line(g)]
    # A shuffled vocabulary order, so ids are not simply line numbers.
    order = np.random.default_rng(0).permutation(len(valid))
    words = [f"l{valid[i]}" for i in order]
    self.vocabulary = vocabulary_lib.Vocabulary(words, [1] * len(words))
    self.id_to_line = {i + 1: valid[j] for i, j in enumerate(order)}
    self.valid = set(valid)

  def is_valid(self, f, b, pos):
    g = self.by_position.get((f, b, pos))
    return g is not None and g in self.valid

  def centers(self, file_index=None):
    """Lines whose line and both neighbours in the same book are valid."""
    result = []
    for g, (f, b, pos) in self.info.items():
      if file_index is not None and f != file_index:
        continue
      if (g in self.valid and self.is_valid(f, b, pos - 1)
          and self.is_valid(f, b, pos + 1)):
        result.append(g)
    return result


class SiameseCbowDataTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.dir = self.get_temp_dir()
    self.corpus = _Corpus(self.dir)
    self.to_ids = text_to_ids_lib.TextToIds(self.corpus.vocabulary)

  def _row_line(self, row):
    """The line a padded id row holds, checking its layout."""
    row = np.asarray(row)
    nonzero = row != 0
    count = int(nonzero.sum())
    self.assertGreater(count, 0, f"an all-padding row: {row}")
    # Padding only at the end.
    self.assertTrue(nonzero[:count].all(), f"padding inside a row: {row}")
    self.assertFalse(nonzero[count:].any())
    # Every id of a line is the same word.
    self.assertTrue((row[:count] == row[0]).all(), row)
    g = self.corpus.id_to_line[int(row[0])]
    self.assertEqual(count, min(_repeats(g), MAX_LENGTH), f"line {g}: {row}")
    return g

  def _check_group(self, group, negatives_from=None):
    """Checks one group [3 + n, length]; returns its center line."""
    center, previous, following = (self._row_line(group[i]) for i in range(3))
    f, b, pos = self.corpus.info[center]
    self.assertEqual(self.corpus.info[previous], (f, b, pos - 1))
    self.assertEqual(self.corpus.info[following], (f, b, pos + 1))
    for row in group[3:]:
      negative = self._row_line(row)
      self.assertIn(negative, self.corpus.valid)
      if negatives_from is not None:
        self.assertIn(negative, negatives_from)
    return center

  def _dataset(self, **kwargs):
    args = dict(batch_size=1, num_negatives=2, max_length=MAX_LENGTH,
                block_lines=1000, blocks_per_mix=8, length_multiple=3,
                shuffle_batches=16, seed=7)
    args.update(kwargs)
    return group_dataset(self.corpus.files, self.to_ids, **args)

  def _batches(self, **kwargs):
    return list(self._dataset(**kwargs).as_numpy_iterator())

  def test_fixture_has_what_the_tests_need(self):
    centers = self.corpus.centers()
    self.assertGreater(len(centers), 10)
    self.assertTrue(any(_repeats(g) > MAX_LENGTH for g in centers))
    self.assertLess(len(self.corpus.valid), len(self.corpus.info))

  def test_make_groups(self):
    lines = self.corpus.lines[0]
    file0 = {g for g in self.corpus.valid if self.corpus.info[g][0] == 0}
    groups = make_groups(
        tf.constant(lines), self.to_ids, num_negatives=4,
        max_length=MAX_LENGTH, seed=tf.constant([3, 4], tf.int64))
    self.assertEqual(groups.dtype, tf.int32)
    expected = sorted(self.corpus.centers(0))
    self.assertEqual(groups.shape, (len(expected), 3 + 4, MAX_LENGTH))
    centers = [self._check_group(group, negatives_from=file0)
               for group in groups.numpy()]
    self.assertEqual(sorted(centers), expected)
    # Negatives are drawn at random, not always the same line.
    negatives = {self.corpus.id_to_line[int(i)]
                 for i in groups.numpy()[:, 3:, 0].ravel()}
    self.assertGreater(len(negatives), 3)

  def test_subsampling_drops_words_but_keeps_the_groups(self):
    lines = tf.constant(self.corpus.lines[0])
    seed = tf.constant([3, 4], tf.int64)
    size = self.corpus.vocabulary.size_with_padding

    def groups(keep_probability=None):
      return make_groups(
          lines, self.to_ids, num_negatives=4, max_length=MAX_LENGTH,
          seed=seed, keep_probability=keep_probability).numpy()

    plain = groups()
    self.assertAllEqual(groups(np.ones([size], np.float32)), plain)
    # A word that is never kept leaves all-padding rows where it was; every
    # other row, and so the choice of groups, is unchanged.
    dropped = int(plain[0, 0, 0])
    keep = np.ones([size], np.float32)
    keep[dropped] = 0.0
    subsampled = groups(keep)
    self.assertEqual(subsampled.shape, plain.shape)
    was_dropped = plain[:, :, 0] == dropped
    self.assertTrue(was_dropped.any())
    self.assertFalse(subsampled[was_dropped].any())
    self.assertAllEqual(subsampled[~was_dropped], plain[~was_dropped])

  def test_subsample_keeps_each_id_with_its_probability(self):
    ids = tf.RaggedTensor.from_row_lengths(
        tf.tile(tf.constant([1, 2, 3], tf.int32), [4000]), [6000, 0, 6000])
    keep = tf.constant([0.0, 1.0, 0.5, 0.0])
    seed = tf.constant([5, 6], tf.int64)
    kept = siamese_cbow_data.subsample(ids, keep, seed)
    self.assertAllEqual(kept.row_lengths()[1], 0)
    values = kept.flat_values.numpy()
    self.assertEqual((values == 1).sum(), 4000)
    self.assertEqual((values == 3).sum(), 0)
    self.assertAllClose((values == 2).sum() / 4000, 0.5, atol=0.04)
    # In order, and the same for the same seed.
    first_row = kept[0].numpy()
    self.assertAllEqual(first_row[first_row == 1],
                        np.ones([int((first_row == 1).sum())]))
    self.assertAllEqual(siamese_cbow_data.subsample(ids, keep, seed).flat_values,
                        values)

  def test_subsampling_does_not_change_the_batch_count(self):
    keep = np.full([self.corpus.vocabulary.size_with_padding], 0.3,
                   np.float32)
    kwargs = dict(batch_size=2, max_length=MAX_LENGTH, block_lines=7,
                  blocks_per_mix=3)
    self.assertLen(self._batches(keep_probability=keep, **kwargs),
                   count_batches(
                       self.corpus.files, self.to_ids, **kwargs))

  def test_document_negatives_come_from_the_centres_book(self):
    lines = self.corpus.lines[1]  # Four books.
    groups = make_groups(
        tf.constant(lines), self.to_ids, num_negatives=6,
        max_length=MAX_LENGTH, seed=tf.constant([5, 6], tf.int64),
        negatives="document")
    self.assertEqual(len(groups), len(self.corpus.centers(1)))
    books_seen = set()
    for group in groups.numpy():
      center = self._check_group(group)
      book = self.corpus.info[center][:2]
      books_seen.add(book)
      for row in group[3:]:
        self.assertEqual(self.corpus.info[self._row_line(row)][:2], book)
    self.assertGreater(len(books_seen), 1)
    # With "mix", some negatives of the same groups come from other books.
    mixed = make_groups(
        tf.constant(lines), self.to_ids, num_negatives=6,
        max_length=MAX_LENGTH, seed=tf.constant([5, 6], tf.int64))
    self.assertTrue(any(
        self.corpus.info[self._row_line(row)][:2]
        != self.corpus.info[self._row_line(group[0])][:2]
        for group in mixed.numpy() for row in group[3:]))

  def test_nearby_negatives_are_close_to_the_centre_in_its_book(self):
    window = 2
    groups = make_groups(
        tf.constant(self.corpus.lines[1]), self.to_ids, num_negatives=6,
        max_length=MAX_LENGTH, seed=tf.constant([5, 6], tf.int64),
        negatives="nearby", nearby_window=window).numpy()
    self.assertEqual(len(groups), len(self.corpus.centers(1)))
    valid = sorted(self.corpus.valid)
    offsets = set()
    for group in groups:
      center = self._check_group(group)
      for row in group[3:]:
        negative = self._row_line(row)
        self.assertEqual(self.corpus.info[negative][:2],
                         self.corpus.info[center][:2])
        offset = valid.index(negative) - valid.index(center)
        self.assertLessEqual(abs(offset), window)
        offsets.add(offset)
    self.assertGreater(len(offsets), 2)

  def test_unknown_negative_source_is_an_error(self):
    with self.assertRaisesRegex(ValueError, "negatives must be one of"):
      make_groups(
          tf.constant(self.corpus.lines[0]), self.to_ids, num_negatives=1,
          max_length=MAX_LENGTH, seed=tf.constant([0, 0], tf.int64),
          negatives="corpus")

  def test_min_sentence_ids_leaves_out_short_sentences(self):
    groups = make_groups(
        tf.constant(self.corpus.lines[0]), self.to_ids, num_negatives=3,
        max_length=MAX_LENGTH, seed=tf.constant([1, 2], tf.int64),
        min_sentence_ids=2).numpy()
    self.assertNotEmpty(groups)
    self.assertTrue(((groups > 0).sum(axis=2) >= 2).all())
    expected = [g for g in self.corpus.centers(0)
                if all(_repeats(h) >= 2 for h in (g - 1, g, g + 1))]
    self.assertEqual(sorted(self._row_line(group[0]) for group in groups),
                     sorted(expected))

  def test_line_limits_keep_the_rest_of_a_file_out(self):
    limit = 12  # File 1: books of 8 and 5 lines; line 12 is in book 2.
    batches = self._batches(line_limits=[-1, limit])
    first1 = min(g for g, v in self.corpus.info.items() if v[0] == 1)
    centers = [self._check_group(batch[0]) for batch in batches]
    # Raw line numbers of file 1 count the empty line between books.
    raw_line = {g: g - first1 + self.corpus.info[g][1] for g in centers
                if self.corpus.info[g][0] == 1}
    self.assertNotEmpty(raw_line)
    self.assertLess(max(raw_line.values()) + 1, limit)
    count = count_batches(
        self.corpus.files, self.to_ids, batch_size=1, max_length=MAX_LENGTH,
        block_lines=1000, line_limits=[-1, limit])
    self.assertEqual(count, len(batches))

  def test_heldout_groups_read_from_the_first_line_on(self):
    first_line = 9  # File 1's second book starts at raw line 9.
    groups = heldout_groups(
        self.corpus.files[1], first_line, self.to_ids, num_negatives=3,
        max_length=MAX_LENGTH, max_groups=4)
    self.assertEqual(groups.shape[:2], (4, 6))
    for group in groups.to_tensor(shape=[None, 6, MAX_LENGTH]):
      center = self._check_group(group)
      self.assertEqual(self.corpus.info[center][0], 1)
      self.assertGreaterEqual(self.corpus.info[center][1], 1)

  def test_heldout_groups_are_the_first_of_make_groups(self):
    # heldout_groups gathers only the kept groups' rows; they must be those
    # of make_groups on the same lines, cut after the gather, with the
    # lines turned into ids in several blocks.
    lines = tf.concat(list(corpus_lib.line_dataset(
        [self.corpus.files[1]]).skip(9).batch(4096)), axis=0)
    expected = make_groups(
        lines, self.to_ids, 3, MAX_LENGTH, tf.constant([0, 0], tf.int64))
    self.assertGreater(expected.shape[0], 4)
    groups = heldout_groups(
        self.corpus.files[1], 9, self.to_ids, num_negatives=3,
        max_length=MAX_LENGTH, max_groups=4, block_lines=3)
    self.assertAllEqual(groups.to_tensor(shape=[None, 6, MAX_LENGTH]),
                        expected[:4])
    # Without padding: each sentence's ids, and no more.
    self.assertAllEqual(groups.flat_values,
                        tf.boolean_mask(expected[:4], expected[:4] > 0))

  def test_ids_in_chunks_are_the_ids_of_all_lines_at_once(self):
    # pylint: disable=protected-access
    lines = tf.constant(self.corpus.lines[1])
    expected = self.to_ids(lines)
    for chunk_lines in (1, 3, len(self.corpus.lines[1]), 1000):
      with self.subTest(chunk_lines=chunk_lines):
        ids = siamese_cbow_data._ids_in_chunks(self.to_ids, lines,
                                               chunk_lines)
        self.assertAllEqual(ids.row_splits, expected.row_splits)
        self.assertAllEqual(ids.flat_values, expected.flat_values)
    traced = tf.function(lambda lines: siamese_cbow_data._ids_in_chunks(
        self.to_ids, lines, 4))
    self.assertAllEqual(traced(lines).flat_values, expected.flat_values)
    empty = siamese_cbow_data._ids_in_chunks(
        self.to_ids, tf.constant([], tf.string), 4)
    self.assertEqual(empty.shape.as_list(), [0, None])

  def test_make_groups_truncates_to_max_length(self):
    groups = make_groups(
        tf.constant(["l1 l1 l1", "l2 l2 l2 l2", "l3"]), self.to_ids,
        num_negatives=1, max_length=2, seed=tf.constant([0, 0], tf.int64))
    id_of = {g: i for i, g in self.corpus.id_to_line.items()}
    self.assertAllEqual(groups[0, :3],
                        [[id_of[2]] * 2, [id_of[1]] * 2, [id_of[3], 0]])

  def test_group_dataset_covers_every_group_once(self):
    batches = self._batches(num_negatives=3)
    centers = [self._check_group(batch[0]) for batch in batches]
    for batch in batches:
      self.assertEqual(batch.shape[:2], (1, 3 + 3))
    self.assertEqual(collections.Counter(centers),
                     collections.Counter(self.corpus.centers()))

  def test_group_dataset_has_no_autotune_thread(self):
    # Nor has count_batches: both start from _mixes.
    for layout in siamese_cbow_data.BATCH_LAYOUTS:
      self.assertIs(self._dataset(
          batch_layout=layout).options().autotune.enabled, False)

  def test_groups_never_cross_file_or_book_boundaries(self):
    # The last line of file 0 and the first of file 1 are valid, so a
    # pipeline that joined the files would make a group across them.
    last0 = max(g for g, v in self.corpus.info.items() if v[0] == 0)
    first1 = last0 + 1
    self.assertIn(last0, self.corpus.valid)
    self.assertIn(first1, self.corpus.valid)
    batches = self._batches(block_lines=7, blocks_per_mix=3)
    self.assertNotEmpty(batches)
    for batch in batches:
      for group in batch:
        self._check_group(group)  # Same file and book, adjacent lines.

  def test_shapes_padding_and_truncation(self):
    batches = self._batches(batch_size=3, num_negatives=2, length_multiple=3)
    self.assertNotEmpty(batches)
    lengths = set()
    saw_truncated = False
    for batch in batches:
      self.assertEqual(batch.dtype, np.int32)
      self.assertEqual(batch.shape[:2], (3, 5))
      length = batch.shape[2]
      lengths.add(length)
      self.assertLessEqual(length, MAX_LENGTH)
      self.assertTrue(length % 3 == 0 or length == MAX_LENGTH, length)
      longest = int((batch != 0).sum(axis=2).max())
      # No more columns than the longest row needs, rounded up.
      self.assertEqual(length, min(-(-longest // 3) * 3, MAX_LENGTH))
      for group in batch:
        self._check_group(group)
        saw_truncated |= any(_repeats(self.corpus.id_to_line[int(r[0])])
                             > MAX_LENGTH for r in group)
    self.assertTrue(saw_truncated)
    self.assertGreater(len(lengths), 1)

  def test_length_multiple_larger_than_max_length(self):
    for batch in self._batches(batch_size=2, length_multiple=64):
      self.assertEqual(batch.shape[2], MAX_LENGTH)

  def test_same_seed_same_batches_other_seed_differs(self):
    first = self._batches(batch_size=2, seed=11)
    second = self._batches(batch_size=2, seed=11)
    other = self._batches(batch_size=2, seed=12)
    self.assertEqual(len(first), len(second))
    for a, b in zip(first, second):
      self.assertAllEqual(a, b)
    self.assertEqual(len(first), len(other))
    self.assertFalse(all(a.shape == b.shape and (a == b).all()
                         for a, b in zip(first, other)))

  def test_count_batches_matches_group_dataset(self):
    for batch_size, block_lines, blocks_per_mix in (
        (1, 1000, 8), (2, 7, 3), (3, 5, 2), (2, 6, 1)):
      kwargs = dict(batch_size=batch_size, max_length=MAX_LENGTH,
                    block_lines=block_lines, blocks_per_mix=blocks_per_mix)
      expected = count_batches(
          self.corpus.files, self.to_ids, **kwargs)
      self.assertGreater(expected, 0)
      batches = self._batches(**kwargs)
      self.assertEqual(len(batches), expected, kwargs)
      for batch in batches:
        self.assertEqual(batch.shape[0], batch_size)
        for group in batch:
          self._check_group(group)
    self.assertLen(self._batches(batch_size=1),
                   len(self.corpus.centers()))

  def test_consecutive_batches_list_each_sentence_once(self):
    for batch_size, block_lines, blocks_per_mix in ((3, 1000, 8), (2, 7, 3)):
      kwargs = dict(batch_size=batch_size, max_length=MAX_LENGTH,
                    block_lines=block_lines, blocks_per_mix=blocks_per_mix,
                    negatives="nearby", nearby_window=2)
      batches = self._batches(batch_layout="consecutive", **kwargs)
      self.assertLen(batches, count_batches(
          self.corpus.files, self.to_ids, **{
              k: v for k, v in kwargs.items()
              if k not in ("negatives", "nearby_window")}))
      centers, shared = [], 0
      for batch in batches:
        self.assertEqual(batch["members"].shape, (batch_size, 5))
        self.assertEqual(batch["flat_ids"].shape, batch["sentence"].shape)
        # Sentences numbered in order of first use, each listed once.
        sentence = batch["sentence"]
        self.assertTrue((np.diff(sentence) >= 0).all())
        count = int(sentence.max()) + 1
        self.assertAllEqual(np.unique(batch["members"]), np.arange(count))
        shared += batch["members"].size - count
        rows = np.zeros([count, MAX_LENGTH], np.int32)
        for i in range(count):
          ids = batch["flat_ids"][sentence == i]
          rows[i, :len(ids)] = ids
        # The dense groups the layout stands for are valid groups.
        batch_centers = [self._check_group(group)
                         for group in rows[batch["members"]]]
        # In corpus order: the mix's blocks one after another.
        for a, b in zip(batch_centers, batch_centers[1:]):
          if self.corpus.info[a][0] == self.corpus.info[b][0]:
            self.assertLess(a, b)
        centers += batch_centers
      self.assertEqual(len(set(centers)), len(centers))
      # Neighbours are centres of the groups beside them: listed once.
      self.assertGreater(shared, len(batches))

  def test_two_epochs_twice_as_many_batches(self):
    # With block_lines=7 an epoch has 9 blocks (4 + 5): not whole mixes of 4.
    for batch_size, block_lines, blocks_per_mix in ((1, 1000, 8), (2, 7, 4)):
      kwargs = dict(batch_size=batch_size, max_length=MAX_LENGTH,
                    block_lines=block_lines, blocks_per_mix=blocks_per_mix)
      one = count_batches(
          self.corpus.files, self.to_ids, **kwargs)
      self.assertEqual(len(self._batches(num_epochs=2, **kwargs)), 2 * one,
                       kwargs)
    centers = [self._check_group(batch[0])
               for batch in self._batches(num_epochs=2)]
    self.assertEqual(collections.Counter(centers),
                     collections.Counter(self.corpus.centers() * 2))

  def test_iterator_checkpoint_resumes_identically(self):
    for batch_layout in siamese_cbow_data.BATCH_LAYOUTS:
      with self.subTest(batch_layout=batch_layout):
        kwargs = dict(batch_size=2, block_lines=7, blocks_per_mix=2,
                      shuffle_batches=4, num_epochs=2, seed=5,
                      batch_layout=batch_layout)
        reference = self._batches(**kwargs)
        k = 5
        self.assertGreater(len(reference), k + 3)
        iterator = iter(self._dataset(**kwargs))
        for i in range(k):
          tf.nest.map_structure(self.assertAllEqual, next(iterator),
                                reference[i])
        checkpoint = tf.train.Checkpoint(iterator=iterator)
        path = checkpoint.save(os.path.join(self.dir, batch_layout, "it"))
        fresh = iter(self._dataset(**kwargs))
        tf.train.Checkpoint(iterator=fresh).restore(path).assert_consumed()
        rest = [tf.nest.map_structure(lambda t: t.numpy(), b) for b in fresh]
        self.assertLen(rest, len(reference) - k)
        for got, want in zip(rest, reference[k:]):
          tf.nest.map_structure(self.assertAllEqual, got, want)

  def test_one_megabyte_line_gives_bounded_tensors(self):
    # Issue 19: a 1 MB line is truncated to max_length ids before the
    # groups are made dense, so no tensor grows with the line.
    path = os.path.join(self.dir, "long_line.txt")
    big = "x y " * 250_000
    lines = ["x y", "y x y", big, "x", "y y", "", "x x y", big, "y"]
    with open(path, "w", encoding="utf-8") as f:
      f.write("\n".join(lines) + "\n")
    to_ids = text_to_ids_lib.TextToIds(
        vocabulary_lib.Vocabulary(["x", "y"], [2, 1]))
    batches = list(group_dataset(
        [path], to_ids, batch_size=1, num_negatives=2,
        max_length=MAX_LENGTH, length_multiple=1,
        shuffle_batches=1).as_numpy_iterator())
    self.assertLen(batches, 4)  # Centres: lines 1, 2, 3 and 7.
    self.assertEqual(max(b.shape[2] for b in batches), MAX_LENGTH)
    for batch in batches:
      self.assertEqual(batch.shape[:2], (1, 5))
      self.assertLessEqual(batch.shape[2], MAX_LENGTH)
    self.assertEqual(count_batches(
        [path], to_ids, batch_size=1, max_length=MAX_LENGTH), 4)
    held_out = heldout_groups(
        path, 0, to_ids, num_negatives=2, max_length=MAX_LENGTH,
        max_groups=10)
    self.assertEqual(held_out.shape[:2], (4, 5))
    self.assertEqual(held_out.bounding_shape()[2], MAX_LENGTH)

  def test_one_long_line_in_full_blocks_counts_without_a_dense_tensor(self):
    # Issue 33 row 8: TextToIds' ragged mask tiled [lines, longest line]
    # int64 in `count_batches`: 16,392 x 400,000 here (52 GB), an OOM.
    path = os.path.join(self.dir, "one_long_line.txt")
    with open(path, "w", encoding="utf-8") as f:
      for i in range(16_000):
        f.write("x y x y\n")
        if i == 5_000:
          f.write("x y " * 200_000 + "\n")
    to_ids = text_to_ids_lib.TextToIds(
        vocabulary_lib.Vocabulary(["x", "y"], [2, 1]))
    # 16,001 lines, all usable, in 8 blocks (7 of 2,048, one of 1,665) of
    # one mix; a centre has both neighbours in its block: 2,046 per full
    # block and 1,663 in the last, 15,985 groups: 1,598 batches of 10.
    self.assertEqual(count_batches(
        [path], to_ids, batch_size=10, max_length=MAX_LENGTH), 1_598)
    batches = list(group_dataset(
        [path], to_ids, batch_size=10, max_length=MAX_LENGTH,
        shuffle_batches=1).as_numpy_iterator())
    self.assertLen(batches, 1_598)

  def test_token_cache_reads_as_the_text(self):
    to_ids = text_to_ids_lib.TextToIds(self.corpus.vocabulary,
                                       max_length=MAX_LENGTH)
    limit = 12  # File 1's second book starts at raw line 9.
    mixes = dict(block_lines=7, blocks_per_mix=3, line_limits=[-1, limit])
    path = os.path.join(self.dir, "tokens")
    logged = []
    written = siamese_cbow_data.TokenCache.write(
        path, self.corpus.files, to_ids.tokenizer, log=logged.append,
        **mixes)
    self.assertLen(logged, 2)
    self.assertEqual(sorted(os.listdir(self.dir)),
                     sorted(["tokens", "part00.txt", "part01.txt.gz"]))
    cache = siamese_cbow_data.TokenCache(path)
    self.assertEqual(cache.words, written.words)
    # Every line's tokens counted, the held-out tail's too.
    counter, _, _ = vocabulary_lib.count_words(
        self.corpus.files, to_ids.tokenizer, progress=False)
    self.assertEqual(cache.counter(), dict(counter))
    words = self.corpus.vocabulary.words
    text = list(siamese_cbow_data.line_mixes(self.corpus.files, to_ids,
                                             **mixes))
    cached = list(cache.mixes(words, MAX_LENGTH))
    self.assertLen(cached, len(text))
    lengths = list(cache.row_lengths(words))
    for (ids, empty), (want_ids, want_empty), known in zip(cached, text,
                                                            lengths):
      # Every known token counts, before the cut to MAX_LENGTH.
      self.assertAllEqual(tf.minimum(known, MAX_LENGTH), ids.row_lengths())
      self.assertAllEqual(ids.row_splits, want_ids.row_splits)
      self.assertAllEqual(ids.flat_values, want_ids.flat_values)
      self.assertAllEqual(empty, want_empty)
    for skip in (0, 2):
      ids, empty = cache.tail(words, MAX_LENGTH, skip)
      want_ids, want_empty = siamese_cbow_data.heldout_lines(
          self.corpus.files[1], limit + skip, to_ids)
      self.assertAllEqual(ids.row_splits, want_ids.row_splits)
      self.assertAllEqual(ids.flat_values, want_ids.flat_values)
      self.assertAllEqual(empty, want_empty)
    for layout in siamese_cbow_data.BATCH_LAYOUTS:
      args = dict(batch_size=2, max_length=MAX_LENGTH, seed=3,
                  negatives="nearby", batch_layout=layout)
      want = list(siamese_cbow_data.group_dataset(
          siamese_cbow_data.line_mixes(self.corpus.files, to_ids, **mixes),
          **args))
      got = list(siamese_cbow_data.group_dataset(
          cache.mixes(words, MAX_LENGTH), **args))
      self.assertNotEmpty(want)
      self.assertLen(got, len(want))
      for a, b in zip(got, want):
        tf.nest.map_structure(self.assertAllEqual, a, b)
      self.assertLen(want, siamese_cbow_data.count_batches(
          cache.row_lengths(words), batch_size=2, max_length=MAX_LENGTH))
    # Without a line limit there is no tail.
    plain = siamese_cbow_data.TokenCache.write(
        os.path.join(self.dir, "plain"), self.corpus.files,
        to_ids.tokenizer, log=lambda line: None)
    self.assertEqual(plain.tail(words, MAX_LENGTH)[0].shape.as_list(),
                     [0, None])
    with self.assertRaisesRegex(ValueError, "only the last file"):
      siamese_cbow_data.TokenCache.write(
          os.path.join(self.dir, "refused"), self.corpus.files,
          to_ids.tokenizer, line_limits=[3, -1])

  def test_batches_are_those_of_tensorflows_ragged_ops(self):
    # The linear row ids and masks (inputs/ragged_rows.py) change no batch:
    # the same pipeline with TensorFlow's own ops gives the same ones.
    vocabulary = self.corpus.vocabulary
    keep = np.linspace(0.2, 1.0, vocabulary.size_with_padding).astype(
        np.float32)

    def run():
      to_ids = text_to_ids_lib.TextToIds(vocabulary)
      args = dict(batch_size=3, max_length=MAX_LENGTH, block_lines=16,
                  blocks_per_mix=2)
      count = count_batches(self.corpus.files, to_ids,
                                              **args)
      batches = list(group_dataset(
          self.corpus.files, to_ids, num_negatives=2, seed=5,
          keep_probability=keep, **args).as_numpy_iterator())
      return count, batches

    count, batches = run()
    with mock.patch.object(
        ragged_rows, "keep_values",
        lambda rt, keep: tf.ragged.boolean_mask(rt, rt.with_flat_values(
            keep))):
      old_count, old_batches = run()
    self.assertEqual(count, old_count)
    self.assertGreater(count, 3)
    self.assertLen(batches, len(old_batches))
    for new, old in zip(batches, old_batches):
      self.assertAllEqual(new, old)


if __name__ == "__main__":
  tf.test.main()
