"""The lab's one record reader: the few result files of finished runs that
the pages read.

A run folder (runs/<table>/<run>/seed<k>/) does not outlive its machine, but
a page must be buildable over sittings on several machines: so a finished
run's page inputs are copied to docs/records/<table>/<run>/seed<k>/
(committed), and the pages read a run from its folder, else its record.
Per-pair scores are kept to DIGITS decimals (`save_decimals`); a page built
from a run folder rounds the same way (`round_decimals`), so both give the
same page.
"""

import contextlib
import json
import os
import shutil

import numpy as np

from lab import significance
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib

DIGITS = 4
WALL_SECONDS = "wall_seconds"  # A run's training wall seconds, as text.


@contextlib.contextmanager
def in_folder(path):
  """Runs the block in `path` (the pages name their records relative to
  the repository's root)."""
  before = os.getcwd()
  os.chdir(path)
  try:
    yield
  finally:
    os.chdir(before)


def record_dir(records_dir, run, seed=None):
  """records_dir/run/seed<k> (records_dir/run for a run without seeds)."""
  folder = os.path.join(records_dir, run)
  return folder if seed is None else os.path.join(folder, f"seed{seed}")


def first_with(filename, *folders):
  """The first of `folders` that holds `filename`, or None."""
  for folder in folders:
    if folder and os.path.isfile(os.path.join(folder, filename)):
      return folder
  return None


def copy_files(source, destination, names):
  """Copies the files `names` that `source` has into `destination`."""
  os.makedirs(destination, exist_ok=True)
  copied = []
  for name in names:
    path = os.path.join(source, name)
    if os.path.isfile(path):
      shutil.copyfile(path, os.path.join(destination, name) + ".tmp")
      os.replace(os.path.join(destination, name) + ".tmp",
                 os.path.join(destination, name))
      copied.append(name)
  return copied


def read_text(path):
  """The file's text, stripped; None if there is no such file."""
  if not os.path.isfile(path):
    return None
  with open(path, encoding="utf-8") as f:
    return f.read().strip()


def wall_seconds(*folders):
  """The training wall seconds in the first of `folders` that has them."""
  folder = first_with(WALL_SECONDS, *folders)
  if folder is None:
    return None
  path = os.path.join(folder, WALL_SECONDS)
  text = read_text(path)
  try:
    return float(text)
  except ValueError:
    raise errors.DataFormatError(path, 1,
                                 f"not a number of seconds: {text!r}")


def read_jsonl(path):
  """The records of a JSON-lines log; [] if there is no such file."""
  text = read_text(path)
  return [json.loads(line) for line in (text or "").split("\n")
          if line.strip()]


def write_json(path, value):
  os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
  model_dir_lib.write_text_atomically(
      path, json.dumps(value, indent=1, sort_keys=True) + "\n")


def read_json(path):
  with open(path, encoding="utf-8") as f:
    return json.load(f)


def mean_present(values):
  """The mean of the values that are neither None nor nan; nan if none."""
  return significance.mean_std(values)[0]


def round_decimals(values, digits=DIGITS):
  """float64 values rounded as a `save_decimals` record reads back."""
  scale = 10.0 ** digits
  return np.rint(np.asarray(values, np.float64) * scale) / scale


def _save_npz(path, arrays):
  os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
  temporary = path + ".tmp.npz"
  np.savez_compressed(temporary, **arrays)
  os.replace(temporary, path)


def save_decimals(path, arrays, digits=DIGITS):
  """{name: float array} -> .npz of value x 10^digits as int16 (or int32)."""
  scale = 10.0 ** digits
  out = {}
  for name, values in arrays.items():
    scaled = np.rint(np.asarray(values, np.float64) * scale)
    fits = scaled.size == 0 or np.max(np.abs(scaled)) <= np.iinfo(np.int16).max
    out[name] = scaled.astype(np.int16 if fits else np.int32)
  out["__digits__"] = np.asarray(digits, np.int8)
  _save_npz(path, out)


def load_decimals(path):
  """{name: float64 array} of a `save_decimals` file."""
  with np.load(path) as saved:
    scale = 10.0 ** int(saved["__digits__"])
    return {name: saved[name].astype(np.float64) / scale
            for name in saved.files if name != "__digits__"}


def save_bools(path, arrays):
  """{name: bool array} -> compressed .npz (read back with np.load)."""
  _save_npz(path, {k: np.asarray(v, bool) for k, v in arrays.items()})


def size_bytes(folder):
  """Total bytes of the files in `folder` (not recursive)."""
  return sum(os.path.getsize(os.path.join(folder, n))
             for n in os.listdir(folder)
             if os.path.isfile(os.path.join(folder, n)))


def parse_seeds(values):
  """--seeds values -> [int]; a UserError unless one or more integers."""
  try:
    seeds = [int(k) for k in values]
  except ValueError:
    raise errors.UserError(f"--seeds must be integers, got {values}") from None
  if not seeds:
    raise errors.UserError("--seeds is empty")
  return seeds


def parse_retrain(specs):
  """--retrain values -> {(run, seed or None)}: 'RUN' or 'RUN/seed<k>'."""
  wanted = set()
  for spec in specs:
    run, sep, seed = spec.strip().partition("/seed")
    if not run or (sep and not seed.isdigit()):
      raise errors.UserError(f"--retrain={spec!r}: expected RUN or "
                             "RUN/seed<k>")
    wanted.add((run, int(seed) if sep else None))
  return wanted


def asked_for(retrain, run, seed):
  """Whether `parse_retrain`'s set names this run and seed."""
  return (run, None) in retrain or (run, seed) in retrain
