"""Entry-point wrapper: a user's mistake prints one clear line, not a traceback."""

import locale
import math
import sys

from absl import app
from absl import flags

from sentzoo.common import console
from sentzoo.common import errors
from sentzoo.common import interrupts


def define_verbose_flag(flag_values=flags.FLAGS):
  """Defines --verbose in `flag_values` (every command run through `run`
  has it)."""
  flags.DEFINE_bool(
      "verbose", False,
      "Show TensorFlow's INFO logging (C++ and Python), which sentzoo's "
      "commands hide; the C++ lines only when --verbose is on the command "
      "line itself (not in a --flagfile): they come before the flags are "
      f"read. ${console.ENV_VAR}=1 does the same for every command.",
      flag_values=flag_values)


define_verbose_flag()

# absl's help flags, which `app.run` defines in the global flags only.
HELP_FLAGS = ("-?", "-h", "--help", "--helpshort", "--helpfull")


def run(main, flag_values=flags.FLAGS):
  """Runs an absl `main` with this project's exit codes (`errors.EXIT_*`).

  The command line is parsed into `flag_values`: absl's global flags, or a
  command's own `flags.FlagValues` (several commands can then live in one
  Python process). 2: a bad flag or an `errors.UserError`, one `error: ...`
  line on stderr without a traceback. 75: `errors.Interrupted`, its message
  on stdout. 1: anything else, with its traceback.

  stdout is line-buffered even when it is a file or a pipe (`nohup ... >
  train.log`): the log of a run that is killed or hangs ends where the run
  stopped.
  """

  def guarded(argv):
    sys.stdout.reconfigure(line_buffering=True)
    console.set_logging_verbosity(
        flag_values.verbose or console.verbose_from_environment())
    try:
      return main(argv)
    except errors.UserError as e:
      print(f"error: {e}", file=sys.stderr)
      sys.exit(errors.EXIT_USER_ERROR)
    except errors.Interrupted as e:
      print(e, flush=True)
      sys.exit(errors.EXIT_INTERRUPTED)
    except (KeyboardInterrupt, Exception) as e:  # pylint: disable=broad-except
      if not interrupts.is_interrupt(e):
        raise
      # Ctrl-C outside the training loop (which saves and says where):
      # one line, not a traceback through tf.data.
      print(errors.INTERRUPTED_BEFORE_TRAINING, file=sys.stderr, flush=True)
      sys.exit(errors.EXIT_INTERRUPTED)
    finally:
      # The exit code is decided: a signal while the command prints its
      # last line and TensorFlow tears down changes nothing.
      interrupts.stopping()

  if "verbose" not in flag_values:
    define_verbose_flag(flag_values)
  app.run(guarded,
          flags_parser=lambda argv: parse_flags(argv, flag_values))


def parse_flags(argv, flag_values=flags.FLAGS):
  """`app.run`'s flags parser: a bad flag is `error: ...` and exit 2.

  absl's own parser prints "FATAL Flags parsing error" and exits 1. A
  command's own `flag_values` lack absl's help flags: --help and the like
  print its flags' help here.
  """
  if flag_values is not flags.FLAGS:
    if any(arg in HELP_FLAGS for arg in argv[1:]):
      print(flag_values.get_help())
      sys.exit(0)
    # `app.run` requires the global flags parsed: none of them is given.
    flags.FLAGS.mark_as_parsed()
  try:
    return parse_argv(argv, flag_values)
  except FlagfileEncodingError as e:
    print(f"error: {e}", file=sys.stderr)
    sys.exit(errors.EXIT_USER_ERROR)
  except errors.UserError as e:
    print(f"error: {e} (--helpshort or --helpfull: help on flags)",
          file=sys.stderr)
    sys.exit(errors.EXIT_USER_ERROR)


class FlagfileEncodingError(errors.UserError):
  """A --flagfile is not text in the encoding absl reads it with."""


def parse_argv(argv, flag_values=flags.FLAGS):
  """Parses `argv` into `flag_values`; returns the arguments left over.

  Every way the command line can be wrong is an `errors.UserError` with a
  one-line message: absl's flag errors (validators included) and a
  --flagfile that is not text in the locale's encoding (absl's own
  `UnicodeDecodeError` names no file), which names the file, the line and
  the byte.
  """
  try:
    return flag_values(list(argv))
  except flags.Error as e:
    raise errors.UserError(" ".join(str(e).split("\n"))) from e
  except UnicodeDecodeError as e:
    found = undecodable_flagfile(argv)
    if found is None:
      raise FlagfileEncodingError(
          f"a --flagfile is not {e.encoding} text ({e.reason} at byte "
          f"{e.start}): save it as {e.encoding}") from e
    path, line, error = found
    raise FlagfileEncodingError(
        f"--flagfile {path}: line {line} is not {error.encoding} text "
        f"(byte 0x{error.object[error.start]:02x}, {error.reason}), even "
        f"if it is in a comment: save the file as {error.encoding} (e.g. "
        f"iconv -f latin1 -t utf-8)") from e


def undecodable_flagfile(argv):
  """The first --flagfile of `argv` (or one they name) that is not text in
  the encoding absl reads it with: (path, line number, UnicodeDecodeError),
  or None."""
  encoding = locale.getpreferredencoding(False)
  pending = list(_flagfile_values(argv))
  seen = set()
  while pending:
    path = pending.pop(0)
    if path in seen:
      continue
    seen.add(path)
    try:
      with open(path, "rb") as f:
        data = f.read()
    except OSError:
      continue  # absl reports a missing flagfile itself.
    try:
      text = data.decode(encoding)
    except UnicodeDecodeError as e:
      return path, data[:e.start].count(b"\n") + 1, e
    pending.extend(_flagfile_values(
        line.strip() for line in text.splitlines()))
  return None


def _flagfile_values(args):
  args = list(args)
  for i, arg in enumerate(args):
    for prefix in ("--flagfile=", "-flagfile="):
      if arg.startswith(prefix):
        yield arg[len(prefix):]
    if arg in ("--flagfile", "-flagfile") and i + 1 < len(args):
      yield args[i + 1]


def exit_if_interrupted(outcome):
  """Raises `errors.Interrupted` if a `training_loop.run` outcome stopped early.

  Call it right after the loop: `cli.run` then prints "stopped at step N;
  rerun the same command to resume" and exits with 75. A command ignores
  its signals from here on (its checkpoint is saved; a second Ctrl-C while
  it unwinds must not end it otherwise).
  """
  if outcome["interrupted"]:
    interrupts.stopping()
    raise errors.Interrupted(outcome["step"])


def positive_float(name, flag_values=flags.FLAGS):
  """Registers a validator: the float flag `name` is None or finite and > 0
  (absl's `lower_bound` allows the bound: a learning rate of 0 trains
  nothing)."""
  flags.register_validator(
      name, lambda value: value is None or (math.isfinite(value) and value > 0),
      message="must be a finite number > 0", flag_values=flag_values)


def finite_floats(flag_values=flags.FLAGS):
  """Registers a validator on every float flag defined in `flag_values` now:
  nan, inf and -inf are refused. Returns the flags' names.

  absl's `lower_bound`/`upper_bound` let nan through (every comparison with
  nan is false), so `--sample=nan` passed Sent2Vec's [0, 1] check and
  turned subsampling off, and `--final_learning_rate_fraction=nan` trained
  to NaN with exit 0. No float flag of this project has a meaning for nan
  or an infinity.
  """
  names = sorted(name for name in flag_values
                 if name == flag_values[name].name
                 and isinstance(flag_values[name].parser, flags.FloatParser))
  for name in names:
    flags.register_validator(
        name, lambda value: value is None or math.isfinite(value),
        message="must be a finite number (not nan or inf)",
        flag_values=flag_values)
  return names


def positive_int_list(name, flag_values=flags.FLAGS):
  """Registers a validator: every item of the list flag `name` is an int >= 1."""

  def check(values):
    try:
      return all(int(v) >= 1 for v in values or ())
    except ValueError:
      return False

  flags.register_validator(
      name, check, message="every item must be an integer >= 1",
      flag_values=flag_values)


def require_flags(*names, flag_values=flags.FLAGS):
  """Raises `errors.UserError` naming the flags in `names` left without a value.

  Trainers call it at the top of `main` instead of defining these flags with
  `required=True`: absl checks a required flag whenever the flags are parsed,
  so a test that imports the trainer and runs `tf.test.main()` would fail
  with a flag error before any test runs.
  """
  missing = [f"--{name}" for name in names
             if getattr(flag_values, name) in (None, "")]
  if missing:
    raise errors.UserError(
        f"missing required flag{'s' if len(missing) > 1 else ''}: "
        f"{', '.join(missing)}")


def parse_own_flags(define_flags, argv):
  """`argv` (argv[0]: the program) parsed into a fresh `FlagValues` that
  `define_flags(flag_values)` fills, for a command run in-process; a bad
  flag or an argument that is not a flag is an `errors.UserError`."""
  flag_values = flags.FlagValues()
  define_flags(flag_values)
  reject_arguments(parse_argv(argv, flag_values))
  return flag_values


def run_with_own_flags(define_flags, command):
  """Runs `command(flag_values)` through `run`, with the flags that
  `parse_own_flags` gives a command run in-process."""
  flag_values = flags.FlagValues()
  define_flags(flag_values)

  def main(argv):
    reject_arguments(argv)
    command(flag_values)

  run(main, flag_values)


def reject_arguments(argv):
  """Raises `errors.UserError` if argv holds more than the program name."""
  if len(argv) > 1:
    raise errors.UserError(f"unexpected arguments: {' '.join(argv[1:])}")
