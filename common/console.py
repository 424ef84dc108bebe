"""A quiet console for sentzoo's own programs; `--verbose` brings the noise back.

`import tensorflow` prints a dozen C++ lines that say nothing about a run
(absl's banner, oneDNN and CPU notices, no CUDA driver, a cuInit ERROR), some
before it reads TF_CPP_MIN_LOG_LEVEL (TF 2.21), so `quiet_before_tensorflow`
filters the stderr file descriptor while TensorFlow is imported. sentzoo's
__init__.py calls it: a user's program that imports sentzoo before
TensorFlow is quiet as well (SENTZOO_VERBOSE=1 or TF_CPP_MIN_LOG_LEVEL=0
bring the lines back). `set_logging_verbosity` (`common.cli.run`
calls it) hides Python INFO logging, sentzoo's own too: no absl-prefixed line.
`--verbose` on the command line (a --flagfile is read after the C++ lines are
written) or SENTZOO_VERBOSE=1 keeps everything.
"""

import importlib.abc
import importlib.util
import logging
import os
import re
import sys
import tempfile

ENV_VAR = "SENTZOO_VERBOSE"

_BANNER = ("WARNING: All log messages before absl::InitializeLog() is called "
           "are written to STDERR")
# "I0000 00:00:1795472518.858238   30924 port.cc:153] ..."; severity I/W/E/F.
_CPP_LINE = re.compile(r"^([IWEF])\d{4} [\d:.]+\s+\d+ [^\s\]]+:\d+\] ")


def verbose_from_environment(environ=None):
  """Whether SENTZOO_VERBOSE is 1 (or true, yes) in `environ` (os.environ)."""
  environ = os.environ if environ is None else environ
  return environ.get(ENV_VAR, "").strip().lower() in ("1", "true", "yes")


def verbose_requested(argv=None, environ=None):
  """Whether --verbose is on the command line or SENTZOO_VERBOSE=1."""
  args = (sys.argv if argv is None else argv)[1:]
  args = args[:args.index("--")] if "--" in args else args
  return bool({"--verbose", "-verbose", "--verbose=true", "--verbose=1"} &
              set(args)) or verbose_from_environment(environ)


def filter_import_output(text, min_log_level):
  """`text` (stderr of `import tensorflow`) without absl's banner, C++ lines
  below `min_log_level` (TF_CPP_MIN_LOG_LEVEL: 1 hides INFO) and, on a machine
  with no CUDA driver, the cuInit failure; the other lines in order."""
  no_driver = "Could not find cuda drivers on your machine" in text

  def noise(line):
    match = _CPP_LINE.match(line)
    return line.rstrip("\r\n") == _BANNER or bool(match) and (
        "IWEF".index(match.group(1)) < min_log_level or
        no_driver and "] failed call to cuInit: " in line)

  return "".join(l for l in text.splitlines(keepends=True) if not noise(l))


class _QuietTensorFlowImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
  """Runs the first `import tensorflow` with fd 2 filtered, then steps aside."""

  _loader = None

  def find_spec(self, fullname, path=None, target=None):
    if fullname != "tensorflow":
      return None
    sys.meta_path.remove(self)
    spec = importlib.util.find_spec(fullname)
    if spec is not None and spec.loader is not None:
      self._loader, spec.loader = spec.loader, self
    return spec

  def create_module(self, spec):
    return self._loader.create_module(spec)

  def exec_module(self, module):
    module.__loader__ = module.__spec__.loader = self._loader
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
      sys.stderr.flush()
      os.dup2(captured.fileno(), 2)
      try:
        self._loader.exec_module(module)
        module.config.list_physical_devices()  # Where cuInit is called.
      finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        captured.seek(0)
        text = captured.read().decode("utf-8", "surrogateescape")
        level = os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0")
        text = filter_import_output(text, int(level) if level.isdigit() else 0)
        os.write(2, text.encode("utf-8", "surrogateescape"))


def quiet_before_tensorflow(argv=None, environ=None):
  """Hides TensorFlow's C++ INFO lines; False (nothing done) if --verbose,
  SENTZOO_VERBOSE=1, TensorFlow already imported, or a second call."""
  environ = os.environ if environ is None else environ
  if ("tensorflow" in sys.modules or verbose_requested(argv, environ) or
      any(isinstance(f, _QuietTensorFlowImport) for f in sys.meta_path)):
    return False
  environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
  sys.meta_path.insert(0, _QuietTensorFlowImport())
  return True


def set_logging_verbosity(verbose):
  """Unless `verbose`: Python logging shows warnings and errors only, and
  absl's handler writes them without its "W1126 12:00:00 file.py:12]" prefix."""
  from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top
  handler = absl_logging.get_absl_handler()
  if verbose:
    absl_logging.set_verbosity(absl_logging.INFO)
    handler.setFormatter(absl_logging.PythonFormatter())
    logging.getLogger("tensorflow").setLevel(logging.NOTSET)
  else:
    absl_logging.set_verbosity(absl_logging.WARNING)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    logging.getLogger("tensorflow").setLevel(logging.WARNING)
