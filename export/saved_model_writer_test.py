"""Tests for export.saved_model_writer."""

import concurrent.futures
import errno
import json
import os
import subprocess
import tempfile
import threading
from unittest import mock

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.export import averaging_encoder
from sentzoo.export import input_limits
from sentzoo.export import saved_model_writer
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.tests import serving_fixtures

METADATA = {"model_type": "test", "embedding_dim": 3,
            "training": {"corpus_files": ["a.txt.gz", "b.txt.gz"]},
            "paper": "Kenter et al."}


def _module(metadata=None, rows=3):
  vocabulary = vocabulary_lib.Vocabulary(["a", "b"], [2, 1])
  table = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
  return averaging_encoder.AveragingSentenceEncoder(
      text_to_ids_lib.TextToIds(vocabulary), table,
      METADATA if metadata is None else metadata)


def _mount_tmpfs(test, options):
  """A fresh tmpfs mounted with `options` (e.g. "size=256k", "ro"), unmounted
  at the end of `test`; skips the test where mounting is not allowed."""
  folder = tempfile.mkdtemp()
  done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs",
                         folder], capture_output=True, check=False)
  if done.returncode != 0:
    test.skipTest(f"cannot mount a tmpfs here: {done.stderr!r}")
  test.addCleanup(subprocess.run, ["umount", folder], check=False)
  return folder


class SavedModelWriterTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.export_dir = os.path.join(self.get_temp_dir(), self.id(), "exports")

  def _entries(self):
    return sorted(os.listdir(self.export_dir))

  def test_extra_files_and_save_into_a_given_folder(self):
    source = os.path.join(self.get_temp_dir(), "words.txt")
    with open(source, "w", encoding="utf-8") as f:
      f.write("a\t2\n")
    extra = {"assets.extra/vocab.txt": source}
    pending = concurrent.futures.Future()  # Resolved after the graph.
    module = _module({"model_type": "test", "sha256": pending})
    module.serve.get_concrete_function()
    pending.set_result("abc")
    path = saved_model_writer.write(module, self.export_dir,
                                    extra_files=extra)
    with open(os.path.join(path, saved_model_writer.MODEL_CARD),
              encoding="utf-8") as f:
      self.assertEqual(json.load(f)["sha256"], "abc")
    folder = os.path.join(self.get_temp_dir(), self.id(), "staged", "export")
    saved_model_writer.save(_module(), folder, "entry", extra)
    for root in (path, folder):
      with open(os.path.join(root, "assets.extra", "vocab.txt"),
                encoding="utf-8") as f:
        self.assertEqual(f.read(), "a\t2\n")
      self.assertTrue(os.path.isfile(os.path.join(
          root, saved_model_writer.MODEL_CARD)))
      self.assertAllClose(tf.saved_model.load(root)(tf.constant(["b"])),
                          [[6, 7, 8]])

  def test_versions_increase_and_no_temp_left(self):
    module = _module()
    first = saved_model_writer.write(module, self.export_dir)
    self.assertEqual(first, os.path.join(self.export_dir, "1"))
    self.assertEqual(self._entries(), ["1"])
    second = saved_model_writer.write(module, self.export_dir)
    self.assertEqual(second, os.path.join(self.export_dir, "2"))
    self.assertEqual(self._entries(), ["1", "2"])
    self.assertEqual(saved_model_writer.existing_versions(self.export_dir),
                     [1, 2])
    self.assertTrue(tf.saved_model.contains_saved_model(second))

  def test_a_killed_export_temporary_is_removed_a_live_one_kept(self):
    os.makedirs(self.export_dir)
    # pid_max is never a process id (ids stay below it): a writer that is
    # gone. (A just-exited child's id can come back at once as a thread's.)
    with open("/proc/sys/kernel/pid_max") as f:
      dead_pid = int(f.read())
    stale = os.path.join(self.export_dir, f".tmp-{dead_pid}-1-abc")
    live = os.path.join(self.export_dir, f".tmp-{os.getpid()}-1-abc")
    os.makedirs(os.path.join(stale, "variables"))
    os.makedirs(live)
    saved_model_writer.write(_module(), self.export_dir)
    self.assertFalse(os.path.exists(stale))
    self.assertTrue(os.path.exists(live))

  def test_explicit_version_and_existing_version(self):
    module = _module()
    path = saved_model_writer.write(module, self.export_dir, version=7)
    self.assertEqual(path, os.path.join(self.export_dir, "7"))
    self.assertEqual(
        saved_model_writer.write(module, self.export_dir),
        os.path.join(self.export_dir, "8"))
    with self.assertRaisesRegex(errors.UserError, "7 already exists"):
      saved_model_writer.write(module, self.export_dir, version=7)
    # Still a FileExistsError for callers that catch that.
    with self.assertRaises(FileExistsError):
      saved_model_writer.write(module, self.export_dir, version=7)
    self.assertEqual(self._entries(), ["7", "8"])

  def test_bad_version_and_export_dir_are_user_errors(self):
    for version in (-1, "3", 2.0, True):
      with self.assertRaisesRegex(errors.UserError, "integer >= 0"):
        saved_model_writer.write(_module(), self.export_dir, version=version)
    a_file = os.path.join(self.get_temp_dir(), "a_file")
    with open(a_file, "w") as f:
      f.write("x")
    with self.assertRaisesRegex(errors.UserError, "cannot use export dir"):
      saved_model_writer.write(_module(), a_file)

  def _run_concurrently(self, versions):
    """Writes one module per entry of `versions` from as many threads.

    Every writer lists the existing versions (to pick its number) only once
    all of them have saved their SavedModel and reached that point, so all
    pick the same number and race for the same rename.

    Returns:
      (paths written, exceptions raised), in thread order (None where none).
    """
    modules = [_module() for _ in versions]
    barrier = threading.Barrier(len(versions))
    listed = threading.local()
    real_existing_versions = saved_model_writer.existing_versions

    def existing_versions(export_dir):
      if not getattr(listed, "once", False):
        listed.once = True
        barrier.wait(timeout=120)
      return real_existing_versions(export_dir)

    real_taken = saved_model_writer._taken  # pylint: disable=protected-access

    def taken(path):  # Explicit versions: all pass the first check.
      if not getattr(listed, "checked", False):
        listed.checked = True
        result = real_taken(path)
        barrier.wait(timeout=120)
        return result
      return real_taken(path)

    paths = [None] * len(versions)
    failures = [None] * len(versions)

    def run(i):
      try:
        paths[i] = saved_model_writer.write(modules[i], self.export_dir,
                                            version=versions[i])
      except Exception as e:  # pylint: disable=broad-except
        failures[i] = e

    patches = [mock.patch.object(saved_model_writer, "existing_versions",
                                 existing_versions)]
    if versions[0] is not None:
      patches = [mock.patch.object(saved_model_writer, "_taken", taken)]
    for patch in patches:
      patch.start()
    try:
      threads = [threading.Thread(target=run, args=(i,))
                 for i in range(len(versions))]
      for thread in threads:
        thread.start()
      for thread in threads:
        thread.join(timeout=300)
    finally:
      for patch in patches:
        patch.stop()
    return paths, failures

  def test_concurrent_exports_get_distinct_versions(self):
    os.makedirs(self.export_dir)
    paths, failures = self._run_concurrently([None, None, None])
    self.assertEqual(failures, [None, None, None])
    self.assertCountEqual(
        paths, [os.path.join(self.export_dir, v) for v in ("1", "2", "3")])
    self.assertEqual(self._entries(), ["1", "2", "3"])  # No .tmp-* left.
    for path in paths:
      out = tf.saved_model.load(path).signatures["serving_default"](
          sentences=tf.constant(["a"]))["embeddings"]
      self.assertAllClose(out, [[3, 4, 5]])

  def test_concurrent_exports_of_one_explicit_version(self):
    os.makedirs(self.export_dir)
    paths, failures = self._run_concurrently([4, 4])
    written = [p for p in paths if p is not None]
    self.assertEqual(written, [os.path.join(self.export_dir, "4")])
    failure = [f for f in failures if f is not None]
    self.assertLen(failure, 1)
    self.assertIsInstance(failure[0], saved_model_writer.VersionExistsError)
    self.assertRegex(str(failure[0]), "4 already exists.*another export")
    self.assertEqual(self._entries(), ["4"])

  def test_version_taken_after_listing_is_not_overwritten(self):
    # Another export publishes version 1 between this one's listing and its
    # rename: the rename fails (non-empty target) and the next number is
    # taken; version 1 is left as it was.
    theirs = os.path.join(self.export_dir, "1", "theirs")
    os.makedirs(os.path.dirname(theirs))
    with open(theirs, "w") as f:
      f.write("another export")
    listings = [[]]
    real = saved_model_writer.existing_versions

    def stale_once(export_dir):
      return listings.pop() if listings else real(export_dir)

    with mock.patch.object(saved_model_writer, "existing_versions",
                           stale_once), \
         mock.patch.object(saved_model_writer, "_taken", lambda path: False):
      path = saved_model_writer.write(_module(), self.export_dir)
    self.assertEqual(path, os.path.join(self.export_dir, "2"))
    self.assertEqual(self._entries(), ["1", "2"])
    self.assertEqual(os.listdir(os.path.dirname(theirs)), ["theirs"])

  def test_existing_versions_ignores_other_names(self):
    self.assertEqual(saved_model_writer.existing_versions(
        os.path.join(self.get_temp_dir(), "absent")), [])
    for name in ("3", "10", ".tmp-4-1", "notes", "2a"):
      os.makedirs(os.path.join(self.export_dir, name))
    self.assertEqual(saved_model_writer.existing_versions(self.export_dir),
                     [3, 10])
    self.assertEqual(saved_model_writer.write(_module(), self.export_dir),
                     os.path.join(self.export_dir, "11"))

  def test_failed_save_leaves_nothing(self):
    with mock.patch.object(tf.saved_model, "save",
                           side_effect=RuntimeError("disk full")):
      with self.assertRaisesRegex(RuntimeError, "disk full"):
        saved_model_writer.write(_module(), self.export_dir)
    self.assertEqual(self._entries(), [])

  def test_failed_model_card_leaves_nothing(self):
    # Written after the SavedModel itself: a set is not JSON.
    with self.assertRaises(TypeError):
      saved_model_writer.write(_module({"bad": {1, 2}}), self.export_dir)
    self.assertEqual(self._entries(), [])
    # The next export still gets version 1.
    self.assertEqual(saved_model_writer.write(_module(), self.export_dir),
                     os.path.join(self.export_dir, "1"))

  def test_warmup_file_runs_through_the_signature(self):
    path = saved_model_writer.write(_module(), self.export_dir)
    requests = serving_fixtures.read_warmup_requests(path)
    self.assertLen(requests, 1)
    self.assertEqual(requests[0].model_spec.name, "exports")
    feeds = serving_fixtures.request_feeds(requests[0])
    self.assertEqual(list(feeds), ["sentences"])
    out = tf.saved_model.load(path).signatures["serving_default"](**feeds)
    self.assertEqual(out["embeddings"].shape, (2, 3))

  def test_model_card(self):
    path = saved_model_writer.write(_module(), self.export_dir)
    card_path = os.path.join(path, "assets.extra", "model_card.json")
    self.assertEqual(saved_model_writer.MODEL_CARD,
                     os.path.join("assets.extra", "model_card.json"))
    with open(card_path, encoding="utf-8") as f:
      card = json.load(f)
    self.assertEqual(card.pop("input_limits"), input_limits.model_card_entry(
        input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE,
        input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE))
    # An averaging encoder's card says how its table is stored.
    quantization = card.pop("quantization")
    self.assertEqual(quantization["mode"], "none")
    self.assertFalse(quantization["inference_only"])
    self.assertEqual(card, METADATA)

  def test_reload_serving_default(self):
    path = saved_model_writer.write(_module(), self.export_dir)
    loaded = tf.saved_model.load(path)
    serve = loaded.signatures["serving_default"]
    out = serve(sentences=tf.constant(["a b", "b", "zzz"]))["embeddings"]
    self.assertAllClose(out, [[4.5, 5.5, 6.5], [6, 7, 8], [0, 0, 0]])
    self.assertAllClose(loaded(tf.constant(["a"])), [[3, 4, 5]])

  def test_full_disk_is_one_plain_error_and_leaves_nothing(self):
    # Issue 33 row 9: a ResourceExhaustedError traceback before.
    disk = _mount_tmpfs(self, "size=1m")
    export_dir = os.path.join(disk, "exports")
    with self.assertRaises(errors.UserError) as caught:
      saved_model_writer.write(_module(rows=100_000), export_dir)
    message = str(caught.exception)
    self.assertRegex(
        message, "^no space left on device writing the export to "
        f"{export_dir} \\(it needs about 1.2 MB, .* free\\): make room or "
        "pass another --export_dir$")
    self.assertEqual(os.listdir(export_dir), [])
    # A small export fits in the space left.
    self.assertEqual(saved_model_writer.write(_module(), export_dir),
                     os.path.join(export_dir, "1"))

  def test_read_only_folder_is_one_plain_error(self):
    disk = _mount_tmpfs(self, "ro,size=64k")
    for export_dir in (disk, os.path.join(disk, "exports")):
      with self.subTest(export_dir=export_dir):
        with self.assertRaisesRegex(
            errors.UserError,
            f"^cannot write the export to {export_dir}: read-only file "
            "system; make it writable or pass another --export_dir$"):
          saved_model_writer.write(_module(), export_dir)

  def test_write_failures_raised_by_tensorflow_or_python_are_plain(self):
    # The same without a tmpfs: the save fails as TensorFlow and Python say.
    failures = (
        (tf.errors.ResourceExhaustedError(
            None, None, "x/variables_temp/part-0; No space left on device"),
         "^no space left on device writing the export to .*: make room or "
         "pass another --export_dir$"),
        (tf.errors.PermissionDeniedError(
            None, None, "x/saved_model.pb; Read-only file system"),
         "read-only file system; make it writable or pass"),
        (OSError(errno.EROFS, "Read-only file system"),
         "read-only file system; make it writable"),
        (OSError(errno.EDQUOT, "Disk quota exceeded"),
         "^no space left on device writing the export"),
        (OSError(errno.EACCES, "Permission denied"),
         "permission denied; make it writable or pass"))
    for failure, message in failures:
      with self.subTest(failure=failure):
        with mock.patch.object(tf.saved_model, "save", side_effect=failure):
          with self.assertRaisesRegex(errors.UserError, message):
            saved_model_writer.write(_module(), self.export_dir)
        self.assertEqual(self._entries(), [])
    # Anything else is a bug: its own exception, not a UserError.
    with mock.patch.object(tf.saved_model, "save",
                           side_effect=ValueError("a bug")):
      with self.assertRaisesRegex(ValueError, "a bug"):
        saved_model_writer.write(_module(), self.export_dir)


if __name__ == "__main__":
  tf.test.main()
