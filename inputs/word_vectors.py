"""Pretrained word vectors: GloVe/word2vec text files and this project's models.

`load(path)` reads any of:
  * a GloVe or word2vec text file (optionally .gz): `word v1 ... vd` per
    line, with or without word2vec's "count dim" first line;
  * a model directory of this project (model_config.json, vocab.txt and
    checkpoints/, e.g. of Siamese CBOW or Sent2Vec): the vocabulary and the
    word-embedding table of the newest checkpoint;
  * an export of this project (a SavedModel whose root has an `embeddings`
    variable, e.g. Siamese CBOW's `export/<version>/`): the table, with the
    words from `vocab_path`, or from `<export>/../../vocab.txt` (the model
    directory the trainer exported from).

`embedding_matrix` then builds the table of a task vocabulary: pretrained
rows where a word has one, U[-r, r] rows otherwise (Nicosia and Moschitti,
CIKM 2017, §4.2: r = 0.25), row 0 (padding) zero.
"""

import gzip
import os

import numpy as np

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib


class WordVectors:
  """Words and their vectors: `matrix[i]` is the vector of `words[i]`."""

  def __init__(self, words, matrix, source=""):
    self.words = list(words)
    self.matrix = np.asarray(matrix, np.float32)
    self.source = source
    if self.matrix.ndim != 2 or len(self.words) != len(self.matrix):
      raise ValueError("words and matrix rows differ")
    self.index = {w: i for i, w in enumerate(self.words)}

  @property
  def dim(self):
    return int(self.matrix.shape[1])

  def __len__(self):
    return len(self.words)


def read_text_vectors(path, wanted=None):
  """Reads a GloVe / word2vec text file; only the vectors of the `wanted`
  words when given (the files hold millions of words)."""
  if not os.path.exists(path):
    raise errors.UserError(f"word vectors {path!r} do not exist")
  words, rows, dim = [], [], None
  seen = set()
  opener = gzip.open if path.endswith(".gz") else open
  with opener(path, "rt", encoding="utf-8", errors="replace") as f:
    for number, line in enumerate(f, start=1):
      parts = line.rstrip("\r\n").rstrip(" ").split(" ")
      if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
        dim = int(parts[1])  # word2vec header: count dim.
        continue
      if not line.strip():
        continue
      if dim is None:
        dim = len(parts) - 1
        if dim < 1:
          raise errors.DataFormatError(path, number, "no vector values")
      if len(parts) < dim + 1:
        raise errors.DataFormatError(
            path, number, f"expected a word and {dim} values, got "
            f"{len(parts) - 1} values")
      # GloVe 840B has a few "words" with spaces: the last dim are values.
      word = " ".join(parts[:len(parts) - dim])
      if (wanted is not None and word not in wanted) or word in seen:
        continue
      try:
        rows.append(np.asarray(parts[len(parts) - dim:], np.float32))
      except ValueError:
        raise errors.DataFormatError(path, number,
                                     "a vector value is not a number") from None
      words.append(word)
      seen.add(word)
  matrix = np.stack(rows) if rows else np.zeros([0, dim or 0], np.float32)
  return WordVectors(words, matrix, source=path)


def _read_vocabulary_words(path):
  if not os.path.exists(path):
    raise errors.UserError(f"vocabulary file {path!r} does not exist")
  words = []
  with open(path, encoding="utf-8") as f:
    for number, line in enumerate(f, start=1):
      word = line.rstrip("\n").split("\t")[0]
      if not word:
        raise errors.DataFormatError(path, number, "empty word")
      words.append(word)
  return words


def read_model_dir_vectors(model_dir):
  """The word table of the newest checkpoint of a model directory.

  The table is the checkpoint variable named `...embeddings` with row 0 for
  padding and rows 1..V for the vocabulary words (Siamese CBOW's
  `embeddings`; for Sent2Vec the `source_embeddings`, whose hashed n-gram
  rows after the words are ignored, not the `target_embeddings`).
  """
  import tensorflow as tf  # Only this reader needs TensorFlow.
  words = _read_vocabulary_words(
      os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE))
  latest = model_dir_lib.latest_checkpoint(model_dir)
  if latest is None:
    raise errors.UserError(f"no checkpoint in {model_dir!r}/checkpoints")
  reader = tf.train.load_checkpoint(latest)
  rows = len(words) + 1
  candidates = [
      (name, shape) for name, shape in tf.train.list_variables(latest)
      if "optimizer" not in name.lower() and "embeddings/" in name
      and len(shape) == 2 and shape[0] >= rows]
  if len(candidates) > 1:  # Sent2Vec: source (input) rows, not target rows.
    candidates = [c for c in candidates if "target" not in c[0]] or candidates
  if len(candidates) > 1:
    candidates = [c for c in candidates if c[1][0] == rows] or candidates
  if len(candidates) != 1:
    raise errors.UserError(
        f"cannot find one word table of at least {rows} rows in {latest!r} "
        f"(candidates: {[c[0] for c in candidates]})")
  # Rows 1..V are the words (row 0 padding; n-gram buckets may follow).
  matrix = reader.get_tensor(candidates[0][0])[1:rows]
  return WordVectors(words, matrix, source=latest)


def read_export_vectors(export_dir, vocab_path=None):
  """The `embeddings` variable of an exported averaging encoder."""
  import tensorflow as tf
  if vocab_path is None:
    vocab_path = os.path.join(export_dir, os.pardir, os.pardir,
                              model_dir_lib.VOCABULARY_FILE)
    if not os.path.exists(vocab_path):
      raise errors.UserError(
          f"the export {export_dir!r} does not list its words: pass the "
          "vocabulary file of the model directory it came from")
  words = _read_vocabulary_words(vocab_path)
  module = tf.saved_model.load(export_dir)
  table = getattr(module, "embeddings", None)
  if table is None:
    raise errors.UserError(f"the export {export_dir!r} has no `embeddings` "
                           "word table")
  matrix = table.numpy()
  if matrix.shape[0] != len(words) + 1:
    raise errors.UserError(
        f"{vocab_path!r} has {len(words)} words but the table of "
        f"{export_dir!r} has {matrix.shape[0]} rows (expected words + 1)")
  return WordVectors(words, matrix[1:], source=export_dir)


def load(path, vocab_path=None, wanted=None):
  """Reads word vectors from a text file, a model directory or an export."""
  if os.path.isdir(path):
    if os.path.exists(os.path.join(path, "saved_model.pb")):
      vectors = read_export_vectors(path, vocab_path)
    elif os.path.exists(os.path.join(path, model_dir_lib.MODEL_CONFIG_FILE)):
      vectors = read_model_dir_vectors(path)
    else:
      raise errors.UserError(
          f"{path!r} is neither a SavedModel export nor a model directory")
    if wanted is not None:
      keep = [i for i, w in enumerate(vectors.words) if w in wanted]
      vectors = WordVectors([vectors.words[i] for i in keep],
                            vectors.matrix[keep], vectors.source)
    return vectors
  return read_text_vectors(path, wanted)


def embedding_matrix(words, vectors, dim=None, oov_range=0.25, seed=0,
                     scale_to_std=None):
  """The embedding table of vocabulary `words` (word id = position + 1).

  Args:
    words: the task vocabulary.
    vectors: a `WordVectors`, or None (every row random).
    dim: table width when `vectors` is None.
    oov_range: rows of words without a vector ~ U[-oov_range, oov_range].
    seed: for those rows.
    scale_to_std: if set, the pretrained rows are multiplied by one factor
      so that their standard deviation is this (e.g. Siamese CBOW vectors
      have std ~0.01, far below the U[-0.25, 0.25] rows' 0.144).

  Returns:
    (float32 [len(words) + 1, dim] with row 0 zero, number of words that
    had a pretrained vector).
  """
  dim = vectors.dim if vectors is not None else int(dim)
  rng = np.random.default_rng(seed)
  matrix = rng.uniform(-oov_range, oov_range,
                       size=(len(words) + 1, dim)).astype(np.float32)
  matrix[0] = 0.0
  found = 0
  if vectors is not None:
    scale = 1.0
    if scale_to_std and len(vectors):
      scale = scale_to_std / max(float(np.std(vectors.matrix)), 1e-12)
    for i, word in enumerate(words, start=1):
      row = vectors.index.get(word)
      if row is not None:
        matrix[i] = vectors.matrix[row] * scale
        found += 1
  return matrix, found
