"""Writes SavedModels as `<export_dir>/<integer version>/`, atomically."""

import collections.abc
import concurrent.futures
import errno
import json
import os
import re
import shutil
import threading
import uuid

import tensorflow as tf

from sentzoo.common import disk_errors
from sentzoo.common import errors
from sentzoo.common import run_lock
from sentzoo.export import model_readme
from sentzoo.export import serving_requests

_VERSION = re.compile(r"^\d+$")
MODEL_CARD = os.path.join("assets.extra", "model_card.json")
# Versions tried by one export before giving up (each failure means another
# export published a version in between).
_MAX_PUBLISH_ATTEMPTS = 100


def existing_versions(export_dir):
  """Integer version folders under `export_dir`, ascending."""
  if not os.path.isdir(export_dir):
    return []
  return sorted(int(n) for n in os.listdir(export_dir) if _VERSION.match(n))


def _taken(path):
  """Whether a version folder (or anything else) has this name."""
  return os.path.lexists(path)


class VersionExistsError(errors.UserError, FileExistsError):
  """An explicitly requested export version is already there."""


def _publish(tmp, export_dir, version):
  """Renames the finished `tmp` folder to its version folder; returns it.

  With `version` None, the version is one more than the highest present,
  recomputed after every collision: a concurrent export that renamed its
  own folder to that number first makes this one take the next. The
  rename is the only step that claims a number; os.rename of a folder onto
  a non-empty folder fails (ENOTEMPTY / EEXIST) instead of replacing it, so
  a published version is never overwritten. (POSIX rename does replace an
  empty folder; this writer never makes one, and checks that the name is
  free just before.)
  """
  for _ in range(_MAX_PUBLISH_ATTEMPTS):
    number = version
    if number is None:
      number = (existing_versions(export_dir) or [0])[-1] + 1
    final = os.path.join(export_dir, str(number))
    if not _taken(final):
      try:
        os.rename(tmp, final)
        return final
      except OSError as e:
        if e.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
          raise
    if version is not None:
      raise VersionExistsError(
          f"export version {final} already exists (another export wrote "
          "it while this one ran); leave the version out to take the next "
          "free one")
  raise errors.UserError(
      f"{export_dir}: another export took every version number this one "
      f"tried ({_MAX_PUBLISH_ATTEMPTS} attempts); rerun it")


def remove_stale_temporaries(export_dir):
  """Removes the `.tmp-<pid>-...` folders of exports whose process is gone
  (killed mid-export; a live writer's folder is left alone); returns them."""
  removed = []
  for name in os.listdir(export_dir):
    match = re.fullmatch(r"\.tmp-(\d+)-.*", name)
    if not match:
      continue
    if run_lock.pid_alive(int(match.group(1))):
      continue  # Alive (or another user's): not ours to remove.
    shutil.rmtree(os.path.join(export_dir, name), ignore_errors=True)
    removed.append(os.path.join(export_dir, name))
  return removed


def write(module, export_dir, version=None, extra_files=None):
  """Saves `module` (with `serve` as `serving_default`) as a new version.

  The SavedModel is written to a hidden temporary folder next to the final
  one and renamed into place (`_publish`), so TF Serving or a reader never
  sees a half written version, a failed export leaves no version folder,
  and concurrent exports into one `export_dir` get distinct versions.

  Args:
    module: a tf.Module with a `serve` tf.function (string inputs, named
      outputs) and a `metadata` dict. The export also gets a TF Serving
      warm-up file with one request for `serve`.
    export_dir: the model's base folder (TF Serving's `model_base_path`).
    version: integer version >= 0; default one more than the highest
      present when the export is renamed into place.
    extra_files: files to copy into the export (see `save`).

  Returns:
    The path of the new version folder.

  Raises:
    VersionExistsError: `version` was given and exists (before or by the
      end of the export).
    errors.UserError: `version` is not an integer >= 0, `export_dir` is
      not a folder that can be created, or the export cannot be written
      there (a full disk, with the size it needs and the space free; a
      read-only folder); nothing of the export is left behind.
  """
  if version is not None:
    if (isinstance(version, bool) or not isinstance(version, int) or
        version < 0):
      raise errors.UserError(
          f"export version must be an integer >= 0, got {version!r}")
    version = int(version)
  try:
    os.makedirs(export_dir, exist_ok=True)
  except OSError as e:
    raise (disk_errors.user_error(e, "the export", export_dir, ADVICE) or
           errors.UserError(f"cannot use export dir {export_dir!r}: "
                            f"{e.strerror or e}")) from None
  with disk_errors.plain_write_errors("the export", export_dir, ADVICE):
    remove_stale_temporaries(export_dir)
  if version is not None:
    final = os.path.join(export_dir, str(version))
    if _taken(final):
      raise VersionExistsError(
          f"export version {final} already exists; pick another version or "
          "leave it out to take the next free one")
  # Unique per process and thread: concurrent writers never share one.
  tmp = os.path.join(export_dir, f".tmp-{os.getpid()}-"
                     f"{threading.get_ident()}-{uuid.uuid4().hex[:8]}")
  try:
    with disk_errors.plain_write_errors("the export", export_dir, ADVICE,
                                        needed_bytes=_variable_bytes(module)):
      save(module, tmp, os.path.basename(os.path.abspath(export_dir)),
           extra_files)
      return _publish(tmp, export_dir, version)
  finally:
    shutil.rmtree(tmp, ignore_errors=True)


# What else a user can do when the export folder cannot take the export.
ADVICE = "pass another --export_dir"


def _variable_bytes(module):
  """About what the export's variables take on disk."""
  return sum(v.shape.num_elements() * v.dtype.size for v in module.variables
             if v.shape.is_fully_defined())


def save(module, folder, model_name, extra_files=None):
  """Saves `module` as a SavedModel in the new folder `folder`: the graph
  and variables, the model card, README.md, the warm-up requests (for TF
  Serving's model `model_name`) and `extra_files` ({path in the export:
  file to copy there}, e.g. the vocabulary as assets.extra/vocab.txt).

  A `concurrent.futures.Future` among the card's values is waited for
  after the graph and variables are written (an import's sha256 is taken
  meanwhile)."""
  tf.saved_model.save(
      module, folder,
      signatures={"serving_default": module.serve.get_concrete_function()})
  card = _resolved(module.metadata)
  card_path = os.path.join(folder, MODEL_CARD)
  os.makedirs(os.path.dirname(card_path), exist_ok=True)
  with open(card_path, "w", encoding="utf-8") as f:
    json.dump(card, f, indent=2, sort_keys=True)
  with open(os.path.join(folder, model_readme.README), "w",
            encoding="utf-8") as f:
    f.write(model_readme.render(card))
  serving_requests.write_warmup_file(
      folder, serving_requests.warmup_inputs(module.serve),
      model_name=model_name)
  for rel, source in (extra_files or {}).items():
    target = os.path.join(folder, *rel.split("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copyfile(source, target)


def _resolved(value):
  """The model card as plain dicts and lists, each Future its result."""
  if isinstance(value, concurrent.futures.Future):
    return value.result()
  if isinstance(value, collections.abc.Mapping):
    return {k: _resolved(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [_resolved(v) for v in value]
  return value
