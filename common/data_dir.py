"""Where the real data sets live: one rule for every command.

1. the command's `--data_dir` flag, if given;
2. else `$SENTZOO_DATA_DIR`, if set;
3. else `../shared/data` beside the repository checkout (the layout of this
   project's machines: `make demo`, the README's examples and the tests all
   find the data there), if that folder exists;
4. else one error line that names both ways to give it.
"""

import os

from sentzoo.common import errors

ENV_VAR = "SENTZOO_DATA_DIR"
# sentzoo's own folder: the model store and the caches of commands and
# trainers (`home`).
HOME_ENV_VAR = "SENTZOO_HOME"
DEFAULT_HOME = os.path.join("~", ".cache", "sentzoo")
# Rule 3, relative to the repository checkout.
CHECKOUT_DATA_DIR = os.path.join("..", "shared", "data")


def checkout_root():
  """The repository checkout this code runs from, or None (an installed
  package: no checkout, no rule 3)."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  if os.path.isdir(os.path.join(root, "sentzoo")) and os.path.exists(
      os.path.join(root, "pyproject.toml")):
    return root
  return None


def checkout_data_dir():
  """`../shared/data` beside the checkout if that folder exists, else None."""
  root = checkout_root()
  if root is None:
    return None
  path = os.path.normpath(os.path.join(root, CHECKOUT_DATA_DIR))
  return path if os.path.isdir(path) else None


def resolve_data_dir(flag_value=None, required_subdir=None):
  """Returns the data directory (see the module docstring for the rule).

  Args:
    flag_value: the value of the command's `--data_dir` flag (may be empty).
    required_subdir: a folder that must exist below the data directory,
      e.g. "gutenberg" for training on the book corpus.

  Raises:
    errors.DataDirError: naming the flag and the variable to set.
  """
  path = flag_value or os.environ.get(ENV_VAR, "") or checkout_data_dir()
  if not path:
    raise errors.DataDirError(
        f"no data directory given: pass --data_dir=PATH or set {ENV_VAR}=PATH "
        f"(none was found at {CHECKOUT_DATA_DIR} beside the checkout either)")
  if not os.path.isdir(path):
    raise errors.DataDirError(
        f"data directory {path!r} does not exist: fix --data_dir or {ENV_VAR}")
  if required_subdir and not os.path.isdir(os.path.join(path, required_subdir)):
    raise errors.DataDirError(
        f"data directory {path!r} has no {required_subdir}/ folder: point "
        f"--data_dir or {ENV_VAR} at a copy of the data that has it")
  return path


def home() -> str:
  """sentzoo's folder, its model store (sentzoo/store.py) with the caches of
  commands and trainers in its cache/: $SENTZOO_HOME, else
  $XDG_CACHE_HOME/sentzoo, else ~/.cache/sentzoo."""
  xdg = os.environ.get("XDG_CACHE_HOME")
  return os.path.abspath(os.path.expanduser(
      os.environ.get(HOME_ENV_VAR) or (os.path.join(xdg, "sentzoo") if xdg
                                       else DEFAULT_HOME)))
