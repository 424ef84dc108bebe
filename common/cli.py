"""Entry-point wrapper: a user's mistake prints one clear line, not a traceback."""

import sys

from absl import app

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
