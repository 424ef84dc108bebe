"""Entry-point wrapper: a user's mistake prints one clear line, not a traceback."""

import sys

from absl import app
from absl import flags

from common import errors


def run(main):
  """Runs an absl `main`, turning `errors.UserError` into `error: ...` + exit 2."""

  def guarded(argv):
    try:
      return main(argv)
    except errors.UserError as e:
      print(f"error: {e}", file=sys.stderr)
      sys.exit(2)

  app.run(guarded)


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
