"""Resident memory of this process: peak, current, and resetting the peak.

One place for what the benchmarks and reports measure, so that "peak RSS"
means the same on every page: MB are 2^20 bytes; the peak is the kernel's
high-water mark (VmHWM, or ru_maxrss where /proc is absent).
"""

import resource
from typing import Optional

_STATUS = "/proc/self/status"


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
