"""`sentzoo install` refuses crafted archives, writing nothing."""

import hashlib
import io
import json
import os
import shutil
import tarfile
import time

import tensorflow as tf

from sentzoo import archive
from sentzoo import store as store_lib
from sentzoo.tests import zoo_test_util

run = zoo_test_util.run


class _ReadsAFile(tf.Module):
  """A sentence encoder whose graph reads a file of the host."""

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string,
                                              name="sentences")])
  def serve(self, sentences):
    secret = tf.strings.length(tf.io.read_file("/etc/hostname"))
    ones = tf.ones([tf.shape(sentences)[0], 2])
    return {"embeddings": ones * tf.cast(secret, tf.float32)}


def _members(path):
  """[(TarInfo, bytes or None)] of an archive."""
  with tarfile.open(path, "r:gz") as tar:
    return [(m, tar.extractfile(m).read() if m.isreg() else None)
            for m in tar.getmembers()]


def _write(path, members):
  with tarfile.open(path, "w:gz") as tar:
    for info, data in members:
      tar.addfile(info, io.BytesIO(data) if data is not None else None)
  return path


def _file(name, data):
  info = tarfile.TarInfo(name)
  info.size = len(data)
  return info, data


class ArchiveInstallTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), "sentzoo_archive")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    cls.root = root
    export_dir = zoo_test_util.make_export(root)
    home = os.path.join(root, "home")
    zoo_test_util.install_tiny(home, "tiny", export_dir)
    cls.good = archive.pack(store_lib.Store(home), "tiny",
                            os.path.join(root, "tiny.sentzoo.tar.gz"))
    evil_export = os.path.join(root, "evil_export")
    module = _ReadsAFile()
    tf.saved_model.save(module, evil_export,
                        signatures={"serving_default": module.serve})
    cls.evil = archive.write(evil_export, "evil", {},
                             os.path.join(root, "evil.sentzoo.tar.gz"))

  def _crafted(self, name, change):
    """The good archive with `change(members) -> members` applied."""
    return _write(os.path.join(self.get_temp_dir(), name),
                  change(_members(self.good)))

  def assertRefused(self, archive_path, text, *flags):
    home = os.path.join(self.get_temp_dir(), "home_" + os.path.basename(
        archive_path))
    done = run(home, "install", archive_path, *flags)
    self.assertEqual(done.returncode, 2, done.stdout + done.stderr[-3000:])
    lines = done.stderr.strip().splitlines()
    self.assertLen(lines, 1, done.stderr)
    self.assertStartsWith(lines[0], "error: ")
    self.assertIn(text, lines[0])
    self.assertFalse(os.path.exists(home) and set(os.listdir(home)) - {
        store_lib.LOCK_FILE}, f"install wrote into {home}")

  def test_the_good_archive_installs(self):
    home = os.path.join(self.get_temp_dir(), "home_good")
    done = run(home, "install", self.good)
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    store = store_lib.Store(home)
    self.assertEqual(store.installed(), ["tiny"])
    self.assertEqual(store.verify("tiny", hashes=True),
                     store.export_path("tiny"))
    self.assertEqual(sorted(os.listdir(home)), [".lock", "models"])
    # Readable by all, as the rest of the store (not 0700).
    for path in (store.entry_dir("tiny"), store.export_path("tiny")):
      self.assertEqual(os.stat(path).st_mode & 0o777,
                       0o777 & ~zoo_test_util.umask(), path)

  def test_two_installs_into_a_new_store_keep_the_one_installed(self):
    for attempt in range(2):
      home = os.path.join(self.get_temp_dir(), f"race{attempt}", "home")
      installs = [zoo_test_util.start(home, "install", self.good)
                  for _ in range(2)]
      outputs = [p.communicate(timeout=600) for p in installs]
      codes = sorted(p.returncode for p in installs)
      self.assertEqual(codes, [0, 2], outputs)
      self.assertEqual(store_lib.Store(home).installed(), ["tiny"], outputs)
      store_lib.Store(home).verify("tiny")

  def test_a_killed_install_leaves_nothing_after_the_next_command(self):
    home = os.path.join(self.get_temp_dir(), "killed")
    install = zoo_test_util.start(home, "install", self.good)
    deadline = time.monotonic() + 120
    while not (os.path.isdir(home) and any(
        n.startswith(".incoming-") for n in os.listdir(home))):
      self.assertLess(time.monotonic(), deadline)
      time.sleep(0.01)
    install.kill()
    install.communicate()
    done = run(home, "install", self.good)
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    self.assertEqual(sorted(os.listdir(home)), [".lock", "models"])

  def test_a_store_that_cannot_be_written_is_one_error_line(self):
    home = os.path.join(self.get_temp_dir(), "a_file")
    with open(home, "w") as f:
      f.write("x")
    done = run(home, "install", self.good)
    self.assertEqual(done.returncode, 2, done.stderr[-3000:])
    self.assertEqual(done.stderr.count("error: "), 1, done.stderr)
    self.assertIn("is a file, not a folder", done.stderr)
    disk = zoo_test_util.mount_tmpfs(self, "ro,size=64k")
    done = run(os.path.join(disk, "home"), "install", self.good)
    self.assertEqual(done.returncode, 2, done.stderr[-3000:])
    self.assertEqual(done.stderr.strip().splitlines(), [
        f"error: cannot write the model to {disk}/home: read-only file "
        "system; make it writable or set $SENTZOO_HOME to another folder"])

  def test_an_archive_that_unpacks_to_far_more_than_its_size(self):
    zeros = bytes(80 << 20)  # 80 MB of zeros: gzip makes it 80 KB.

    def add_zeros(members):
      out = []
      for info, data in members:
        if info.name == archive.MANIFEST_NAME:
          manifest = json.loads(data)
          manifest["files"]["assets.extra/zeros"] = {
              "size": len(zeros),
              "sha256": hashlib.sha256(zeros).hexdigest()}
          info, data = _file(info.name, json.dumps(manifest).encode())
        out.append((info, data))
      return out + [_file("export/assets.extra/zeros", zeros)]
    self.assertRefused(self._crafted("bomb.tar.gz", add_zeros),
                       "unpack to over 20 times the archive's size")

  def test_path_with_dotdot(self):
    self.assertRefused(self._crafted("dotdot.tar.gz", lambda m: m + [
        _file("export/../../escaped.txt", b"x")]), "outside the destination")

  def test_absolute_path(self):
    self.assertRefused(self._crafted("absolute.tar.gz", lambda m: m + [
        _file("/tmp/sentzoo_escaped.txt", b"x")]), "absolute path")

  def test_path_outside_export(self):
    self.assertRefused(self._crafted("outside.tar.gz", lambda m: m + [
        _file("manifest.json", b"{}")]), "outside export/")
    self.assertRefused(self._crafted("export_file.tar.gz", lambda m: m + [
        _file("export", b"x")]), "outside export/")

  def test_symbolic_link_leaving_the_store(self):
    def add_link(members):
      info = tarfile.TarInfo("export/variables/link")
      info.type = tarfile.SYMTYPE
      info.linkname = "/etc/passwd"
      return members + [(info, None)]
    self.assertRefused(self._crafted("symlink.tar.gz", add_link),
                       "is a symbolic link")

  def test_hard_link(self):
    def add_link(members):
      info = tarfile.TarInfo("export/hard")
      info.type = tarfile.LNKTYPE
      info.linkname = "../../etc/passwd"
      return members + [(info, None)]
    self.assertRefused(self._crafted("hardlink.tar.gz", add_link),
                       "is a hard link")

  def test_size_cap(self):
    self.assertRefused(self.good, "size cap of 1,000 bytes",
                       "--max_bytes=1000")

  def test_changed_file(self):
    def change(members):
      out = []
      for info, data in members:
        if info.name == "export/saved_model.pb":
          data = data[:-1] + bytes([data[-1] ^ 1])
        out.append((info, data))
      return out
    self.assertRefused(self._crafted("changed.tar.gz", change),
                       "does not match the manifest's size and sha256")

  def test_file_not_in_the_manifest(self):
    self.assertRefused(self._crafted("extra.tar.gz", lambda m: m + [
        _file("export/extra.txt", b"x")]), "'extra.txt' is not listed")

  def test_damaged_manifest(self):
    def change(members):
      return [(_file(archive.MANIFEST_NAME, b"{not json") if
               info.name == archive.MANIFEST_NAME else (info, data))
              for info, data in members]
    self.assertRefused(self._crafted("manifest.tar.gz", change),
                       "damaged sentzoo-archive.json")

  def test_bad_name_in_manifest(self):
    def change(members):
      out = []
      for info, data in members:
        if info.name == archive.MANIFEST_NAME:
          manifest = json.loads(data)
          manifest["name"] = "../evil"
          info, data = _file(info.name, json.dumps(manifest).encode())
        out.append((info, data))
      return out
    self.assertRefused(self._crafted("badname.tar.gz", change),
                       "bad model name '../evil'")

  def test_graph_that_reads_a_file(self):
    self.assertRefused(self.evil, "ops outside the allowlist: ReadFile")

  def test_not_an_archive(self):
    path = os.path.join(self.get_temp_dir(), "junk.tar.gz")
    with open(path, "wb") as f:
      f.write(b"\x00junk" * 100)
    self.assertRefused(path, "is not a sentzoo archive")
    self.assertRefused(os.path.join(self.get_temp_dir(), "absent.tar.gz"),
                       "does not exist")


if __name__ == "__main__":
  tf.test.main()
