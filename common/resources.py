"""Resident memory of this process: peak, current, resetting the peak, and
how much freed memory glibc may keep.

One place for what the benchmarks and reports measure, so that "peak RSS"
means the same on every page: MB are 2^20 bytes; the peak is the kernel's
high-water mark (VmHWM, or ru_maxrss where /proc is absent).
"""

import ctypes
import importlib.machinery
import os
import platform
import resource
import sys
from typing import Optional

_STATUS = "/proc/self/status"
# mallopt's parameter number for the arena limit (glibc's malloc.h).
_M_ARENA_MAX = -8


def cpu_model(cpuinfo="/proc/cpuinfo"):
  """The CPU's "model name" from `cpuinfo`, else `platform.machine()`."""
  try:
    with open(cpuinfo, encoding="utf-8") as f:
      for line in f:
        if line.startswith("model name"):
          return line.split(":", 1)[1].strip()
  except OSError:
    pass
  return platform.machine()


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
  many arenas; fewer arenas lower the trainers' peak RSS at the same speed
  (docs/design_measurements.md). sentzoo's commands call it before
  TensorFlow starts its threads (sentzoo/__init__.py, sentzoo/cli.py).

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


# Optional imports that TensorFlow and Keras make as they load, for features
# sentzoo does not use: the packages whose modules make them -> the packages
# they would import: matplotlib, for Keras's image-gallery plots; scipy, for
# the legacy tf.keras v1 loop's check for sparse input; h5py, for the legacy
# .h5 model files of tf.keras v1 and Keras 3; scikit-learn, for Keras's
# scikit-learn wrappers (what each holds: docs/design_measurements.md). Keras 3's own saving imports h5py when it
# first writes or reads weights, so it still can.
UNUSED_OPTIONAL_IMPORTS = {
    "keras.src.visualization": ("matplotlib",),
    "keras.src.legacy.saving": ("h5py",),
    "keras.src.wrappers": ("sklearn",),
    "tensorflow.python.keras": ("scipy", "h5py"),
}


def skip_unused_optional_imports(importers=None) -> None:
  """Runs the modules of each package of `importers` (default
  `UNUSED_OPTIONAL_IMPORTS`), as they are imported, with the packages it
  names hidden: their `try: import x except ImportError:` takes the except
  branch. The hidden packages stay importable everywhere else; one that is
  already imported is not hidden. Once per process: a second call changes
  nothing. sentzoo's commands call it before TensorFlow loads
  (sentzoo/__init__.py, sentzoo/cli.py), so that each process does not hold
  what it never calls.
  """
  if not any(isinstance(f, _HideFromImporters) for f in sys.meta_path):
    sys.meta_path.insert(0, _HideFromImporters(
        UNUSED_OPTIONAL_IMPORTS if importers is None else importers))


class _HideFromImporters:
  """A `sys.meta_path` finder: the spec of each module in a package of
  `importers` (the package included), with a loader that hides that
  package's `importers` entry while the module runs."""

  def __init__(self, importers):
    self._importers = dict(importers)

  def find_spec(self, name, path, target=None):
    hidden = next((packages for package, packages in self._importers.items()
                   if name == package or name.startswith(package + ".")),
                  None)
    if hidden is None:
      return None
    spec = importlib.machinery.PathFinder.find_spec(name, path, target)
    if spec is None or not hasattr(spec.loader, "exec_module"):
      return None
    spec.loader = _LoaderWithout(spec.loader, hidden)
    return spec


class _LoaderWithout:
  """`loader`, with the packages `hidden` set to None in `sys.modules` (an
  ImportError on import) while it runs a module; the rest is `loader`'s."""

  def __init__(self, loader, hidden):
    self._loader = loader
    self._hidden = hidden

  def __getattr__(self, name):  # create_module, get_source, ...
    return getattr(self._loader, name)

  def exec_module(self, module):
    hidden = [name for name in self._hidden if name not in sys.modules]
    for name in hidden:
      sys.modules[name] = None
    try:
      self._loader.exec_module(module)
    finally:
      for name in hidden:
        if name in sys.modules and sys.modules[name] is None:
          del sys.modules[name]


def _glibc(name):
  """glibc's function `name`, or None where there is no glibc."""
  try:
    return getattr(ctypes.CDLL("libc.so.6"), name)
  except (OSError, AttributeError):
    return None
