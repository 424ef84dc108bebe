"""Where the real data sets live: a flag, else an environment variable."""

import os

from sentzoo.common import errors

ENV_VAR = "SENTZOO_DATA_DIR"


def resolve_data_dir(flag_value=None, required_subdir=None):
  """Returns the data directory named by `--data_dir` or `$SENTZOO_DATA_DIR`.

  Args:
    flag_value: the value of the command's `--data_dir` flag (may be empty).
    required_subdir: a folder that must exist below the data directory,
      e.g. "gutenberg" for training on the book corpus.

  Raises:
    errors.DataDirError: naming the flag and the variable to set.
  """
  path = flag_value or os.environ.get(ENV_VAR, "")
  if not path:
    raise errors.DataDirError(
        f"no data directory given: pass --data_dir=PATH or set {ENV_VAR}=PATH "
        "(for a checkout beside the shared data: ../shared/data)")
  if not os.path.isdir(path):
    raise errors.DataDirError(
        f"data directory {path!r} does not exist: fix --data_dir or {ENV_VAR}")
  if required_subdir and not os.path.isdir(os.path.join(path, required_subdir)):
    raise errors.DataDirError(
        f"data directory {path!r} has no {required_subdir}/ folder: point "
        f"--data_dir or {ENV_VAR} at a copy of the data that has it")
  return path
