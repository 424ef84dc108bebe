"""SIGINT and SIGTERM in sentzoo's commands: one interrupt, then quiet.

A command (`python -m` a sentzoo module: sentzoo/__init__.py calls
`install_for_command` before TensorFlow is imported) stops on its first
SIGINT or SIGTERM: the signal raises one KeyboardInterrupt, which
`common.cli.run` turns into one line and exit 75 (the training loop turns
the first signal into "checkpoint after this step" instead and passes a
second one on). Once that interrupt is raised, or once the command is ending
(`stopping`: its exit code is decided), every later signal is ignored, so
that a second Ctrl-C while the command unwinds and TensorFlow tears down
cannot turn exit 75 into a traceback and exit 130, or exit 0 into death by
SIGTERM.

Three places where a KeyboardInterrupt is not the command's:
- raised while Python imports the command's modules (TensorFlow takes
  seconds), before `common.cli.run` catches anything: the interpreter would
  print a traceback and exit 130. `install_for_command`'s `sys.excepthook`
  prints the one line and exits 75 instead (nothing was written yet).
- raised inside a finaliser (`__del__`, e.g. TensorFlow's
  `AtomicFunction.__del__` while the trainer drops its train step): Python
  prints "Exception ignored in ..." with a traceback and drops the interrupt,
  and the command would go on. The `sys.unraisablehook` re-delivers it to the
  main thread a moment later instead, without the traceback.
- raised while a C++ extension builds an exception of its own (TensorFlow's
  pybind11 code, e.g. the `InvalidArgumentError` that `tf.saved_model.load`
  raises and catches while it reads a graph's attributes): pybind11 replaces
  both by a `RuntimeError` ("... REPLACED BY KeyboardInterrupt"), which would
  end the command in a traceback and exit 1. `is_interrupt` tells it apart,
  and the places that catch a KeyboardInterrupt catch that one too.

This module imports nothing of sentzoo but `common.errors` (sentzoo/__init__
imports it).
"""

import _thread
import os
import signal
import sys
import threading

from sentzoo.common import errors

SIGNALS = (signal.SIGINT, signal.SIGTERM)
# After this long, an interrupt a finaliser dropped is raised again.
REDELIVERY_SECONDS = 0.01
# How pybind11 reports a KeyboardInterrupt raised while it built another
# exception (its "MISMATCH of original and normalized active exception
# types" RuntimeError).
PYBIND11_REPLACED = "REPLACED BY KeyboardInterrupt"


def is_interrupt(exc: BaseException) -> bool:
  """`exc` is a signal's KeyboardInterrupt, or the RuntimeError pybind11
  made of one."""
  return isinstance(exc, KeyboardInterrupt) or (
      isinstance(exc, RuntimeError) and PYBIND11_REPLACED in str(exc))


def _from_interrupt(exc: BaseException) -> bool:
  """Whether `exc` or an exception it was raised from or during is an
  interrupt (`is_interrupt`)."""
  seen = set()
  while exc is not None and id(exc) not in seen:
    if is_interrupt(exc):
      return True
    seen.add(id(exc))
    exc = exc.__cause__ or exc.__context__
  return False


class CommandInterrupts:
  """The SIGINT/SIGTERM handler of a command: one KeyboardInterrupt, then
  nothing."""

  def __init__(self):
    self.stopping = False

  def __call__(self, signum, frame):
    del signum, frame  # Unused.
    if self.stopping:
      return
    self.stopping = True
    raise KeyboardInterrupt

  def excepthook(self, previous):
    """A `sys.excepthook`: an uncaught KeyboardInterrupt (a signal while the
    command's modules are imported), or an exception it caused, is one line
    and exit 75."""

    def hook(exc_type, value, tb):
      # An interrupt inside a C extension's module init surfaces as
      # "ImportError: initialization failed" (TensorFlow's profiler, for
      # one): the import failed because the command took its interrupt.
      if not (issubclass(exc_type, KeyboardInterrupt) or _from_interrupt(value)
              or (self.stopping and issubclass(exc_type, ImportError))):
        previous(exc_type, value, tb)
        return
      print(errors.INTERRUPTED_BEFORE_TRAINING, file=sys.stderr, flush=True)
      sys.stdout.flush()
      os._exit(errors.EXIT_INTERRUPTED)  # pylint: disable=protected-access

    return hook

  def unraisablehook(self, previous):
    """A `sys.unraisablehook`: a KeyboardInterrupt that a finaliser raised
    (and Python would drop) is raised again in the main thread."""

    def hook(unraisable):
      if (unraisable.exc_type is None or
          not issubclass(unraisable.exc_type, KeyboardInterrupt)):
        previous(unraisable)
        return
      self.stopping = False
      # Calls the Python handler of SIGINT in the main thread (this class,
      # or the training loop's, which passes a second one on) a moment
      # later: called from here, it would raise in this hook, where Python
      # drops it again. A delivery that lands in a finaliser once more comes
      # back here.
      timer = threading.Timer(REDELIVERY_SECONDS, _thread.interrupt_main,
                              args=(signal.SIGINT,))
      timer.daemon = True
      timer.start()

    return hook


_command = None


def install_for_command():
  """Makes this process a command that stops on its first SIGINT/SIGTERM.

  Returns the handler, or None outside the main thread (signals cannot be
  set there) or if one is installed already.
  """
  global _command
  if (_command is not None or
      threading.current_thread() is not threading.main_thread()):
    return None
  command = CommandInterrupts()
  for signum in SIGNALS:
    # A signal the shell had ignored (SIGINT of a background job) stays
    # ignored.
    if signal.getsignal(signum) in (signal.default_int_handler,
                                    signal.SIG_DFL):
      signal.signal(signum, command)
  sys.excepthook = command.excepthook(sys.excepthook)
  sys.unraisablehook = command.unraisablehook(sys.unraisablehook)
  _command = command
  return command


def installed():
  """The command's handler, or None (`import sentzoo` in a program)."""
  return _command


def stopping():
  """The command is ending: its later SIGINT/SIGTERM are ignored.

  Ignored by the system, not only by the handler: Python's finalisation
  sets a signal with a Python handler back to its default action, and a
  signal in the last moments of the exit would end the process (-2, -15)
  after its exit code was decided.
  """
  if _command is None:
    return
  _command.stopping = True
  for signum in SIGNALS:
    try:
      signal.signal(signum, signal.SIG_IGN)
    except ValueError:  # Not in the main thread.
      pass
