"""The store: names resolve to verified entries; writes are whole or none."""

import os

import tensorflow as tf

from sentzoo import store as store_lib
from sentzoo.tests import zoo_test_util
from sentzoo.common import errors


class StoreTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), "store_test")
    cls.export_dir = zoo_test_util.make_export(root)

  def _store(self):
    store = store_lib.Store(os.path.join(self.get_temp_dir(), "home"))
    store.install_dir("tiny", self.export_dir, {"scores": {}})
    return store

  def test_home_default_and_env(self):
    previous = os.environ.pop(store_lib.ENV_VAR, None)
    try:
      self.assertEqual(store_lib.home(),
                       os.path.expanduser("~/.cache/sentzoo"))
      os.environ[store_lib.ENV_VAR] = "/x/y"
      self.assertEqual(store_lib.home(), "/x/y")
    finally:
      os.environ.pop(store_lib.ENV_VAR, None)
      if previous is not None:
        os.environ[store_lib.ENV_VAR] = previous

  def test_manifest_lists_every_file_with_size_and_sha256(self):
    store = self._store()
    files = store.manifest("tiny")["files"]
    self.assertEqual(sorted(files), store_lib.list_files(self.export_dir))
    for rel, entry in files.items():
      path = os.path.join(self.export_dir, rel)
      self.assertEqual(entry["size"], os.path.getsize(path))
      self.assertEqual(entry["sha256"], store_lib.sha256_file(path))
    self.assertEqual(store.installed(), ["tiny"])
    self.assertEqual(store.manifest("tiny")["scores"]["size_bytes"],
                     sum(entry["size"] for entry in files.values()))

  def test_sha256_on_first_load_then_sizes_only(self):
    store = self._store()
    stamp = os.path.join(store.entry_dir("tiny"),
                         store_lib.SHA256_CHECKED_FILE)
    pb = os.path.join(store.export_path("tiny"), "saved_model.pb")
    with open(pb, "r+b") as f:
      f.seek(10)
      byte = f.read(1)
      f.seek(10)
      f.write(bytes([byte[0] ^ 1]))
    # Hashed at install: a same-size change passes the cheap check...
    self.assertEqual(store.verify("tiny"), store.export_path("tiny"))
    # ... not a check of the sha256s, on request or on a first load.
    with self.assertRaisesRegex(errors.UserError,
                                "saved_model.pb does not match its sha256"):
      store.verify("tiny", hashes=True)
    os.remove(stamp)
    with self.assertRaisesRegex(errors.UserError, "does not match"):
      store.verify("tiny")
    self.assertFalse(os.path.exists(stamp))

  def test_first_load_writes_the_stamp(self):
    store = self._store()
    stamp = os.path.join(store.entry_dir("tiny"),
                         store_lib.SHA256_CHECKED_FILE)
    os.remove(stamp)
    store.verify("tiny")
    self.assertTrue(os.path.exists(stamp))

  def test_resolve_paths_and_names(self):
    store = self._store()
    self.assertEqual(store_lib.resolve(self.export_dir, store),
                     self.export_dir)
    self.assertEqual(store_lib.resolve("tiny", store),
                     store.export_path("tiny"))
    self.assertEqual(store_lib.resolve("a/b", store), "a/b")
    with self.assertRaisesRegex(errors.UserError, "sentzoo train "
                                "siamese-cbow-demo"):
      store_lib.resolve("siamese-cbow-demo", store)
    with self.assertRaisesRegex(errors.UserError, "neither a path nor"):
      store_lib.resolve("other", store)

  def test_a_failed_install_leaves_nothing(self):
    home = os.path.join(self.get_temp_dir(), "new", "home")
    store = store_lib.Store(home)
    with self.assertRaises(errors.UserError):
      store.install_dir("Bad Name", self.export_dir, {})
    self.assertFalse(os.path.exists(os.path.dirname(home)))
    store.install_dir("tiny", self.export_dir, {})
    with self.assertRaisesRegex(errors.UserError, "already installed"):
      store.install_dir("tiny", self.export_dir, {}, replace=False)
    self.assertEqual(sorted(os.listdir(home)), ["models"])

  def test_symbolic_link_in_entry_is_an_error(self):
    store = self._store()
    os.symlink("/etc/passwd", os.path.join(store.export_path("tiny"), "x"))
    with self.assertRaisesRegex(errors.UserError, "symbolic link"):
      store.verify("tiny")


if __name__ == "__main__":
  tf.test.main()
