"""Tests for common.run_lock, with real processes holding the lock."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

from sentzoo.common import errors
from sentzoo.common import run_lock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Holds the lock of argv[1] until killed, after printing "held".
HOLDER = textwrap.dedent("""
    import sys, time
    from sentzoo.common import run_lock
    with run_lock.hold(sys.argv[1], "training"):
      print("held", flush=True)
      time.sleep(600)
    """)

# A command run through common.cli.run that takes the lock of argv[1].
COMMAND = textwrap.dedent("""
    import sys
    from absl import flags
    from sentzoo.common import cli, run_lock
    def main(argv):
      with run_lock.hold(sys.argv[1], "export"):
        print("done")
    cli.run(main, flags.FlagValues())
    """)


def _python(code, *args, **kwargs):
  return subprocess.Popen(
      [sys.executable, "-c", code, *args], cwd=ROOT, text=True,
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


class RunLockTest(unittest.TestCase):

  def setUp(self):
    super().setUp()
    self.dir = tempfile.mkdtemp()
    self.model_dir = os.path.join(self.dir, "model")
    self.holders = []

  def tearDown(self):
    for process in self.holders:
      if process.poll() is None:
        process.kill()
      process.communicate()
    super().tearDown()

  def _start_holder(self):
    process = _python(HOLDER, self.model_dir)
    self.holders.append(process)
    self.assertEqual(process.stdout.readline().strip(), "held")
    return process

  def test_second_run_is_refused_naming_pid_and_host(self):
    holder = self._start_holder()
    with self.assertRaises(run_lock.DirectoryInUseError) as caught:
      run_lock.RunLock(self.model_dir).acquire()
    message = str(caught.exception)
    self.assertIsInstance(caught.exception, errors.UserError)
    self.assertIn(f"pid {holder.pid} on host {socket.gethostname()}", message)
    self.assertIn("use another --model_dir", message)

  def test_second_command_prints_one_error_line_and_exits_2(self):
    holder = self._start_holder()
    second = _python(COMMAND, self.model_dir)
    out, err = second.communicate(timeout=120)
    self.assertEqual(second.returncode, errors.EXIT_USER_ERROR, err)
    self.assertEqual(out, "")
    lines = err.strip().splitlines()
    self.assertEqual(len(lines), 1, err)
    self.assertTrue(lines[0].startswith("error: "), err)
    self.assertIn(f"pid {holder.pid} on host", lines[0])
    self.assertNotIn("Traceback", err)

  def test_lock_of_a_killed_run_is_taken_over_and_said(self):
    holder = self._start_holder()
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    said = []
    lock = run_lock.RunLock(self.model_dir, "training", announce=said.append)
    previous = lock.acquire()
    try:
      self.assertEqual(previous["pid"], holder.pid)
      self.assertEqual(len(said), 1)
      self.assertIn(f"left by pid {holder.pid} on host "
                    f"{socket.gethostname()} (training), which is gone",
                    said[0])
      with open(os.path.join(self.model_dir, run_lock.LOCK_FILE)) as f:
        self.assertEqual(json.load(f)["pid"], os.getpid())
    finally:
      lock.release()

  def test_released_lock_is_taken_silently_and_by_turns(self):
    said = []
    for _ in range(2):
      with run_lock.hold(self.model_dir, announce=said.append) as lock:
        self.assertTrue(lock.held)
      self.assertFalse(lock.held)
    self.assertEqual(said, [])
    # After a release, another process takes it at once.
    done = _python(COMMAND, self.model_dir)
    out, err = done.communicate(timeout=120)
    self.assertEqual((done.returncode, out.strip()), (0, "done"), err)

  def test_two_processes_started_together_one_wins(self):
    # The reproduction: the same command twice, moments apart.
    started = [_python(HOLDER, self.model_dir) for _ in range(2)]
    self.holders.extend(started)
    deadline = time.time() + 120
    while time.time() < deadline and all(p.poll() is None for p in started):
      time.sleep(0.1)
    losers = [p for p in started if p.poll() is not None]
    self.assertEqual(len(losers), 1)
    _, err = losers[0].communicate()
    self.assertIn("is in use by another run", err)
    winner = [p for p in started if p is not losers[0]][0]
    self.assertEqual(winner.stdout.readline().strip(), "held")

  def test_unwritable_place_is_a_user_error(self):
    path = os.path.join(self.dir, "a_file")
    with open(path, "w") as f:
      f.write("x")
    with self.assertRaises(errors.UserError):
      run_lock.RunLock(path).acquire()

  def test_read_only_folder_is_refused_unless_read_only_ok(self):
    folder = tempfile.mkdtemp()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k",
                           "tmpfs", folder], capture_output=True, check=False)
    if done.returncode != 0:
      self.skipTest(f"cannot mount a tmpfs here: {done.stderr!r}")
    self.addCleanup(subprocess.run, ["umount", folder], check=False)
    with self.assertRaisesRegex(errors.UserError,
                                "cannot write the lock file"):
      run_lock.RunLock(folder, "training").acquire()
    # An export that only reads the model directory goes on.
    with run_lock.hold(folder, "export", read_only_ok=True) as lock:
      self.assertFalse(lock.held)

  def test_acquire_twice_is_a_bug(self):
    lock = run_lock.RunLock(self.model_dir)
    lock.acquire()
    try:
      with self.assertRaises(RuntimeError):
        lock.acquire()
      # Another lock object in the same process is refused too: an
      # in-process export during training must use the trainer's lock.
      with self.assertRaises(run_lock.DirectoryInUseError):
        run_lock.RunLock(self.model_dir).acquire()
    finally:
      lock.release()


if __name__ == "__main__":
  unittest.main()
