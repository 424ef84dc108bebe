"""A quiet console for sentzoo's own programs; `--verbose` brings the noise back.

Why this module exists: a command such as `python -m trainers.siamese_cbow`
used to print, before and between its own progress lines and tables, a dozen
lines that say nothing about the run:

  * TensorFlow's C++ INFO lines: the oneDNN notice, "Could not find cuda
    drivers", the CPU-instructions notice, the XLA service lines, and the
    banner "WARNING: All log messages before absl::InitializeLog() is called
    are written to STDERR". The oneDNN, cuda-driver and banner lines come
    twice (libtensorflow_framework and libtensorflow_cc each log them) and
    are written *before* TensorFlow reads TF_CPP_MIN_LOG_LEVEL, so that
    variable cannot hide them (TF 2.21): only TF_ENABLE_ONEDNN_OPTS=0 drops
    the oneDNN notice, by turning oneDNN off, which changes speed and
    numerics.
  * "failed call to cuInit ... (303)", an ERROR line on every machine
    without a CUDA driver.
  * Python INFO lines of TensorFlow's saver and SavedModel writer
    ("Sharding callback duration", "Assets written to", "Writing fingerprint",
    "Function `serve` contains input name(s) ... renamed"), the "Assets
    written" one twice (the "tensorflow" logger has a handler of its own).

Two functions remove them, in the order a program runs:

1. `quiet_before_tensorflow()`, called by sentzoo/__init__.py, which every
   top-level folder's `__init__.py` imports first, so it runs before the
   first `import tensorflow` also under `python -m trainers.x` (whose own
   module imports TensorFlow before anything of sentzoo). Only when the
   process runs one of sentzoo's programs (`python -m <folder>.<module>`,
   `python -m sentzoo...`, or a script inside the package, as Bazel runs
   tests) and neither `--verbose` is on the command line nor
   SENTZOO_VERBOSE=1 is set, it
     - sets TF_CPP_MIN_LOG_LEVEL=1 unless it is set (C++ INFO off; C++
       warnings and errors still show), and
     - captures the stderr file descriptor while TensorFlow is imported and
       its devices are listed (the cuInit call), then writes back every
       captured line except: the absl banner, C++ log lines below
       TF_CPP_MIN_LOG_LEVEL (the rule TensorFlow applies itself once it has
       read the variable), and the cuInit failure when TensorFlow also said
       that the machine has no CUDA driver. Nothing else is dropped: a
       Python warning or an unexpected C++ warning during the import still
       shows. (A crash inside `import tensorflow` would lose its message:
       rerun with --verbose.)
   A user's program that imports sentzoo (`import sentzoo`, a notebook,
   pytest) is left exactly as it is: no environment variable, no capture,
   no logging change. A library should not change its host's console;
   TF_CPP_MIN_LOG_LEVEL is the user's to set.

2. `set_logging_verbosity(verbose)`, called by `common.cli.run` once the
   flags are parsed: unless `--verbose`, the "tensorflow" logger is set to
   WARNING and the absl handler drops INFO (and DEBUG) records that do not
   come from sentzoo's own files. sentzoo's own `logging.info` lines (STS
   encoding times, SentEval accuracies, ...) and everything printed (the
   progress lines and result tables) stay, as do warnings and errors from
   anyone.

`--verbose` (common/cli.py defines it) must be on the command line to bring
back the C++ lines: they are written before the flags (and a --flagfile) are
read. SENTZOO_VERBOSE=1 does the same for every sentzoo program, including
the ones tests start in subprocesses.
"""

import contextlib
import functools
import importlib.abc
import importlib.util
import logging
import os
import re
import sys
import tempfile

# Set to "1" to keep the console as TensorFlow leaves it (like --verbose).
ENV_VAR = "SENTZOO_VERBOSE"

# The TF_CPP_MIN_LOG_LEVEL sentzoo's programs use unless it is set: hide C++
# INFO, keep warnings and errors.
DEFAULT_TF_CPP_MIN_LOG_LEVEL = "1"

# The folder that holds the package's folders: the repository root in a
# source checkout, site-packages/sentzoo in an installed wheel.
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

# Written once by each copy of absl in TensorFlow's libraries.
_ABSL_BANNER = ("WARNING: All log messages before absl::InitializeLog() is "
                "called are written to STDERR")
# An absl C++ log line: "I0000 00:00:1795472518.858238   30924 port.cc:153] ".
_CPP_LOG_LINE = re.compile(r"^([IWEF])\d{4} [\d:.]+\s+\d+ [^\s\]]+:\d+\] ")
_CPP_SEVERITIES = "IWEF"  # TF_CPP_MIN_LOG_LEVEL 1 hides I, 2 also W, ...
_NO_CUDA_DRIVER = "Could not find cuda drivers on your machine"
_CUINIT_FAILED = re.compile(r"\] failed call to cuInit: ")

_TRUE = ("1", "true", "t", "yes", "y")

_quieted = False


def verbose_from_environment(environ=None):
  """Whether SENTZOO_VERBOSE is set to 1 (or true, yes) in `environ`."""
  environ = os.environ if environ is None else environ
  return environ.get(ENV_VAR, "").strip().lower() in _TRUE


def verbose_requested(argv=None, environ=None):
  """Whether --verbose is on the command line or SENTZOO_VERBOSE=1.

  Read before the flags are parsed (absl's rules: the last of --verbose,
  --verbose=false, --noverbose wins; nothing after a bare `--` is a flag).

  Args:
    argv: the command line (default: sys.argv); argv[0] is the program.
    environ: the environment (default: os.environ).
  """
  argv = sys.argv if argv is None else argv
  verbose = verbose_from_environment(environ)
  for arg in argv[1:]:
    if arg == "--":
      break
    if not arg.startswith("-"):
      continue
    name, equals, value = arg.lstrip("-").partition("=")
    if name == "verbose":
      verbose = not equals or value.lower() in _TRUE
    elif name == "noverbose" and not equals:
      verbose = False
  return verbose


@functools.lru_cache(maxsize=None)
def is_own_file(path):
  """Whether the file `path` is one of sentzoo's modules."""
  try:
    rel = os.path.relpath(os.path.realpath(path), _PACKAGE_ROOT)
  except ValueError:  # Another drive (Windows).
    return False
  top = rel.split(os.sep)[0]
  if top == os.pardir:
    return False
  if top == rel:  # Directly in the package root: sentzoo/*.py when installed.
    return _is_package(_PACKAGE_ROOT)
  return _is_package(os.path.join(_PACKAGE_ROOT, top))


@functools.lru_cache(maxsize=None)
def _is_package(folder):
  return os.path.isfile(os.path.join(folder, "__init__.py"))


def _main_module(orig_argv):
  """The module of `python -m MODULE ...` in `orig_argv`; None if no -m."""
  args = iter(orig_argv[1:])
  for arg in args:
    if arg == "-m":
      return next(args, None)
    if arg.startswith("-m"):
      return arg[2:]
    if arg in ("-W", "-X", "--check-hash-based-pycs"):  # Take a value.
      next(args, None)
    elif arg == "-c" or arg == "-" or not arg.startswith("-"):
      return None  # A command string or a script runs, not a module.
  return None


def runs_own_program(orig_argv=None, argv=None):
  """Whether this process runs one of sentzoo's programs.

  True for `python -m trainers.siamese_cbow` (a top-level folder of the
  checkout) and `python -m sentzoo.trainers.siamese_cbow`: the package of
  the module (imported first, while Python looks for the module) is one of
  sentzoo's files; and for a script inside the package (`python
  common/console_test.py`, as Bazel runs tests). False for pytest,
  `python -c`, a notebook, or a user's own script.

  Args:
    orig_argv: the interpreter's command line (default: sys.orig_argv).
    argv: the program's command line (default: sys.argv).
  """
  orig_argv = getattr(sys, "orig_argv", []) if orig_argv is None else orig_argv
  argv = sys.argv if argv is None else argv
  module = _main_module(orig_argv)
  if module is not None:
    package = sys.modules.get(module.split(".")[0])
    path = getattr(package, "__file__", None)
    return path is not None and is_own_file(path)
  script = argv[0] if argv else ""
  return (script.endswith(".py") and os.path.isfile(script) and
          is_own_file(script))


def filter_import_output(text, min_log_level):
  """The lines of `text`, stderr of `import tensorflow`, that are not noise.

  Dropped: absl's "All log messages before absl::InitializeLog()" banner;
  log lines in absl's format ("I0000 00:00:... port.cc:153] ...", C++ lines)
  whose severity TF_CPP_MIN_LOG_LEVEL=`min_log_level` hides (1: INFO, 2:
  also WARNING, 3: also ERROR); and the "failed call to cuInit" error when
  `text` also says that the machine has no CUDA driver. Everything else is
  kept, in order.
  """
  no_driver = _NO_CUDA_DRIVER in text
  kept = []
  for line in text.splitlines(keepends=True):
    if line.rstrip("\r\n") == _ABSL_BANNER:
      continue
    match = _CPP_LOG_LINE.match(line)
    if match:
      if _CPP_SEVERITIES.index(match.group(1)) < min_log_level:
        continue
      if no_driver and _CUINIT_FAILED.search(line):
        continue
    kept.append(line)
  return "".join(kept)


def _min_log_level(environ):
  try:
    return int(environ.get("TF_CPP_MIN_LOG_LEVEL", "0"))
  except ValueError:
    return 0


@contextlib.contextmanager
def filtered_stderr(min_log_level):
  """Captures file descriptor 2 inside the block; writes back what is kept.

  The captured output goes through `filter_import_output` when the block
  ends, also when it raises (the exception's traceback is printed later, on
  the real stderr).
  """
  try:
    saved = os.dup(2)
  except OSError:  # No stderr to capture.
    yield
    return
  with tempfile.TemporaryFile() as captured:
    _flush_stderr()
    os.dup2(captured.fileno(), 2)
    try:
      yield
    finally:
      _flush_stderr()
      os.dup2(saved, 2)
      os.close(saved)
      captured.seek(0)
      text = captured.read().decode("utf-8", errors="surrogateescape")
      kept = filter_import_output(text, min_log_level)
      if kept:
        os.write(2, kept.encode("utf-8", errors="surrogateescape"))


def _flush_stderr():
  if sys.stderr is not None:
    try:
      sys.stderr.flush()
    except (OSError, ValueError):
      pass


class _QuietLoader(importlib.abc.Loader):
  """Runs TensorFlow's own loader inside `filtered_stderr`."""

  def __init__(self, loader, min_log_level):
    self._loader = loader
    self._min_log_level = min_log_level

  def create_module(self, spec):
    return self._loader.create_module(spec)

  def exec_module(self, module):
    # TensorFlow keeps its own loader: nothing of this wrapper stays behind.
    module.__loader__ = module.__spec__.loader = self._loader
    with filtered_stderr(self._min_log_level):
      self._loader.exec_module(module)
      # Lists the devices: this is where TensorFlow calls cuInit. Devices can
      # still be configured afterwards (the runtime is not initialised).
      try:
        module.config.list_physical_devices()
      except Exception:  # pylint: disable=broad-except
        pass  # Only listed early to catch its output; a real use will raise.

  def __getattr__(self, name):  # get_source, is_package, ... of the real one.
    return getattr(self._loader, name)


class _QuietTensorFlowFinder(importlib.abc.MetaPathFinder):
  """Wraps the loader of the first `import tensorflow`, then steps aside."""

  def __init__(self, min_log_level):
    self._min_log_level = min_log_level

  def find_spec(self, fullname, path=None, target=None):
    del path, target  # Unused: "tensorflow" is a top-level package.
    if fullname != "tensorflow":
      return None
    if self in sys.meta_path:
      sys.meta_path.remove(self)
    spec = importlib.util.find_spec(fullname)
    if spec is not None and spec.loader is not None:
      spec.loader = _QuietLoader(spec.loader, self._min_log_level)
    return spec


def quiet_before_tensorflow(orig_argv=None, argv=None, environ=None):
  """Hides TensorFlow's C++ INFO lines when sentzoo's own program runs.

  Call it before TensorFlow is imported (sentzoo/__init__.py does). Does
  nothing (and returns False) in a process that is not one of sentzoo's
  programs (`runs_own_program`), with --verbose on the command line or
  SENTZOO_VERBOSE=1, once TensorFlow is imported, or on a second call.
  Otherwise sets TF_CPP_MIN_LOG_LEVEL=1 unless it is set, and arranges that
  the first `import tensorflow` runs with its stderr filtered
  (`filter_import_output`); returns True.

  Args:
    orig_argv: the interpreter's command line (default: sys.orig_argv).
    argv: the program's command line (default: sys.argv).
    environ: the environment to read and set (default: os.environ).
  """
  global _quieted
  environ = os.environ if environ is None else environ
  if (_quieted or "tensorflow" in sys.modules or
      not runs_own_program(orig_argv, argv) or
      verbose_requested(argv, environ)):
    return False
  _quieted = True
  environ.setdefault("TF_CPP_MIN_LOG_LEVEL", DEFAULT_TF_CPP_MIN_LOG_LEVEL)
  sys.meta_path.insert(0, _QuietTensorFlowFinder(_min_log_level(environ)))
  return True


class _OwnInfoOnly(logging.Filter):
  """Passes warnings and errors, and INFO/DEBUG from sentzoo's own files."""

  def filter(self, record):
    return record.levelno >= logging.WARNING or is_own_file(record.pathname)


_OWN_INFO_ONLY = _OwnInfoOnly()


def set_logging_verbosity(verbose):
  """Python logging of a sentzoo program: quiet unless `verbose`.

  Call it once the flags are parsed (`common.cli.run` does). Not `verbose`:
  the "tensorflow" logger (`tf.get_logger()`) logs WARNING and above, and
  absl's handler drops INFO and DEBUG records from any file that is not
  sentzoo's own (TensorFlow's saver and SavedModel writer use absl logging
  too). `verbose`: both back to how absl and TensorFlow set them.
  """
  from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top
  handler = absl_logging.get_absl_handler()
  tf_logger = logging.getLogger("tensorflow")
  if verbose:
    handler.removeFilter(_OWN_INFO_ONLY)
    tf_logger.setLevel(logging.NOTSET)
  else:
    handler.addFilter(_OWN_INFO_ONLY)
    tf_logger.setLevel(logging.WARNING)
