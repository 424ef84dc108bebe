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

import tensorflow as tf

from sentzoo.inputs import corpus as corpus_lib
from sentzoo.inputs import ragged_rows

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


def _valid_centers(ids, min_sentence_ids=1):
  """Indices i whose sentence and both neighbours have at least
  `min_sentence_ids` ids: ([groups], bool [lines] valid sentences)."""
  valid = ids.row_lengths() >= max(1, min_sentence_ids)
  ok = valid[1:-1] & valid[:-2] & valid[2:]
  return tf.cast(tf.where(ok)[:, 0] + 1, tf.int32), valid


def _draw_negatives(lines, centers, valid, num_negatives, negatives, seed,
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
  # Document of each line: boundaries ("") so far. Candidates are in line
  # order, so each document's candidates are one contiguous range.
  document = tf.cumsum(tf.cast(tf.equal(lines, ""), tf.int32))
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


def _group_members(lines, text_to_ids, num_negatives, max_length, seed,
                   negatives="mix", min_sentence_ids=1,
                   nearby_window=NEARBY_WINDOW, keep_probability=None,
                   shuffle=True):
  """The groups of one block of lines, as line indices.

  Args:
    lines: tf.string [block] raw lines in corpus order; "" marks a document
      boundary.
    text_to_ids: an `inputs.text_to_ids.TextToIds`.
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
  ids = text_to_ids(lines)
  ids = ids[:, :max_length]
  centers, valid = _valid_centers(ids, min_sentence_ids)
  seed_negatives, seed_order = tf.unstack(
      tf.random.experimental.stateless_split(seed, 2))
  negatives = _draw_negatives(lines, centers, valid, num_negatives, negatives,
                              seed_negatives, nearby_window)
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


def group_dataset(file_patterns, text_to_ids, batch_size=100, num_negatives=2,
                  max_length=50, num_epochs=1, block_lines=2048,
                  blocks_per_mix=8, length_multiple=8, shuffle_batches=64,
                  seed=0, negatives="mix", min_sentence_ids=1,
                  line_limits=None, nearby_window=NEARBY_WINDOW,
                  keep_probability=None, batch_layout="by_length"):
  """Batches of Siamese CBOW groups for `num_epochs` passes over the corpus.

  Args (the others as `_group_members`):
    file_patterns: corpus files (comma-separated globs or a list).
    block_lines: lines read from one file at a time.
    blocks_per_mix: blocks (from different files, when there are several)
      whose sentences are shuffled together and serve as negatives.
    length_multiple: batches are padded to a multiple of this length (at most
      `max_length`), see `_bucket_by_length`.
    shuffle_batches: batches of different lengths are shuffled in a buffer
      this large.
    seed: makes negatives and order reproducible; iterator state checkpoints.
    line_limits: optional lines read per file (-1: all).
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
  files = corpus_lib.list_files(file_patterns)
  # Mixes are cut per epoch, then repeated: a mix spanning two epochs would
  # drop a different remainder than `count_batches` counts.
  mixed = _mixes(files, block_lines, blocks_per_mix,
                 line_limits).repeat(num_epochs)

  def to_batches(index, block):
    block_seed = tf.stack([tf.constant(seed, tf.int64), index])
    seed_groups, seed_buckets = tf.unstack(
        tf.random.experimental.stateless_split(block_seed, 2))
    ids, members = _group_members(
        _flatten_mix(block), lambda lines: _ids_in_chunks(text_to_ids, lines),
        num_negatives, max_length, seed_groups, negatives=negatives,
        min_sentence_ids=min_sentence_ids,
        nearby_window=nearby_window, keep_probability=keep_probability,
        shuffle=batch_layout == "by_length")
    if batch_layout == "consecutive":
      return consecutive_batches(ids, members, batch_size)
    return _bucket_by_length(_gather_groups(ids, members, max_length),
                             batch_size, length_multiple, seed_buckets)

  # One mix at a time, ahead of the step: each in flight holds its
  # intermediate tensors (`_ids_in_chunks`), and one keeps ~3x ahead of the
  # Siamese CBOW step on 2 cores; AUTOTUNE (2 on 2 cores) holds more memory
  # for no speed (docs/design_measurements.md).
  batches = mixed.enumerate().map(to_batches, num_parallel_calls=1,
                                  deterministic=True).unbatch()
  if batch_layout == "by_length":
    batches = batches.map(lambda batch, length: batch[:, :, :length])
  if shuffle_batches > 1:
    batches = batches.shuffle(shuffle_batches, seed=seed)
  return batches.prefetch(tf.data.AUTOTUNE)


def count_batches(file_patterns, text_to_ids, batch_size=100, max_length=50,
                  block_lines=2048, blocks_per_mix=8, min_sentence_ids=1,
                  line_limits=None):
  """Batches in one epoch of `group_dataset` with the same settings."""
  mixed = _mixes(corpus_lib.list_files(file_patterns), block_lines,
                 blocks_per_mix, line_limits)

  def count(block):
    ids = _ids_in_chunks(text_to_ids, _flatten_mix(block))[:, :max_length]
    groups = tf.shape(_valid_centers(ids, min_sentence_ids)[0],
                      out_type=tf.int64)[0]
    return groups // batch_size

  counts = mixed.map(count, num_parallel_calls=tf.data.AUTOTUNE)
  return int(counts.reduce(tf.constant(0, tf.int64), lambda a, b: a + b))


def heldout_groups(file, first_line, text_to_ids, num_negatives, max_length,
                   max_groups, seed=0, min_sentence_ids=1, block_lines=4096):
  """Fixed groups from the lines of `file` from `first_line` on (held-out
  books), negatives drawn from all of those lines: an int32
  `tf.RaggedTensor` [<= max_groups, 3 + num_negatives, (<= max_length ids)],
  the ids of the groups of `_gather_groups` without their padding. The
  lines are turned into ids `block_lines` at a time: the same ids, without
  the tokeniser's intermediate tensors of all lines at once (the 20
  held-out books' 74k lines in one call added 171 MB to the trainer's
  resident set; in blocks of 4,096, 19 MB)."""
  lines = corpus_lib.line_dataset([file]).skip(first_line)
  lines = tf.concat(list(lines.batch(65536).as_numpy_iterator()) or
                    [tf.constant([], tf.string)], axis=0)

  ids, members = _group_members(
      lines, lambda lines: _ids_in_chunks(text_to_ids, lines, block_lines),
      num_negatives, max_length, tf.constant([seed, 0], tf.int64),
      min_sentence_ids=min_sentence_ids)
  # The first `max_groups` groups only, and without padding: the trainer
  # keeps them for every evaluation (the 20 held-out books' ~70k groups of
  # 13 x 50 ids were 180 MB; its 5,000 padded, 12.4 MB; ragged, 5.9 MB).
  members = members[:max_groups]
  return tf.RaggedTensor.from_uniform_row_length(
      tf.gather(ids, tf.reshape(members, [-1])), members.shape[1])
