"""A corpus tokenised once: the word ids of every block of lines, on disk.

Sent2Vec reads its corpus once per epoch. Turning raw text into word ids
(gunzip, the tokenizer's regex split, the vocabulary lookup) is nearly all
of its input pipeline's work: ~1.8 of ~2.0 CPU-ms per block of 128 book
lines, with 2 cores shared by the pipeline and the train step. The cache
holds, for every block of `block_lines` lines, the lines' known word ids and
token counts (unknown words included), one TFRecord record per block, so
later epochs only read and decode them; `blocks` yields exactly what
`raw_blocks` computes, so batches made from either are the same.

The file is written under a temporary name and renamed when complete, with a
fingerprint beside it (the corpus files' names, sizes and modification
times, block_lines, the tokenizer's settings and the vocabulary); a partial
file from an interrupted run is ignored and a stale cache is rebuilt.
"""

import glob
import hashlib
import json
import os
import time

import tensorflow as tf

from sentzoo.inputs import corpus as corpus_lib


def raw_blocks(files, featurizer, block_lines):
  """Blocks of `block_lines` corpus lines, tokenised: a Dataset of
  (int32 ragged [lines, (known words)], int64 [lines] tokens per line).

  The lines are tokenised ~8,192 at a time and then cut into blocks: the
  tokenizer's cost per call made 64-line calls 2.9x slower (part01).
  """
  blocks_per_call = max(1, 8192 // block_lines)

  def cut(words, line_tokens):
    lines = tf.shape(line_tokens, out_type=tf.int64)[0]
    return tf.data.Dataset.range((lines + block_lines - 1) // block_lines).map(
        lambda i: (words[i * block_lines:(i + 1) * block_lines],
                   line_tokens[i * block_lines:(i + 1) * block_lines]))

  return corpus_lib.line_dataset(files).batch(
      block_lines * blocks_per_call).map(
          featurizer.word_ids_and_line_tokens,
          num_parallel_calls=tf.data.AUTOTUNE,
          deterministic=True).flat_map(cut)


def fingerprint(files, featurizer, vocabulary, block_lines):
  """What the cache depends on, as a JSON-able dict."""
  words = hashlib.sha256("\n".join(vocabulary.words).encode()).hexdigest()
  return {
      "files": [[os.path.abspath(f), os.path.getsize(f),
                 os.stat(f).st_mtime_ns] for f in files],
      "block_lines": int(block_lines),
      "tokenizer": featurizer.tokenizer.get_config(),
      "vocabulary_sha256": words,
  }


def encode_block(words, line_tokens):
  """One record: int32 ragged [lines, (ids)] and an int [lines] per line."""
  parts = [tf.io.serialize_tensor(words.flat_values),
           tf.io.serialize_tensor(tf.cast(words.row_lengths(), tf.int32)),
           tf.io.serialize_tensor(tf.cast(line_tokens, tf.int32))]
  return tf.io.serialize_tensor(tf.stack(parts))


def decode_block(record):
  """`encode_block`'s record: (int32 ragged [lines, (ids)], int64 [lines])."""
  parts = tf.io.parse_tensor(record, tf.string)
  flat = tf.io.parse_tensor(parts[0], tf.int32)
  lengths = tf.io.parse_tensor(parts[1], tf.int32)
  line_tokens = tf.io.parse_tensor(parts[2], tf.int32)
  words = tf.RaggedTensor.from_row_lengths(
      tf.ensure_shape(flat, [None]),
      tf.cast(tf.ensure_shape(lengths, [None]), tf.int64), validate=False)
  return words, tf.cast(tf.ensure_shape(line_tokens, [None]), tf.int64)


def blocks(path):
  """The cached blocks: a Dataset like `raw_blocks`'."""
  return tf.data.TFRecordDataset(path).map(
      decode_block, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def is_current(path, expected):
  """Whether `path` is a complete cache with this fingerprint."""
  try:
    with open(path + ".json") as f:
      return json.load(f) == json.loads(json.dumps(expected))
  except (OSError, ValueError):
    return False


def ensure(path, files, featurizer, vocabulary, block_lines, log=print):
  """Writes the cache at `path` unless a current one is there; returns path.
  Costs one epoch of tokenising and ~4 bytes of disk per known word."""
  expected = fingerprint(files, featurizer, vocabulary, block_lines)
  if is_current(path, expected):
    return path
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  for leftover in glob.glob(glob.escape(path) + ".tmp-*"):
    os.remove(leftover)  # From an interrupted run.
  temporary = f"{path}.tmp-{os.getpid()}"
  start = time.time()
  log(f"token cache: tokenising the corpus once into {path}")
  count = 0
  with tf.io.TFRecordWriter(temporary) as writer:
    encoded = raw_blocks(files, featurizer, block_lines).map(
        encode_block, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    for record in encoded.prefetch(8):
      writer.write(record.numpy())
      count += 1
      if count % 20000 == 0:
        log(f"token cache: {count:,} blocks ({time.time() - start:.0f}s)")
  if os.path.exists(path + ".json"):
    os.remove(path + ".json")  # The old cache's, until the new one is in.
  os.replace(temporary, path)
  with open(path + ".json", "w") as f:
    json.dump(expected, f)
  log(f"token cache: {count:,} blocks of {block_lines} lines in "
      f"{time.time() - start:.0f}s, {os.path.getsize(path) / 2**20:,.0f} MB")
  return path
