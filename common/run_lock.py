"""One writer per model directory: a lock held for the life of a run.

A training run or an export holds `<model_dir>/run.lock` from its start to
its end. The lock is an exclusive `fcntl.flock` on that file, which the
kernel releases when the process ends, however it ends (SIGKILL included):
a lock is never left held by a dead process on this machine. The file also
records the holder (`pid`, `host`, `command`), so a second run on the same
directory is refused with one line that names it:

  error: 'runs/m' is in use by another run (pid 4242 on host gpu1, since
  2026-11-26T07:01:12Z: python -m trainers.siamese_cbow ...): wait for it
  to end or stop it, or use another --model_dir

A file left by a run that ended (same host, its pid gone) is taken over, and
the run says so on stderr. A file that names another host and is locked
there (on a network file system whose locks reach this machine) is refused
like a local holder; one that is not locked is taken over as well.

filelock (the store's lock) takes the same flock but records no holder, so
it could neither name the run that holds the folder nor say whose lock it
took over: this module keeps its own.

Usage:

  with run_lock.hold(model_dir, "training"):
    ...train and export...
"""

import contextlib
import datetime
import errno
import fcntl
import json
import os
import socket
import sys

from sentzoo.common import errors

# In the model directory. Named here, not in common/model_dir.py, so that
# taking the lock imports no TensorFlow.
LOCK_FILE = "run.lock"


class DirectoryInUseError(errors.UserError):
  """Another live run holds the model directory's lock."""

  def __init__(self, model_dir, holder):
    self.holder = holder
    since = f", since {holder['started']}" if holder.get("started") else ""
    command = f": {holder['command']}" if holder.get("command") else ""
    super().__init__(
        f"{model_dir!r} is in use by another run (pid "
        f"{holder.get('pid', '?')} on host {holder.get('host', '?')}{since}"
        f"{command}): wait for it to end or stop it, or use another "
        "--model_dir")


def _read_holder(fd):
  os.lseek(fd, 0, os.SEEK_SET)
  data = b""
  while True:
    chunk = os.read(fd, 65536)
    if not chunk:
      break
    data += chunk
  try:
    holder = json.loads(data.decode("utf-8"))
  except (UnicodeDecodeError, json.JSONDecodeError):
    return {}
  return holder if isinstance(holder, dict) else {}


def pid_alive(pid):
  """Whether process `pid` of this machine is alive."""
  try:
    os.kill(int(pid), 0)
  except (ProcessLookupError, ValueError, TypeError):
    return False
  except PermissionError:
    return True  # Another user's process.
  return True


class RunLock:
  """The lock of one model directory; `acquire` it, then `release` it.

  `hold` is the usual way in; the class is there for a loop that must
  release the lock before it returns (e.g. to let the next run start).
  """

  def __init__(self, model_dir, what="run", announce=None,
               read_only_ok=False):
    """`what` ("training", "export") is recorded in the file; `announce`
    prints the take-over line (default: on stderr); with `read_only_ok`, a
    run that only reads the folder (an export elsewhere) goes on without the
    lock when the folder cannot be written (then no run can write it)."""
    self.model_dir = model_dir
    self.path = os.path.join(model_dir, LOCK_FILE)
    self.what = what
    self.announce = announce or (
        lambda line: print(line, file=sys.stderr, flush=True))
    self.read_only_ok = read_only_ok
    self._fd = None

  @property
  def held(self):
    return self._fd is not None

  def acquire(self):
    """Takes the lock, or raises `DirectoryInUseError` naming the holder.
    Returns the holder this run replaced ({}: none), e.g. a dead run's pid
    and host."""
    if self._fd is not None:
      raise RuntimeError(f"{self.path} is already held by this object")
    try:
      os.makedirs(self.model_dir, exist_ok=True)
      fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
      if self.read_only_ok and e.errno in (errno.EROFS, errno.EACCES,
                                           errno.EPERM):
        return {}
      raise errors.UserError(
          f"cannot write the lock file {self.path} ({e.strerror}): is "
          f"{self.model_dir!r} a writable folder?") from e
    try:
      fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
      holder = _read_holder(fd)
      os.close(fd)
      if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
        raise DirectoryInUseError(self.model_dir, holder) from None
      raise errors.UserError(
          f"cannot lock {self.path} ({e.strerror})") from e
    previous = _read_holder(fd)
    if previous.get("pid") is not None:
      # Unlocked but not empty: the run that wrote it ended without removing
      # it (killed, or its machine rebooted).
      here = previous.get("host") == socket.gethostname()
      state = ("is gone" if here and not pid_alive(previous["pid"])
               else "no longer holds it")
      self.announce(
          f"note: taking over the lock of {self.model_dir!r} left by pid "
          f"{previous['pid']} on host {previous.get('host', '?')} "
          f"({previous.get('what', 'run')}), which {state}")
    record = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "what": self.what,
        "started": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join(sys.argv),
    }
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, (json.dumps(record) + "\n").encode("utf-8"))
    os.fsync(fd)
    self._fd = fd
    return previous

  def release(self):
    """Empties the lock file and unlocks it (a no-op if not held).

    The file stays: removing it would let a run that opened it just before
    lock a file nobody else sees.
    """
    if self._fd is None:
      return
    fd, self._fd = self._fd, None
    try:
      os.ftruncate(fd, 0)
    except OSError:
      pass  # A full or read-only disk: the flock still goes with the fd.
    finally:
      os.close(fd)


@contextlib.contextmanager
def hold(model_dir, what="run", announce=None, read_only_ok=False):
  """Holds `model_dir`'s lock inside the `with` block (see `RunLock`)."""
  lock = RunLock(model_dir, what, announce, read_only_ok)
  lock.acquire()
  try:
    yield lock
  finally:
    lock.release()
