"""One file per model: `sentzoo pack NAME` writes it, `sentzoo install` reads it.

An archive is a gzip'd tar of

  sentzoo-archive.json   {"format", "name", "files": {path: {size,
                         sha256}}, "scores": the packer's install scores}
  export/...             the SavedModel's files

An archive from someone else is untrusted. `install` refuses it, with one
`errors.UserError` line and nothing written to the store, when:

  * a member is not a regular file or folder (a symbolic or hard link, a
    device, ...), its path is absolute, leaves the folder (tarfile's `data`
    extraction filter, PEP 706), or is outside export/;
  * a size passes a cap (each file, the total, the number of members, the
    total over the archive's own size), by its header or by the bytes
    actually read;
  * the files differ from the manifest's list, sizes or sha256s;
  * the graph has an op outside `export.op_check.ALLOWED_OP_TYPES` (no
    file, process or network op), or does not load as a model of the zoo.

Only then is the entry renamed into the store.
"""

import hashlib
import io
import json
import os
import posixpath
import tarfile
from typing import Any, Dict, Optional

from sentzoo import store as store_lib
from sentzoo.common import disk_errors
from sentzoo.common import errors

MANIFEST_NAME = "sentzoo-archive.json"
EXPORT_PREFIX = store_lib.EXPORT_SUBDIR + "/"
FORMAT = 1
SUFFIX = ".sentzoo.tar.gz"
# Caps on what install reads. The largest entry of the zoo,
# sent2vec-books-unibi, has a 5.9 GB table.
DEFAULT_MAX_BYTES = 16 << 30
MAX_MEMBERS = 10_000
MAX_MANIFEST_BYTES = 1 << 20
# Files that unpack to more than this many times the archive's size are a
# "zip bomb" (a model's float tables barely compress; gzip's best is about
# 1,000:1), unless their total is below MIN_EXPANSION_CHECKED.
MAX_EXPANSION = 20
MIN_EXPANSION_CHECKED = 64 << 20
_CHUNK = 1 << 20


def write(export_dir: str, name: str, scores: Dict[str, Any],
          output_path: str) -> str:
  """Writes the archive of the SavedModel folder `export_dir`.

  Returns:
    `output_path`.
  """
  store_lib.check_name(name)
  files = store_lib.file_table(export_dir)
  manifest = {"format": FORMAT, "name": name, "scores": scores,
              "files": files}
  data = json.dumps(manifest, indent=2, sort_keys=True).encode("utf-8")
  try:
    with disk_errors.atomic_write(output_path, "wb") as f, tarfile.open(
        fileobj=f, mode="w:gz") as tar:
      info = tarfile.TarInfo(MANIFEST_NAME)
      info.size = len(data)
      info.mode = 0o644
      tar.addfile(info, io.BytesIO(data))
      for rel in sorted(files):
        tar.add(os.path.join(export_dir, rel), arcname=EXPORT_PREFIX + rel,
                recursive=False)
  except OSError as e:
    raise errors.UserError(f"cannot write {output_path!r}: {e}") from e
  return output_path


def pack(store: store_lib.Store, name: str,
         output_path: Optional[str] = None) -> str:
  """Writes the archive of installed entry `name` (verified first)."""
  export_dir = store.verify(name, hashes=True)
  manifest = store.manifest(name)
  output_path = output_path or name + SUFFIX
  return write(export_dir, name, manifest.get("scores", {}), output_path)


def _one_line(error):
  return " ".join(str(error).split())


def _refuse(archive_path, message):
  raise errors.UserError(f"archive {archive_path!r} refused: {message}; nothing "
                 "was installed")


def _member_path(archive_path, member):
  """The member's normalised relative path, or a refusal."""
  name = member.name
  if not (member.isreg() or member.isdir()):
    kind = ("a symbolic link" if member.issym() else
            "a hard link" if member.islnk() else "not a regular file")
    _refuse(archive_path, f"member {name!r} is {kind}")
  try:
    # Strips a leading '/' (refused below) and refuses what leaves the
    # folder it would be extracted to.
    filtered = tarfile.data_filter(member, "/export-root")
  except tarfile.FilterError as e:
    _refuse(archive_path, f"member {name!r}: {_one_line(e)}")
  if filtered.name != name or name.startswith("\\") or name[1:2] == ":":
    _refuse(archive_path, f"member {name!r} has an absolute path")
  path = posixpath.normpath(name.replace("\\", "/"))
  if path != MANIFEST_NAME and not (
      path.startswith(EXPORT_PREFIX) or
      (path == store_lib.EXPORT_SUBDIR and member.isdir())):
    _refuse(archive_path, f"member {name!r} is outside {EXPORT_PREFIX}")
  return path


def _read_members(archive_path, tar, max_bytes):
  """{path: TarInfo} of the regular files, checked before any is read."""
  files, total, count = {}, 0, 0
  expansion_cap = max(MAX_EXPANSION * os.path.getsize(archive_path),
                      MIN_EXPANSION_CHECKED)
  for member in tar:
    count += 1
    if count > MAX_MEMBERS:
      _refuse(archive_path, f"more than {MAX_MEMBERS} members")
    path = _member_path(archive_path, member)
    if member.isdir():
      continue
    if path in files:
      _refuse(archive_path, f"member {path!r} appears twice")
    total += member.size
    if member.size > max_bytes or total > max_bytes:
      _refuse(archive_path, f"its files pass the size cap of {max_bytes:,} "
              "bytes (install --max_bytes=N raises it)")
    if total > expansion_cap:
      _refuse(archive_path, f"its files unpack to over {MAX_EXPANSION} "
              "times the archive's size (a model's tables barely compress)")
    files[path] = member
  return files


def _copy_checked(archive_path, tar, member, target, expected):
  """Writes member to `target`, reading at most its manifest size."""
  digest = hashlib.sha256()
  size = 0
  source = tar.extractfile(member)
  with open(target, "xb") as out:
    while True:
      chunk = source.read(min(_CHUNK, expected["size"] + 1 - size))
      if not chunk:
        break
      size += len(chunk)
      if size > expected["size"]:
        break
      digest.update(chunk)
      out.write(chunk)
  if size != expected["size"] or digest.hexdigest() != expected["sha256"]:
    _refuse(archive_path, f"{member.name} does not match the manifest's "
            "size and sha256")


def install(archive_path: str, store: store_lib.Store,
            max_bytes: int = DEFAULT_MAX_BYTES, replace: bool = False,
            data_dir: Optional[str] = None) -> str:
  """Verifies the archive and installs it; returns the entry's name.

  Raises:
    errors.UserError: the archive is refused (the message says why); the
      store is then as it was.
  """
  if not os.path.isfile(archive_path):
    raise errors.UserError(f"archive {archive_path!r} does not exist")
  try:
    tar = tarfile.open(archive_path, "r:gz")
  except (tarfile.TarError, OSError, EOFError) as e:
    raise errors.UserError(f"{archive_path!r} is not a sentzoo archive "
                           f"(a gzip'd tar file): {_one_line(e)}") from e
  with tar:
    try:
      files = _read_members(archive_path, tar, max_bytes)
    except (tarfile.TarError, OSError, EOFError, ValueError) as e:
      _refuse(archive_path, f"damaged tar file ({_one_line(e)})")
    manifest = _read_manifest(archive_path, tar, files)
    name = store_lib.check_name(manifest["name"])
    if store.is_installed(name) and not replace:
      raise errors.UserError(
          f"model {name!r} is already installed in {store.root!r}; pass "
          "--replace to replace it")
    with store.staging() as staging:
      export_dir = os.path.join(staging, store_lib.EXPORT_SUBDIR)
      for rel, expected in sorted(manifest["files"].items()):
        target = os.path.join(export_dir, *rel.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
          _copy_checked(archive_path, tar, files[EXPORT_PREFIX + rel],
                        target, expected)
        except (tarfile.TarError, OSError, EOFError) as e:
          if disk_errors.write_failure(e):
            raise  # The store's: `staging` says so.
          _refuse(archive_path, f"damaged tar file ({_one_line(e)})")
      _check_graph(archive_path, export_dir)
      scores = _measure(archive_path, export_dir, data_dir)
      scores_from_packer = manifest.get("scores", {})
      store.commit(name, staging, {
          "source": f"archive {os.path.basename(archive_path)}",
          "scores": scores,
          "scores_from_packer": scores_from_packer}, replace=replace)
  return name


def _read_manifest(archive_path, tar, files):
  member = files.pop(MANIFEST_NAME, None)
  if member is None:
    _refuse(archive_path, f"no {MANIFEST_NAME}")
  if member.size > MAX_MANIFEST_BYTES:
    _refuse(archive_path, f"{MANIFEST_NAME} is over "
            f"{MAX_MANIFEST_BYTES:,} bytes")
  try:
    manifest = json.loads(tar.extractfile(member).read(MAX_MANIFEST_BYTES))
    if manifest.get("format") != FORMAT:
      raise ValueError(f"format {manifest.get('format')!r}, expected "
                       f"{FORMAT}")
    table = manifest["files"]
    for rel, entry in table.items():
      if not (isinstance(entry, dict) and isinstance(entry.get("size"), int)
              and isinstance(entry.get("sha256"), str)):
        raise ValueError(f"bad entry for {rel!r}")
  except (ValueError, KeyError, AttributeError, TypeError,
          tarfile.TarError) as e:
    _refuse(archive_path, f"damaged {MANIFEST_NAME} ({_one_line(e)})")
  in_archive = {path[len(EXPORT_PREFIX):] for path in files}
  if set(table) != in_archive:
    extra = sorted(in_archive - set(table))
    absent = sorted(set(table) - in_archive)
    _refuse(archive_path, "its files differ from the manifest's: " + (
        f"{extra[0]!r} is not listed" if extra else
        f"{absent[0]!r} is missing"))
  return manifest


def _check_graph(archive_path, export_dir):
  from sentzoo.export import op_check  # pylint: disable=g-import-not-at-top
  try:
    outside = op_check.disallowed_ops(export_dir)
  except errors.UserError as e:
    _refuse(archive_path, str(e).replace(export_dir, "export"))
  if outside:
    _refuse(archive_path, "its graph has ops outside the allowlist: "
            f"{', '.join(outside[:5])}")


def _measure(archive_path, export_dir, data_dir):
  """Loads the export as a model of the zoo, and its install scores."""
  from sentzoo import install_scores  # pylint: disable=g-import-not-at-top
  from sentzoo import sentence_model  # pylint: disable=g-import-not-at-top
  try:
    model = sentence_model.load(export_dir)
  except errors.UserError as e:
    _refuse(archive_path, f"not a model of the zoo: {e}")
  return install_scores.measure(model, export_dir, data_dir)
