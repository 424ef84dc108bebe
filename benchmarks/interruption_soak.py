r"""Soak test: a Siamese CBOW run interrupted at random moments, resumed each
time, must end as an uninterrupted run ends.

  python -c "from sentzoo.tests import corpus_fixtures; \
      corpus_fixtures.write_book_corpus('/tmp/soak_data')"
  python -m benchmarks.interruption_soak --data_dir=/tmp/soak_data \
      --interruptions=52 --parallel=4 --seed=0 --soak_dir=/tmp/soak

1. Trains on the book corpus of --data_dir (a small one: the tiny corpus of
   tests/corpus_fixtures.py above, 1,500 lines) once without interruption
   (the reference).
2. Runs the same command (`python -m trainers.siamese_cbow`, small model,
   frequent checkpoints, --export) in a fresh model directory and stops it
   --interruptions times with SIGINT, SIGTERM or SIGKILL, chosen with
   --seed: after a random delay from the process's start (imports and
   set-up included), right after a progress line (the loop checkpoints at
   those steps), right after the last step (the final save and the export)
   or right after "exported to" (before the run records that it finished).
   Some SIGINT/SIGTERM are followed by a second signal a moment later
   ("stop at once"). After each stop the command is rerun;
   once the interruptions are spent it runs to its end. A run that ends
   (exit 0) before all interruptions are spent is checked and a new model
   directory takes the rest. --parallel threads do this at once, each in
   its own model directories with its own random sequence (seed * 1000 +
   thread); after --max_minutes no new signal is sent.
3. Once, while a run holds the directory (paused with SIGSTOP so that
   nothing else writes), a second run of the same command on the same
   --model_dir must exit 2 with "is in use by another run" and leave every
   file as it was.
4. Checks every finished model directory: its export encodes sentences as
   the reference's does (assert_allclose), no temporary is left
   (`checkpoints/*_temp*`, `export/.tmp-*`), and it holds exactly one
   export version.

Exit codes expected of the trainer: 75 after SIGINT/SIGTERM (a second
signal too, saying "stopped at once"), -9 after SIGKILL, 0 at the end, 2 for
the refused concurrent run. Any other (1 and a traceback, 130, -15, a
hang) is a failure and is printed with the end of the run's stderr.

Prints one summary line ("soak: N interruptions (...), ... 0 runs lost, 0
differing exports, 0 leftover temporaries") and exits 1 if any check failed
or fewer than --interruptions were sent.
A lost run is a rerun that starts from an earlier checkpoint than the last
one on disk before it, or a model directory that never finishes.
"""

import collections
import dataclasses
import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from absl import flags

from sentzoo.common import cli

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Python's own start, before sentzoo/__init__.py has set up the command's
# SIGINT/SIGTERM (common/interrupts.py): a signal then is the interpreter's
# (a traceback, or death by SIGTERM), as for any Python program. Delays
# start after it.
INTERPRETER_START_SECONDS = 0.3


# The trainer's exit codes (README: exit codes).
EXIT_OK = 0
EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 75

SENTENCES = ["w1 w2 w3.", "w7 w7 w40 w59.", "w12.", "", "unknown words",
             "W3 w3 w5 w8 w13 w21 w34."]

TRAIN_ARGS = ["--embedding_dim=8", "--batch_size=20", "--min_count=1",
              "--learning_rate=0.5", "--num_epochs=2",
              "--checkpoint_every_steps=5", "--log_every_steps=5",
              "--eval_every_steps=0", "--heldout_books=1",
              "--nocompare_untrained", "--export"]

# Moments to signal at: (name, aimed at a save or an export).
MOMENTS = (("delay", False), ("progress", True), ("last_step", True),
           ("exported", True))


def train_command(data_dir, model_dir):
  return [sys.executable, "-m", "trainers.siamese_cbow",
          "--data_dir=" + data_dir, "--model_dir=" + model_dir, *TRAIN_ARGS]


def _env():
  env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
  env.pop("SENTZOO_DATA_DIR", None)
  return env


def _default_signals():
  # A child of a background shell job (`nohup ... &`) inherits SIGINT
  # ignored; the trainer is run as from a terminal.
  signal.signal(signal.SIGINT, signal.SIG_DFL)


class Run:
  """One trainer process, its stdout lines read as they come."""

  running: set = set()  # Killed when the soak itself is stopped.

  def __init__(self, command):
    self.started = time.monotonic()
    self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8")
    self.process = subprocess.Popen(
        command, cwd=REPO_ROOT, env=_env(), stdout=subprocess.PIPE,
        stderr=self._stderr, text=True, bufsize=1,
        preexec_fn=_default_signals)
    Run.running.add(self.process)
    self.lines = []
    self.first_line_seconds = None
    self.stderr = ""  # All of it once the process has ended (`wait`).
    self._changed = threading.Condition()
    self._reader = threading.Thread(target=self._read_stdout, daemon=True)
    self._reader.start()

  def _read_stdout(self):
    for line in self.process.stdout:
      with self._changed:
        if self.first_line_seconds is None:
          self.first_line_seconds = time.monotonic() - self.started
        self.lines.append(line.rstrip("\n"))
        self._changed.notify_all()
    with self._changed:
      self._changed.notify_all()

  def wait_for_line(self, matches, timeout):
    """Waits until a stdout line satisfies `matches` (True) or the process
    ends or `timeout` passes (False)."""
    deadline = time.monotonic() + timeout
    seen = 0
    with self._changed:
      while True:
        if any(matches(line) for line in self.lines[seen:]):
          return True
        seen = len(self.lines)
        left = deadline - time.monotonic()
        if left <= 0 or not self._reader.is_alive():
          return False
        self._changed.wait(min(left, 0.05))

  def signal(self, signum):
    """Sends `signum` if the process still runs; returns whether it did."""
    if self.process.poll() is not None:
      return False
    try:
      self.process.send_signal(signum)
    except ProcessLookupError:
      return False
    return True

  def wait(self, timeout):
    try:
      code = self.process.wait(timeout)
    except subprocess.TimeoutExpired:
      self.process.kill()
      code = None
      self.process.wait()
    Run.running.discard(self.process)
    self._reader.join()
    self._stderr.seek(0)
    self.stderr = self._stderr.read()
    self._stderr.close()
    return code

  @property
  def stdout(self):
    return "\n".join(self.lines)


def temporaries(model_dir):
  """The temporaries a save or an export left in `model_dir`."""
  return sorted(
      glob.glob(os.path.join(model_dir, "checkpoints", "*_temp*")) +
      glob.glob(os.path.join(model_dir, "export", ".tmp-*")))


def export_versions(model_dir):
  folder = os.path.join(model_dir, "export")
  if not os.path.isdir(folder):
    return []
  return sorted(name for name in os.listdir(folder) if name.isdigit())


def latest_checkpoint_step(model_dir):
  """The step of the checkpoint the trainer would resume from (0: none)."""
  path = os.path.join(model_dir, "checkpoints", "checkpoint")
  if not os.path.exists(path):
    return 0
  with open(path) as f:
    for line in f:
      if line.startswith("model_checkpoint_path:"):
        name = line.split(":", 1)[1].strip().strip('"')
        return int(name.rsplit("-", 1)[1])
  return 0


def snapshot(folder):
  """{relative path: (size, mtime_ns)} of every file under `folder`."""
  files = {}
  for root, _, names in os.walk(folder):
    for name in names:
      path = os.path.join(root, name)
      try:
        stat = os.stat(path)
      except FileNotFoundError:
        continue
      files[os.path.relpath(path, folder)] = (stat.st_size, stat.st_mtime_ns)
  return files


def check_model_dir(model_dir, reference_vectors, encode):
  """The failed checks of a finished model directory, as lines."""
  problems = []
  left = temporaries(model_dir)
  if left:
    problems.append(f"leftover temporaries: {left}")
  versions = export_versions(model_dir)
  if len(versions) != 1:
    problems.append(f"{len(versions)} export versions, not 1: {versions}")
  if versions:
    vectors = encode(os.path.join(model_dir, "export", versions[-1]))
    try:
      import numpy as np  # pylint: disable=g-import-not-at-top
      np.testing.assert_allclose(vectors, reference_vectors, rtol=1e-5,
                                 atol=1e-6)
    except AssertionError as e:
      problems.append("export differs from the uninterrupted run's: " +
                      " ".join(str(e).split())[:300])
  return problems


@dataclasses.dataclass
class Tally:
  signals: collections.Counter = dataclasses.field(
      default_factory=collections.Counter)
  aimed: int = 0
  caught_temporary: int = 0
  second_signals: int = 0
  stopped_at_once: int = 0
  concurrent_tried: int = 0
  concurrent_refused: int = 0
  runs_lost: int = 0
  differing_exports: int = 0
  leftover_temporaries: int = 0
  finished_dirs: int = 0
  failures: list = dataclasses.field(default_factory=list)
  # Interruptions taken by a running signal (parallel threads).
  reserved: int = 0
  out_of_time: bool = False  # --max_minutes passed: no more signals.
  lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

  @property
  def interruptions(self):
    return sum(self.signals.values())

  def reserve(self, target, deadline=None):
    """Takes one of the `target` interruptions for a signal; False if all
    are taken or `deadline` (time.monotonic()) has passed."""
    with self.lock:
      if deadline is not None and time.monotonic() > deadline:
        self.out_of_time = True
      if self.reserved >= target or self.out_of_time:
        return False
      self.reserved += 1
      return True

  def fail(self, failure):
    """Records a failed check, and prints it at once (a long soak)."""
    with self.lock:
      self.failures.append(failure)
    print(f"  failed: {failure}", flush=True)

  def release(self):
    """Gives back an interruption whose signal came too late."""
    with self.lock:
      self.reserved -= 1

  def summary(self):
    return (f"soak: {self.interruptions} interruptions (SIGINT "
            f"{self.signals['SIGINT']}, SIGTERM {self.signals['SIGTERM']}, "
            f"SIGKILL {self.signals['SIGKILL']}; {self.aimed} during a save "
            f"or export), {self.concurrent_refused} concurrent run"
            f"{'' if self.concurrent_refused == 1 else 's'} refused, "
            f"{self.runs_lost} runs lost, {self.differing_exports} differing "
            f"exports, {self.leftover_temporaries} leftover temporaries")


def _describe(run, code):
  tail = run.stderr.strip().splitlines()[-6:]
  return (f"exit {code}; stdout ends {run.lines[-2:]}; stderr ends "
          f"{tail}")


def check_concurrent_run(data_dir, model_dir, holder, tally, settings):
  """Starts a second run on `model_dir` while `holder` (paused) holds it."""
  holder.process.send_signal(signal.SIGSTOP)
  try:
    time.sleep(0.2)  # A write in flight ends before the pause.
    before = snapshot(model_dir)
    second = Run(train_command(data_dir, model_dir))
    code = second.wait(settings.run_timeout)
    after = snapshot(model_dir)
  finally:
    holder.process.send_signal(signal.SIGCONT)
  if code != EXIT_USER_ERROR or "is in use by another run" not in second.stderr:
    tally.fail("concurrent run not refused: " + _describe(second, code))
  elif before != after:
    changed = sorted(set(before.items()) ^ set(after.items()))
    tally.fail(f"the refused concurrent run changed {changed}")
  else:
    tally.concurrent_refused += 1
    print(f"  concurrent run refused: {second.stderr.strip()[:160]}",
          flush=True)


def total_steps(lines):
  """N of the "step n/N" progress lines."""
  for line in reversed(lines):
    if line.startswith("step ") and "/" in line.split()[1]:
      return int(line.split()[1].split("/")[1])
  raise ValueError("no progress line")


def interrupt_once(run, rng, data_dir, model_dir, tally, reference_seconds,
                   steps, settings):
  """Signals `run` at a random moment; returns its exit code and whether
  it was interrupted (False: it ended before the signal)."""
  name = rng.choice(["SIGINT", "SIGTERM", "SIGKILL"])
  signum = getattr(signal, name)
  moment, aimed = rng.choice(MOMENTS)
  if moment == "delay":
    # From the process's start: imports and set-up included.
    time.sleep(max(0.0, run.started + rng.uniform(
        INTERPRETER_START_SECONDS, reference_seconds) - time.monotonic()))
    ready = True
  elif moment == "progress":
    wanted = 5 * rng.randint(1, steps // 5)
    ready = run.wait_for_line(
        lambda line: line.startswith(f"step {wanted}/") or
        (line.startswith("step ") and "(100.0%)" in line),
        settings.run_timeout)
    time.sleep(rng.uniform(0, 0.05))
  elif moment == "last_step":
    ready = run.wait_for_line(lambda line: "(100.0%)" in line,
                              settings.run_timeout)
    time.sleep(rng.uniform(0, 0.3))
  else:
    ready = run.wait_for_line(lambda line: line.startswith("exported to"),
                              settings.run_timeout)
    time.sleep(rng.uniform(0, 0.1))
  with tally.lock:
    concurrent = bool(ready and
                      tally.concurrent_tried < settings.concurrent_runs and
                      run.lines and run.process.poll() is None)
    tally.concurrent_tried += concurrent
  if concurrent:
    check_concurrent_run(data_dir, model_dir, run, tally, settings)
  caught = bool(temporaries(model_dir))
  if not run.signal(signum):
    return run.wait(settings.run_timeout), False
  twice = name != "SIGKILL" and rng.random() < 0.25
  if twice:
    time.sleep(rng.uniform(0, 0.3))
    twice = run.signal(rng.choice([signal.SIGINT, signal.SIGTERM]))
  code = run.wait(settings.run_timeout)
  expected = -signal.SIGKILL if name == "SIGKILL" else EXIT_INTERRUPTED
  if code == EXIT_OK:
    # Finished before the signal took effect.
    return code, False
  label = f"{name}{' twice' if twice else ''} at {moment}"
  if code != expected or "Traceback" in run.stderr:
    tally.fail(f"{os.path.basename(model_dir)} {label}: "
               f"{_describe(run, code)}")
    # The whole stderr beside the model directory: the failure's cause is
    # rarely in its last lines.
    with open(f"{model_dir}.failed_{len(tally.failures)}.stderr", "w",
              encoding="utf-8") as f:
      f.write(run.stderr)
  with tally.lock:
    tally.signals[name] += 1
    tally.aimed += aimed
    tally.caught_temporary += caught
    tally.second_signals += twice
    tally.stopped_at_once += "stopped at once;" in run.stdout
    count = tally.interruptions
  print(f"  {count}: {os.path.basename(model_dir)}: {label}: exit {code}, "
        f"checkpoint step {latest_checkpoint_step(model_dir)}"
        f"{', a temporary on disk' if caught else ''}", flush=True)
  return code, True


def soak(data_dir, soak_dir, settings):
  """Runs the soak on the book corpus of `data_dir`, with model directories
  in `soak_dir` (emptied first) and `settings` (the flags); returns the
  `Tally`."""
  import sentzoo  # pylint: disable=g-import-not-at-top

  def encode(path):
    return sentzoo.load(path).encode(SENTENCES)

  deadline = (time.monotonic() + 60 * settings.max_minutes
              if settings.max_minutes else None)
  if os.path.exists(soak_dir):
    shutil.rmtree(soak_dir)
  os.makedirs(soak_dir)
  tally = Tally()
  reference_dir = os.path.join(soak_dir, "reference")
  reference = Run(train_command(data_dir, reference_dir))
  code = reference.wait(settings.run_timeout)
  reference_seconds = time.monotonic() - reference.started
  if code != EXIT_OK:
    tally.fail("uninterrupted run: " + _describe(reference, code))
    return tally
  print(f"uninterrupted run: {time.monotonic() - reference.started:.1f}s "
        f"(first line at {reference.first_line_seconds or 0:.1f}s)",
        flush=True)
  reference_vectors = encode(os.path.join(
      reference_dir, "export", export_versions(reference_dir)[-1]))

  steps = total_steps(reference.lines)
  check_lock = threading.Lock()  # One export loaded at a time.

  def checked(model_dir):
    with check_lock:
      return check_model_dir(model_dir, reference_vectors, encode)

  def chain(worker):
    try:
      _soak_chain(worker, data_dir, soak_dir, settings, tally,
                  reference_seconds, steps, checked, deadline)
    except Exception as e:  # pylint: disable=broad-except
      tally.fail(f"worker {worker}: {type(e).__name__}: {e}")

  workers = [threading.Thread(target=chain, args=(worker,), daemon=True)
             for worker in range(1, settings.parallel + 1)]
  try:
    for worker in workers:
      worker.start()
      time.sleep(1)  # Different moments from the start.
    for worker in workers:
      worker.join()
  except KeyboardInterrupt:
    for process in list(Run.running):
      process.send_signal(signal.SIGCONT)  # A paused holder.
      process.kill()
    raise
  return tally


def _soak_chain(worker, data_dir, soak_dir, settings, tally,
                reference_seconds, steps, checked, deadline):
  """One thread's model directories, interrupted until the soak's
  interruptions are taken (or `deadline` passes)."""
  interruptions = settings.interruptions
  rng = random.Random(settings.seed * 1000 + worker)
  directory = 0
  while True:
    directory += 1
    model_dir = os.path.join(soak_dir, f"soak{worker}_{directory}")
    print(f"model directory {model_dir}", flush=True)
    last_step = 0
    # A directory that cannot finish in this many runs is lost.
    for _ in range(interruptions + 10):
      run = Run(train_command(data_dir, model_dir))
      if tally.reserve(interruptions, deadline):
        code, interrupted = interrupt_once(
            run, rng, data_dir, model_dir, tally, reference_seconds,
            steps, settings)
        if not interrupted:
          tally.release()
      else:
        code, interrupted = run.wait(settings.run_timeout), False
        if code != EXIT_OK:
          tally.fail("uninterrupted rerun: " + _describe(run, code))
      resumed = [line for line in run.lines if "resum" in line.lower()]
      step = latest_checkpoint_step(model_dir)
      if step < last_step:
        with tally.lock:
          tally.runs_lost += 1
        tally.fail(
            f"{model_dir}: checkpoint step went back from {last_step} to "
            f"{step}: {resumed[:1]}")
      last_step = step
      if not interrupted:  # It ran to its end, or failed there.
        break
    if interrupted or code != EXIT_OK:
      with tally.lock:
        tally.runs_lost += 1
      tally.fail(f"{model_dir} did not finish")
      return
    problems = checked(model_dir)
    for problem in problems:
      tally.fail(f"{model_dir}: {problem}")
    with tally.lock:
      tally.finished_dirs += 1
      tally.leftover_temporaries += len(temporaries(model_dir))
      tally.differing_exports += any("differs" in p for p in problems)
    print(f"  finished {model_dir}: export versions "
          f"{export_versions(model_dir)}, {len(problems)} problems",
          flush=True)
    if tally.reserved >= interruptions or tally.out_of_time:
      return


def main(argv):
  del argv
  settings = flags.FLAGS
  soak_dir = settings.soak_dir or os.path.join(
      "/tmp", f"interruption_soak_{os.getpid()}")
  start = time.monotonic()
  tally = soak(os.path.abspath(settings.data_dir), os.path.abspath(soak_dir),
               settings)
  for failure in tally.failures:
    print(f"FAILED: {failure}", flush=True)
  print(f"{tally.finished_dirs} model directories finished; "
        f"{tally.caught_temporary} signals with a temporary on disk, "
        f"{tally.second_signals} second signals "
        f"({tally.stopped_at_once} 'stopped at once'); "
        f"{time.monotonic() - start:.0f}s, load average "
        f"{os.getloadavg()[0]:.1f}", flush=True)
  print(tally.summary(), flush=True)
  if tally.failures or tally.interruptions < settings.interruptions:
    sys.exit(1)


if __name__ == "__main__":
  # Defined here, not at import: pytest imports every benchmark into one
  # process, where another's flag of the same name would collide.
  flags.DEFINE_string("data_dir", None,
                      "Data directory with a (small) book corpus, "
                      "gutenberg/partNN.txt.gz and index.tsv.",
                      required=True)
  flags.DEFINE_integer("interruptions", 50,
                       "How many times to interrupt the training runs.",
                       lower_bound=0)
  flags.DEFINE_integer("seed", 0, "Seed of the signals and their moments.")
  flags.DEFINE_string("soak_dir", None,
                      "Folder for the model directories (emptied first; "
                      "default: a new folder under /tmp).")
  flags.DEFINE_integer("concurrent_runs", 1,
                       "How many times to start a second run on a directory "
                       "in use.", lower_bound=0)
  flags.DEFINE_integer("parallel", 1,
                       "Model directories soaked at once (threads).",
                       lower_bound=1)
  flags.DEFINE_float("max_minutes", 0,
                     "Send no signal after this many minutes (0: no limit); "
                     "the model directories then run to their end.",
                     lower_bound=0)
  flags.DEFINE_integer("run_timeout", 600,
                       "Seconds after which a run counts as hung.",
                       lower_bound=1)
  cli.run(main)
