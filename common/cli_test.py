"""Tests for common.cli: user mistakes become errors.UserError."""

import os
import subprocess
import sys
import tempfile
import textwrap
import time

from absl import flags
from absl.testing import absltest

from sentzoo.common import cli
from sentzoo.common import errors


def _define(flag_values):
  flags.DEFINE_integer("steps", 3, "Steps.", flag_values=flag_values)


class CliTest(absltest.TestCase):

  def test_parse_own_flags(self):
    parsed = cli.parse_own_flags(_define, ["prog", "--steps=7"])
    self.assertEqual(parsed.steps, 7)
    self.assertEqual(cli.parse_own_flags(_define, ["prog"]).steps, 3)

  def test_bad_flag_value(self):
    with self.assertRaisesRegex(errors.UserError, "steps"):
      cli.parse_own_flags(_define, ["prog", "--steps=many"])

  def test_unknown_flag(self):
    with self.assertRaisesRegex(errors.UserError, "nope"):
      cli.parse_own_flags(_define, ["prog", "--nope=1"])

  def test_extra_arguments(self):
    with self.assertRaisesRegex(errors.UserError, "unexpected arguments: x y"):
      cli.parse_own_flags(_define, ["prog", "x", "y"])
    cli.reject_arguments(["prog"])

  def test_require_flags(self):
    flag_values = flags.FlagValues()
    for name in ("model_dir", "data_dir", "export_dir"):
      flags.DEFINE_string(name, None, "A folder.", flag_values=flag_values)
    flag_values(["prog", "--data_dir=d", "--export_dir="])
    cli.require_flags("data_dir", flag_values=flag_values)
    with self.assertRaisesRegex(errors.UserError,
                                "^missing required flag: --model_dir$"):
      cli.require_flags("data_dir", "model_dir", flag_values=flag_values)
    with self.assertRaisesRegex(
        errors.UserError,
        "^missing required flags: --model_dir, --export_dir$"):
      cli.require_flags("model_dir", "export_dir", flag_values=flag_values)

  def test_run_prints_one_line_and_exits_2(self):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        from sentzoo.common import cli, errors
        def main(argv):
          raise errors.UserError("bad input file")
        cli.run(main)
        """)], capture_output=True, text=True, timeout=60)
    self.assertEqual(done.returncode, 2)
    self.assertEqual(done.stderr.strip(), "error: bad input file")

  def test_run_with_own_flags(self):
    program = textwrap.dedent("""
        from absl import flags
        from sentzoo.common import cli, errors
        def define(flag_values):
          flags.DEFINE_integer("steps", 3, "Steps.", lower_bound=1,
                               flag_values=flag_values)
        def command(flag_values):
          if flag_values.steps == 5:
            raise errors.UserError("five steps")
          print("steps", flag_values.steps, "global", "steps" in flags.FLAGS)
        cli.run_with_own_flags(define, command)
        """)
    for args, code, stdout, stderr in (
        (["--steps=7"], 0, "steps 7 global False", ""),
        ([], 0, "steps 3 global False", ""),
        (["--steps=5"], 2, "", "error: five steps"),
        (["--steps=0"], 2, "", "error: flag --steps=0: 0 is not a positive"),
        (["x"], 2, "", "error: unexpected arguments: x")):
      with self.subTest(args=args):
        done = subprocess.run([sys.executable, "-c", program, *args],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, code, done.stderr)
        self.assertEqual(done.stdout.strip(), stdout)
        self.assertTrue(done.stderr.strip().startswith(stderr), done.stderr)
        self.assertLen(done.stderr.splitlines(), 1 if stderr else 0)
    helped = subprocess.run([sys.executable, "-c", program, "--help"],
                            capture_output=True, text=True, timeout=60)
    self.assertEqual(helped.returncode, 0, helped.stderr)
    self.assertIn("--steps", helped.stdout)

  def _run_main(self, body, *args):
    """Runs `cli.run(main)` in a subprocess; `body` defines main."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            from absl import flags
            from sentzoo.common import cli, errors
            flags.DEFINE_integer("size", 1, "A size.", lower_bound=1)
            flags.DEFINE_float("rate", 0.1, "A rate.")
            flags.DEFINE_list("widths", ["1"], "Widths.")
            cli.positive_float("rate")
            cli.positive_int_list("widths")
            """) + textwrap.dedent(body) + "\ncli.run(main)\n", *args],
        capture_output=True, text=True, timeout=60)

  def test_exit_codes(self):
    finished = self._run_main("""
        def main(argv):
          print("done", flags.FLAGS.size, flags.FLAGS.rate)
        """, "--size=3", "--rate=0.5", "--widths=2,3")
    self.assertEqual(finished.returncode, errors.EXIT_OK, finished.stderr)
    self.assertEqual(finished.stdout.strip(), "done 3 0.5")
    failed = self._run_main("""
        def main(argv):
          raise RuntimeError("a bug")
        """)
    self.assertEqual(failed.returncode, errors.EXIT_FAILED)
    self.assertIn("Traceback", failed.stderr)

  def test_interrupted_prints_the_step_and_exits_75(self):
    self.assertEqual(errors.EXIT_INTERRUPTED, 75)
    cli.exit_if_interrupted({"step": 9, "interrupted": False})
    with self.assertRaisesRegex(errors.Interrupted, "^stopped at step 9; "
                                "rerun the same command to resume$"):
      cli.exit_if_interrupted({"step": 9, "interrupted": True})
    done = self._run_main("""
        def main(argv):
          print("step 7")
          cli.exit_if_interrupted({"step": 7, "interrupted": True})
          print("not reached")
        """)
    self.assertEqual(done.returncode, 75, done.stderr)
    self.assertEqual(done.stdout.splitlines(), [
        "step 7", "stopped at step 7; rerun the same command to resume"])
    self.assertEqual(done.stderr, "")

  def test_a_signal_outside_the_training_loop_is_one_line_and_exit_75(self):
    # Ctrl-C while a vocabulary is built: was a KeyboardInterrupt traceback
    # through tf.data and exit 130.
    stopped = self._run_main("""
        def main(argv):
          raise KeyboardInterrupt
        """)
    self.assertEqual(stopped.returncode, errors.EXIT_INTERRUPTED)
    self.assertEqual(stopped.stderr.strip(),
                     errors.INTERRUPTED_BEFORE_TRAINING)

  def test_a_signal_that_tensorflow_turned_into_a_runtime_error_is_exit_75(
      self):
    # A SIGTERM while `tf.saved_model.load` builds (and would catch) an
    # InvalidArgumentError: pybind11 replaces both by a RuntimeError, which
    # was a traceback and exit 1 (the interruption soak's one failure).
    # Raising in the error's constructor is where the signal handler ran.
    stopped = self._run_main("""
        import tensorflow as tf
        from tensorflow.python.framework import errors_impl
        with tf.Graph().as_default():
          op = tf.constant(1.0).op
        def interrupted(self, *args, **kwargs):
          raise KeyboardInterrupt
        errors_impl.InvalidArgumentError.__init__ = interrupted
        def main(argv):
          op.get_attr("_gradient_op_type")
        """)
    self.assertEqual(stopped.returncode, errors.EXIT_INTERRUPTED,
                     stopped.stderr)
    self.assertEqual(stopped.stderr.strip().splitlines()[-1],
                     errors.INTERRUPTED_BEFORE_TRAINING)
    self.assertNotIn("Traceback", stopped.stderr)

  def test_progress_reaches_a_redirected_log_before_the_run_ends(self):
    log_path = os.path.join(tempfile.mkdtemp(), "train.log")
    with open(log_path, "w") as log:
      # The line is printed, then the process waits to be killed (a hung
      # run); a block-buffered stdout would never write it.
      process = subprocess.Popen(
          [sys.executable, "-c", textwrap.dedent("""
              import time
              from sentzoo.common import cli
              def main(argv):
                print("step 1/10")
                time.sleep(600)
              cli.run(main)
              """)], stdout=log, stderr=subprocess.STDOUT, text=True,
          env={k: v for k, v in os.environ.items()
               if k != "PYTHONUNBUFFERED"})
    try:
      deadline = time.monotonic() + 60
      while "step 1/10" not in open(log_path).read():
        self.assertLess(time.monotonic(), deadline, open(log_path).read())
        self.assertIsNone(process.poll(), open(log_path).read())
        time.sleep(0.1)
    finally:
      process.kill()
      process.wait()

  def test_bad_flag_values_are_one_error_line_and_exit_2(self):
    main = """
        def main(argv):
          print("main ran")
        """
    for arg, message in (
        ("--size=0", "error: flag --size=0: 0 is not a positive integer"),
        ("--size=x", "error: flag --size=x: invalid literal"),
        ("--rate=0", "error: flag --rate=0.0: must be a finite number > 0"),
        ("--rate=-1", "error: flag --rate=-1.0: must be a finite number > 0"),
        ("--rate=inf", "error: flag --rate=inf: must be a finite number > 0"),
        ("--rate=nan", "error: flag --rate=nan: must be a finite number > 0"),
        ("--widths=2,0", "error: flag --widths=['2', '0']: every item must "
         "be an integer >= 1"),
        ("--nope=1", "error: Unknown command line flag 'nope'")):
      with self.subTest(arg=arg):
        done = self._run_main(main, arg)
        self.assertEqual(done.returncode, errors.EXIT_USER_ERROR)
        self.assertEqual(done.stdout, "")
        lines = done.stderr.splitlines()
        self.assertLen(lines, 1, done.stderr)
        self.assertTrue(lines[0].startswith(message), lines[0])

  def test_finite_floats_refuses_nan_and_infinities_within_bounds(self):
    # Issue 33 row 3: absl's bounds let nan through (--sample=nan passed
    # [0, 1]); an unbounded flag took inf.
    def define(flag_values):
      flags.DEFINE_float("sample", 1e-5, "t.", lower_bound=0, upper_bound=1,
                         flag_values=flag_values)
      flags.DEFINE_float("scale", 0.0, "s.", lower_bound=0,
                         flag_values=flag_values)
      flags.DEFINE_float("unset", None, "u.", flag_values=flag_values)
      flags.DEFINE_integer("steps", 1, "n.", flag_values=flag_values)
      self.assertEqual(cli.finite_floats(flag_values),
                       ["sample", "scale", "unset"])

    parsed = cli.parse_own_flags(define, ["p", "--sample=0.5", "--scale=3"])
    self.assertEqual((parsed.sample, parsed.scale, parsed.unset),
                     (0.5, 3.0, None))
    for arg in ("--sample=nan", "--scale=inf", "--scale=nan",
                "--unset=-inf", "--unset=nan"):
      with self.subTest(arg=arg):
        with self.assertRaisesRegex(
            errors.UserError,
            "must be a finite number \\(not nan or inf\\)"):
          cli.parse_own_flags(define, ["p", arg])

    # Without it (the old code) nan passes the [0, 1] bounds.
    def define_bounded_only(flag_values):
      flags.DEFINE_float("sample", 1e-5, "t.", lower_bound=0, upper_bound=1,
                         flag_values=flag_values)
    self.assertNotEqual(
        cli.parse_own_flags(define_bounded_only, ["p", "--sample=nan"]).sample,
        0.5)

  def test_flagfile_not_utf8_is_one_error_line_naming_the_file(self):
    # Issue 33 row 11: a latin-1 byte, even in a comment, was a
    # UnicodeDecodeError traceback from absl.
    folder = tempfile.mkdtemp()
    bad = os.path.join(folder, "latin1.flags")
    with open(bad, "wb") as f:
      f.write(b"--size=2\n# caf\xe9 au lait\n--rate=0.5\n")
    outer = os.path.join(folder, "outer.flags")
    with open(outer, "w", encoding="utf-8") as f:
      f.write(f"--flagfile={bad}\n")
    main = """
        def main(argv):
          print("main ran")
        """
    for flagfile in (bad, outer):
      with self.subTest(flagfile=flagfile):
        done = self._run_main(main, f"--flagfile={flagfile}")
        self.assertEqual(done.returncode, errors.EXIT_USER_ERROR, done.stderr)
        self.assertEqual(done.stdout, "")
        lines = done.stderr.splitlines()
        self.assertLen(lines, 1, done.stderr)
        self.assertEqual(
            lines[0],
            f"error: --flagfile {bad}: line 2 is not utf-8 text (byte 0xe9, "
            "invalid continuation byte), even if it is in a comment: save "
            "the file as utf-8 (e.g. iconv -f latin1 -t utf-8)")
    with self.assertRaisesRegex(errors.UserError,
                                f"--flagfile {bad}: line 2 "):
      cli.parse_own_flags(_define, ["p", "--flagfile", bad])
    self.assertEqual(cli.undecodable_flagfile(["p", f"--flagfile={outer}"])[:2],
                     (bad, 2))
    self.assertIsNone(cli.undecodable_flagfile(["p", "--flagfile=/nope"]))


if __name__ == "__main__":
  absltest.main()
