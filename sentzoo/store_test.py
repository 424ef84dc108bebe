"""The store: names resolve to verified entries; writes are whole or none."""

import os
from unittest import mock

import tensorflow as tf

from sentzoo import store as store_lib
from sentzoo.tests import zoo_test_util
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import disk_errors
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
    with mock.patch.dict(os.environ):
      os.environ.pop(data_dir_lib.HOME_ENV_VAR, None)
      os.environ.pop("XDG_CACHE_HOME", None)
      self.assertEqual(data_dir_lib.home(),
                       os.path.expanduser("~/.cache/sentzoo"))
      os.environ["XDG_CACHE_HOME"] = "/x/cache"
      self.assertEqual(data_dir_lib.home(), "/x/cache/sentzoo")
      os.environ[data_dir_lib.HOME_ENV_VAR] = "/x/y"
      self.assertEqual(data_dir_lib.home(), "/x/y")

  def test_manifest_lists_every_file_with_size_and_sha256(self):
    store = self._store()
    files = store.manifest("tiny")["files"]
    self.assertEqual(sorted(files), store_lib.list_files(self.export_dir))
    for rel, entry in files.items():
      path = os.path.join(self.export_dir, rel)
      self.assertEqual(entry["size"], os.path.getsize(path))
      self.assertEqual(entry["sha256"], disk_errors.sha256_file(path))
    self.assertEqual(store.installed(), ["tiny"])
    self.assertEqual(store.manifest("tiny")["scores"]["size_bytes"],
                     sum(entry["size"] for entry in files.values()))

  def test_a_same_size_change_is_caught_on_every_load(self):
    store = self._store()
    store.verify("tiny")
    pb = os.path.join(store.export_path("tiny"), "saved_model.pb")
    with open(pb, "r+b") as f:
      f.seek(10)
      byte = f.read(1)
      f.seek(10)
      f.write(bytes([byte[0] ^ 1]))
    for _ in range(2):
      with self.assertRaisesRegex(errors.UserError,
                                  "saved_model.pb does not match its sha256"):
        store.verify("tiny")
    self.assertEqual(store.verify("tiny", hashes=False),
                     store.export_path("tiny"))

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

  def test_a_failed_install_removes_only_its_own_folder(self):
    home = os.path.join(self.get_temp_dir(), "cache", "home")
    store = store_lib.Store(home)
    with self.assertRaises(errors.UserError):
      with store.staging() as staging:
        # Meanwhile another command installs, and writes beside the store.
        store_lib.Store(home).install_dir("tiny", self.export_dir, {})
        other = os.path.join(os.path.dirname(home), "other")
        with open(other, "w") as f:
          f.write("x")
        store.commit("tiny", staging, {}, replace=False)
    self.assertTrue(os.path.exists(other))
    self.assertEqual(store.installed(), ["tiny"])
    self.assertEqual(sorted(os.listdir(home)), [".lock", "models"])

  def test_leftovers_of_dead_commands_are_removed_live_ones_kept(self):
    store = self._store()
    gone = os.path.join(store.root, ".incoming-999999999-ab")  # No pid.
    older = os.path.join(store.root, ".incoming-x7_kq2ab")  # mkdtemp's.
    live = os.path.join(store.root, f".old-{os.getpid()}-cd")
    for path in (gone, older, live):
      os.makedirs(os.path.join(path, "export"))
    self.assertEqual(store.installed(), ["tiny"])
    self.assertFalse(os.path.exists(gone))
    self.assertFalse(os.path.exists(older))
    self.assertTrue(os.path.exists(live))

  def test_export_precision_reads_the_model_card(self):
    export = os.path.join(self.get_temp_dir(), "precision_export")
    os.makedirs(os.path.join(export, "assets.extra"))
    card = os.path.join(export, store_lib.CARD_IN_EXPORT)
    for written, precision in (("{}", "float32"),
                               ('{"quantization": {"mode": "none"}}',
                                "float32"),
                               ('{"quantization": {"mode": "int8"}}', "int8"),
                               ('{"quantization": {"mode": "float16"}}',
                                "float16")):
      with open(card, "w", encoding="utf-8") as f:
        f.write(written)
      self.assertEqual(store_lib.export_precision(export), precision)

  def test_remove(self):
    store = self._store()
    self.assertTrue(store.remove("tiny"))
    self.assertFalse(store.remove("tiny"))
    self.assertEqual(store.installed(), [])
    self.assertEqual(sorted(os.listdir(store.root)), [".lock", "models"])

  def test_symbolic_link_in_entry_is_an_error(self):
    store = self._store()
    os.symlink("/etc/passwd", os.path.join(store.export_path("tiny"), "x"))
    with self.assertRaisesRegex(errors.UserError, "symbolic link"):
      store.verify("tiny")


if __name__ == "__main__":
  tf.test.main()
