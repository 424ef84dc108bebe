"""Entry-point wrapper: a user's mistake prints one clear line, not a traceback."""

import sys

from absl import app
from absl import flags

from sentzoo.common import console
from sentzoo.common import errors


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
  command's own `flags.FlagValues` (the trainers': several trainers can then
  live in one Python process).

  0: `main` finished. 2: a bad flag value (absl's flag parsing, validators
  included) or an `errors.UserError`, printed as one `error: ...` line on
  stderr without a traceback. 75: `errors.Interrupted` (stopped with a
  checkpoint saved), its message printed on stdout. 1: anything else (an
  uncaught exception prints its traceback).

  TensorFlow's INFO logging is hidden unless --verbose (or
  SENTZOO_VERBOSE=1); see common/console.py.

  stdout is line-buffered even when it is a file or a pipe (`nohup ... >
  train.log`): each progress line reaches the log when printed, and the
  log of a run that is killed or hangs ends where the run stopped.
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
    return flag_values(argv)
  except flags.Error as e:
    message = " ".join(str(e).split("\n"))
    print(f"error: {message} (--helpshort or --helpfull: help on flags)",
          file=sys.stderr)
    sys.exit(errors.EXIT_USER_ERROR)


def exit_if_interrupted(outcome):
  """Raises `errors.Interrupted` if a `training_loop.run` outcome stopped early.

  Call it right after the loop: `cli.run` then prints "stopped at step N;
  rerun the same command to resume" and exits with 75.
  """
  if outcome["interrupted"]:
    raise errors.Interrupted(outcome["step"])


def positive_float(name, flag_values=flags.FLAGS):
  """Registers a validator: the float flag `name` must be > 0 (None allowed).

  absl's `lower_bound` allows the bound itself; a learning rate of 0 would
  train nothing.
  """
  flags.register_validator(
      name, lambda value: value is None or value > 0, message="must be > 0",
      flag_values=flag_values)


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
  so a test that imports the trainer and runs `tf.test.main()` (or
  `absltest.main()`, as `bazel test` and `python -m` do) would fail with a
  flag error before any test runs.

  Args:
    names: flag names, e.g. "model_dir".
    flag_values: the parsed `FlagValues` (default: absl's global flags).
  """
  missing = [f"--{name}" for name in names
             if getattr(flag_values, name) in (None, "")]
  if missing:
    raise errors.UserError(
        f"missing required flag{'s' if len(missing) > 1 else ''}: "
        f"{', '.join(missing)}")


def parse_own_flags(define_flags, argv):
  """Flags parsed into a fresh `FlagValues`, for commands run in-process.

  Args:
    define_flags: function(flag_values) that defines the command's flags.
    argv: the command line; argv[0] is the program.

  Raises:
    errors.UserError: a bad flag, or arguments that are not flags.
  """
  flag_values = flags.FlagValues()
  define_flags(flag_values)
  try:
    rest = flag_values(list(argv))
  except flags.Error as e:
    raise errors.UserError(str(e)) from e
  reject_arguments(rest)
  return flag_values


def reject_arguments(argv):
  """Raises `errors.UserError` if argv holds more than the program name."""
  if len(argv) > 1:
    raise errors.UserError(f"unexpected arguments: {' '.join(argv[1:])}")
