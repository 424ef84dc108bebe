"""tf.data pipeline of Siamese CBOW training groups from an ordered corpus.

A group is (s_i, s_{i-1}, s_{i+1}, n negatives): a sentence, the sentences
before and after it in the same document, and n sentences drawn at random.
The corpus is streamed in blocks of lines and every block is processed with
vectorised ops, so memory does not grow with the corpus and no Python runs per
line. Blocks from different files are mixed, so most negatives come from
other documents (the reference code draws them uniformly from the corpus).

Differences from the reference code, on purpose: groups never cross a document
boundary (the reference's Toronto iterator may), and neighbours that fall in
different blocks are not paired (one group lost per block edge, ~0.1%).

Where negatives come from (`negatives=`): "mix", any sentence of the mixed
blocks (mostly other books: the reference's uniform corpus draw, which a
model can satisfy by learning which book a sentence is from); "document",
only sentences of the centre's own document (book identity no longer tells
a neighbour from a negative); "nearby", sentences of the centre's document
at most `nearby_window` usable sentences away (same book and same part of
the story: only what the sentence itself says is left to go on).

How groups are cut into batches (`batch_layout=`): "by_length", groups
shuffled within the mix and cut by the length of their longest member (the
reference's random triples; every batch a dense [batch, 3 + n, length]
tensor); "consecutive", the groups of consecutive centres, in corpus order,
where each batch lists its distinct sentences once (a sentence is the centre
of one group, a neighbour in two and often a nearby negative of others: with
configs/siamese_cbow_best.flags a batch of 100 groups holds 138 distinct
sentences and 2.6k ids instead of 500 and 9.2k, over 1,000 batches; the step
averages and updates each sentence once).

Subsampling (`keep_probability=`, not in the Siamese CBOW paper): every word
occurrence of a training sentence is kept with its word's probability (e.g.
word2vec's and Sent2Vec's min(1, sqrt(t/f) + t/f)), after the groups are
chosen, so the groups and the batch count do not change; a sentence may lose
all its words (its average is then zero). Held-out groups are never
subsampled.
"""

import os
import shutil
import time

import numpy as np
import tensorflow as tf

from sentzoo.inputs import corpus as corpus_lib
from sentzoo.inputs import ragged_rows
from sentzoo.inputs import token_cache

# Members of a group, in order along axis 1 of every batch.
CENTER, PREVIOUS, NEXT = 0, 1, 2
NUM_POSITIVES = 2
NEGATIVE_SOURCES = ("mix", "document", "nearby")
BATCH_LAYOUTS = ("by_length", "consecutive")
# "nearby" negatives: by default at most this many usable sentences before or
# after the centre.
NEARBY_WINDOW = 50
# Lines turned into ids at a time (`_ids_in_chunks`).
CHUNK_LINES = 2048


def _mixes(files, block_lines, blocks_per_mix, line_limits=None):
  """Mixes of `blocks_per_mix` blocks of `block_lines` raw lines, the blocks
  round-robin over the files: tf.string [mixes, blocks, lines].

  `line_limits`: optional lines read per file (-1: all), e.g. to keep the
  held-out books at the end of the last file out of training.
  """
  if line_limits is None:
    line_limits = [-1] * len(files)
  per_file = corpus_lib.without_autotune_thread(
      tf.data.Dataset.from_tensor_slices(
          (files, tf.constant(line_limits, tf.int64))))
  return per_file.interleave(
      lambda f, limit: corpus_lib.line_dataset_from_tensor(f).take(
          limit).batch(block_lines),
      cycle_length=max(1, len(files)), block_length=1,
      num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).padded_batch(
          blocks_per_mix, padding_values="")


def _flatten_mix(blocks):
  """[mix, lines] blocks -> [mix * (lines + 1)] lines with a boundary after
  each block, so no group spans two blocks."""
  blocks = tf.concat([blocks, tf.fill([tf.shape(blocks)[0], 1], "")], axis=1)
  return tf.reshape(blocks, [-1])


def _ids_in_chunks(text_to_ids, lines, chunk_lines=CHUNK_LINES):
  """`text_to_ids(lines)`, `chunk_lines` lines at a time, one chunk after
  another (a graph loop, eagerly too): the same ids, with the tokeniser's
  intermediate tensors of one chunk at a time: less memory at the same
  speed (docs/design_measurements.md); each mix the input pipeline has in
  flight adds that much to the Siamese CBOW trainer's RSS.
  """
  n = tf.shape(lines)[0]
  chunks = tf.maximum((n + chunk_lines - 1) // chunk_lines, 1)
  padded = tf.pad(lines, [[0, chunks * chunk_lines - n]])
  per_chunk = tf.map_fn(
      text_to_ids, tf.reshape(padded, [chunks, chunk_lines]),
      fn_output_signature=tf.RaggedTensorSpec(
          [chunk_lines, None], tf.int32, ragged_rank=1,
          row_splits_dtype=tf.int64),
      parallel_iterations=1)
  return per_chunk.merge_dims(0, 1)[:n]


def _line_ids(text_to_ids, lines, chunk_lines=CHUNK_LINES):
  """(int32 ragged [lines, (ids)], bool [lines] empty lines) of raw lines."""
  return _ids_in_chunks(text_to_ids, lines, chunk_lines), tf.equal(lines, "")


def _valid_centers(row_lengths, min_sentence_ids=1):
  """Indices i whose sentence and both neighbours have at least
  `min_sentence_ids` ids (`row_lengths`: the lines' ids): ([groups], bool
  [lines] valid sentences)."""
  valid = row_lengths >= max(1, min_sentence_ids)
  ok = valid[1:-1] & valid[:-2] & valid[2:]
  return tf.cast(tf.where(ok)[:, 0] + 1, tf.int32), valid


def _draw_negatives(boundary, centers, valid, num_negatives, negatives, seed,
                    nearby_window=NEARBY_WINDOW):
  """Line indices of n negatives per centre: int32 [groups, n].

  "mix": uniform over every valid sentence of the block. "document": uniform
  over the valid sentences of the centre's document (at least the centre and
  its two neighbours, so never empty). "nearby": the same, within
  `nearby_window` valid sentences of the centre.
  """
  if negatives not in NEGATIVE_SOURCES:
    raise ValueError(f"negatives must be one of {NEGATIVE_SOURCES}, got "
                     f"{negatives!r}")
  candidates = tf.cast(tf.where(valid)[:, 0], tf.int32)
  shape = [tf.shape(centers)[0], num_negatives]
  if negatives == "mix":
    picks = tf.random.stateless_uniform(
        shape, seed, minval=0,
        maxval=tf.maximum(tf.shape(candidates)[0], 1), dtype=tf.int32)
    return tf.gather(candidates, picks)
  # Document of each line: boundaries (empty lines) so far. Candidates are
  # in line order, so each document's candidates are one contiguous range.
  document = tf.cumsum(tf.cast(boundary, tf.int32))
  candidate_document = tf.gather(document, candidates)
  center_document = tf.gather(document, centers)
  first = tf.searchsorted(candidate_document, center_document, side="left")
  end = tf.searchsorted(candidate_document, center_document, side="right")
  if negatives == "nearby":
    position = tf.searchsorted(candidates, centers, side="left")
    first = tf.maximum(first, position - nearby_window)
    end = tf.minimum(end, position + nearby_window + 1)
  uniform = tf.random.stateless_uniform(shape, seed)
  offsets = tf.cast(
      uniform * tf.cast(end - first, tf.float32)[:, None], tf.int32)
  offsets = tf.minimum(offsets, (end - first - 1)[:, None])
  return tf.gather(candidates, first[:, None] + offsets)


def subsample(ids, keep_probability, seed):
  """int32 ragged [lines, (ids)] -> [lines, (kept ids)], in order: each id
  kept with probability `keep_probability[id]` (float32 [vocabulary size
  with padding]), drawn from the stateless `seed` (int [2])."""
  draws = tf.random.stateless_uniform(tf.shape(ids.flat_values), seed)
  keep = draws < tf.gather(keep_probability, ids.flat_values)
  return ragged_rows.keep_values(ids, keep)


def _gather_groups(ids, members, max_length):
  """The id rows of `members` (line indices [groups, k]) from the ragged
  ids: int32 [groups, k, max_length]."""
  dense = ids.to_tensor(shape=[None, max_length])
  return tf.gather(dense, members)


def _group_members(ids, boundary, num_negatives, max_length, seed,
                   negatives="mix", min_sentence_ids=1,
                   nearby_window=NEARBY_WINDOW, keep_probability=None,
                   shuffle=True):
  """The groups of one block of lines, as line indices.

  Args:
    ids: int32 ragged [lines, (ids)]: the word ids of the block's lines in
      corpus order (`_line_ids`).
    boundary: bool [lines]: the empty lines, which end documents.
    num_negatives: n, negatives per group.
    max_length: L, ids kept per sentence (longer ones are truncated).
    seed: int [2] stateless seed for this block.
    negatives: where negatives come from, one of `NEGATIVE_SOURCES`.
    min_sentence_ids: sentences with fewer ids are neither centres,
      neighbours nor negatives (1: only empty ones are left out).
    nearby_window: with negatives="nearby", how many usable sentences before
      or after the centre a negative may be.
    keep_probability: optional float32 [vocabulary size with padding]: the
      ids are subsampled with it (`subsample`) once the groups are chosen.
    shuffle: the groups shuffled, or in corpus order.

  Returns:
    (int32 ragged [lines, (<= L ids)], int32 [groups, 3 + n] line indices:
    center, previous, next, negatives); `_gather_groups` makes the padded
    id rows of the groups.
  """
  ids = ids[:, :max_length]
  centers, valid = _valid_centers(ids.row_lengths(), min_sentence_ids)
  seed_negatives, seed_order = tf.unstack(
      tf.random.experimental.stateless_split(seed, 2))
  negatives = _draw_negatives(boundary, centers, valid, num_negatives,
                              negatives, seed_negatives, nearby_window)
  members = tf.concat(
      [centers[:, None], centers[:, None] - 1, centers[:, None] + 1, negatives],
      axis=1)
  if shuffle:
    members = tf.random.experimental.stateless_shuffle(members, seed_order)
  if keep_probability is not None:
    # Its own stream: the groups stay those of the run without subsampling.
    ids = subsample(ids, keep_probability,
                    tf.random.experimental.stateless_fold_in(seed, 1))
  return ids, members


def _bucket_by_length(groups, batch_size, length_multiple, seed):
  """Cuts a block's groups into batches of similar length.

  Groups are sorted by their longest member and cut into full batches (the
  remainder of each block, fewer than `batch_size` groups, is dropped, like
  the reference's last partial batch); each batch keeps only the columns its
  longest member needs, rounded up to `length_multiple`, so XLA sees a few
  distinct shapes and the step does not gather and scatter padding.

  Returns:
    (int32 [batches, batch_size, k, max_length], int32 [batches] lengths).
  """
  lengths = tf.reduce_max(
      tf.reduce_sum(tf.cast(groups > 0, tf.int32), axis=2), axis=1)
  # Random tie-breaking, so equal-length groups do not stay in corpus order.
  noise = tf.random.stateless_uniform(tf.shape(lengths), seed)
  order = tf.argsort(tf.cast(lengths, tf.float32) + noise)
  num_batches = tf.shape(groups)[0] // batch_size
  order = tf.reshape(order[:num_batches * batch_size], [num_batches, batch_size])
  batches = tf.gather(groups, order)
  batch_lengths = tf.reduce_max(tf.gather(lengths, order), axis=1)
  padded = (batch_lengths + length_multiple - 1) // length_multiple
  return batches, tf.minimum(padded * length_multiple, tf.shape(groups)[2])


def consecutive_batches(ids, members, batch_size):
  """Cuts groups in corpus order into batches of `batch_size` consecutive
  groups (the remainder, fewer than `batch_size`, is dropped, as by length),
  each listing its distinct sentences once.

  Args:
    ids: int32 RaggedTensor [lines, (ids)].
    members: int32 [groups, k] line indices (`_group_members`).
    batch_size: groups per batch.

  Returns:
    A dict of per-batch values, ragged along axis 1 where the batches
    differ: "flat_ids" int32 [batches, (tokens)], the ids of the batch's
    distinct sentences one after another; "sentence" int32
    [batches, (tokens)], the batch's sentence of each id (0, 1, ... in
    order of first use); "members" int32 [batches, batch_size, k], the
    groups' sentences, as indices into the batch's sentences.
  """
  num_batches = tf.shape(members)[0] // batch_size
  k = tf.shape(members)[1]
  members = tf.reshape(members[:num_batches * batch_size],
                       [num_batches, batch_size, k])
  lines = tf.cast(ids.nrows(), tf.int32)
  # One key per (batch, line): a line used by two batches is listed by each.
  keys = tf.range(num_batches)[:, None, None] * lines + members
  # tf.unique keeps the order of first use, so each batch's distinct keys
  # follow those of the batches before it.
  distinct, index = tf.unique(tf.reshape(keys, [-1]))
  batch_of_distinct = distinct // lines
  distinct_per_batch = tf.math.bincount(
      batch_of_distinct, minlength=num_batches, maxlength=num_batches,
      dtype=tf.int32)
  first = tf.cumsum(distinct_per_batch, exclusive=True)
  local_members = tf.reshape(index, tf.shape(keys)) - first[:, None, None]
  rows = tf.gather(ids, distinct % lines)
  local_sentence = (tf.range(tf.shape(distinct)[0])
                    - tf.gather(first, batch_of_distinct))
  tokens_per_batch = tf.math.unsorted_segment_sum(
      tf.cast(rows.row_lengths(), tf.int32), batch_of_distinct, num_batches)
  return {
      "flat_ids": tf.RaggedTensor.from_row_lengths(rows.flat_values,
                                                   tokens_per_batch),
      "sentence": tf.RaggedTensor.from_row_lengths(
          tf.repeat(local_sentence, rows.row_lengths()), tokens_per_batch),
      "members": local_members}


def line_mixes(file_patterns, text_to_ids, block_lines=2048,
               blocks_per_mix=8, line_limits=None):
  """The corpus's mixes, turned into ids: a Dataset of (int32 ragged
  [lines, (ids)], bool [lines] empty lines) per mix of `blocks_per_mix`
  blocks of `block_lines` lines (`_mixes`), its blocks one after another,
  each followed by an empty line.

  Args:
    file_patterns: corpus files (comma-separated globs or a list).
    text_to_ids: an `inputs.text_to_ids.TextToIds`.
    block_lines: lines read from one file at a time.
    blocks_per_mix: blocks (from different files, when there are several)
      whose sentences are shuffled together and serve as negatives.
    line_limits: optional lines read per file (-1: all).
  """
  return _mixes(corpus_lib.list_files(file_patterns), block_lines,
                blocks_per_mix, line_limits).map(
                    lambda block: _line_ids(text_to_ids, _flatten_mix(block)))


def group_dataset(mixes, batch_size=100, num_negatives=2, max_length=50,
                  num_epochs=1, length_multiple=8, shuffle_batches=64,
                  seed=0, negatives="mix", min_sentence_ids=1,
                  nearby_window=NEARBY_WINDOW, keep_probability=None,
                  batch_layout="by_length"):
  """Batches of Siamese CBOW groups for `num_epochs` passes over the corpus.

  Args (the others as `_group_members`):
    mixes: the corpus's mixes, `line_mixes` or `TokenCache.mixes`.
    length_multiple: batches are padded to a multiple of this length (at most
      `max_length`), see `_bucket_by_length`.
    shuffle_batches: batches of different lengths are shuffled in a buffer
      this large.
    seed: makes negatives and order reproducible; iterator state checkpoints.
    batch_layout: one of `BATCH_LAYOUTS` (see the module docstring).

  Returns:
    tf.data.Dataset. "by_length": int32 [batch_size, 3 + num_negatives,
    length] with length <= max_length a multiple of `length_multiple` (or
    max_length). "consecutive": one batch of `consecutive_batches` (dicts
    of "flat_ids" [tokens], "sentence" [tokens] and "members"
    [batch_size, 3 + num_negatives]).
  """
  if batch_layout not in BATCH_LAYOUTS:
    raise ValueError(f"batch_layout must be one of {BATCH_LAYOUTS}, got "
                     f"{batch_layout!r}")

  # Plain Python branches only: traced without AutoGraph's conversion.
  @tf.autograph.experimental.do_not_convert
  def to_batches(index, mix):
    block_seed = tf.stack([tf.constant(seed, tf.int64), index])
    seed_groups, seed_buckets = tf.unstack(
        tf.random.experimental.stateless_split(block_seed, 2))
    ids, members = _group_members(
        *mix, num_negatives, max_length, seed_groups, negatives=negatives,
        min_sentence_ids=min_sentence_ids,
        nearby_window=nearby_window, keep_probability=keep_probability,
        shuffle=batch_layout == "by_length")
    if batch_layout == "consecutive":
      return consecutive_batches(ids, members, batch_size)
    return _bucket_by_length(_gather_groups(ids, members, max_length),
                             batch_size, length_multiple, seed_buckets)

  # Mixes are cut per epoch, then repeated: a mix spanning two epochs would
  # drop a different remainder than `count_batches` counts. One mix at a
  # time, ahead of the step: each in flight holds its intermediate tensors
  # (`_ids_in_chunks`), and one keeps ~3x ahead of the Siamese CBOW step on
  # 2 cores; AUTOTUNE (2 on 2 cores) holds more memory for no speed
  # (docs/design_measurements.md).
  batches = mixes.repeat(num_epochs).enumerate().map(
      to_batches, num_parallel_calls=1, deterministic=True).unbatch()
  if batch_layout == "by_length":
    batches = batches.map(lambda batch, length: batch[:, :, :length])
  if shuffle_batches > 1:
    batches = batches.shuffle(shuffle_batches, seed=seed)
  return batches.prefetch(tf.data.AUTOTUNE)


def count_batches(row_lengths, batch_size=100, max_length=50,
                  min_sentence_ids=1):
  """Batches in one epoch of `group_dataset` with the same settings, of the
  mixes whose lines have `row_lengths` ids (a Dataset of int [lines] per
  mix: `TokenCache.row_lengths`, or the `line_mixes`' ids' row lengths)."""

  @tf.autograph.experimental.do_not_convert
  def count(lengths):
    groups = tf.shape(_valid_centers(tf.minimum(lengths, max_length),
                                     min_sentence_ids)[0],
                      out_type=tf.int64)[0]
    return groups // batch_size

  counts = row_lengths.map(count, num_parallel_calls=tf.data.AUTOTUNE)
  return int(counts.reduce(tf.constant(0, tf.int64), lambda a, b: a + b))


def heldout_lines(file, first_line, text_to_ids, block_lines=4096):
  """(ids, empty lines) of the lines of `file` from `first_line` on, as
  `_line_ids` gives them, `block_lines` at a time: the same ids, without the
  tokeniser's intermediate tensors of all lines at once (the 20 held-out
  books' 74k lines in one call added 171 MB to the trainer's resident set;
  in blocks of 4,096, 19 MB)."""
  lines = corpus_lib.line_dataset([file]).skip(first_line)
  lines = tf.concat(list(lines.batch(65536).as_numpy_iterator()) or
                    [tf.constant([], tf.string)], axis=0)
  return tf.function(_line_ids)(text_to_ids, lines, block_lines)


def heldout_groups(ids, boundary, num_negatives, max_length, max_groups,
                   seed=0, min_sentence_ids=1):
  """Fixed groups of held-out lines (`heldout_lines`: their ids and empty
  lines), negatives drawn from all of those lines: an int32
  `tf.RaggedTensor` [<= max_groups, 3 + num_negatives, (<= max_length ids)],
  the ids of the groups of `_gather_groups` without their padding."""
  ids, members = _group_members(
      ids, boundary, num_negatives, max_length,
      tf.constant([seed, 0], tf.int64), min_sentence_ids=min_sentence_ids)
  # The first `max_groups` groups only, and without padding: the trainer
  # keeps them for every evaluation (the 20 held-out books' ~70k groups of
  # 13 x 50 ids were 180 MB; its 5,000 padded, 12.4 MB; ragged, 5.9 MB).
  members = members[:max_groups]
  return tf.RaggedTensor.from_uniform_row_length(
      tf.gather(ids, tf.reshape(members, [-1])), members.shape[1])


class TokenCache:
  """A corpus tokenised once: every mix of `line_mixes`, and the lines after
  the last file's line limit (held-out books), as word ids, on disk.

  The training pipeline then reads word ids instead of tokenising the text
  (the regex split, lower case and lookup were nearly all of its work), and
  the one pass that writes the cache also counts the words: the vocabulary
  and the batch count need no pass over the text of their own. The ids are
  "provisional": one per distinct token, in order of first occurrence
  (`words`); `mixes` and `tail` map them to a vocabulary's ids, so any
  vocabulary of the same tokens reads the same cache, and gives the ids
  `line_mixes` gives.

  A directory: words.tsv (token TAB count, in id order), mixes.tfrecord (one
  record per mix, `token_cache.encode_block` of its ids and empty lines) and
  tail.tfrecord (the tail's lines, 16,384 a record); written under a
  temporary name and renamed when complete.
  """

  WORDS, MIXES, TAIL = "words.tsv", "mixes.tfrecord", "tail.tfrecord"
  TAIL_LINES = 16384

  def __init__(self, directory):
    self.directory = directory
    with open(os.path.join(directory, self.WORDS), "rb") as f:
      rows = [line.split(b"\t") for line in f.read().splitlines()]
    self.words = [word for word, _ in rows]
    self.counts = np.array([count for _, count in rows],
                           np.bytes_).astype(np.int64)

  def counter(self):
    """{token bytes: corpus count} (what `vocabulary.count_words` counts)."""
    return dict(zip(self.words, self.counts.tolist()))

  @classmethod
  def write(cls, directory, files, tokenizer, block_lines=2048,
            blocks_per_mix=8, line_limits=None, log=print):
    """Tokenises `files` (and the rest of the last file after its limit)
    into `directory` once; returns the `TokenCache`."""
    line_limits = list(line_limits or [-1] * len(files))
    if any(limit >= 0 for limit in line_limits[:-1]):
      raise ValueError("only the last file may have a line limit")
    words = {}  # Token -> provisional id.
    counts = np.zeros([0], np.int64)
    temporary = f"{directory}.tmp-{os.getpid()}"
    shutil.rmtree(temporary, ignore_errors=True)
    os.makedirs(temporary)
    start = time.time()

    def tokens(lines):
      split = tokenizer.tokenize(lines)
      unique, index = tf.unique(split.flat_values)
      return unique, index, split.row_lengths(), tf.equal(lines, "")

    def write_records(name, chunks):
      nonlocal counts
      with tf.io.TFRecordWriter(os.path.join(temporary, name)) as writer:
        for unique, index, lengths, empty in chunks.map(
            tokens, num_parallel_calls=2, deterministic=True).prefetch(
                1).as_numpy_iterator():
          ids = np.fromiter((words.setdefault(w, len(words))
                             for w in unique.tolist()), np.int32, len(unique))
          flat = ids[index]
          counts = np.pad(counts, [0, len(words) - len(counts)])
          counts += np.bincount(flat, minlength=len(words))
          writer.write(token_cache.encode_block(
              tf.RaggedTensor.from_row_lengths(flat, lengths),
              empty).numpy())

    log(f"token cache: tokenising the corpus once into {directory}")
    write_records(cls.MIXES, _mixes(files, block_lines, blocks_per_mix,
                                    line_limits).map(_flatten_mix))
    rest = (corpus_lib.line_dataset_from_tensor(files[-1]).skip(
        line_limits[-1]) if line_limits[-1] >= 0
            else tf.data.Dataset.from_tensor_slices(tf.constant([], tf.string)))
    write_records(cls.TAIL, corpus_lib.without_autotune_thread(
        rest).batch(cls.TAIL_LINES))
    with open(os.path.join(temporary, cls.WORDS), "wb") as f:
      f.writelines(b"%s\t%d\n" % (w, c) for w, c in zip(words, counts))
    try:
      os.replace(temporary, directory)
    except OSError:  # Another run wrote it first.
      shutil.rmtree(temporary, ignore_errors=True)
    log(f"token cache: {len(words):,} distinct tokens, {int(counts.sum()):,} "
        f"tokens ({time.time() - start:.0f}s)")
    return cls(directory)

  def _id_table(self, vocabulary_words):
    """int32 [tokens]: each cached token's id in `vocabulary_words` (id =
    position + 1), 0 if it has none."""
    index = {w.encode("utf-8"): i for i, w in enumerate(vocabulary_words, 1)}
    return tf.constant(np.array([index.get(w, 0) for w in self.words],
                                np.int32).reshape([-1]))

  def _records(self, name, vocabulary_words, max_length):
    """The records of `name` as (int32 ragged [lines, (ids)], bool [lines]
    empty lines), ids of `vocabulary_words`."""
    table = self._id_table(vocabulary_words)

    @tf.autograph.experimental.do_not_convert
    def decode(record):
      ids, empty = token_cache.decode_block(record)
      ids = ids.with_flat_values(tf.gather(table, ids.flat_values))
      return (ragged_rows.keep_values(ids, ids.flat_values > 0)[
          :, :max_length], empty > 0)

    return corpus_lib.without_autotune_thread(tf.data.TFRecordDataset(
        os.path.join(self.directory, name))).map(decode)

  def row_lengths(self, vocabulary_words):
    """int32 [lines] per mix: how many of each line's tokens
    `vocabulary_words` knows (`count_batches`' input)."""
    table = self._id_table(vocabulary_words)

    @tf.autograph.experimental.do_not_convert
    def known(record):
      ids, _ = token_cache.decode_block(record)
      so_far = tf.concat([[0], tf.cumsum(tf.cast(
          tf.gather(table, ids.flat_values) > 0, tf.int32))], 0)
      return (tf.gather(so_far, ids.row_splits[1:])
              - tf.gather(so_far, ids.row_splits[:-1]))

    return corpus_lib.without_autotune_thread(tf.data.TFRecordDataset(
        os.path.join(self.directory, self.MIXES))).map(
            known, num_parallel_calls=tf.data.AUTOTUNE)

  def mixes(self, vocabulary_words, max_length):
    """The mixes, as `line_mixes` gives them with a `TextToIds` of
    `vocabulary_words` and `max_length`."""
    return self._records(self.MIXES, vocabulary_words, max_length)

  def tail(self, vocabulary_words, max_length, skip_lines=0):
    """(ids, empty lines) of the lines after the last file's limit, less the
    first `skip_lines`, as `heldout_lines` gives them."""
    ids, empty = [], []
    for part_ids, part_empty in self._records(self.TAIL, vocabulary_words,
                                              max_length):
      ids.append(part_ids)
      empty.append(part_empty)
    if not ids:
      return (tf.RaggedTensor.from_row_lengths(
          tf.zeros([0], tf.int32), tf.zeros([0], tf.int64)),
              tf.zeros([0], tf.bool))
    return tf.concat(ids, 0)[skip_lines:], tf.concat(empty, 0)[skip_lines:]
