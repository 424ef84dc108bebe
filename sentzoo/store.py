"""The local store of trained models: `$SENTZOO_HOME` (default ~/.cache/sentzoo).

  $SENTZOO_HOME/models/<name>/
      export/            the SavedModel (what `hub.load` and `sentzoo.load`
                         take: `sentzoo.store.Store().export_path(name)`)
      manifest.json      size and sha256 of every file of export/, the
                         scores measured at install, where it came from

An entry is verified whenever it is loaded: the files of export/ are exactly
the manifest's, each of the manifest's size and sha256 (a full hash costs
about a tenth of a load: docs/reliability.md). A file changed since install
is a one-line `errors.UserError`.

Entries are written whole or not at all: into a temporary folder of the
store, then renamed into place. The renames, removals and the cleanup of a
killed command's temporaries (`.incoming-<pid>-*`, `.old-<pid>-*`, removed
by the next command once that pid is gone) hold the store's lock
(`$SENTZOO_HOME/.lock`), so concurrent commands do not undo each other.
"""

import contextlib
import json
import os
import secrets
import shutil
import time
from typing import Any, Dict, List, Optional

import filelock

from sentzoo import catalogue
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import disk_errors
from sentzoo.common import errors
from sentzoo.common import run_lock

MODELS_SUBDIR = "models"
EXPORT_SUBDIR = "export"
MANIFEST_FILE = "manifest.json"
LOCK_FILE = ".lock"
# Temporaries of a command: `<prefix><pid>-<random>` in the store's root.
TEMPORARY_PREFIXES = (".incoming-", ".old-")
# The words of an averaging model's table, one a line (the export's graph
# holds them only as a lookup table): what `--word_vectors` needs of an
# entry to initialise a hybrid matcher's words.
VOCABULARY_IN_EXPORT = "assets.extra/vocab.txt"
MANIFEST_FORMAT = 1
# Its model card (export/saved_model_writer.MODEL_CARD, without TensorFlow).
CARD_IN_EXPORT = "assets.extra/model_card.json"


def export_precision(export_dir: str) -> str:
  """How the export at `export_dir` stores its table, from its model card:
  "float32", or the quantization mode ("float16", "int8")."""
  with open(os.path.join(export_dir, CARD_IN_EXPORT), encoding="utf-8") as f:
    mode = json.load(f).get("quantization", {}).get("mode", "none")
  return "float32" if mode == "none" else mode


def list_files(root: str) -> List[str]:
  """Relative '/'-separated paths of the regular files under `root`.

  Raises:
    errors.UserError: a symbolic link or other non-regular file.
  """
  out = []
  for dirpath, dirnames, filenames in os.walk(root):
    for name in dirnames + filenames:
      path = os.path.join(dirpath, name)
      rel = os.path.relpath(path, root).replace(os.sep, "/")
      if os.path.islink(path):
        raise errors.UserError(f"{path!r} is a symbolic link; a model's "
                               "files must be regular files")
      if name in filenames:
        if not os.path.isfile(path):
          raise errors.UserError(f"{path!r} is not a regular file")
        out.append(rel)
  return sorted(out)


def file_table(root: str) -> Dict[str, Dict[str, Any]]:
  """{relative path: {"size", "sha256"}} of every file under `root`."""
  return {rel: {"size": os.path.getsize(os.path.join(root, rel)),
                "sha256": disk_errors.sha256_file(os.path.join(root, rel))}
          for rel in list_files(root)}


def check_name(name: str) -> str:
  if not isinstance(name, str) or not catalogue.NAME_PATTERN.match(name):
    raise errors.UserError(
        f"bad model name {name!r}: lower-case letters, digits, '.', '_' "
        "and '-', starting with a letter or digit, at most 64 characters")
  return name


class Store:
  """The store at `root` (default: `data_dir_lib.home()`)."""

  def __init__(self, root: Optional[str] = None):
    self.root = os.path.abspath(root) if root else data_dir_lib.home()

  def entry_dir(self, name: str) -> str:
    return os.path.join(self.root, MODELS_SUBDIR, check_name(name))

  def export_path(self, name: str) -> str:
    """The entry's SavedModel folder (for `hub.load`, `sentzoo.load`)."""
    return os.path.join(self.entry_dir(name), EXPORT_SUBDIR)

  def is_installed(self, name: str) -> bool:
    return os.path.isfile(os.path.join(self.entry_dir(name), MANIFEST_FILE))

  def installed(self) -> List[str]:
    """Names of the installed entries, sorted."""
    folder = os.path.join(self.root, MODELS_SUBDIR)
    if not os.path.isdir(folder):
      return []
    try:
      with self.lock():
        self.remove_leftovers()
    except errors.UserError:
      pass  # A store this user cannot write: nothing of theirs to remove.
    return sorted(n for n in os.listdir(folder)
                  if catalogue.NAME_PATTERN.match(n) and self.is_installed(n))

  def manifest(self, name: str) -> Dict[str, Any]:
    """The entry's manifest.json.

    Raises:
      errors.UserError: not installed, or an unreadable manifest.
    """
    path = os.path.join(self.entry_dir(name), MANIFEST_FILE)
    if not os.path.isfile(path):
      raise errors.UserError(self._not_installed_message(name))
    try:
      with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
      if not isinstance(manifest.get("files"), dict):
        raise ValueError("no file table")
    except (OSError, ValueError) as e:
      raise errors.UserError(
          f"store entry {name!r}: damaged {path!r} ({e}); reinstall it "
          f"({self._reinstall_hint(name)})") from e
    return manifest

  def _not_installed_message(self, name):
    where = f"the store {self.root!r}"
    if catalogue.find(name):
      return (f"model {name!r} is not installed in {where}: "
              f"`sentzoo train {name}` trains and installs it, or "
              "`sentzoo install ARCHIVE` installs a packed copy")
    return (f"model {name!r} is neither a path nor installed in {where}; "
            f"the catalogue has {', '.join(catalogue.names())}")

  def _reinstall_hint(self, name):
    if catalogue.find(name):
      return f"`sentzoo train {name}` or `sentzoo install ARCHIVE`"
    return "`sentzoo install ARCHIVE`"

  def verify(self, name: str, hashes: bool = True) -> str:
    """Checks the entry's files against its manifest; returns export_path.

    Args:
      name: an installed entry.
      hashes: compare every sha256 as well as the sizes.

    Raises:
      errors.UserError: not installed, or a file missing, added or changed
        (one line naming the file).
    """
    manifest = self.manifest(name)
    export_dir = self.export_path(name)
    expected = manifest["files"]
    hint = self._reinstall_hint(name)
    try:
      present = list_files(export_dir) if os.path.isdir(export_dir) else []
    except errors.UserError as e:
      raise errors.UserError(f"store entry {name!r}: {e}; reinstall it "
                             f"({hint})") from e
    missing = sorted(set(expected) - set(present))
    added = sorted(set(present) - set(expected))
    if missing or added:
      what = (f"file {EXPORT_SUBDIR}/{missing[0]} is missing" if missing
              else f"file {EXPORT_SUBDIR}/{added[0]} was added")
      raise errors.UserError(f"store entry {name!r} changed since install: "
                             f"{what}; reinstall it ({hint})")
    for rel in present:
      size = os.path.getsize(os.path.join(export_dir, rel))
      if size != expected[rel]["size"]:
        raise errors.UserError(
            f"store entry {name!r} changed since install: {EXPORT_SUBDIR}/"
            f"{rel} has {size} bytes, the manifest {expected[rel]['size']}; "
            f"reinstall it ({hint})")
    for rel in present if hashes else ():
      path = os.path.join(export_dir, rel)
      if disk_errors.sha256_file(path) != expected[rel]["sha256"]:
        raise errors.UserError(
            f"store entry {name!r} changed since install: {EXPORT_SUBDIR}/"
            f"{rel} does not match its sha256; reinstall it ({hint})")
    return export_dir

  def install_dir(self, name: str, source_export_dir: str,
                  manifest_fields: Dict[str, Any],
                  replace: bool = True,
                  extra_files: Optional[Dict[str, str]] = None) -> str:
    """Copies a SavedModel folder into the store as entry `name`.

    The copy's file table (size, sha256) is taken from the copy itself.

    Args:
      name: the entry's name.
      source_export_dir: a SavedModel folder (not changed).
      manifest_fields: what else the manifest records ("scores",
        "source", ...).
      replace: replace an installed entry of that name (else UserError).
      extra_files: {path inside the export: file to copy there}, e.g. the
        vocabulary as "assets.extra/vocab.txt" (hashed and packed with the
        rest).

    Returns:
      The entry's export path.
    """
    with self.staging() as staging:
      shutil.copytree(source_export_dir,
                      os.path.join(staging, EXPORT_SUBDIR), symlinks=True)
      for rel, source in (extra_files or {}).items():
        target = os.path.join(staging, EXPORT_SUBDIR, *rel.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(source, target)
      return self.commit(name, staging, manifest_fields, replace=replace)

  @contextlib.contextmanager
  def lock(self):
    """Holds the store's lock (made with the store's folder if need be);
    a store that cannot be written is one `errors.UserError` line."""
    with self._write_errors():
      os.makedirs(self.root, exist_ok=True)
      with filelock.FileLock(os.path.join(self.root, LOCK_FILE)):
        yield

  def _write_errors(self):
    if os.path.exists(self.root) and not os.path.isdir(self.root):
      raise errors.UserError(
          f"the store {self.root!r} is a file, not a folder: set "
          f"${data_dir_lib.HOME_ENV_VAR} to a folder")
    return disk_errors.plain_write_errors(
        "the model", self.root,
        f"set ${data_dir_lib.HOME_ENV_VAR} to another folder")

  def _temporary(self, prefix):
    """A new folder `<prefix><pid>-<random>` in the store (mode as
    `mkdir` gives, like the rest of the store)."""
    path = os.path.join(self.root, f"{prefix}{os.getpid()}-"
                        f"{secrets.token_hex(4)}")
    os.mkdir(path)
    return path

  def remove_leftovers(self):
    """Removes the temporaries of store commands that are gone (killed
    midway; a name without a pid is an older sentzoo's); call it holding
    `lock()`."""
    for name in os.listdir(self.root):
      if name.startswith(TEMPORARY_PREFIXES):
        pid = name.split("-")[1]
        if not (pid.isdigit() and run_lock.pid_alive(int(pid))):
          shutil.rmtree(os.path.join(self.root, name), ignore_errors=True)

  @contextlib.contextmanager
  def staging(self):
    """A fresh folder in the store, removed on exit (unless `commit` moved
    it into place). Only it: nothing else of the store is removed."""
    with self.lock():
      self.remove_leftovers()
      path = self._temporary(TEMPORARY_PREFIXES[0])
    try:
      with self._write_errors():
        yield path
    finally:
      shutil.rmtree(path, ignore_errors=True)

  def commit(self, name: str, staging: str, manifest_fields: Dict[str, Any],
             replace: bool = True) -> str:
    """Writes the manifest of `staging`/export and renames it to the entry."""
    check_name(name)
    export_dir = os.path.join(staging, EXPORT_SUBDIR)
    files = file_table(export_dir)
    manifest = {"format": MANIFEST_FORMAT, "name": name,
                "installed": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                           time.gmtime()),
                **manifest_fields,
                "files": files}
    if "scores" in manifest:  # The size of what was installed.
      manifest["scores"] = dict(manifest["scores"], size_bytes=sum(
          f["size"] for f in files.values()))
    with open(os.path.join(staging, MANIFEST_FILE), "w",
              encoding="utf-8") as f:
      json.dump(manifest, f, indent=2, sort_keys=True)
    with self.lock():
      if self.is_installed(name) and not replace:
        raise errors.UserError(
            f"model {name!r} is already installed in {self.root!r}; pass "
            "--replace to replace it")
      self._remove_entry(name)
      os.makedirs(os.path.join(self.root, MODELS_SUBDIR), exist_ok=True)
      os.rename(staging, self.entry_dir(name))
    return self.export_path(name)

  def remove(self, name: str) -> bool:
    """Removes entry `name`; False if it was not there."""
    with self.lock():
      return self._remove_entry(name)

  def _remove_entry(self, name):
    target = self.entry_dir(name)
    if not os.path.lexists(target):
      return False
    old = self._temporary(TEMPORARY_PREFIXES[1])
    os.rename(target, os.path.join(old, "entry"))
    shutil.rmtree(old, ignore_errors=True)
    return True


def resolve(model: str, store: Optional[Store] = None,
            hashes: bool = True) -> str:
  """A path as it is, or a model's name as its verified store path.

  `model` is taken as a path when it exists on disk or holds a path
  separator; otherwise as a name: a catalogue entry or any installed entry.

  Raises:
    errors.UserError: a name that is not installed, or a damaged entry.
  """
  model = os.fspath(model)
  if os.path.exists(model) or os.sep in model or "/" in model:
    return model
  if not catalogue.NAME_PATTERN.match(model):
    if catalogue.NAME_PATTERN.match(model.lower()):
      raise errors.UserError(
          f"model {model!r} is neither a path nor a name (names are lower "
          f"case): did you mean {model.lower()!r}? (`sentzoo models` lists "
          "them)")
    return model
  return (store or Store()).verify(model, hashes=hashes)
