"""sentzoo: a TensorFlow/Keras model zoo for sentence embeddings and matching.

The repository's top-level folders (`layers/`, `models/`, `trainers/`, ...)
are this package's subpackages through the symbolic links `sentzoo/layers ->
../layers`, ...: code imports `sentzoo.layers`, an installed sentzoo adds one
top-level name to a user's environment, and editors and type checkers find
`sentzoo/common/model_dir.py` as a file. `tools/` is not a subpackage: it is
the repository's, not the library's.

`python -m trainers.siamese_cbow` in the checkout imports the folder as a
top-level package `trainers` first; its `__init__.py` then hands over to
`sentzoo.trainers` (`_subpackage_path` below), so each file is one module.
"""

import importlib as _importlib
import os as _os
import sys as _sys

__version__ = "0.2.0"

# Where the links are missing (Bazel's runfiles, which hold the folders
# beside this one; a checkout made without symbolic links), the folders are
# looked up beside this package. Nowhere else: there `sentzoo.sentzoo` would
# import this folder a second time.
if not _os.path.isdir(_os.path.join(__path__[0], "common")):
  __path__.append(_os.path.dirname(__path__[0]))


def _subpackage_path(name, path):
  """The `__path__` of the folder package `name`; called by its __init__.py.

  The folder's real path, not the link sentzoo/trainers: `__file__` of its
  modules then names the repository's file, as code that finds the repository
  root from `__file__` expects. And when the folder is imported as a
  top-level package (`trainers`, by `python -m trainers.x` or pytest in the
  checkout), `sys.modules["trainers"]` becomes `sentzoo.trainers`: `trainers.x`
  is then looked up in the same folder and nothing below it loads twice.
  """
  if not name.startswith("sentzoo."):
    _sys.modules[name] = _importlib.import_module(f"sentzoo.{name}")
  return [_os.path.realpath(p) for p in path]


# The public API (sentzoo/sentence_model.py): `sentzoo.load(path)` and
# `sentzoo.similarity(a, b)`, imported on first use (PEP 562) so that
# `import sentzoo` does not import TensorFlow. In Bazel, a target that calls
# them depends on //sentzoo:sentence_model (//sentzoo cannot: that module
# depends on it).
_PUBLIC_API = {"load": "sentence_model", "similarity": "sentence_model",
               "semantic_search": "sentence_model"}


def __getattr__(name):
  if name not in _PUBLIC_API:
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
  module = _importlib.import_module(f".{_PUBLIC_API[name]}", __name__)
  return getattr(module, name)


def __dir__():
  return sorted(list(globals()) + list(_PUBLIC_API))


def _runs_a_sentzoo_module():
  """Whether this is `python -m sentzoo.x` or `python -m trainers.x` (a folder).

  sys.argv[0] is "-m" while Python imports the packages that hold the
  module, i.e. when this runs for those commands.
  """
  argv = getattr(_sys, "orig_argv", [])
  top = argv[argv.index("-m") + 1].split(".")[0] if "-m" in argv[:-1] else ""
  return (getattr(_sys, "argv", [])[:1] == ["-m"] and bool(top) and
          (top == "sentzoo" or _os.path.isdir(_os.path.join(__path__[0], top))))


# TensorFlow's start-up lines (absl's banner, CUDA notices, a cuInit ERROR
# on a machine without a GPU) are hidden for every program that imports
# sentzoo before TensorFlow, unless SENTZOO_VERBOSE=1 (common/console.py).
# SIGINT/SIGTERM stop the command with one line and exit 75
# (common/interrupts.py), and glibc keeps freed memory in fewer arenas and
# TensorFlow and Keras load without their unused optional imports
# (common/resources.py), only for sentzoo's own commands: a user's program
# keeps its signals and imports.
from sentzoo.common import console as _console  # pylint: disable=g-import-not-at-top,wrong-import-position
_console.quiet_before_tensorflow()
if _runs_a_sentzoo_module():
  from sentzoo.common import resources as _resources  # pylint: disable=g-import-not-at-top
  _resources.limit_malloc_arenas()
  _resources.skip_unused_optional_imports()
  from sentzoo.common import interrupts as _interrupts  # pylint: disable=g-import-not-at-top
  _interrupts.install_for_command()
