"""Pretrained word vectors: word-vector files and this project's models.

`VectorFile` reads the formats of FORMATS a chunk at a time (what `sentzoo
import` streams into an export), `write_word2vec` writes two of them.
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

from sentzoo.common import disk_errors
from sentzoo.common import errors


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


FORMATS = ("word2vec-text", "word2vec-binary", "glove", "fasttext-vec")


class VectorFile:
  """A word-vector file, checked as it is read once, a chunk at a time.

  Formats (FORMATS; a text file may be gzip'd, .gz):
    word2vec-text, fasttext-vec: a "count dim" line, then `word v1 ... vdim`
      a line (fastText's .vec ends lines with a space);
    glove: no header; a word may hold spaces (GloVe 840B has a few): a
      line's last dim fields are its values;
    word2vec-binary: the same header, then per word its bytes, a space and
      dim little-endian float32 (gensim's layout; a newline before a word,
      as the C tool writes, is skipped).
  A word must be UTF-8 and appear once, a row must have dim finite values,
  and the rows must number the header's count: anything else is a one-line
  `errors.UserError` naming the line (or the word's index).

  Attributes: path, format, count (rows), dim.
  """

  def __init__(self, path, fmt):
    if fmt not in FORMATS:
      raise errors.UserError(f"unknown word-vector format {fmt!r}; the "
                             f"formats are {', '.join(FORMATS)}")
    if not os.path.isfile(path):
      raise errors.UserError(f"word vectors {path!r} do not exist")
    self.path, self.format = path, fmt
    with self._open() as f:
      if fmt == "glove":
        first = f.readline()
        self.dim = len(first.rstrip().split(b" ")) - 1
        self.count = sum(1 for line in f if line.strip()) + bool(
            first.strip())
      else:
        header = self._decode(f.readline(), 1).split()
        if len(header) != 2 or not all(h.isdigit() for h in header):
          raise errors.DataFormatError(path, 1, "expected the header "
                                       "'count dim'")
        self.count, self.dim = (int(h) for h in header)
    if self.dim < 1:
      raise errors.DataFormatError(path, 1, "no vector values (an empty "
                                   "file?)")

  def _open(self):
    opener = gzip.open if self.path.endswith(".gz") else open
    try:
      return opener(self.path, "rb")
    except OSError as e:
      raise errors.UserError(f"cannot read {self.path!r}: {e}") from e

  def _decode(self, data, where):
    try:
      return data.decode("utf-8")
    except UnicodeDecodeError:
      raise errors.DataFormatError(self.path, where,
                                   "bytes that are not UTF-8") from None

  def chunks(self, chunk_rows):
    """Yields (words, float32 [n, dim] rows) of at most chunk_rows rows, in
    file order, checked."""
    seen, done, held = set(), 0, None
    with self._open() as f:
      read = self._binary if self.format == "word2vec-binary" else self._text
      for words, rows, where in read(f, chunk_rows):
        bad = ~np.isfinite(rows).all(axis=1)
        if bad.any():
          raise self._error(where(int(np.argmax(bad))), "NaN or infinite "
                            "value")
        for i, word in enumerate(words):
          if word in seen:
            raise self._error(where(i), f"the word {word[:40]!r} appears "
                              "twice")
          seen.add(word)
        done += len(words)
        if held is not None:
          yield held
        held = (words, rows)
        if done > self.count:
          break
    if done != self.count:  # Checked before the last chunk is yielded.
      raise errors.UserError(f"{self.path!r}: {done:,} rows where the "
                             f"header says {self.count:,} (truncated?)")
    if held is not None:
      yield held

  def _error(self, where, message):
    if self.format == "word2vec-binary":
      return errors.UserError(f"{self.path!r}: word {where}: {message}")
    return errors.DataFormatError(self.path, where, message)

  def _text(self, f, chunk_rows):
    number = 0 if self.format == "glove" else 1
    if number:
      f.readline()
    words, values, lines = [], [], []
    for raw in f:
      number += 1
      line = self._decode(raw, number).rstrip("\r\n").rstrip(" ")
      if not line.strip():
        continue
      spaces = line.count(" ")
      if spaces < self.dim or (spaces > self.dim and
                               self.format != "glove"):
        raise errors.DataFormatError(
            self.path, number, f"expected a word and {self.dim} values, got "
            f"{spaces} values")
      pieces = line.split(" ", spaces - self.dim + 1)
      words.append(" ".join(pieces[:-1]))
      values.append(pieces[-1])
      lines.append(number)
      if len(words) == chunk_rows:
        yield words, self._parse(values, lines), lines.__getitem__
        words, values, lines = [], [], []
    if words:
      yield words, self._parse(values, lines), lines.__getitem__

  def _parse(self, values, lines):
    try:
      rows = np.fromstring(" ".join(values), np.float32, sep=" ")
      if rows.size == len(values) * self.dim:
        return rows.reshape(len(values), self.dim)
    except ValueError:
      pass
    for text, number in zip(values, lines):  # Find the line to name.
      try:
        if np.fromstring(text, np.float32, sep=" ").size != self.dim:
          raise ValueError
      except ValueError:
        raise errors.DataFormatError(self.path, number, "a vector value is "
                                     "not a number") from None
    raise AssertionError("unreachable")

  def _binary(self, f, chunk_rows):
    f.readline()
    row_bytes, buffer, start = 4 * self.dim, b"", 0
    for first in range(0, self.count, chunk_rows):
      words = []
      rows = np.empty((min(chunk_rows, self.count - first), self.dim),
                      np.float32)
      for i in range(len(rows)):
        while start < len(buffer) and buffer[start] == 10:  # "\n"
          start += 1
        end = buffer.find(b" ", start)
        while end < 0 or end + 1 + row_bytes > len(buffer):
          more = f.read(1 << 22)
          if not more:
            raise self._error(first + i, "the file ends in it (truncated)")
          buffer, start = (buffer[start:] + more).lstrip(b"\n"), 0
          end = buffer.find(b" ")
        if b"\n" in buffer[start:end]:
          raise self._error(first + i, "its word holds a newline")
        words.append(self._decode(buffer[start:end], f"word {first + i}"))
        rows[i] = np.frombuffer(buffer, "<f4", self.dim, end + 1)
        start = end + 1 + row_bytes
      yield words, rows, lambda i, first=first: first + i


def write_word2vec(path, words, chunks, dim, binary):
  """Writes word2vec text or binary (gensim's layout), whole or not at all.

  `chunks`: float arrays [n, dim] whose rows, in order, are the words'.
  """
  try:
    with disk_errors.atomic_write(path, "wb") as f:
      f.write(f"{len(words)} {dim}\n".encode())
      i = 0
      for chunk in chunks:
        for row in np.asarray(chunk, "<f4"):
          word = words[i].encode("utf-8")
          f.write(word + b" " + row.tobytes() if binary else word + b" " +
                  " ".join(f"{v:.9g}" for v in row.tolist()).encode() +
                  b"\n")
          i += 1
  except OSError as e:
    raise errors.UserError(f"cannot write {path!r}: {e.strerror}") from e


def read_vectors(path, wanted=None):
  """A GloVe or word2vec text file (its header tells which), all of it or
  only the vectors of the `wanted` words (the files hold millions)."""
  with VectorFile(path, "glove")._open() as f:
    first = f.readline().split()
  fmt = ("word2vec-text" if len(first) == 2 and all(
      p.isdigit() for p in first) else "glove")
  vectors = VectorFile(path, fmt)
  words, rows = [], [np.zeros((0, vectors.dim), np.float32)]
  for chunk_words, chunk in vectors.chunks(1 << 14):
    keep = [i for i, w in enumerate(chunk_words)
            if wanted is None or w in wanted]
    words += [chunk_words[i] for i in keep]
    rows.append(chunk[keep])
  return WordVectors(words, np.concatenate(rows), source=path)


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
  # TensorFlow (which model_dir imports too) only for the model readers:
  # `sentzoo import` checks a file before it imports TensorFlow.
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from sentzoo.common import model_dir as model_dir_lib  # pylint: disable=g-import-not-at-top
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
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from sentzoo.common import model_dir as model_dir_lib  # pylint: disable=g-import-not-at-top
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
  from sentzoo.common import model_dir as model_dir_lib  # pylint: disable=g-import-not-at-top
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
  return read_vectors(path, wanted)


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
