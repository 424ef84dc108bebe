"""User-facing errors: raised for a user's mistake, printed without a traceback."""


class UserError(Exception):
  """A mistake in the user's input (flags, data files, paths), not a bug."""


class DataDirError(UserError):
  """The data directory is missing or does not hold what a command needs."""


class DataFormatError(UserError):
  """A malformed line in a data file; the message names the file and line."""

  def __init__(self, path, line_number, message):
    self.path = str(path)
    self.line_number = line_number
    super().__init__(f"{self.path}:{line_number}: {message}")
