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

  def test_alternate_runs_the_sides_in_turn(self):
    order = []
    results = child_process.alternate(2, {
        "a": lambda i: order.append(("a", i)) or i,
        "b": lambda i: order.append(("b", i)) or 10 * i})
    self.assertEqual(order, [("a", 0), ("b", 0), ("a", 1), ("b", 1)])
    self.assertEqual(results, {"a": [0, 1], "b": [0, 10]})

  def test_medians_ranges_and_ratios(self):
    self.assertEqual(child_process.median_range([3.0, 1.0, 2.0], ".1f"),
                     "2.0 (1.0\u20133.0)")
    self.assertEqual(child_process.median_range([1234.0]), "1,234")
    stats = child_process.summary([900.0, 880.0])
    self.assertEqual(stats, {"median": 890.0, "min": 880.0, "max": 900.0})
    self.assertEqual(child_process.median_range(stats, unit=" MB", dash="-"),
                     "890 MB (880-900)")
    self.assertIsNone(child_process.summary([1.0, None]))
    self.assertEqual(child_process.median_range(None), "")
    # gensim 40 s against our 80 s: ours runs at half gensim's speed.
    self.assertEqual(child_process.ratios([40.0, 30.0, None], [80.0, 30.0, 1]),
                     [0.5, 1.0, None])

  def test_write_page_keeps_the_intro_written_on_the_page(self):
    path = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"),
                        f"page_{os.getpid()}.md")
    child_process.write_page(path, "Speed", "benchmarks.x", ["--a=1"],
                             ["| a |", "|---|", "| 1 |"])
    with open(path, encoding="utf-8") as f:
      first = f.read()
    self.assertIn("python -m benchmarks.x --a=1\n```\n\nSee "
                  "`benchmarks/x.py` for the definitions.\n\n## Measured\n",
                  first)
    with open(path, "w", encoding="utf-8") as f:
      f.write(first.replace("See `benchmarks/x.py` for the definitions.",
                            "Why it is fast.\n\nWhat was tried."))
    child_process.write_page(path, "Speed", "benchmarks.x", ["--a=2"],
                             ["| a |", "|---|", "| 2 |"])
    with open(path, encoding="utf-8") as f:
      second = f.read()
    os.remove(path)
    self.assertIn("--a=2\n```\n\nWhy it is fast.\n\nWhat was tried.\n\n"
                  "## Measured\n\n| a |\n|---|\n| 2 |\n", second)

  def test_phase_recorder_keeps_each_phases_own_peak(self):
    recorder = child_process.PhaseRecorder()
    block = bytearray(200 * 2**20)
    for i in range(0, len(block), 4096):
      block[i] = 1
    del block
    recorder.mark("big")
    recorder.mark("small")
    recorder.mark("small")
    big, small = recorder.phases["big"], recorder.phases["small"]
    self.assertEqual((big["count"], small["count"]), (1, 2))
    self.assertGreater(big["peak_mb"], 200)
    if recorder.resets:  # /proc/self/clear_refs is writable here.
      self.assertGreater(big["peak_mb"] - small["peak_mb"], 150)


if __name__ == "__main__":
  unittest.main()
