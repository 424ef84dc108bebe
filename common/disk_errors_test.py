"""Tests for common.disk_errors."""

import errno
import hashlib
import os
import subprocess
import tempfile
from unittest import mock

import tensorflow as tf

from sentzoo.common import disk_errors
from sentzoo.common import errors


class DiskErrorsTest(tf.test.TestCase):

  def test_kinds_of_write_failure(self):
    for error, kind in (
        (OSError(errno.ENOSPC, "No space left on device"),
         disk_errors.NO_SPACE),
        (tf.errors.ResourceExhaustedError(None, None,
                                          "f; No space left on device"),
         disk_errors.NO_SPACE),
        (tf.errors.PermissionDeniedError(None, None,
                                         "f; Read-only file system"),
         disk_errors.READ_ONLY),
        (OSError(errno.EPERM, "Operation not permitted"), disk_errors.DENIED),
        (tf.errors.ResourceExhaustedError(None, None, "OOM when allocating"),
         None),
        (OSError(errno.ENOENT, "No such file"), None),
        (ValueError("No space left on device"), None)):
      with self.subTest(error=error):
        self.assertEqual(disk_errors.write_failure(error), kind)

  def test_plain_write_errors_passes_other_errors_through(self):
    with self.assertRaisesRegex(
        errors.UserError,
        "^no space left on device writing the logs to /x/y \\(it needs "
        "about 6.1 GB, .* free\\): make room or use less$"):
      with disk_errors.plain_write_errors("the logs", "/x/y", "use less",
                                          needed_bytes=6.1e9):
        raise OSError(errno.ENOSPC, "No space left on device")
    with self.assertRaises(FileNotFoundError):
      with disk_errors.plain_write_errors("the logs", "/x", "use less"):
        raise FileNotFoundError(errno.ENOENT, "gone")

  def test_read_only_tensorboard_folder_is_a_user_error(self):
    # Issue 33 row 9: "Could not initialize events writer", exit 1, before.
    folder = tempfile.mkdtemp()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k",
                           "tmpfs", folder], capture_output=True, check=False)
    if done.returncode == 0:
      self.addCleanup(subprocess.run, ["umount", folder], check=False)
      logdir = folder
    else:  # Not root: what TensorFlow raises there, without a mount.
      logdir = os.path.join(folder, "tensorboard")
      self.enter_context(mock.patch.object(
          tf.summary, "create_file_writer",
          side_effect=tf.errors.PermissionDeniedError(
              None, None, f"{logdir}; Read-only file system")))
    with self.assertRaisesRegex(
        errors.UserError,
        f"^cannot write TensorBoard logs to {logdir}: read-only file "
        "system; make it writable or pass another --model_dir$"):
      disk_errors.summary_writer(logdir)
    writable = os.path.join(tempfile.mkdtemp(), "tensorboard")
    if done.returncode == 0:
      writer = disk_errors.summary_writer(writable)
      with writer.as_default():
        tf.summary.scalar("loss", 1.0, step=1)
      writer.flush()
      self.assertLen(os.listdir(writable), 1)

  def test_size_text(self):
    self.assertEqual(disk_errors.size_text(6.1e9), "6.1 GB")
    self.assertEqual(disk_errors.size_text(9_200_000), "9.2 MB")
    self.assertEqual(disk_errors.size_text(529), "529 bytes")
    # What `sentzoo models` and `sentzoo pack` showed with a formatter of
    # their own (which wrote "529 B").
    for size, shown in ((1_200, "1.2 KB"), (999_999, "1000.0 KB"),
                        (1_000_000, "1.0 MB"), (45_100_000, "45.1 MB"),
                        (260_000_000, "260.0 MB"), (5.9e9, "5.9 GB"),
                        (1.2e12, "1200.0 GB")):
      self.assertEqual(disk_errors.size_text(size), shown)

  def test_atomic_write_is_whole_or_nothing_with_the_mode_of_open(self):
    folder = self.get_temp_dir()
    path = os.path.join(folder, "f.txt")
    with disk_errors.atomic_write(path) as f:
      f.write("caf\u00e9\n")
    with open(path, encoding="utf-8") as f:
      self.assertEqual(f.read(), "caf\u00e9\n")
    mask = os.umask(0)
    os.umask(mask)
    self.assertEqual(os.stat(path).st_mode & 0o777, 0o666 & ~mask)
    with self.assertRaises(ValueError):
      with disk_errors.atomic_write(path, "wb") as f:
        f.write(b"half")
        raise ValueError("stopped")
    with open(path, encoding="utf-8") as f:
      self.assertEqual(f.read(), "caf\u00e9\n")
    self.assertEqual(os.listdir(folder), ["f.txt"])

  def test_sha256_file(self):
    path = os.path.join(self.get_temp_dir(), "data")
    data = os.urandom(3 << 20)
    with open(path, "wb") as f:
      f.write(data)
    self.assertEqual(disk_errors.sha256_file(path),
                     hashlib.sha256(data).hexdigest())
    with self.assertRaises(FileNotFoundError):
      disk_errors.sha256_file(path + ".absent")


if __name__ == "__main__":
  tf.test.main()
