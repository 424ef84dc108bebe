"""Checking corpus files before training: checksums, complete gzip, line counts.

A truncated `.gz` part reads as a shorter corpus through TF's TextLineDataset
(it does not detect a missing end of stream), so a trainer would train on part
of it without a word. These checks read each file to its end and compare it
with what the data directory says about it:

  * `<data_dir>/SHA256SUMS` (`<sha256>  ./relative/path` per line, as written
    by `sha256sum`): the sha256 of each listed file;
  * the gzip stream itself: its end-of-stream marker, CRC and length;
  * `<data_dir>/gutenberg/index.tsv` (one row per book: part,
    first_line_in_part counted from 1, num_sentences, ...): the number of
    lines of each book corpus part.

Every problem is an `errors.UserError` whose message names the file, so a
command run through `common.cli.run` prints `error: <file>: <what>` and exits
with status 2.

`record_corpus` and `check_corpus_unchanged` fingerprint the corpus of a
model directory's first pass and compare a rerun's with it.
"""

import datetime
import gzip
import hashlib
import json
import os
import re
import sys
import time
import zlib

from sentzoo.common import disk_errors
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib

CHUNK_BYTES = 1 << 20
SHA256SUMS = "SHA256SUMS"
# Said with every checksum or line-count mismatch: the checks are for the
# shipped files, and a user who changed one on purpose needs the way out.
OWN_CORPUS_ADVICE = (
    "if you changed it on purpose (your own corpus), give it a name or "
    "folder of its own (only the files that SHA256SUMS or "
    "gutenberg/index.tsv list are checked against them; see "
    "docs/reliability.md) or pass --noverify_data")
# A book corpus part: gutenberg/part01.txt.gz (or an uncompressed .txt).
_PART_NAME = re.compile(r"part(\d+)\.txt(\.gz)?$")
_SUMS_LINE = re.compile(r"([0-9a-fA-F]{64}) [ *](.+)$")


def _relative_to(data_dir, path):
  """`path` relative to `data_dir` ("gutenberg/part01.txt.gz"), or None."""
  rel = os.path.relpath(os.path.realpath(path), os.path.realpath(data_dir))
  if rel == os.pardir or rel.startswith(os.pardir + os.sep):
    return None
  return rel.replace(os.sep, "/")


def _normalize_listed(name):
  """A path as listed in SHA256SUMS ("./a/b", "a/b") as "a/b"."""
  name = name.replace("\\", "/")
  while name.startswith("./"):
    name = name[2:]
  return os.path.normpath(name).replace(os.sep, "/")


def read_checksums(path):
  """{relative path: lower-case hex digest} of a `sha256sum` listing
  (`<64 hex>  ./relative/path`, or `<64 hex> *path` in binary mode)."""
  digests = {}
  try:
    with open(path, encoding="utf-8") as f:
      for number, line in enumerate(f, start=1):
        line = line.rstrip("\r\n")
        if not line.strip():
          continue
        match = _SUMS_LINE.match(line)
        if not match:
          raise errors.DataFormatError(
              path, number,
              f"expected '<sha256 hex>  <path>', got {line[:80]!r}")
        digests[_normalize_listed(match.group(2))] = match.group(1).lower()
  except (OSError, UnicodeDecodeError) as e:
    raise errors.DataDirError(f"{path}: cannot read ({e})") from e
  return digests


def verify_checksums(data_dir, files):
  """Checks the files that `<data_dir>/SHA256SUMS` lists (paths relative to
  `data_dir`) against their sha256; returns how many it checked."""
  sums_path = os.path.join(data_dir, SHA256SUMS)
  if not os.path.isfile(sums_path):
    return 0
  listed = read_checksums(sums_path)
  checked = 0
  for path in files:
    rel = _relative_to(data_dir, path)
    if rel is None or rel not in listed:
      continue
    expected = listed[rel]
    try:
      found = disk_errors.sha256_file(path)
    except OSError as e:
      raise errors.DataDirError(f"{path}: cannot read ({e})") from e
    if found != expected:
      raise errors.DataDirError(
          f"{path}: sha256 {found[:12]}... does not match {expected[:12]}... "
          f"listed in {sums_path} (a corrupt, truncated or changed copy); "
          f"{OWN_CORPUS_ADVICE}")
    checked += 1
  return checked


def count_newlines(path, corrupt_advice=""):
  """(b"\\n" count, whether the file ends with one or is empty) of a file
  read to its end.

  A `.gz` file is decompressed with Python's gzip module, which, unlike TF's
  TextLineDataset, checks the end-of-stream marker, the CRC and the length.

  Raises:
    errors.DataDirError: `<path>: truncated or corrupt gzip (<reason>)` and
      `corrupt_advice`, or the file cannot be read.
  """
  lines, last = 0, b"\n"
  opener = gzip.open if path.endswith(".gz") else open
  try:
    with opener(path, "rb") as f:
      for chunk in iter(lambda: f.read(CHUNK_BYTES), b""):
        lines += chunk.count(b"\n")
        last = chunk[-1:]
  except (EOFError, zlib.error, gzip.BadGzipFile) as e:
    raise errors.DataDirError(
        f"{path}: truncated or corrupt gzip ({e}){corrupt_advice}") from e
  except OSError as e:
    raise errors.DataDirError(f"{path}: cannot read ({e})") from e
  return lines, last == b"\n"


def book_index_path(data_dir):
  return os.path.join(data_dir, "gutenberg", "index.tsv")


def read_book_index_ends(path):
  """{part: its last sentence line (from 1)}: first_line_in_part - 1 +
  num_sentences of the part's last book."""
  ends = {}
  try:
    with open(path, encoding="utf-8") as f:
      header = f.readline().rstrip("\r\n").split("\t")
      try:
        columns = [header.index(name) for name in
                   ("part", "first_line_in_part", "num_sentences")]
      except ValueError as e:
        raise errors.DataFormatError(path, 1, f"no column {e}") from e
      for number, row in enumerate(f, start=2):
        row = row.rstrip("\r\n")
        if not row:
          continue
        fields = row.split("\t")
        try:
          part, first, count = (int(fields[c]) for c in columns)
        except (IndexError, ValueError) as e:
          raise errors.DataFormatError(
              path, number, f"expected integer part, first_line_in_part and "
              f"num_sentences columns ({e})") from e
        if first < 1 or count < 0:
          raise errors.DataFormatError(
              path, number, f"first_line_in_part {first} < 1 or "
              f"num_sentences {count} < 0")
        ends[part] = max(ends.get(part, 0), first - 1 + count)
  except (OSError, UnicodeDecodeError) as e:
    raise errors.DataDirError(f"{path}: cannot read ({e})") from e
  return ends


def _book_part(data_dir, path):
  """The part number of `<data_dir>/gutenberg/partNN.txt[.gz]`, else None."""
  rel = _relative_to(data_dir, path)
  if rel is None or os.path.dirname(rel) != "gutenberg":
    return None
  match = _PART_NAME.match(os.path.basename(rel))
  return int(match.group(1)) if match else None


def verify_book_corpus(data_dir, files, line_counts=None):
  """Checks the line counts of the `gutenberg/partNN.txt[.gz]` among
  `files` that `gutenberg/index.tsv` lists; returns how many it checked.

  A part holds its books' sentences one per line with one empty line after
  each book, the last included: its b"\\n" count is the index's last
  sentence line + 1. A copy without the final empty line also passes.
  `line_counts`: {path: b"\\n" count} already measured, not read again.
  """
  index_path = book_index_path(data_dir)
  if not os.path.isfile(index_path):
    return 0
  ends = None
  checked = 0
  for path in files:
    part = _book_part(data_dir, path)
    if part is None:
      continue
    if ends is None:
      ends = read_book_index_ends(index_path)
    if part not in ends:
      continue
    expected = ends[part]
    if line_counts is not None and path in line_counts:
      found = line_counts[path]
    else:
      found = count_newlines(path)[0]
    if found not in (expected, expected + 1):
      raise errors.DataDirError(
          f"{path}: {found:,} lines, but {index_path} implies {expected + 1:,} "
          f"(last sentence on line {expected:,}, then an empty line): a "
          f"truncated or different copy of part {part}; {OWN_CORPUS_ADVICE}")
    checked += 1
  return checked


def verify_corpus(data_dir, files, checksums=True, out=None):
  """Checks corpus files before training, one line per file on `out`
  (`verified part01.txt.gz: 526,745 lines, sha256 ok, index ok (0.4s)`):
  complete gzip, index line counts and, with `checksums`, SHA256SUMS.
  `data_dir` None or "": the files alone. Returns {path: b"\\n" count}.
  """
  out = out or sys.stdout
  counts = {}
  for path in files:
    start = time.perf_counter()
    notes = []
    if data_dir and checksums and verify_checksums(data_dir, [path]):
      notes.append("sha256 ok")
    counts[path] = count_newlines(path)[0]
    if data_dir and verify_book_corpus(data_dir, [path], counts):
      notes.append("index ok")
    notes = "".join(", " + n for n in notes)
    print(f"verified {os.path.basename(path)}: {counts[path]:,} lines{notes} "
          f"({time.perf_counter() - start:.1f}s)", file=out, flush=True)
  return counts


# `file_fingerprint` samples this many blocks of SAMPLE_BYTES, evenly spaced.
SAMPLE_BLOCKS = 16
SAMPLE_BYTES = 1 << 16


def _sample_digest(path, size):
  """sha256 of SAMPLE_BLOCKS blocks spread over the file (at most 1 MiB read):
  tells a copied or touched file (same bytes, new mtime) from a changed one
  of the same size in all but contrived cases."""
  digest = hashlib.sha256()
  try:
    with open(path, "rb") as f:
      for i in range(SAMPLE_BLOCKS):
        f.seek(size * i // SAMPLE_BLOCKS)
        digest.update(f.read(SAMPLE_BYTES))
  except OSError as e:
    raise errors.DataDirError(f"{path}: cannot read ({e.strerror})") from e
  return digest.hexdigest()


def file_fingerprint(path):
  """{"path", "size", "mtime_ns"} of a corpus file (no read: a stat)."""
  try:
    stat = os.stat(path)
  except OSError as e:
    raise errors.DataDirError(f"{path}: cannot read ({e.strerror})") from e
  return {"path": os.path.abspath(path), "size": stat.st_size,
          "mtime_ns": stat.st_mtime_ns}


def corpus_fingerprint(files):
  """The fingerprints of `files`, in order, each with its sampled digest."""
  prints = []
  for path in files:
    entry = file_fingerprint(path)
    entry["sample_sha256"] = _sample_digest(path, entry["size"])
    prints.append(entry)
  return prints


def record_corpus(model_dir, files):
  """Records the corpus `files` (in reading order) in
  `<model_dir>/corpus_fingerprint.json` once the first pass (vocabulary, plan
  of batches) is done: `check_corpus_unchanged` compares every rerun with it.
  """
  model_dir_lib.write_text_atomically(
      os.path.join(model_dir, model_dir_lib.CORPUS_FINGERPRINT_FILE),
      json.dumps({"files": corpus_fingerprint(files)}, indent=2))


def _describe(entry):
  when = datetime.datetime.fromtimestamp(
      entry["mtime_ns"] / 1e9, datetime.timezone.utc).strftime(
          "%Y-%m-%d %H:%M:%S UTC")
  return f"{entry['size']:,} bytes, modified {when}"


def check_corpus_unchanged(model_dir, files):
  """Raises `errors.DataDirError` if `files` are not the corpus recorded by
  `record_corpus` in `model_dir` (nothing recorded: nothing to check).

  A file is unchanged when its size and mtime are as recorded (a stat), or,
  when only its mtime moved (a copy, `touch`), when its sampled digest is
  the same. Files are compared in order, so a data directory moved
  elsewhere with the same files passes. Returns how many were compared.
  """
  path = os.path.join(model_dir, model_dir_lib.CORPUS_FINGERPRINT_FILE)
  if not os.path.exists(path):
    return 0
  try:
    with open(path, encoding="utf-8") as f:
      recorded = json.load(f)["files"]
  except (OSError, ValueError, KeyError, TypeError) as e:
    raise errors.DataDirError(
        f"{path}: unreadable ({e}); delete it to record the corpus "
        "again") from e
  advice = (f"this model directory's vocabulary and plan of batches were "
            f"made from the recorded files ({path}). Put them back, or train "
            "on the new corpus in a new --model_dir")
  if len(recorded) != len(files):
    raise errors.DataDirError(
        f"the corpus changed since {model_dir!r} was first trained: "
        f"{len(files)} corpus files now, {len(recorded)} then; {advice}")
  for entry, file in zip(recorded, files):
    now = file_fingerprint(file)
    if (now["size"], now["mtime_ns"]) == (entry["size"], entry["mtime_ns"]):
      continue
    if (now["size"] == entry["size"] and _sample_digest(file, now["size"])
        == entry.get("sample_sha256")):
      continue
    raise errors.DataDirError(
        f"the corpus changed since {model_dir!r} was first trained: {file} "
        f"is {_describe(now)}, it was {_describe(entry)}; {advice}")
  return len(files)
