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


# Exit codes of every command run through `common.cli.run`.
EXIT_OK = 0  # Finished.
EXIT_FAILED = 1  # Failed: a bug or an unexpected error (a traceback).
EXIT_USER_ERROR = 2  # The user's mistake: a bad flag or input file.
# Interrupted (SIGINT/SIGTERM, preemption or --max_steps_per_run) with a
# checkpoint saved: rerun the same command to resume (EX_TEMPFAIL of
# sysexits.h, "try again later").
EXIT_INTERRUPTED = 75


class Interrupted(Exception):
  """A run stopped early with its state saved; rerunning it resumes.

  `common.cli.run` prints the message on stdout and exits with
  `EXIT_INTERRUPTED`.
  """

  def __init__(self, step):
    self.step = step
    super().__init__(
        f"stopped at step {step}; rerun the same command to resume")


class StoppedAtOnce(Interrupted):
  """A signal stopped a run at once, maybe in a checkpoint save: a second
  one, or a first one while the run restores, saves its last steps or ends
  its loop (where no step is left to finish).

  The save's temporary is removed when the run starts again; the
  checkpoints written before it are whole.
  """

  def __init__(self, last_checkpoint):
    self.step = None
    self.last_checkpoint = last_checkpoint
    kept = (f"the last complete checkpoint, {last_checkpoint}, is kept: "
            "rerun the same command to resume from it" if last_checkpoint
            else "no checkpoint was complete: rerun the same command to "
            "start again")
    Exception.__init__(self, f"stopped at once; {kept}")


# What a signal during set-up (before training started) says.
INTERRUPTED_BEFORE_TRAINING = (
    "interrupted: nothing half-written is used; rerun the same command")
