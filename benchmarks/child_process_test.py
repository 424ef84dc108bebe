"""Tests of running and measuring a benchmark's child process."""

import os
import sys
import unittest

from sentzoo.benchmarks import child_process
from sentzoo.common import errors

# Holds about 100 MB resident, prints progress, then its JSON result.
_CHILD = """
import json, sys
block = bytearray(100 * 2**20)
for i in range(0, len(block), 4096):
  block[i] = 1
print("working", flush=True)
print("warning on stderr", file=sys.stderr, flush=True)
print(json.dumps({"answer": 42}))
"""


class Reader:

  def __init__(self):
    self.data = b""

  def feed(self, data, seconds, cpu):
    self.data += data
    self.seconds = seconds
    self.cpu = cpu


class ChildProcessTest(unittest.TestCase):

  def test_measures_the_child_and_logs_its_output(self):
    log = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"),
                       f"child_{os.getpid()}.log")
    reader = Reader()
    result, done = child_process.run_json([sys.executable, "-c", _CHILD],
                                          log_path=log, reader=reader)
    self.assertEqual(result, {"answer": 42})
    self.assertEqual(done.exit_code, 0)
    # The child's own peak, not this process's.
    self.assertGreater(done.peak_rss_mb, 100)
    self.assertLess(done.peak_rss_mb, 1000)
    self.assertGreater(done.seconds, 0)
    self.assertGreaterEqual(done.load_before, 0)
    with open(log, "rb") as f:
      self.assertEqual(f.read(), done.output)
    self.assertEqual(reader.data, done.output)
    self.assertIn(b"warning on stderr", done.output)
    os.remove(log)

  def test_a_failing_child_is_a_user_error_with_its_output(self):
    with self.assertRaisesRegex(errors.UserError, "exit 3:.*\n.*it broke"):
      child_process.run([sys.executable, "-c",
                         "import sys; print('it broke'); sys.exit(3)"])

  def test_stop_kills_the_child_and_is_no_error(self):
    reader = Reader()
    done = child_process.run(
        [sys.executable, "-c",
         "import time\nprint('100%', flush=True)\ntime.sleep(60)"],
        reader=reader, stop=lambda: b"100%" in reader.data)
    self.assertLess(done.seconds, 30)
    self.assertNotEqual(done.exit_code, 0)

  def test_last_json_skips_log_lines_after_the_result(self):
    self.assertEqual(child_process.last_json(
        b'{"a": 1}\nlog\n{"b": 2}\nW0000 a warning at exit\n'), {"b": 2})
    self.assertIsNone(child_process.last_json(b"plain\n"))

  def test_no_json_line_is_a_user_error(self):
    with self.assertRaisesRegex(errors.UserError, "no JSON result"):
      child_process.run_json([sys.executable, "-c", "print('plain')"])


if __name__ == "__main__":
  unittest.main()
