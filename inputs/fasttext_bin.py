"""sent2vec's model files: the `.bin` of the epfml/sent2vec fork of fastText.

Little-endian, in this order (the fork's `src/fasttext.cc` saveModel,
`args.cc`, `dictionary.cc`, `matrix.cc`; file format version 11):

  int32 magic 793712314, int32 version 11
  args      int32 dim, ws, epoch, minCount, neg, wordNgrams, loss, model
            (4: sent2vec), bucket, [bucketChar: cbow-c+w-ngrams only],
            minn, maxn, lrUpdateRate; float64 t
  dictionary  int32 size, nwords, nlabels; int64 ntokens, pruneidx_size;
            `size` entries of word bytes, NUL, int64 count, int8 type (0 a
            word, 1 a label); pruneidx_size int32 pairs
  int8 quantised; input matrix: int64 rows, int64 cols, float32 [rows, cols]
  int8 qout; output matrix: the same (training's target vectors)

The input matrix holds the nwords words' rows (word 0 is "<PLACEHOLDER>",
which the fork adds to every dictionary), then `bucket` rows of hashed word
n-grams: the layout of `inputs.sent2vec_featurizer`, so the table is used as
it is.
"""

import hashlib
import os
import struct

import numpy as np

from sentzoo.common import errors

MAGIC = 793712314
VERSION = 11
SENT2VEC_MODEL = 4
PLACEHOLDER = "<PLACEHOLDER>"
_ARGS = ("dim", "ws", "epoch", "minCount", "neg", "wordNgrams", "loss",
         "model", "bucket")
_ARGS_TAIL = ("minn", "maxn", "lrUpdateRate")
_MODELS = {1: "cbow", 2: "skipgram", 3: "supervised", 4: "sent2vec",
           5: "cbow-c+w-ngrams"}
# Written for the args that inference does not read (the fork's defaults,
# with negative sampling and no character n-grams).
_DEFAULT_ARGS = {"ws": 5, "epoch": 5, "minCount": 5, "neg": 10, "loss": 2,
                 "minn": 0, "maxn": 0, "lrUpdateRate": 100, "t": 1e-4}
_BLOCK = 1 << 22


class _HashingReader:
  """Reads a file once, front to back, into a sha256; `take` and `readinto`
  serve bytes from a small look-ahead buffer first."""

  def __init__(self, f):
    self.f, self.sha256, self.buffer, self.offset = f, hashlib.sha256(), b"", 0

  def _raw(self, n):
    data = self.f.read(n)
    self.sha256.update(data)
    return data

  def peek(self, n):
    while len(self.buffer) < n:
      more = self._raw(max(_BLOCK, n - len(self.buffer)))
      if not more:
        break
      self.buffer += more
    return self.buffer

  def take(self, n):
    data = self.peek(n)[:n]
    self.buffer = self.buffer[len(data):]
    self.offset += len(data)
    return data

  def readinto(self, array):
    view = memoryview(array).cast("B")
    head = self.take(len(view))
    view[:len(head)] = head
    done = len(head)
    while done < len(view):
      n = self.f.readinto(view[done:])
      if not n:
        break
      self.sha256.update(view[done:done + n])
      done += n
    self.offset += done - len(head)
    return done

  def finish(self):
    """Hashes the rest of the file; the sha256 hex digest."""
    while self._raw(_BLOCK):
      pass
    return self.sha256.hexdigest()


class Sent2VecFile:
  """A sent2vec `.bin` opened for one pass: its header checked and read.

  Attributes:
    path, size_bytes: the file.
    args: {name: value} of the args block.
    words, counts: the dictionary's words (str, word 0 the placeholder)
      and their counts (np.int64).
    rows, dim: the input matrix's rows that inference reads (nwords +
      bucket) and its columns.
  """

  def __init__(self, path):
    self.path = path
    try:
      self.size_bytes = os.path.getsize(path)
      self._file = open(path, "rb")
    except OSError as e:
      raise errors.UserError(f"cannot read {path!r}: {e.strerror}") from e
    self._reader = _HashingReader(self._file)
    try:
      self._read_header()
    except BaseException:
      self._file.close()
      raise

  def _fail(self, what):
    raise errors.UserError(f"{self.path!r} is not a sent2vec .bin file "
                           f"that can be imported: {what}")

  def _unpack(self, fmt):
    size = struct.calcsize(fmt)
    data = self._reader.take(size)
    if len(data) < size:
      self._fail(f"it ends at byte {self._reader.offset} (truncated)")
    return struct.unpack(fmt, data)

  def _read_header(self):
    if self.size_bytes == 0:
      self._fail("the file is empty")
    magic, version = self._unpack("<ii")
    if magic != MAGIC:
      self._fail(f"magic number {magic}, expected {MAGIC}")
    if version != VERSION:
      self._fail(f"file format version {version}; the sent2vec fork writes "
                 f"{VERSION} (upstream fastText's .bin files are 12 and are "
                 "not sent2vec models)")
    args = dict(zip(_ARGS, self._unpack("<9i")))
    if args["model"] != SENT2VEC_MODEL:
      self._fail(f"it holds a fastText "
                 f"{_MODELS.get(args['model'], args['model'])!r} model, "
                 "not a sent2vec one")
    args.update(zip(_ARGS_TAIL, self._unpack("<3i")))
    args["t"], = self._unpack("<d")
    self.args = args
    size, nwords, nlabels, _, pruned = self._unpack("<iiiqq")
    if args["dim"] < 1 or args["wordNgrams"] < 1 or args["bucket"] < (
        args["wordNgrams"] > 1) or (
        nwords < 1 or nlabels < 0 or size != nwords + nlabels):
      self._fail(f"damaged header (dim {args['dim']}, wordNgrams "
                 f"{args['wordNgrams']}, bucket {args['bucket']}, "
                 f"{size} entries, {nwords} words)")
    self._read_dictionary(size, nwords)
    if pruned > 0:
      self._fail("its n-grams were pruned (a quantised model); export the "
                 "unquantised .bin")
    quantised, = self._unpack("<b")
    if quantised:
      self._fail("its table is quantised (.ftz); import the float .bin")
    table_rows, self.dim = self._unpack("<qq")
    # Training adds bucketChar rows (1 by default; not in a sent2vec file's
    # args), which inference never reads.
    self.rows = nwords + args["bucket"]
    if table_rows < self.rows or self.dim != args["dim"]:
      self._fail(f"its table is {table_rows} x {self.dim}, but its "
                 f"{nwords} words + {args['bucket']} buckets and dim "
                 f"{args['dim']} need {self.rows} x {args['dim']}")
    self._table_bytes = 4 * table_rows * self.dim
    self._check_size()

  def _read_dictionary(self, size, nwords):
    words, counts, start = [], np.zeros(nwords, np.int64), 0
    buffer = self._reader.peek(_BLOCK)
    for i in range(size):
      end = buffer.find(b"\0", start)
      while end < 0 or end + 10 > len(buffer):
        self._reader.take(start)
        start, before = 0, len(self._reader.buffer)
        buffer = self._reader.peek(before + _BLOCK)
        if len(buffer) == before:
          self._fail(f"it ends in dictionary entry {i} (truncated)")
        end = buffer.find(b"\0")
      if i < nwords:
        try:
          words.append(buffer[start:end].decode("utf-8"))
        except UnicodeDecodeError:
          self._fail(f"dictionary word {i} is not UTF-8")
        counts[i], = struct.unpack_from("<q", buffer, end + 1)
      start = end + 10
    self._reader.take(start)
    if words[0] != PLACEHOLDER:
      self._fail(f"its first word is {words[0][:40]!r}, not sent2vec's "
                 f"{PLACEHOLDER}")
    if len(set(words)) != len(words):
      seen = set()
      duplicate = next(w for w in words if w in seen or seen.add(w))
      self._fail(f"the word {duplicate[:40]!r} appears twice")
    self.words, self.counts = words, counts

  def _check_size(self):
    """The input matrix, then qout and an output matrix, end the file."""
    output_at = self._reader.offset + self._table_bytes
    header = os.pread(self._file.fileno(), 17, output_at)
    expected = output_at + 17
    if len(header) == 17:
      out_rows, out_cols = struct.unpack_from("<qq", header, 1)
      expected += 4 * max(out_rows, 0) * max(out_cols, 0)
    if self.size_bytes != expected:
      what = "truncated" if self.size_bytes < expected else "extra bytes"
      self._fail(f"it has {self.size_bytes:,} bytes where its matrices "
                 f"need {expected:,} ({what})")

  def table_chunks(self, chunk_rows, rows=None):
    """(first row, float32 [n, dim] rows) of the input matrix's first `rows`
    rows (default: all that inference reads), in order; the array is reused
    for the next chunk. Read once, front to back."""
    rows = self.rows if rows is None else rows
    chunk = np.empty((max(min(chunk_rows, rows), 0), self.dim), np.float32)
    for start in range(0, rows, chunk_rows):
      part = chunk[:min(chunk_rows, rows - start)]
      if self._reader.readinto(part) != part.nbytes:
        self._fail("its table is truncated")
      yield start, part

  def finish(self):
    """The whole file's sha256 (hashing what was not read yet); closes it."""
    try:
      return self._reader.finish()
    finally:
      self._file.close()


def write(path, words, counts, table_chunks, rows, dim, word_ngrams,
          bucket):
  """Writes a sent2vec `.bin` that the fork's tool and binding load.

  Args:
    path: the file (written as path.partial, then renamed).
    words, counts: the vocabulary (ids 1..V); the placeholder is added as
      word 0.
    table_chunks: float32 arrays [n, dim] whose rows, in order, are the
      [rows, dim] table (row 0 the placeholder's, then the words', then
      `bucket` n-gram rows).
    word_ngrams, bucket: the n-gram order and the buckets of the hash.

  The output matrix (training's target vectors, which an export does not
  keep) is written as zeros: the file serves inference, not more training.
  """
  if rows != len(words) + 1 + bucket:
    raise ValueError(f"{rows} rows for {len(words)} words and {bucket} "
                     "buckets")
  args = dict(_DEFAULT_ARGS, dim=dim, wordNgrams=word_ngrams,
              model=SENT2VEC_MODEL, bucket=bucket)
  partial = path + ".partial"
  try:
    with open(partial, "wb") as f:
      f.write(struct.pack("<ii", MAGIC, VERSION))
      f.write(struct.pack("<12i", *(args[k] for k in _ARGS + _ARGS_TAIL)))
      f.write(struct.pack("<d", args["t"]))
      f.write(struct.pack("<iiiqq", len(words) + 1, len(words) + 1, 0,
                          int(np.sum(counts)), -1))
      for word, count in zip([PLACEHOLDER] + list(words), [0] + list(counts)):
        f.write(word.encode("utf-8") + struct.pack("<bqb", 0, count, 0))
      f.write(struct.pack("<bqq", 0, rows, dim))
      written = 0
      for chunk in table_chunks:
        f.write(np.ascontiguousarray(chunk, "<f4").tobytes())
        written += len(chunk)
      if written != rows:
        raise ValueError(f"{written} table rows written, expected {rows}")
      # The tool checks that the output matrix has a row per word.
      f.write(struct.pack("<bqq", 0, len(words) + 1, dim))
      zeros = bytes(4 * dim * min(len(words) + 1, 1 << 12))
      for start in range(0, len(words) + 1, 1 << 12):
        f.write(zeros[:4 * dim * min(1 << 12, len(words) + 1 - start)])
    os.replace(partial, path)
  except OSError as e:
    raise errors.UserError(f"cannot write {path!r}: {e.strerror}") from e
  finally:
    if os.path.exists(partial):
      os.remove(partial)
