"""Tests for common.model_dir (its writers; the trainers' tests use the rest)."""

import os
import stat
import tempfile
import unittest

from sentzoo.common import model_dir


class WriteTextAtomicallyTest(unittest.TestCase):

  def _mode_under(self, umask):
    path = os.path.join(tempfile.mkdtemp(), "flags.txt")
    old = os.umask(umask)
    try:
      model_dir.write_text_atomically(path, "--a=1\n")
      self.assertEqual(os.umask(umask), umask)  # Left as it was.
    finally:
      os.umask(old)
    with open(path, encoding="utf-8") as f:
      self.assertEqual(f.read(), "--a=1\n")
    return stat.S_IMODE(os.stat(path).st_mode)

  def test_mode_honours_the_umask(self):
    # Issue 33 row 13: mkstemp's 0600 made flags.txt, the JSON files and
    # sts_results.md unreadable to the group and others under umask 022.
    self.assertEqual(self._mode_under(0o022), 0o644)
    self.assertEqual(self._mode_under(0o077), 0o600)
    self.assertEqual(self._mode_under(0o002), 0o664)

  def test_same_mode_as_a_plain_open(self):
    folder = tempfile.mkdtemp()
    old = os.umask(0o027)
    try:
      plain = os.path.join(folder, "plain.txt")
      with open(plain, "w", encoding="utf-8") as f:
        f.write("x")
      atomic = os.path.join(folder, "atomic.txt")
      model_dir.write_text_atomically(atomic, "x")
    finally:
      os.umask(old)
    self.assertEqual(stat.S_IMODE(os.stat(atomic).st_mode),
                     stat.S_IMODE(os.stat(plain).st_mode))
    self.assertEqual(sorted(os.listdir(folder)), ["atomic.txt", "plain.txt"])


if __name__ == "__main__":
  unittest.main()
