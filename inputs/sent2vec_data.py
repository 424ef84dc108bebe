"""tf.data pipeline of Sent2Vec training batches (Pagliardini et al., NAACL 2018).

Every batch is one block of consecutive corpus lines, turned into flat arrays
by vectorised ops (no Python per line):

- target selection: position i is a target if uniform < q(w_i) =
  min(1, sqrt(t/f) + t/f) and count(w_i) >= min_count_label (the reference
  C++ code's subsampling; the context side is not subsampled);
- n-gram dropout: per sentence K token positions are chosen (at most
  length - 2) and every n-gram (n > 1) touching one is left out, unigrams kept;
- negatives: `num_negatives` words per target from a distribution
  proportional to sqrt(count), redrawn when equal to the target; or, with
  `negative_group` g > 1 (faster), one draw shared by g consecutive targets,
  masked where equal to the target;
- the context of a target is the sentence's unigrams and n-grams without the
  target word and the n-grams containing it (`context="remove"`), or, as the
  C++ code does, with the target replaced by a zero placeholder that also forms
  n-grams (`context="placeholder"`).

Random draws are keyed per corpus line: every uniform number is an output
of SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
generators", OOPSLA 2014; the 64-bit finaliser of Vigna's splitmix64.c)
started at a key made from (seed, stream, the line's global number), at a
counter made from (position in the line, draw index), computed by
vectorised 64-bit integer ops (`line_keys`, `uniform`). A line therefore
gets the same targets, dropout positions and negatives (with
negative_group=1) whichever block or sub-block it is read in: a block cut
into one piece per replica (`batch_dataset(pieces=...)`, distributed
training) draws exactly what the whole block draws on one device. With
negative_group g > 1 a group is g consecutive targets of one batch, so the
groups (and their shared draws, keyed by the group's first target) depend on
how the block is split.

Sentences with fewer than two known words or no target are left out (they
contribute no gradient). Differences from the C++ code, on purpose: dropout is
drawn once per sentence, not once per target, so all targets of a sentence
share one set of source rows (the step then costs O(tokens + targets x
negatives) rows instead of O(targets x tokens)).
"""

import numpy as np
import tensorflow as tf

from sentzoo.inputs import corpus as corpus_lib
from sentzoo.inputs import data_integrity
from sentzoo.inputs import ragged_rows
from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import token_cache as token_cache_lib

CONTEXT_VARIANTS = ("remove", "placeholder")

# Streams of independent draws (part of every key).
KEEP_STREAM, DROPOUT_STREAM, NEGATIVE_STREAM = 1, 2, 3

_GOLDEN = 0x9E3779B97F4A7C15  # SplitMix64's increment (2^64 / phi, odd).


def _u64(value):
  return tf.constant(value, tf.uint64)


def _mix64(x):
  """SplitMix64's output function: a bijection of uint64 [any shape]."""
  x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u64(30)))
  x *= _u64(0xBF58476D1CE4E5B9)
  x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u64(27)))
  x *= _u64(0x94D049BB133111EB)
  return tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, _u64(31)))


def _as_uint64(x):
  return tf.bitcast(tf.cast(x, tf.int64), tf.uint64)


def splitmix(keys, counters):
  """Output `counters` (>= 0) of SplitMix64 generators started at `keys`.

  mix64(key + golden x (counter + 1)): for one key, consecutive counters are
  SplitMix64's output sequence. uint64, broadcast shapes.
  """
  return _mix64(keys + _u64(_GOLDEN) * (_as_uint64(counters) + _u64(1)))


def line_keys(seed, stream, line_numbers):
  """uint64 [lines]: the key of each line for one stream of draws.

  Args:
    seed: int [2] (or a scalar int): the run's seed and a sub-stream (e.g.
      the input pipeline reading its own files).
    stream: KEEP_STREAM, DROPOUT_STREAM or NEGATIVE_STREAM.
    line_numbers: int64 [lines], global numbers of the lines (unique over
      the run: epochs included).
  """
  seed = tf.reshape(tf.cast(seed, tf.int64), [-1])
  seed = tf.concat([seed, tf.zeros([2], tf.int64)], 0)[:2]
  base = splitmix(splitmix(_u64(0), seed[0]), seed[1])
  base = splitmix(base, tf.constant(stream, tf.int64))
  return splitmix(base, line_numbers)


def uniform(keys, counters, dtype=tf.float64):
  """Uniform numbers in [0, 1) from `splitmix(keys, counters)`.

  float64 takes the top 53 bits, float32 the top 24 (exact, never 1.0).
  """
  bits = splitmix(keys, counters)
  if dtype == tf.float64:
    return tf.cast(tf.bitwise.right_shift(bits, _u64(11)),
                   tf.float64) * (2.0 ** -53)
  if dtype == tf.float32:
    return tf.cast(tf.bitwise.right_shift(bits, _u64(40)),
                   tf.float32) * (2.0 ** -24)
  raise ValueError(f"unsupported dtype {dtype}")


def keep_probabilities(counts, total_tokens, sample, min_count_label):
  """q(w) = min(1, sqrt(t/f) + t/f), 0 below `min_count_label`: float32 [V+1].

  Args:
    counts: int [V] corpus counts of word ids 1..V.
    total_tokens: tokens in the corpus (f = count / total_tokens).
    sample: t (0 disables subsampling).
    min_count_label: words rarer than this are never targets.
  """
  counts = np.asarray(counts, np.float64)
  if sample > 0:
    ratio = sample * float(total_tokens) / np.maximum(counts, 1.0)
    keep = np.minimum(1.0, np.sqrt(ratio) + ratio)
  else:
    keep = np.ones_like(counts)
  keep = np.where(counts >= min_count_label, keep, 0.0)
  return np.concatenate([[0.0], keep]).astype(np.float32)


def negative_cdf(counts):
  """Cumulative distribution over word ids 1..V, proportional to
  sqrt(count): float64 [V]; `sample_negatives` draws id k + 1 with
  probability cdf[k] - cdf[k - 1]."""
  weights = np.power(np.asarray(counts, np.float64), 0.5)
  cdf = np.cumsum(weights)
  return cdf / cdf[-1]


def _ids_from_uniform(cdf, u):
  """Word ids 1..V for uniforms u (any shape) by inverting `cdf`: int32."""
  ids = tf.searchsorted(cdf, tf.reshape(u, [-1]), side="right")
  ids = tf.minimum(ids, tf.shape(cdf, out_type=ids.dtype)[0] - 1) + 1
  return tf.reshape(tf.cast(ids, tf.int32), tf.shape(u))


def shared_negatives(targets, cdf, num_negatives, group, keys):
  """Negatives shared by groups of `group` consecutive targets.

  Every target still sees `num_negatives` independent draws from the same
  distribution, but the k rows are shared by its group, so a step gathers
  and updates T / group x k target rows instead of T x k and scores them
  with dense matrix products. A draw equal to a target is masked for that
  target (weight 0) instead of redrawn. Group i draws from the key of its
  first target (`keys[i * group]`), so the draws depend on how targets fall
  into groups, i.e. on the batch.

  Args:
    targets: int32 [T] word ids.
    cdf: float64 [V] from `negative_cdf`.
    num_negatives: k.
    group: g.
    keys: uint64 [T], one key per target (see `make_batch_from_words`).

  Returns:
    (int32 [ceil(T / group), k] negatives, float32 [T, k] weights).
  """
  num_targets = tf.size(targets)
  group_keys = keys[::group]
  u = uniform(group_keys[:, None],
              tf.range(num_negatives, dtype=tf.int64)[None, :])
  negatives = _ids_from_uniform(cdf, u)
  per_target = tf.gather(negatives, tf.range(num_targets) // group)
  weights = tf.cast(tf.not_equal(per_target, targets[:, None]), tf.float32)
  return negatives, weights


def sample_negatives(targets, cdf, num_negatives, keys):
  """Negatives per target, redrawn (up to 3 times) when equal to it.

  Args:
    targets: int32 [T] word ids.
    cdf: float64 [V] from `negative_cdf`.
    num_negatives: k.
    keys: uint64 [T], one key per target: draw j of round r is
      `uniform(key, r * k + j)`, so a target's negatives depend only on its
      key (`make_batch_from_words` derives it from the line and position).

  Returns:
    (int32 [T, k] negatives, float32 [T, k] weights: 0 where a negative still
    equals its target after the redraws, which only the most frequent words
    can reach).
  """
  columns = tf.range(num_negatives, dtype=tf.int64)[None, :]

  def draw(r):
    return _ids_from_uniform(
        cdf, uniform(keys[:, None], columns + r * num_negatives))

  negatives = draw(0)
  for r in range(3):
    equal = tf.equal(negatives, targets[:, None])
    negatives = tf.where(equal, draw(r + 1), negatives)
  weights = tf.cast(tf.not_equal(negatives, targets[:, None]), tf.float32)
  return negatives, weights


def _ranks_within_rows(row, keys, starts):
  """Rank of each flat entry among its row's entries by `keys`: int32 [W]."""
  composite = tf.cast(row, tf.float64) + tf.cast(keys, tf.float64)
  order = tf.argsort(composite)
  size = tf.shape(row)[0]
  sorted_rank = tf.range(size) - tf.gather(starts, tf.gather(row, order))
  return tf.scatter_nd(order[:, None], sorted_rank, [size])


def make_batch_from_words(words, line_tokens, featurizer, keep_prob, cdf,
                          num_negatives=10, dropout_k=0, context="remove",
                          seed=(0, 0), negative_group=1, first_line=0):
  """One block of tokenised lines -> one training batch.

  The draws of line i are keyed by (seed, first_line + i) and positions in
  the line (see the module docstring): a block and its pieces (with their
  own `first_line`) draw the same for every line.

  Args:
    words: int32 ragged [lines, (known words)], the lines' word ids
      (`featurizer.word_ids_and_line_tokens`).
    line_tokens: int64 [lines], tokens per line (unknown words included).
    featurizer: `inputs.sent2vec_featurizer.Sent2VecFeaturizer`.
    keep_prob: float32 [V+1] from `keep_probabilities`.
    cdf: float64 [V] from `negative_cdf`.
    num_negatives: k.
    dropout_k: K token positions whose n-grams are dropped per sentence.
    context: "remove" or "placeholder" (see the module docstring).
    seed: int [2] (or int): the run's seed and sub-stream.
    negative_group: 1: independent negatives per target (the C++ code);
      g > 1: `shared_negatives` for groups of g consecutive targets of this
      batch.
    first_line: int64 [], global number of the first line (unique over the
      run).

  Returns:
    dict of tensors (S sentences, N source entries, T targets, E = 1 + sum of
    the n-gram orders 2..n excluded entries per target):
      source_ids int32 [N]: unigram and n-gram rows of the source table,
        sorted by sentence;
      source_row int32 [N]: sentence of each entry, in [0, S), sorted;
      sentence_size float32 [S]: entries per sentence;
      unique_ids int32 [U]: the distinct source rows of the batch;
      source_unique int32 [N]: index into unique_ids of each entry;
      unique_counts float32 [U]: entries per distinct row;
      excluded_unique int32 [T, E]: `excluded` as indices into unique_ids
        (U where none);
      grad_index, grad_segment int32 [N + X]: the sorted segment sum that
        gathers the source gradients (see `trainers.sent2vec_step`);
      target_ids int32 [T], target_row int32 [T];
      excluded int32 [T, E]: indices into source_ids of the entries left out
        of the target's context (its unigram first), N where none;
      added_ids int32 [T, E - 1]: placeholder n-gram rows added to the
        context (0 = none); [T, 0] unless context="placeholder";
      context_size float32 [T]: |context| (the mean's divisor);
      negatives int32 [T, k] (or [ceil(T / g), k] with negative_group g),
      negative_weights float32 [T, k];
      out_unique_ids int32 [U']: distinct target-table rows of
        concat([target_ids, flat negatives]) (R entries);
      out_counts float32 [U']: contributions summed into each;
      out_grad_index, out_grad_segment int32 [R]: sorted segment sum of the
        R target-table gradients into the U' distinct rows;
      num_tokens int64 [], num_lines int64 []: tokens (unknown words
        included) and lines read, for the learning rate and words/s.
  """
  if context not in CONTEXT_VARIANTS:
    raise ValueError(f"context must be one of {CONTEXT_VARIANTS}")
  order_max = featurizer.word_ngrams
  num_buckets = featurizer.num_buckets
  offset = featurizer.vocabulary_size
  num_lines = tf.size(line_tokens, tf.int64)
  line_numbers = tf.cast(first_line, tf.int64) + tf.range(num_lines)
  num_tokens = tf.reduce_sum(line_tokens)
  # Keep draw of every known word: keyed by (line, position among the
  # line's known words).
  all_row = ragged_rows.row_ids(words)
  all_pos = (tf.range(tf.size(words.flat_values, tf.int64))
             - tf.gather(words.row_starts(), all_row))
  u = uniform(tf.gather(line_keys(seed, KEEP_STREAM, line_numbers), all_row),
              all_pos, tf.float32)
  is_target = u < tf.gather(keep_prob, words.flat_values)
  # A segment sum, not a ragged reduce_sum (which tiles [lines, longest
  # line]: see inputs/ragged_rows.py).
  targets_per_row = tf.math.unsorted_segment_sum(
      tf.cast(is_target, tf.int32), all_row, words.nrows())
  keep_rows = (words.row_lengths() >= 2) & (targets_per_row > 0)
  is_target = tf.boolean_mask(is_target, tf.gather(keep_rows, all_row))
  words = ragged_rows.keep_rows(words, keep_rows)
  kept_lines = tf.boolean_mask(line_numbers, keep_rows)

  w = words.flat_values
  size = tf.shape(w)[0]
  num_rows = tf.cast(words.nrows(), tf.int32)
  row = tf.cast(ragged_rows.row_ids(words), tf.int32)
  starts = tf.cast(words.row_starts(), tf.int32)
  lengths = tf.cast(words.row_lengths(), tf.int32)
  flat = tf.range(size)
  pos = flat - tf.gather(starts, row)
  length = tf.gather(lengths, row)

  if order_max > 1 and dropout_k > 0:
    keys = uniform(
        tf.gather(line_keys(seed, DROPOUT_STREAM, kept_lines), row),
        pos, tf.float32)
    rank = _ranks_within_rows(row, keys, starts)
    dropped = rank < tf.minimum(dropout_k, tf.maximum(length - 2, 0))
  else:
    dropped = tf.zeros([size], tf.bool)

  # Slot (m - 1) * W + j holds the m-gram starting at flat position j.
  slot_ids, slot_valid = [w], [tf.ones([size], tf.bool)]
  for m in range(2, order_max + 1):
    idx = tf.minimum(flat[:, None] + tf.range(m)[None, :], size - 1)
    window = tf.gather(w, idx)
    hashed = sent2vec_featurizer.hash_ngrams(window, num_buckets)
    slot_ids.append(tf.cast(hashed + offset, tf.int32))
    slot_valid.append((pos + m - 1 < length)
                      & ~tf.reduce_any(tf.gather(dropped, idx), axis=1))
  all_ids = tf.concat(slot_ids, 0)
  all_valid = tf.concat(slot_valid, 0)
  all_row = tf.tile(row, [order_max])
  if order_max > 1:
    # Source entries sorted by sentence (the step's sorted segment sums).
    perm = tf.argsort(all_row, stable=True)
    all_ids = tf.gather(all_ids, perm)
    sorted_valid = tf.gather(all_valid, perm)
    all_row = tf.gather(all_row, perm)
  else:
    perm, sorted_valid = None, all_valid
  # Slot -> index of its source entry (if valid).
  new_index = tf.cumsum(tf.cast(sorted_valid, tf.int32)) - 1
  if perm is not None:
    new_index = tf.scatter_nd(perm[:, None], new_index, tf.shape(perm))
  source_ids = tf.boolean_mask(all_ids, sorted_valid)
  source_row = tf.boolean_mask(all_row, sorted_valid)
  num_source = tf.shape(source_ids)[0]
  sentence_size = tf.math.unsorted_segment_sum(
      tf.ones_like(source_row, tf.float32), source_row, num_rows)
  unique_ids, source_unique = tf.unique(source_ids)
  num_unique = tf.shape(unique_ids)[0]
  unique_counts = tf.math.unsorted_segment_sum(
      tf.ones_like(source_row, tf.float32), source_unique, num_unique)

  t = tf.cast(tf.where(is_target)[:, 0], tf.int32)
  target_ids = tf.gather(w, t)
  target_row = tf.gather(row, t)
  t_pos = tf.gather(pos, t)
  t_len = tf.gather(length, t)
  excluded = [tf.gather(new_index, t)]
  added = []
  for m in range(2, order_max + 1):
    for s in range(m):
      start = t - s
      ok = (t_pos - s >= 0) & (t_pos - s + m - 1 < t_len)
      slot = (m - 1) * size + tf.maximum(start, 0)
      ok &= tf.gather(all_valid, slot)
      excluded.append(tf.where(ok, tf.gather(new_index, slot), num_source))
      if context == "placeholder":
        idx = tf.clip_by_value(tf.maximum(start, 0)[:, None]
                               + tf.range(m)[None, :], 0, size - 1)
        window = tf.where(tf.range(m)[None, :] == s, 0, tf.gather(w, idx))
        hashed = sent2vec_featurizer.hash_ngrams(window, num_buckets)
        added.append(tf.where(ok, tf.cast(hashed + offset, tf.int32), 0))
  excluded = tf.stack(excluded, axis=1)
  # Without placeholders, no column at all: the step then skips the gather
  # and scatter of [T, E - 1] padding rows (about a fifth of a uni+bi step).
  added = (tf.stack(added, axis=1) if added
           else tf.zeros([tf.size(t), 0], tf.int32))
  context_size = tf.gather(sentence_size, target_row)
  excluded_valid = excluded < num_source
  if context == "remove":
    context_size -= tf.reduce_sum(tf.cast(excluded_valid, tf.float32), axis=1)
  excluded_unique = tf.where(
      excluded_valid,
      tf.gather(source_unique, tf.minimum(excluded, num_source - 1)),
      num_unique)
  # The source gradient of unique row u is the sum over its entries of their
  # sentence's context gradient, minus the context gradients of the targets
  # that exclude one of its entries: a sorted segment sum over
  # concat([sentence gradients (S rows), -target gradients (T rows)]).
  num_targets = tf.size(t)
  width = excluded.shape[1]
  spread_t = tf.reshape(tf.tile(tf.range(num_targets)[:, None], [1, width]),
                        [-1])
  flat_valid = tf.reshape(excluded_valid, [-1])
  grad_index = tf.concat([source_row,
                          num_rows + tf.boolean_mask(spread_t, flat_valid)], 0)
  grad_segment = tf.concat([source_unique, tf.boolean_mask(
      tf.reshape(excluded_unique, [-1]), flat_valid)], 0)
  order = tf.argsort(grad_segment, stable=True)
  grad_index = tf.gather(grad_index, order)
  grad_segment = tf.gather(grad_segment, order)
  # One key per target: (line, position of the target in the line).
  target_keys = splitmix(
      tf.gather(line_keys(seed, NEGATIVE_STREAM, kept_lines), target_row),
      t_pos)
  if negative_group > 1:
    negatives, negative_weights = shared_negatives(
        target_ids, cdf, num_negatives, negative_group, target_keys)
  else:
    negatives, negative_weights = sample_negatives(
        target_ids, cdf, num_negatives, target_keys)
  # Target-table rows: the targets, then the negatives (flattened); each
  # negative of group i counts once per target of the group.
  if negative_group > 1:
    group_sizes = tf.math.unsorted_segment_sum(
        tf.ones([num_targets]), tf.range(num_targets) // negative_group,
        tf.shape(negatives)[0])
  else:
    group_sizes = tf.ones([num_targets])
  out_ids = tf.concat([target_ids, tf.reshape(negatives, [-1])], 0)
  out_contributions = tf.concat(
      [tf.ones([num_targets]), tf.repeat(group_sizes, num_negatives)], 0)
  out_unique_ids, out_index = tf.unique(out_ids)
  out_counts = tf.math.unsorted_segment_sum(
      out_contributions, out_index, tf.shape(out_unique_ids)[0])
  out_order = tf.argsort(out_index, stable=True)
  return {
      "source_ids": source_ids,
      "source_row": source_row,
      "sentence_size": sentence_size,
      "unique_ids": unique_ids,
      "source_unique": source_unique,
      "unique_counts": unique_counts,
      "excluded_unique": excluded_unique,
      "grad_index": grad_index,
      "grad_segment": grad_segment,
      "target_ids": target_ids,
      "target_row": target_row,
      "excluded": excluded,
      "added_ids": added,
      "context_size": context_size,
      "negatives": negatives,
      "negative_weights": negative_weights,
      "out_unique_ids": out_unique_ids,
      "out_counts": out_counts,
      "out_grad_index": out_order,
      "out_grad_segment": tf.gather(out_index, out_order),
      "num_tokens": num_tokens,
      "num_lines": num_lines,
  }


def batch_dataset(file_patterns, featurizer, keep_prob, cdf, num_negatives=10,
                  dropout_k=0, context="remove", block_lines=1024,
                  num_epochs=1, seed=0, negative_group=1, pieces=1,
                  piece_offset=0, piece_lines=None, stream=0,
                  token_cache=None, input_threads=0):
  """Batches of `make_batch_from_words` over `num_epochs` passes, in order.

  One batch per `block_lines` lines; line i of block b (counted over all
  epochs) is global line b x block_lines + i, which keys its draws, so the
  iterator's position (it checkpoints) makes a resumed run draw the same.

  Distributed training reads the corpus in blocks and cuts each into pieces,
  one per local replica (`trainers.sent2vec`): with `pieces` = P, block b
  yields P batches in turn, piece j made of lines [o + j x s, o + (j + 1) x
  s) of the block (o = `piece_offset`, s = `piece_lines`), fewer or none
  where the block (the last of an epoch) is shorter. Every block yields
  exactly P batches, so `distribute_datasets_from_function`, which hands a
  pipeline's consecutive elements to its replicas in turn, gives replica j
  piece j of every block. Line numbers stay global (b x block_lines + o +
  j x s + i), so the pieces draw what the whole block draws.

  Args:
    file_patterns, featurizer, keep_prob, cdf, num_negatives, dropout_k,
      context, negative_group: as `make_batch_from_words`.
    block_lines: lines read per block.
    num_epochs: passes over the files.
    seed: int, the run's seed.
    pieces, piece_offset, piece_lines: see above; the default (1, 0,
      block_lines) is one batch per block.
    stream: sub-stream of the draws (an input pipeline that reads its own
      files, whose line numbers repeat those of the other pipelines).
    token_cache: path of an `inputs.token_cache` of these files for this
      featurizer and block_lines (`token_cache.ensure`): the blocks' word
      ids are read from it instead of tokenising the text every epoch (the
      batches are the same). None: tokenise.
    input_threads: > 0: the pipeline runs on its own pool of this many
      threads (`tf.data.Options.threading.private_threadpool_size`) instead
      of TensorFlow's shared one, so it does not queue behind the step's
      ops; 0: the shared pool.
  """
  files = corpus_lib.list_files(file_patterns)
  keep_prob = tf.constant(keep_prob, tf.float32)
  cdf = tf.constant(cdf, tf.float64)
  seed_pair = tf.constant([seed, stream], tf.int64)
  if token_cache:
    blocks = token_cache_lib.blocks(token_cache)
  else:
    blocks = token_cache_lib.raw_blocks(files, featurizer, block_lines)
  blocks = blocks.repeat(num_epochs)

  def to_batch(first_line, words, line_tokens):
    return make_batch_from_words(
        words, line_tokens, featurizer, keep_prob, cdf, num_negatives,
        dropout_k, context, seed_pair, negative_group, first_line=first_line)

  if pieces == 1 and piece_offset == 0 and piece_lines in (None, block_lines):
    blocks = blocks.enumerate().map(
        lambda index, block: (index * block_lines, *block))
  else:
    if piece_lines is None:
      raise ValueError("pieces need piece_lines")

    def cut(index, block):
      words, line_tokens = block
      starts = (piece_offset
                + tf.range(pieces, dtype=tf.int64) * piece_lines)
      return tf.data.Dataset.from_tensor_slices(starts).map(
          lambda start: (index * block_lines + start,
                         words[start:start + piece_lines],
                         line_tokens[start:start + piece_lines]))

    blocks = blocks.enumerate().flat_map(cut)
  dataset = blocks.map(
      to_batch, num_parallel_calls=tf.data.AUTOTUNE,
      deterministic=True).prefetch(4)
  if input_threads > 0:
    options = tf.data.Options()
    options.threading.private_threadpool_size = input_threads
    dataset = dataset.with_options(options)
  return dataset


def count_lines(file_patterns):
  """Lines `corpus.line_dataset` yields for these files (one pass).

  Raises:
    errors.DataDirError: a truncated or corrupt `.gz` file (Python's gzip
      checks the end of the stream, which --noverify_data skipped before),
      or a file that cannot be read, naming it.
  """
  files = corpus_lib.list_files(file_patterns)
  total = len(files) - 1  # The boundary line between files.
  for path in files:
    newlines, ends_with_newline = data_integrity.count_newlines(
        path, "; restore the file (the check that --noverify_data skips "
        "would have named it too)")
    # A last line without a newline still counts.
    total += newlines + (not ends_with_newline)
  return total


def batches_per_epoch(num_lines, block_lines):
  return -(-num_lines // block_lines)
