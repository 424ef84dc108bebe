"""Tests for common.console: sentzoo's programs keep TensorFlow's noise quiet.

The end-to-end cases run this file as a tiny sentzoo program (`python -m
common.console_test demo EXPORT_DIR`): it imports TensorFlow (at the top, as
the trainers do), prints a progress line, logs an INFO line of its own and saves a SavedModel (whose
writer logs INFO lines through absl and the "tensorflow" logger), all through
`common.cli.run`. Each run imports TensorFlow (~5 s).
"""

import logging
import os
import re
import subprocess
import sys

from absl import logging as absl_logging
from absl.testing import absltest
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import console

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 300

# stderr of `import tensorflow` (TF 2.21, CPU machine without a CUDA driver)
# and of the first device listing, then a Python warning.
IMPORT_OUTPUT = """\
WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
I0000 00:00:1795472518.858238   30924 port.cc:153] oneDNN custom operations are on. You may see slightly different numerical results due to floating-point round-off errors from different computation orders. To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`.
I0000 00:00:1795472518.858560   30924 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.
W0000 00:00:1795472518.909612   30924 some_file.cc:12] a C++ warning
E0000 00:00:1795472520.802778   30924 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)
/x/y.py:3: UserWarning: a Python warning
  warnings.warn("a Python warning")
"""

# What the demo program prints and logs itself.
PROGRESS_LINE = "demo: saving a SavedModel"
OWN_INFO_LINE = "demo: an INFO line of sentzoo's own"


def _demo_main(argv):
  """The tiny sentzoo program: `python -m common.console_test demo DIR`."""
  print(PROGRESS_LINE, flush=True)
  print(f"loader: {type(tf.__loader__).__name__}", flush=True)
  absl_logging.info(OWN_INFO_LINE)
  module = tf.Module()
  module.scale = tf.Variable(2.0)
  module.serve = tf.function(
      lambda x: {"y": x * module.scale},
      input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
  tf.saved_model.save(module, argv[2])
  print("demo: done", flush=True)


def _run_demo(export_dir, *args, **env_vars):
  env = {k: v for k, v in os.environ.items()
         if k not in ("TF_CPP_MIN_LOG_LEVEL", console.ENV_VAR)}
  env.update(env_vars, PYTHONPATH=REPO_ROOT)
  return subprocess.run(
      [sys.executable, "-m", "common.console_test", "demo", export_dir,
       *args],
      cwd=REPO_ROOT, env=env, capture_output=True, text=True,
      timeout=TIMEOUT_S)


def _cpp_lines(text, severities="IWEF"):
  """TensorFlow's C++ log lines in `text` (absl's Python lines look alike)."""
  return [line for line in text.splitlines()
          if console._CPP_LOG_LINE.match(line) and line[0] in severities and  # pylint: disable=protected-access
          not re.search(r" \S+\.py:\d+\] ", line)]


class QuietProgramTest(tf.test.TestCase):
  """A sentzoo program in a subprocess, quiet and --verbose."""

  def _assert_ran(self, done):
    self.assertEqual(done.returncode, 0, done.stderr)
    self.assertIn(PROGRESS_LINE, done.stdout)
    self.assertIn("demo: done", done.stdout)
    self.assertIn(OWN_INFO_LINE, done.stderr)

  def test_quiet_by_default(self):
    done = _run_demo(os.path.join(self.get_temp_dir(), "quiet"))
    self._assert_ran(done)
    for noise in ("absl::InitializeLog()", "oneDNN custom operations",
                  "Could not find cuda drivers", "failed call to cuInit",
                  "Writing fingerprint", "Sharding callback",
                  "INFO:tensorflow"):
      self.assertNotIn(noise, done.stderr)
    self.assertEqual(_cpp_lines(done.stderr, "I"), [])
    # TensorFlow's own loader, not console's wrapper.
    self.assertIn("loader: SourceFileLoader", done.stdout)
    # The only INFO line left is the program's own.
    info = [line for line in done.stderr.splitlines()
            if line.startswith("I")]
    self.assertLen(info, 1, done.stderr)
    self.assertIn(OWN_INFO_LINE, info[0])

  def test_verbose_flag_brings_the_noise_back(self):
    done = _run_demo(os.path.join(self.get_temp_dir(), "verbose"),
                     "--verbose")
    self._assert_ran(done)
    self.assertIn("Writing fingerprint", done.stderr)
    # The "tensorflow" logger's own handler (TensorFlow imported before
    # absl's handler was installed, as in the trainers).
    self.assertIn("INFO:tensorflow:Assets written to", done.stderr)
    # TensorFlow's C++ INFO lines (the oneDNN notice, or a GPU's devices).
    self.assertNotEmpty(_cpp_lines(done.stderr, "I"), done.stderr)

  def test_environment_variable(self):
    done = _run_demo(os.path.join(self.get_temp_dir(), "env"),
                     **{console.ENV_VAR: "1"})
    self._assert_ran(done)
    self.assertIn("Writing fingerprint", done.stderr)
    self.assertNotEmpty(_cpp_lines(done.stderr, "I"), done.stderr)


class VerboseRequestedTest(tf.test.TestCase):

  def test_command_line(self):
    cases = [
        ([], False),
        (["--verbose"], True),
        (["--verbose=true"], True),
        (["--verbose=1"], True),
        (["--verbose=false"], False),
        (["--noverbose"], False),
        (["-verbose"], True),
        (["--verbose", "--noverbose"], False),
        (["--noverbose", "--verbose"], True),
        (["--", "--verbose"], False),
        (["verbose", "--verbose_x", "--model_dir=verbose"], False),
    ]
    for args, expected in cases:
      with self.subTest(args=args):
        self.assertEqual(
            console.verbose_requested(["prog"] + args, environ={}), expected)

  def test_environment(self):
    for value, expected in [("1", True), ("true", True), ("0", False),
                            ("", False)]:
      with self.subTest(value=value):
        environ = {console.ENV_VAR: value}
        self.assertEqual(console.verbose_from_environment(environ), expected)
        self.assertEqual(console.verbose_requested(["prog"], environ),
                         expected)
    self.assertFalse(
        console.verbose_requested(["prog", "--noverbose"],
                                  {console.ENV_VAR: "1"}))


class OwnProgramTest(tf.test.TestCase):

  def test_own_files(self):
    self.assertTrue(console.is_own_file(console.__file__))
    self.assertTrue(console.is_own_file(cli.__file__))
    self.assertTrue(console.is_own_file(os.path.abspath(__file__)))
    self.assertFalse(console.is_own_file(absltest.__file__))
    self.assertFalse(console.is_own_file(
        os.path.join(self.get_temp_dir(), "script.py")))

  def test_python_dash_m(self):
    python = sys.executable
    self.assertTrue(console.runs_own_program(
        [python, "-m", "sentzoo.common.console"], ["-m"]))
    self.assertTrue(console.runs_own_program(
        [python, "-X", "utf8", "-msentzoo.trainers.x"], ["-m"]))
    # absl is imported (by this test), and is not sentzoo's.
    self.assertFalse(console.runs_own_program(
        [python, "-m", "absl.testing.absltest"], ["-m"]))
    self.assertFalse(console.runs_own_program(
        [python, "-m", "no_such_package_here.x"], ["-m"]))

  def test_scripts(self):
    python = sys.executable
    this_file = os.path.abspath(__file__)
    self.assertTrue(console.runs_own_program([python, this_file],
                                             [this_file]))
    user_script = os.path.join(self.get_temp_dir(), "user_script.py")
    with open(user_script, "w") as f:
      f.write("import sentzoo\n")
    self.assertFalse(console.runs_own_program([python, user_script],
                                              [user_script]))
    self.assertFalse(console.runs_own_program([python, "-c", "pass"],
                                              ["-c"]))
    self.assertFalse(console.runs_own_program([python], [""]))

  def test_user_program_is_left_alone(self):
    environ = {}
    meta_path = list(sys.meta_path)
    self.assertFalse(console.quiet_before_tensorflow(
        [sys.executable, "-c", "import sentzoo"], ["-c"], environ))
    self.assertEqual(environ, {})
    self.assertEqual(sys.meta_path, meta_path)

  def test_verbose_program_is_left_alone(self):
    environ = {console.ENV_VAR: "1"}
    meta_path = list(sys.meta_path)
    self.assertFalse(console.quiet_before_tensorflow(
        [sys.executable, "-m", "sentzoo.common.console"], ["-m"], environ))
    self.assertEqual(environ, {console.ENV_VAR: "1"})
    self.assertEqual(sys.meta_path, meta_path)


class FilterImportOutputTest(tf.test.TestCase):

  def test_min_log_level_1(self):
    self.assertEqual(
        console.filter_import_output(IMPORT_OUTPUT, 1),
        "W0000 00:00:1795472518.909612   30924 some_file.cc:12] a C++ "
        "warning\n"
        "/x/y.py:3: UserWarning: a Python warning\n"
        "  warnings.warn(\"a Python warning\")\n")

  def test_min_log_level_0_drops_only_the_banner_and_cuinit(self):
    kept = console.filter_import_output(IMPORT_OUTPUT, 0)
    self.assertNotIn("absl::InitializeLog()", kept)
    self.assertNotIn("cuInit", kept)
    self.assertIn("oneDNN custom operations", kept)
    self.assertLen(kept.splitlines(), len(IMPORT_OUTPUT.splitlines()) - 2)

  def test_min_log_level_2_drops_warnings(self):
    kept = console.filter_import_output(IMPORT_OUTPUT, 2)
    self.assertNotIn("a C++ warning", kept)
    self.assertIn("a Python warning", kept)

  def test_cuinit_failure_with_a_driver_is_kept(self):
    text = "".join(line for line in IMPORT_OUTPUT.splitlines(keepends=True)
                   if "cudart_stub" not in line)
    self.assertIn("failed call to cuInit",
                  console.filter_import_output(text, 1))

  def test_filtered_stderr(self):
    captured = os.path.join(self.get_temp_dir(), "stderr.txt")
    saved = os.dup(2)
    try:
      with open(captured, "wb") as f:
        os.dup2(f.fileno(), 2)
      with self.assertRaisesRegex(ValueError, "inside"):
        with console.filtered_stderr(1):
          os.write(2, IMPORT_OUTPUT.encode())
          raise ValueError("inside")
      os.write(2, b"after\n")
    finally:
      os.dup2(saved, 2)
      os.close(saved)
    with open(captured, encoding="utf-8") as f:
      self.assertEqual(
          f.read(), console.filter_import_output(IMPORT_OUTPUT, 1) + "after\n")


class SetLoggingVerbosityTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    tf_logger = logging.getLogger("tensorflow")
    self.addCleanup(tf_logger.setLevel, tf_logger.level)
    self.addCleanup(console.set_logging_verbosity, True)

  def _passes(self, level, pathname):
    record = logging.LogRecord("absl", level, pathname, 1, "message", (),
                               None)
    return bool(absl_logging.get_absl_handler().filter(record))

  def test_quiet(self):
    console.set_logging_verbosity(False)
    self.assertEqual(logging.getLogger("tensorflow").level, logging.WARNING)
    tf_file = os.path.join(os.path.dirname(absltest.__file__), "saver.py")
    self.assertFalse(self._passes(logging.INFO, tf_file))
    self.assertTrue(self._passes(logging.WARNING, tf_file))
    self.assertTrue(self._passes(logging.INFO, console.__file__))

  def test_verbose(self):
    console.set_logging_verbosity(False)
    console.set_logging_verbosity(True)
    self.assertEqual(logging.getLogger("tensorflow").level, logging.NOTSET)
    tf_file = os.path.join(os.path.dirname(absltest.__file__), "saver.py")
    self.assertTrue(self._passes(logging.INFO, tf_file))


if __name__ == "__main__":
  if sys.argv[1:2] == ["demo"]:
    cli.run(_demo_main)
  else:
    tf.test.main()
