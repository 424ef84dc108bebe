"""A full disk, a read-only folder or a denied write: one plain error line.

TensorFlow reports these as `ResourceExhaustedError ... No space left on
device` or `PermissionDeniedError ... Read-only file system` (and Python as
`OSError` with errno ENOSPC, EDQUOT, EROFS, EACCES or EPERM), each a
traceback and exit 1 when nothing catches them. `plain_write_errors` turns
them into an `errors.UserError` (exit 2) that says what was being written,
where, why, and what to do:

  with disk_errors.plain_write_errors("the export", export_dir,
                                      "pass another --export_dir"):
    tf.saved_model.save(...)

`summary_writer` opens a TensorBoard writer the same way. `atomic_write`
is the one way a file is written whole or not at all, `sha256_file` the one
hash of a file.
"""

import contextlib
import errno
import hashlib
import os
import sys
import tempfile

from sentzoo.common import errors

NO_SPACE = "no space left on device"
READ_ONLY = "read-only file system"
DENIED = "permission denied"

_ERRNO_KINDS = {
    errno.ENOSPC: NO_SPACE,
    errno.EDQUOT: NO_SPACE,
    errno.EROFS: READ_ONLY,
    errno.EACCES: DENIED,
    errno.EPERM: DENIED,
}
# How TensorFlow's C++ file system words them (its errors carry no errno).
_MESSAGE_KINDS = (
    ("No space left on device", NO_SPACE),
    ("Disk quota exceeded", NO_SPACE),
    ("Read-only file system", READ_ONLY),
    ("Permission denied", DENIED),
)


def write_failure(error):
  """Which of `NO_SPACE`, `READ_ONLY`, `DENIED` `error` is, or None."""
  if isinstance(error, OSError) and error.errno in _ERRNO_KINDS:
    return _ERRNO_KINDS[error.errno]
  # TensorFlow's errors only where it is imported (the store is not).
  tf = sys.modules.get("tensorflow")
  if isinstance(error, OSError) or tf and isinstance(error,
                                                     tf.errors.OpError):
    text = str(error)
    for words, kind in _MESSAGE_KINDS:
      if words in text:
        return kind
  return None


def free_bytes(path):
  """Bytes an unprivileged process can still write where `path` is (its
  nearest existing folder), or None for a path that is not local."""
  path = os.path.abspath(path)
  while not os.path.exists(path) and os.path.dirname(path) != path:
    path = os.path.dirname(path)
  try:
    stat = os.statvfs(path)
  except OSError:
    return None
  return stat.f_bavail * stat.f_frsize


def size_text(num_bytes):
  """"6.1 GB", "260.0 MB", "1.2 KB", "529 bytes": the one byte-size format."""
  for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
    if num_bytes >= scale:
      return f"{num_bytes / scale:.1f} {unit}"
  return f"{num_bytes:.0f} bytes"


def sha256_file(path):
  """The file's sha256, hex (OSError if it cannot be read)."""
  with open(path, "rb") as f:
    return hashlib.file_digest(f, "sha256").hexdigest()


@contextlib.contextmanager
def atomic_write(path, mode="w"):
  """A file object ("w": UTF-8 text, "wb": bytes) whose content appears at
  `path` whole or not at all: a temporary file in the same folder, synced
  and renamed over `path` when the block ends, removed if the block raises.
  The file gets the mode `open` gives (0666 less the umask)."""
  folder = os.path.dirname(os.path.abspath(path))
  fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.")
  try:
    mask = os.umask(0o022)
    os.umask(mask)
    os.fchmod(fd, 0o666 & ~mask)
    with os.fdopen(fd, mode, **({} if "b" in mode else
                                {"encoding": "utf-8"})) as f:
      yield f
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
  except BaseException:
    if os.path.exists(tmp):
      os.remove(tmp)
    raise


def user_error(error, what, path, advice, needed_bytes=None):
  """The `errors.UserError` for a failed write of `what` to `path`, or None
  when `error` is not a full disk, a read-only folder or a denied write.

  Args:
    error: the exception raised by the write.
    what: what was being written, e.g. "the export".
    path: where.
    advice: what else the user can do, e.g. "pass another --export_dir".
    needed_bytes: about how much the write needs, if known (said with the
      free space when the disk is full).
  """
  kind = write_failure(error)
  if kind is None:
    return None
  if kind == NO_SPACE:
    free = free_bytes(path)
    sizes = []
    if needed_bytes:
      sizes.append(f"it needs about {size_text(needed_bytes)}")
    if free is not None:
      sizes.append(f"{size_text(free)} free")
    detail = f" ({', '.join(sizes)})" if sizes else ""
    return errors.UserError(
        f"{NO_SPACE} writing {what} to {path}{detail}: make room or "
        f"{advice}")
  return errors.UserError(
      f"cannot write {what} to {path}: {kind}; make it writable or "
      f"{advice}")


@contextlib.contextmanager
def plain_write_errors(what, path, advice, needed_bytes=None):
  """Re-raises a full disk, read-only folder or denied write inside the
  block as `user_error(...)` (other errors pass through)."""
  try:
    yield
  except Exception as e:  # pylint: disable=broad-except
    plain = user_error(e, what, path, advice, needed_bytes)
    if plain is None:
      raise
    raise plain from None


def summary_writer(logdir, advice="pass another --model_dir"):
  """`tf.summary.create_file_writer(logdir)`; a folder that cannot be
  written is an `errors.UserError` naming it (TensorFlow's own error is
  `Could not initialize events writer`, a traceback)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  with plain_write_errors("TensorBoard logs", logdir, advice):
    return tf.summary.create_file_writer(logdir)
