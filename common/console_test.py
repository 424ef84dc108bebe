"""Tests for common.console: sentzoo's programs keep TensorFlow's noise quiet.

The end-to-end cases run this file as a tiny sentzoo program (`python -m
common.console_test demo EXPORT_DIR`, as `python -m trainers.x` runs): it
imports TensorFlow at the top as the trainers do, prints a progress line, logs
an INFO and a WARNING line of its own and saves a SavedModel (whose writer logs
INFO through absl and the "tensorflow" logger), all through `common.cli.run`.
Each run imports TensorFlow (~5 s).
"""

import os
import re
import subprocess
import sys

from absl import logging as absl_logging
from absl.testing import absltest
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import console
from sentzoo.tests import test_util

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# stderr of `import tensorflow` (TF 2.21, CPU machine without a CUDA driver),
# then a C++ warning and a Python warning.
IMPORT_OUTPUT = """\
WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
I0000 00:00:1795472518.858238   30924 port.cc:153] oneDNN custom operations are on.
I0000 00:00:1795472518.858560   30924 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.
W0000 00:00:1795472518.909612   30924 some_file.cc:12] a C++ warning
E0000 00:00:1795472520.802778   30924 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)
/x/y.py:3: UserWarning: a Python warning
"""
# An absl-formatted line, C++ or Python: "I1126 06:40:00.123456 123 x.py:12] ".
ABSL_PREFIX = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ \S+:\d+\] ", re.M)
# A C++ INFO line of TensorFlow's import, whichever it prints on this machine
# (port.cc's "oneDNN custom operations are on." only where oneDNN's
# optimisations are on by default, cudart_stub.cc's without a GPU driver).
CPP_INFO = re.compile(r"^I\d{4} [\d:.]+\s+\d+ \S+\.cc:\d+\] ", re.M)


def _demo_main(argv):
  """The tiny sentzoo program: `python -m common.console_test demo DIR`."""
  print("demo: saving a SavedModel", flush=True)
  print(f"loader: {type(tf.__loader__).__name__}", flush=True)
  absl_logging.info("demo: an INFO line of sentzoo's own")
  absl_logging.warning("demo: a warning")
  module = tf.Module()
  module.scale = tf.Variable(2.0)
  tf.saved_model.save(module, argv[2])
  print("demo: done", flush=True)


def _run(args, **env_vars):
  env = {k: v for k, v in os.environ.items()
         if k not in ("TF_CPP_MIN_LOG_LEVEL", console.ENV_VAR)}
  env.update({"PYTHONPATH": REPO_ROOT, **env_vars})
  done = subprocess.run([sys.executable, *args], cwd=REPO_ROOT, env=env,
                        capture_output=True, text=True, timeout=300)
  assert done.returncode == 0, done.stderr
  return done


class QuietProgramTest(tf.test.TestCase):
  """A sentzoo program in a subprocess: quiet, --verbose, SENTZOO_VERBOSE=1."""

  def _demo(self, *args, **env_vars):
    export_dir = os.path.join(self.get_temp_dir(), self._testMethodName)
    done = _run(["-m", "common.console_test", "demo", export_dir,
                 *args], **env_vars)
    self.assertIn("demo: done", done.stdout)
    return done

  def test_quiet_by_default(self):
    done = self._demo()
    # Nothing but the program's warning, without absl's prefix.
    self.assertEqual(done.stderr, "WARNING: demo: a warning\n")
    self.assertIn("loader: SourceFileLoader", done.stdout)  # TF's own loader.

  def test_verbose_flag_brings_the_noise_back(self):
    done = self._demo("--verbose")
    self.assertRegex(done.stderr, CPP_INFO)
    self.assertIn("INFO:tensorflow:Assets written to", done.stderr)
    self.assertIn("] demo: an INFO line of sentzoo's own", done.stderr)

  def test_environment_variable(self):
    done = self._demo(**{console.ENV_VAR: "1"})
    self.assertRegex(done.stderr, CPP_INFO)
    self.assertIn("] demo: an INFO line of sentzoo's own", done.stderr)

  def test_a_user_program_is_quiet_unless_asked(self):
    export_dir = os.path.join(self.get_temp_dir(), "export")
    test_util.save_hash_bag_encoder(test_util.HashBagEncoder(dim=4, seed=1),
                                    export_dir)
    program = ["-c", "import sentzoo; print(sentzoo.load("
               f"{export_dir!r}).encode('a b').shape)"]
    done = _run(program)
    self.assertEqual((done.stdout, done.stderr), ("(1, 4)\n", ""))
    self.assertRegex(_run(program, **{console.ENV_VAR: "1"}).stderr,
                     CPP_INFO)


class VerboseRequestedTest(tf.test.TestCase):

  def test_command_line_and_environment(self):
    self.assertTrue(console.verbose_requested(["p", "--verbose"], {}))
    self.assertTrue(console.verbose_requested(["p", "--verbose=true"], {}))
    self.assertFalse(console.verbose_requested(["p", "--", "--verbose"], {}))
    self.assertFalse(console.verbose_requested(["p", "--x=1"], {}))
    self.assertTrue(console.verbose_requested(["p"], {console.ENV_VAR: "1"}))
    self.assertFalse(console.verbose_requested(["p"], {console.ENV_VAR: "0"}))

  def test_quiet_before_tensorflow_does_nothing_once_it_is_imported(self):
    environ = {}
    self.assertFalse(console.quiet_before_tensorflow(["p"], environ))
    self.assertEqual(environ, {})


class FilterImportOutputTest(tf.test.TestCase):

  def test_min_log_level_1(self):
    self.assertEqual(console.filter_import_output(IMPORT_OUTPUT, 1),
                     "".join(IMPORT_OUTPUT.splitlines(keepends=True)[3:4] +
                             IMPORT_OUTPUT.splitlines(keepends=True)[5:]))

  def test_min_log_level_0_and_2(self):
    lines = IMPORT_OUTPUT.splitlines(keepends=True)
    self.assertEqual(console.filter_import_output(IMPORT_OUTPUT, 0),
                     "".join(lines[1:4] + lines[5:]))
    self.assertEqual(console.filter_import_output(IMPORT_OUTPUT, 2), lines[5])

  def test_cuinit_failure_with_a_driver_is_kept(self):
    line = IMPORT_OUTPUT.splitlines(keepends=True)[4]
    self.assertEqual(console.filter_import_output(line, 1), line)


class SetLoggingVerbosityTest(tf.test.TestCase):

  def test_quiet_then_verbose(self):
    self.addCleanup(console.set_logging_verbosity, True)
    console.set_logging_verbosity(False)
    self.assertEqual(absl_logging.get_verbosity(), absl_logging.WARNING)
    self.assertEqual(tf.get_logger().level, absl_logging.converter.STANDARD_WARNING)
    record = absl_logging.ABSLLogger("x").makeRecord(
        "x", absl_logging.converter.STANDARD_WARNING, __file__, 1, "m", (), None)
    self.assertEqual(absl_logging.get_absl_handler().format(record), "WARNING: m")
    console.set_logging_verbosity(True)
    self.assertEqual(absl_logging.get_verbosity(), absl_logging.INFO)
    self.assertRegex(absl_logging.get_absl_handler().format(record), ABSL_PREFIX)


if __name__ == "__main__":
  if sys.argv[1:2] == ["demo"]:
    cli.run(_demo_main)
  else:
    absltest.main()
