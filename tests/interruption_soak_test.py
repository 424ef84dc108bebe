r"""The interruption soak: a Siamese CBOW run stopped at random moments and
resumed each time must end as an uninterrupted run ends (the project's
reliability check, docs/reliability.md).

Reruns a reference run's command in fresh model directories, each stopped by
SIGINT, SIGTERM or SIGKILL (some twice) at a random moment, and once runs a
second trainer on a directory in use. Expected exits: 75 after SIGINT/SIGTERM,
-9 after SIGKILL, 0 at the end, 2 for the refused run; a finished directory
holds one export that encodes as the reference's and no temporary; a rerun
never resumes from an earlier checkpoint than the last on disk.

The suite soaks 2 interruptions on a small fixture corpus; the long soak is
the same test with more (and its own data, if given):

  SOAK_INTERRUPTIONS=52 SOAK_PARALLEL=4 SOAK_SEED=0 SOAK_CONCURRENT_RUNS=2 \
      [SOAK_DATA_DIR=DIR] python -m pytest -s tests/interruption_soak_test.py \
      -k soak_passes
"""

import collections
import dataclasses
import fcntl
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

import tensorflow as tf

from sentzoo.tests import corpus_fixtures

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Before sentzoo has set up its SIGINT/SIGTERM handling a signal is the
# interpreter's, as for any Python program: delays start after this.
INTERPRETER_START_SECONDS = 0.3
EXIT_OK, EXIT_USER_ERROR, EXIT_INTERRUPTED = 0, 2, 75
SENTENCES = ["w1 w2 w3.", "w7 w7 w40 w59.", "w12.", "", "unknown words",
             "W3 w3 w5 w8 w13 w21 w34."]
TRAIN_ARGS = ["--embedding_dim=8", "--batch_size=20", "--min_count=1",
              "--learning_rate=0.5", "--num_epochs=2",
              "--checkpoint_every_steps=5", "--log_every_steps=5",
              "--eval_every_steps=0", "--heldout_books=1",
              "--nocompare_untrained", "--export", "--deterministic"]
# Seconds after which a run counts as hung.
RUN_TIMEOUT_SECONDS = 600
# Moments to signal at: (name, aimed at a save or an export).
MOMENTS = (("delay", False), ("progress", True), ("last_step", True),
           ("exported", True))


def train_command(data_dir, model_dir):
  return [sys.executable, "-m", "trainers.siamese_cbow",
          "--data_dir=" + data_dir, "--model_dir=" + model_dir, *TRAIN_ARGS]


def _default_signals():
  # A child of a background job inherits SIGINT ignored; run it as from a
  # terminal.
  signal.signal(signal.SIGINT, signal.SIG_DFL)


class Run:
  """One trainer process; its stdout and stderr go to files, read as they
  grow."""

  running: set = set()  # Killed when the soak itself is stopped.

  def __init__(self, command):
    self.started = time.monotonic()
    self._out = tempfile.TemporaryFile("w+", encoding="utf-8")
    self._err = tempfile.TemporaryFile("w+", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2",
               PYTHONUNBUFFERED="1")
    env.pop("SENTZOO_DATA_DIR", None)
    self.process = subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=self._out, stderr=self._err,
        preexec_fn=_default_signals)
    Run.running.add(self.process)
    self.stderr = ""

  @property
  def lines(self):
    self._out.seek(0)
    return self._out.read().splitlines()

  def wait_for_line(self, matches, timeout):
    """True once a stdout line `matches`; False if the process ends or
    `timeout` passes first."""
    deadline = time.monotonic() + timeout
    while not any(matches(line) for line in self.lines):
      if time.monotonic() > deadline or self.process.poll() is not None:
        return any(matches(line) for line in self.lines)
      time.sleep(0.02)
    return True

  def signal(self, signum):
    """Sends `signum` if the process still runs; returns whether it did."""
    try:
      if self.process.poll() is None:
        self.process.send_signal(signum)
        return True
    except ProcessLookupError:
      pass
    return False

  def wait(self, timeout):
    """Its exit code (None: hung, then killed); reads its stderr."""
    try:
      code = self.process.wait(timeout)
    except subprocess.TimeoutExpired:
      self.process.kill()
      code = None
      self.process.wait()
    Run.running.discard(self.process)
    self._err.seek(0)
    self.stderr = self._err.read()
    return code

  def describe(self, code):
    return (f"exit {code}; stdout ends {self.lines[-2:]}; stderr ends "
            f"{self.stderr.strip().splitlines()[-6:]}")


def temporaries(model_dir):
  """The temporaries a save or an export left in `model_dir`."""
  return sorted(
      glob.glob(os.path.join(model_dir, "checkpoints", "*_temp*")) +
      glob.glob(os.path.join(model_dir, "export", ".tmp-*")))


def export_versions(model_dir):
  folder = os.path.join(model_dir, "export")
  return sorted(n for n in os.listdir(folder) if n.isdigit()) if (
      os.path.isdir(folder)) else []


def latest_checkpoint_step(model_dir):
  """The step of the checkpoint the trainer would resume from (0: none)."""
  path = os.path.join(model_dir, "checkpoints", "checkpoint")
  if os.path.exists(path):
    with open(path) as f:
      for line in f:
        if line.startswith("model_checkpoint_path:"):
          return int(line.split(":", 1)[1].strip().strip('"').rsplit("-")[-1])
  return 0


def _lock_is_held(model_dir):
  """Whether a process holds `model_dir`'s run lock (an exclusive flock on
  run.lock; common/run_lock.py)."""
  try:
    fd = os.open(os.path.join(model_dir, "run.lock"), os.O_RDONLY)
  except FileNotFoundError:
    return False
  try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
  except BlockingIOError:
    return True
  finally:
    os.close(fd)  # (Also releases the flock if this took it.)
  return False


def snapshot(folder):
  """{relative path: (size, mtime_ns)} of every file under `folder`."""
  files = {}
  for root, _, names in os.walk(folder):
    for name in names:
      try:
        stat = os.stat(os.path.join(root, name))
      except FileNotFoundError:
        continue
      files[os.path.relpath(os.path.join(root, name), folder)] = (
          stat.st_size, stat.st_mtime_ns)
  return files


def check_model_dir(model_dir, reference_vectors, encode):
  """The failed checks of a finished model directory, as lines."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  left, versions = temporaries(model_dir), export_versions(model_dir)
  problems = [f"leftover temporaries: {left}"] if left else []
  if len(versions) != 1:
    problems.append(f"{len(versions)} export versions, not 1: {versions}")
  if versions:
    try:
      np.testing.assert_allclose(
          encode(os.path.join(model_dir, "export", versions[-1])),
          reference_vectors, rtol=1e-5, atol=1e-6)
    except AssertionError as e:
      problems.append("export differs from the uninterrupted run's: " +
                      " ".join(str(e).split())[:300])
  return problems


@dataclasses.dataclass
class Tally:
  """The soak's counts (`n`), shared by its threads (under `lock`)."""
  signals: collections.Counter = dataclasses.field(
      default_factory=collections.Counter)
  n: collections.Counter = dataclasses.field(
      default_factory=collections.Counter)
  failures: list = dataclasses.field(default_factory=list)
  reserved: int = 0  # Interruptions taken by a signal about to be sent.
  lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

  @property
  def interruptions(self):
    return sum(self.signals.values())

  def reserve(self, target):
    """Takes one of the `target` interruptions; False if all are taken."""
    with self.lock:
      if self.reserved >= target:
        return False
      self.reserved += 1
      return True

  def release(self):
    """Gives back an interruption whose signal came too late."""
    with self.lock:
      self.reserved -= 1

  def fail(self, failure):
    with self.lock:
      self.failures.append(failure)
    print(f"  failed: {failure}", flush=True)  # At once: a long soak.

  def summary(self):
    n, sig = self.n, self.signals
    return (f"soak: {self.interruptions} interruptions (SIGINT "
            f"{sig['SIGINT']}, SIGTERM {sig['SIGTERM']}, SIGKILL "
            f"{sig['SIGKILL']}; {n['aimed']} during a save or export), "
            f"{n['concurrent_refused']} concurrent run"
            f"{'' if n['concurrent_refused'] == 1 else 's'} refused, "
            f"{n['runs_lost']} runs lost, {n['differing_exports']} differing "
            f"exports, {n['leftover_temporaries']} leftover temporaries")


class Soak:
  """The reference run, then --parallel threads of interrupted runs."""

  def __init__(self, data_dir, soak_dir, settings):
    self.data_dir, self.soak_dir, self.settings = data_dir, soak_dir, settings
    self.tally = Tally()
    self._check_lock = threading.Lock()  # One export loaded at a time.

  def run(self):
    """Returns the `Tally`."""
    import sentzoo  # pylint: disable=g-import-not-at-top
    self.encode = lambda path: sentzoo.load(path).encode(SENTENCES)
    shutil.rmtree(self.soak_dir, ignore_errors=True)
    os.makedirs(self.soak_dir)
    reference_dir = os.path.join(self.soak_dir, "reference")
    reference = Run(train_command(self.data_dir, reference_dir))
    code = reference.wait(RUN_TIMEOUT_SECONDS)
    self.reference_seconds = time.monotonic() - reference.started
    if code != EXIT_OK:
      self.tally.fail("uninterrupted run: " + reference.describe(code))
      return self.tally
    print(f"uninterrupted run: {self.reference_seconds:.1f}s", flush=True)
    self.reference_vectors = self.encode(os.path.join(
        reference_dir, "export", export_versions(reference_dir)[-1]))
    self.steps = next(int(line.split()[1].split("/")[1])
                      for line in reversed(reference.lines)
                      if line.startswith("step ") and "/" in line.split()[1])
    workers = [threading.Thread(target=self._worker, args=(w,), daemon=True)
               for w in range(1, self.settings.parallel + 1)]
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
    return self.tally

  def _worker(self, worker):
    try:
      self._chain(worker)
    except Exception as e:  # pylint: disable=broad-except
      self.tally.fail(f"worker {worker}: {type(e).__name__}: {e}")

  def _chain(self, worker):
    """One thread's model directories, interrupted until the soak's
    interruptions are taken."""
    tally, target = self.tally, self.settings.interruptions
    rng = random.Random(self.settings.seed * 1000 + worker)
    directory = 0
    while True:
      directory += 1
      model_dir = os.path.join(self.soak_dir, f"soak{worker}_{directory}")
      print(f"model directory {model_dir}", flush=True)
      last_step = 0
      for _ in range(target + 10):  # More runs than this: it is lost.
        run = Run(train_command(self.data_dir, model_dir))
        if tally.reserve(target):
          code, interrupted = self._interrupt(run, rng, model_dir)
          if not interrupted:
            tally.release()
        else:
          code, interrupted = run.wait(RUN_TIMEOUT_SECONDS), False
          if code != EXIT_OK:
            tally.fail("uninterrupted rerun: " + run.describe(code))
        step = latest_checkpoint_step(model_dir)
        if step < last_step:
          with tally.lock:
            tally.n["runs_lost"] += 1
          resumed = [line for line in run.lines if "resum" in line.lower()]
          tally.fail(f"{model_dir}: checkpoint step went back from "
                     f"{last_step} to {step}: {resumed[:1]}")
        last_step = step
        if not interrupted:  # It ran to its end, or failed there.
          break
      if interrupted or code != EXIT_OK:
        with tally.lock:
          tally.n["runs_lost"] += 1
        tally.fail(f"{model_dir} did not finish")
        return
      with self._check_lock:
        problems = check_model_dir(model_dir, self.reference_vectors,
                                   self.encode)
      for problem in problems:
        tally.fail(f"{model_dir}: {problem}")
      with tally.lock:
        tally.n["finished_dirs"] += 1
        tally.n["leftover_temporaries"] += len(temporaries(model_dir))
        tally.n["differing_exports"] += any("differs" in p
                                            for p in problems)
      print(f"  finished {model_dir}: export versions "
            f"{export_versions(model_dir)}, {len(problems)} problems",
            flush=True)
      if tally.reserved >= target:
        return

  def _wait_for_moment(self, run, rng, moment):
    timeout = RUN_TIMEOUT_SECONDS
    if moment == "delay":  # From the process's start, imports included.
      time.sleep(max(0.0, run.started + rng.uniform(
          INTERPRETER_START_SECONDS, self.reference_seconds) -
                     time.monotonic()))
      return True
    if moment == "progress":
      wanted = f"step {5 * rng.randint(1, self.steps // 5)}/"
      ready = run.wait_for_line(
          lambda line: line.startswith(wanted) or
          (line.startswith("step ") and "(100.0%)" in line), timeout)
      pause = 0.05
    elif moment == "last_step":
      ready = run.wait_for_line(lambda line: "(100.0%)" in line, timeout)
      pause = 0.3
    else:
      ready = run.wait_for_line(lambda line: line.startswith("exported to"),
                                timeout)
      pause = 0.1
    time.sleep(rng.uniform(0, pause))
    return ready

  def _check_concurrent_run(self, model_dir, holder):
    """A second run on `model_dir` while `holder` (paused) holds it."""
    holder.process.send_signal(signal.SIGSTOP)
    try:
      time.sleep(0.2)  # A write in flight ends before the pause.
      if not _lock_is_held(model_dir):
        # Paused after it released the directory (on its way out): no
        # refusal to check; a later interruption tries again.
        with self.tally.lock:
          self.tally.n["concurrent_tried"] -= 1
        return
      before = snapshot(model_dir)
      second = Run(train_command(self.data_dir, model_dir))
      code = second.wait(RUN_TIMEOUT_SECONDS)
      after = snapshot(model_dir)
    finally:
      holder.process.send_signal(signal.SIGCONT)
    if (code != EXIT_USER_ERROR or
        "is in use by another run" not in second.stderr):
      self.tally.fail("concurrent run not refused: " + second.describe(code))
    elif before != after:
      self.tally.fail("the refused concurrent run changed "
                      f"{sorted(set(before.items()) ^ set(after.items()))}")
    else:
      self.tally.n["concurrent_refused"] += 1
      print(f"  concurrent run refused: {second.stderr.strip()[:160]}",
            flush=True)

  def _interrupt(self, run, rng, model_dir):
    """Signals `run` at a random moment: (its exit code, whether it was
    interrupted; False: it ended before the signal)."""
    tally, timeout = self.tally, RUN_TIMEOUT_SECONDS
    name = rng.choice(["SIGINT", "SIGTERM", "SIGKILL"])
    moment, aimed = rng.choice(MOMENTS)
    ready = self._wait_for_moment(run, rng, moment)
    with tally.lock:
      concurrent = bool(
          ready and tally.n["concurrent_tried"] <
          self.settings.concurrent_runs
          and run.lines and run.process.poll() is None)
      tally.n["concurrent_tried"] += concurrent
    if concurrent:
      self._check_concurrent_run(model_dir, run)
    caught = bool(temporaries(model_dir))
    if not run.signal(getattr(signal, name)):
      return run.wait(timeout), False
    twice = name != "SIGKILL" and rng.random() < 0.25
    if twice:
      time.sleep(rng.uniform(0, 0.3))
      twice = run.signal(rng.choice([signal.SIGINT, signal.SIGTERM]))
    code = run.wait(timeout)
    if code == EXIT_OK:  # Finished before the signal took effect.
      return code, False
    label = f"{name}{' twice' if twice else ''} at {moment}"
    expected = -signal.SIGKILL if name == "SIGKILL" else EXIT_INTERRUPTED
    if code != expected or "Traceback" in run.stderr:
      tally.fail(f"{os.path.basename(model_dir)} {label}: "
                 f"{run.describe(code)}")
      # All of it beside the directory: the cause is rarely at the end.
      with open(f"{model_dir}.failed_{len(tally.failures)}.stderr", "w",
                encoding="utf-8") as f:
        f.write(run.stderr)
    with tally.lock:
      tally.signals[name] += 1
      tally.n["aimed"] += aimed
      tally.n["caught_temporary"] += caught
      tally.n["second_signals"] += twice
      tally.n["stopped_at_once"] += any("stopped at once;" in line
                                   for line in run.lines)
      count = tally.interruptions
    print(f"  {count}: {os.path.basename(model_dir)}: {label}: exit {code}, "
          f"checkpoint step {latest_checkpoint_step(model_dir)}"
          f"{', a temporary on disk' if caught else ''}", flush=True)
    return code, True

@dataclasses.dataclass
class Settings:
  """How long a soak is: signals in all, their seed, second runs on a
  directory in use, model directories soaked at once."""
  interruptions: int = 2
  seed: int = 0
  concurrent_runs: int = 1
  parallel: int = 1


class InterruptionSoakTest(tf.test.TestCase):

  def _model_dir(self, versions, temporaries=()):
    model_dir = tempfile.mkdtemp(dir=self.get_temp_dir())
    os.makedirs(os.path.join(model_dir, "checkpoints"))
    for version in versions:
      os.makedirs(os.path.join(model_dir, "export", version))
    for name in temporaries:
      os.makedirs(os.path.join(model_dir, name))
    return model_dir

  def test_checks_find_temporaries_extra_versions_and_other_vectors(self):
    encode = lambda path: [[1.0, 2.0]] if path.endswith("1") else [[1.0, 3.0]]
    clean = self._model_dir(["1"])
    self.assertEqual(
        check_model_dir(clean, [[1.0, 2.0]], encode), [])
    dirty = self._model_dir(
        ["1"], ["checkpoints/ckpt-5_temp", "export/.tmp-12-34-ab"])
    self.assertEqual(temporaries(dirty), [
        os.path.join(dirty, "checkpoints", "ckpt-5_temp"),
        os.path.join(dirty, "export", ".tmp-12-34-ab")])
    problems = check_model_dir(dirty, [[1.0, 2.0]], encode)
    self.assertLen(problems, 1)
    self.assertIn("leftover temporaries", problems[0])
    twice = self._model_dir(["1", "2"])
    problems = check_model_dir(twice, [[1.0, 2.0]], encode)
    self.assertIn("2 export versions, not 1", problems[0])
    # The newest version (2) encodes otherwise.
    self.assertIn("differs", problems[1])

  def test_latest_checkpoint_step(self):
    model_dir = self._model_dir([])
    self.assertEqual(latest_checkpoint_step(model_dir), 0)
    with open(os.path.join(model_dir, "checkpoints", "checkpoint"), "w") as f:
      f.write('model_checkpoint_path: "ckpt-65"\n'
              'all_model_checkpoint_paths: "ckpt-60"\n')
    self.assertEqual(latest_checkpoint_step(model_dir), 65)

  def test_interruptions_are_reserved_up_to_the_target(self):
    tally = Tally()
    self.assertTrue(tally.reserve(2))
    self.assertTrue(tally.reserve(2))
    self.assertFalse(tally.reserve(2))
    tally.release()  # Its run ended before the signal.
    self.assertTrue(tally.reserve(2))

  def test_a_short_soak_passes(self):
    # The reference run, 2 interruptions (a SIGTERM and a SIGKILL with this
    # seed) and the runs that finish, on half the fixture corpus (720 lines):
    # 49 CPU-s where 3 interruptions on 1,500 lines took 69. A second
    # signal during a save is trainers/trainer_test.py's CommandSignalTest.
    settings = Settings(
        interruptions=int(os.environ.get("SOAK_INTERRUPTIONS", 2)),
        seed=int(os.environ.get("SOAK_SEED", 4)),
        parallel=int(os.environ.get("SOAK_PARALLEL", 1)),
        concurrent_runs=int(os.environ.get("SOAK_CONCURRENT_RUNS", 1)))
    data_dir = os.environ.get("SOAK_DATA_DIR")
    if not data_dir:
      data_dir = os.path.join(self.get_temp_dir(), "soak_data")
      corpus_fixtures.write_book_corpus(data_dir, lines_per_book=120)
    tally = Soak(os.path.abspath(data_dir),
                 os.path.join(self.get_temp_dir(), "soak"), settings).run()
    self.assertEqual(tally.failures, [])
    self.assertEqual(tally.interruptions, settings.interruptions)
    self.assertEqual(tally.n["concurrent_refused"], settings.concurrent_runs)
    for count in ("runs_lost", "differing_exports", "leftover_temporaries"):
      self.assertEqual(tally.n[count], 0, tally.summary())


if __name__ == "__main__":
  tf.test.main()
