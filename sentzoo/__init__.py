"""sentzoo: a TensorFlow/Keras model zoo for sentence embeddings and matching.

The repository's top-level folders (`layers/`, `models/`, `inputs/`,
`trainers/`, `export/`, `evaluation/`, ...) are the subpackages of this one
package: code imports them as `sentzoo.layers`, `sentzoo.models`, ..., so an
installed sentzoo adds one top-level name, `sentzoo`, to a user's environment
instead of generic ones such as `layers` or `models`.

In a source checkout the folders sit beside this `sentzoo/` folder, not in
it, so the repository root is added to this package's search path below. An
installed wheel maps them into the package (pyproject.toml's `package-dir`),
and an editable install (`pip install -e .`) maps them through setuptools'
import hook; both find `sentzoo/layers` etc. without this fallback.
"""

import os as _os

_HERE = _os.path.dirname(_os.path.abspath(__file__))
_ROOT = _os.path.dirname(_HERE)
if (not _os.path.isdir(_os.path.join(_HERE, "layers")) and
    _os.path.isfile(_os.path.join(_ROOT, "layers", "__init__.py")) and
    _ROOT not in __path__):
  __path__.append(_ROOT)

# A quiet console (common/console.py): when this process runs one of
# sentzoo's own programs (`python -m trainers.siamese_cbow`, ...), hide
# TensorFlow's C++ INFO lines; it must run before TensorFlow is imported, so
# here, and every top-level folder's __init__.py imports this package first.
# `import sentzoo` in a user's program changes nothing.
from sentzoo.common import console as _console  # pylint: disable=g-import-not-at-top,g-bad-import-order

_console.quiet_before_tensorflow()

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
  import importlib  # pylint: disable=g-import-not-at-top
  module = importlib.import_module(f".{_PUBLIC_API[name]}", __name__)
  return getattr(module, name)


def __dir__():
  return sorted(list(globals()) + list(_PUBLIC_API))
