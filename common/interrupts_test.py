"""Tests for common.interrupts: one interrupt per command, then quiet."""

import os
import signal
import subprocess
import sys
import textwrap

from absl.testing import absltest

from sentzoo.common import errors
from sentzoo.common import interrupts

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _default_sigint():
  # A child of a background shell job may inherit SIGINT ignored.
  signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_python(code, preexec_fn=_default_sigint):
  """Runs `code` (the command's handlers installed first) in a new Python."""
  return subprocess.run(
      [sys.executable, "-c", "from sentzoo.common import interrupts\n"
       "interrupts.install_for_command()\n" + textwrap.dedent(code)],
      cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
      env=dict(os.environ, PYTHONPATH=REPO_ROOT), preexec_fn=preexec_fn)


class InterruptsTest(absltest.TestCase):

  def test_the_first_signal_interrupts_and_later_ones_are_ignored(self):
    handler = interrupts.CommandInterrupts()
    with self.assertRaises(KeyboardInterrupt):
      handler(signal.SIGTERM, None)
    self.assertTrue(handler.stopping)
    handler(signal.SIGINT, None)  # Ignored: raises nothing.
    handler(signal.SIGTERM, None)

  def test_is_interrupt_knows_what_pybind11_makes_of_one(self):
    self.assertTrue(interrupts.is_interrupt(KeyboardInterrupt()))
    self.assertTrue(interrupts.is_interrupt(RuntimeError(
        "pybind11::error_already_set: MISMATCH of original and normalized "
        "active exception types: ORIGINAL InvalidArgumentError REPLACED BY "
        "KeyboardInterrupt: <EMPTY MESSAGE>")))
    self.assertFalse(interrupts.is_interrupt(RuntimeError("a bug")))
    self.assertFalse(interrupts.is_interrupt(ValueError("KeyboardInterrupt")))
    # A message of its own: not turned into a plain interrupt.
    self.assertFalse(interrupts.is_interrupt(errors.Interrupted("stopped")))

  def test_a_signal_while_the_command_imports_is_one_line_and_exit_75(self):
    # As a Ctrl-C while Python imports TensorFlow, before common.cli.run
    # catches anything: was a KeyboardInterrupt traceback and exit 130 (and
    # SIGTERM: death by the signal, -15).
    for signum in (signal.SIGINT, signal.SIGTERM):
      done = run_python(f"""
          import os, time
          print("importing", flush=True)
          os.kill(os.getpid(), {int(signum)})
          time.sleep(30)
          print("not reached")
          """)
      self.assertEqual(done.returncode, errors.EXIT_INTERRUPTED,
                       (signum, done.stderr))
      self.assertEqual(done.stdout, "importing\n")
      self.assertEqual(done.stderr.strip(),
                       errors.INTERRUPTED_BEFORE_TRAINING)

  def test_an_import_an_interrupt_made_fail_is_one_line_and_exit_75(self):
    # As a Ctrl-C inside a C extension's module init while TensorFlow
    # imports: "ImportError: initialization failed", was a traceback and
    # exit 1. Raised from the interrupt, and with no link to it.
    for raised in ("raise ImportError('initialization failed') from e",
                   "raise ImportError('initialization failed')"):
      done = run_python(f"""
          import os, time
          try:
            os.kill(os.getpid(), {int(signal.SIGINT)})
            time.sleep(30)
          except KeyboardInterrupt as e:
            {raised}
          """)
      self.assertEqual(done.returncode, errors.EXIT_INTERRUPTED,
                       (raised, done.stderr))
      self.assertEqual(done.stderr.strip(),
                       errors.INTERRUPTED_BEFORE_TRAINING)
    # Without an interrupt, an ImportError stays a bug: traceback, exit 1.
    done = run_python("raise ImportError('initialization failed')")
    self.assertEqual(done.returncode, 1)
    self.assertIn("Traceback", done.stderr)

  def test_an_interrupt_raised_in_a_finaliser_is_raised_again(self):
    # TensorFlow's AtomicFunction.__del__ runs while a trainer drops its
    # train step: a KeyboardInterrupt raised there was printed as "Exception
    # ignored in ..." with a traceback, and dropped.
    done = run_python("""
        import gc, os, signal, time

        class Finalised:
          def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # The handler runs in here.
              pass

        try:
          Finalised()
          gc.collect()
          deadline = time.monotonic() + 10
          while time.monotonic() < deadline:
            pass
          print("lost")
        except KeyboardInterrupt:
          print("interrupted")
        """)
    self.assertEqual(done.returncode, 0, done.stderr)
    self.assertEqual(done.stdout, "interrupted\n")
    self.assertEqual(done.stderr, "")

  def test_signals_after_the_command_ended_are_ignored(self):
    # A SIGTERM while a finished command tears down (here: an atexit
    # callback) was death by the signal, or a traceback.
    done = run_python("""
        import atexit, os, signal, time
        from sentzoo.common import cli

        def late_signals():
          os.kill(os.getpid(), signal.SIGTERM)
          os.kill(os.getpid(), signal.SIGINT)
          time.sleep(0.5)
          # Ignored by the system: Python's finalisation, after this, sets
          # a Python handler's signal back to its default action (death).
          print("torn down", signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
                signal.getsignal(signal.SIGTERM) == signal.SIG_IGN, flush=True)

        atexit.register(late_signals)
        cli.run(lambda argv: print("finished", flush=True))
        """)
    self.assertEqual(done.returncode, 0, done.stderr)
    self.assertEqual(done.stdout, "finished\ntorn down True True\n")
    self.assertEqual(done.stderr, "")

  def test_a_sigint_the_shell_ignored_stays_ignored(self):
    # A background job (`cmd &` in a script) starts with SIGINT ignored.
    done = run_python("""
        import os, signal, time
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)
        print("still running")
        """, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    self.assertEqual(done.returncode, 0, done.stderr)
    self.assertEqual(done.stdout, "still running\n")

  def test_a_program_that_imports_sentzoo_keeps_its_signals(self):
    done = subprocess.run(
        [sys.executable, "-c", "import signal, sentzoo\n"
         "from sentzoo.common import cli\n"
         "print(signal.getsignal(signal.SIGINT) is "
         "signal.default_int_handler, signal.getsignal(signal.SIGTERM) is "
         "signal.SIG_DFL)"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
        env=dict(os.environ, PYTHONPATH=REPO_ROOT), preexec_fn=_default_sigint)
    self.assertEqual(done.stdout, "True True\n", done.stderr)


if __name__ == "__main__":
  absltest.main()
