"""Resident memory of this process: peak, current, resetting the peak, and
how much freed memory glibc may keep.

One place for what the benchmarks and reports measure, so that "peak RSS"
means the same on every page: MB are 2^20 bytes; the peak is the kernel's
high-water mark (VmHWM, or ru_maxrss where /proc is absent).
"""

import ctypes
import os
import resource
from typing import Optional

_STATUS = "/proc/self/status"
# mallopt's parameter number for the arena limit (glibc's malloc.h).
_M_ARENA_MAX = -8


def status_mb(field: str, status_path: str = _STATUS) -> Optional[float]:
  """A memory field of /proc/self/status ("VmHWM", "VmRSS") in MB; None
  where the file or the field is absent (not Linux)."""
  try:
    with open(status_path) as f:
      for line in f:
        if line.startswith(field + ":"):
          return int(line.split()[1]) / 1024.0
  except OSError:
    return None
  return None


def peak_rss_mb() -> float:
  """Peak resident memory of this process so far (since the last reset)."""
  peak = status_mb("VmHWM")
  if peak is None:  # no /proc: ru_maxrss, in KB on Linux
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
  return peak


def current_rss_mb() -> Optional[float]:
  """Resident memory now; None where /proc is absent."""
  return status_mb("VmRSS")


def reset_peak_rss() -> bool:
  """Sets the peak (VmHWM) to the current RSS (Linux >= 4.0), so that the
  next peak is that of what runs next; False where that is not possible."""
  try:
    with open("/proc/self/clear_refs", "w") as f:
      f.write("5")
    return True
  except OSError:
    return False


def limit_malloc_arenas(arenas: Optional[int] = None) -> bool:
  """Caps glibc malloc's arenas of this process at `arenas` (default: one
  per CPU, at least 2), for threads that start after the call.

  glibc's default is 8 arenas per CPU, and each keeps the memory freed in
  it: TensorFlow's pipeline and compute threads then hold freed blocks in
  many arenas. Measured on the Siamese CBOW trainer (best flagfile, 3,000
  steps with 3 evaluations, 2 CPUs, one run at a time): peak RSS 1,228 to
  1,349 MB (3 runs) with glibc's default, 1,198 to 1,278 MB (5 runs) with 2
  arenas; the train step's groups/s within its run-to-run spread. sentzoo's
  commands call it before TensorFlow starts its threads
  (sentzoo/__init__.py, sentzoo/cli.py).

  Returns:
    False, with nothing changed, where MALLOC_ARENA_MAX is set (the user's
    choice wins) or there is no glibc.
  """
  mallopt = _glibc("mallopt")
  if "MALLOC_ARENA_MAX" in os.environ or mallopt is None:
    return False
  return bool(mallopt(_M_ARENA_MAX, arenas or max(2, os.cpu_count() or 1)))


def release_free_memory() -> bool:
  """Returns the free memory glibc's arenas hold to the system
  (`malloc_trim(0)`): what a finished pass (the corpus counts, an
  evaluation) freed stops counting in the resident set. In the Siamese
  CBOW trainer, a call during training took 29 to 64 MB off it (4
  samples). False where there is no glibc."""
  malloc_trim = _glibc("malloc_trim")
  if malloc_trim is None:
    return False
  malloc_trim(0)
  return True


def _glibc(name):
  """glibc's function `name`, or None where there is no glibc."""
  try:
    return getattr(ctypes.CDLL("libc.so.6"), name)
  except (OSError, AttributeError):
    return None
