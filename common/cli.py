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
