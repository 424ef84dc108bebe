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

import concurrent.futures
import hashlib
import os
import re
import struct

import numpy as np

from sentzoo.common import disk_errors
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
# A dictionary entry: the word's bytes, NUL, int64 count and int8 type.
_ENTRY = re.compile(rb"([^\0]*)\0(.{9})", re.DOTALL)


class _Reader:
  """A file read once, front to back, and hashed (sha256) by a second thread
  on the way (hashlib lets go of the GIL): one pass over the disk for both.
  `unread` gives back bytes read past what was needed."""

  def __init__(self, path):
    self.file = open(path, "rb")  # pylint: disable=consider-using-with
    self.offset, self._pending, self._sha256 = 0, b"", hashlib.sha256()
    self._hasher = concurrent.futures.ThreadPoolExecutor(1)
    self.hashed = None  # The future of the latest bytes' hashing.

  def _hash(self, data):
    self.hashed = self._hasher.submit(self._sha256.update, data)

  def read(self, n):
    data, self._pending = self._pending[:n], self._pending[n:]
    if len(data) < n:
      more = self.file.read(n - len(data))
      self._hash(more)
      data += more
    self.offset += len(data)
    return data

  def unread(self, data):
    self._pending, self.offset = data + self._pending, self.offset - len(data)

  def readinto(self, array):
    """Fills the bytes of `array`, which are hashed until `hashed` is done
    (do not change them before); returns how many were read."""
    view = memoryview(array).cast("B")
    done = min(len(self._pending), len(view))
    view[:done], self._pending = self._pending[:done], self._pending[done:]
    while done < len(view):
      n = self.file.readinto(view[done:])
      if not n:
        break
      self._hash(view[done:done + n])
      done += n
    self.offset += done
    return done

  def sha256(self):
    """A future of the whole file's sha256: the hashing thread reads the
    rest of the file itself, then closes it (read nothing more here)."""
    def rest():
      while data := self.file.read(_BLOCK):
        self._sha256.update(data)
      self.file.close()
      return self._sha256.hexdigest()
    future = self._hasher.submit(rest)
    self._hasher.shutdown(wait=False)
    return future

  def close(self):
    self._hasher.shutdown(wait=True)
    self.file.close()


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
      self._reader = _Reader(path)
    except OSError as e:
      raise errors.UserError(f"cannot read {path!r}: {e.strerror}") from e
    try:
      self._read_header()
    except BaseException:
      self._reader.close()
      raise

  def _fail(self, what):
    raise errors.UserError(f"{self.path!r} is not a sent2vec .bin file "
                           f"that can be imported: {what}")

  def _unpack(self, fmt):
    size = struct.calcsize(fmt)
    data = self._reader.read(size)
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
    """The entries, read a block at a time by one regular expression."""
    entries, tails, block = [], [], b""
    while len(entries) < size:
      more = self._reader.read(_BLOCK)
      if not more:
        self._fail(f"it ends in dictionary entry {len(entries)} "
                   "(truncated)")
      block += more
      # Past the dictionary's end the last block gives junk matches; before
      # it, a cut entry gives none (its NUL lacks 9 bytes after it).
      found = _ENTRY.findall(block)[:size - len(entries)]
      words = [w for w, _ in found]
      entries += words
      tails += [t for _, t in found]
      block = block[sum(map(len, words)) + 10 * len(words):]
    self._reader.unread(block)
    try:
      words = b"\0".join(entries[:nwords]).decode("utf-8").split("\0")
    except UnicodeDecodeError:
      bad = next(i for i, w in enumerate(entries) if not _is_utf8(w))
      self._fail(f"dictionary word {bad} is not UTF-8")
    if words[0] != PLACEHOLDER:
      self._fail(f"its first word is {words[0][:40]!r}, not sent2vec's "
                 f"{PLACEHOLDER}")
    if len(set(words)) != len(words):
      seen = set()
      duplicate = next(w for w in words if w in seen or seen.add(w))
      self._fail(f"the word {duplicate[:40]!r} appears twice")
    self.words = words
    self.counts = np.frombuffer(b"".join(tails[:nwords]), np.dtype(
        [("count", "<i8"), ("type", "i1")]))["count"].copy()

  def _check_size(self):
    """The input matrix, then qout and an output matrix, end the file."""
    output_at = self._reader.offset + self._table_bytes
    header = os.pread(self._reader.file.fileno(), 17, output_at)
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
    rows (default: all that inference reads), in order, read once. Each
    array is reused two chunks later: use it before the next but one."""
    rows = self.rows if rows is None else rows
    shape = (max(min(chunk_rows, rows), 0), self.dim)
    buffers = [np.empty(shape, np.float32), np.empty(shape, np.float32)]
    hashed = [None, None]
    for i, start in enumerate(range(0, rows, chunk_rows)):
      if hashed[i % 2] is not None:
        hashed[i % 2].result()  # Its bytes are hashed: the array is free.
      part = buffers[i % 2][:min(chunk_rows, rows - start)]
      if self._reader.readinto(part) != part.nbytes:
        self._fail("its table is truncated")
      hashed[i % 2] = self._reader.hashed
      yield start, part

  def sha256(self):
    """A future of the whole file's sha256 (read nothing more after it)."""
    return self._reader.sha256()

  def close(self):
    self._reader.close()


def _is_utf8(data):
  try:
    data.decode("utf-8")
    return True
  except UnicodeDecodeError:
    return False


def write(path, words, counts, table_chunks, rows, dim, word_ngrams,
          bucket):
  """Writes a sent2vec `.bin` that the fork's tool and binding load.

  Args:
    path: the file (written whole or not at all).
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
  try:
    with disk_errors.atomic_write(path, "wb") as f:
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
  except OSError as e:
    raise errors.UserError(f"cannot write {path!r}: {e.strerror}") from e
