"""Distributed training and resilience of the shared loop, end to end.

Runs `python -m trainers.siamese_cbow` as subprocesses on a tiny corpus:
- MirroredStrategy on 2 logical CPUs gives one device's loss curve;
- MultiWorkerMirroredStrategy with 2 worker processes on 127.0.0.1 trains
  and both workers end with identical weights;
- a run killed with SIGKILL after a checkpoint resumes, ends at the same step
  with the same loss curve and weights as an uninterrupted run.
Every subprocess is time-bounded and killed if the test fails.
`StepsPerCallTest` runs the loop in process with a counting step.
"""

import gzip
import json
import os
import random
import signal
import subprocess
import sys
from unittest import mock

import numpy as np
import tensorflow as tf

from sentzoo.common import disk_errors
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.common import resources
from sentzoo.tests import trainer_fixtures
from sentzoo.trainers import training_loop

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 300

# Runs the trainer as __main__, optionally (test-only hooks, no production
# code involved) SIGKILLing itself once it prints "step <N>/" and saving the
# model's final weights to an .npz file.
_WRAPPER = r"""
import os, runpy, signal, sys
import numpy as np
from sentzoo.trainers import training_loop
kill_at = os.environ.get("TEST_KILL_AT_STEP")
dump = os.environ.get("TEST_DUMP_WEIGHTS")
if kill_at:
  class _KillAt:
    def __init__(self, stream):
      self.stream = stream
    def write(self, text):
      self.stream.write(text)
      if text.startswith(f"step {kill_at}/"):
        self.stream.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    def __getattr__(self, name):
      return getattr(self.stream, name)
  sys.stdout = _KillAt(sys.stdout)
if dump:
  _run = training_loop.run
  def _run_and_dump(*args, **kwargs):
    outcome = _run(*args, **kwargs)
    items = args[5] if len(args) > 5 else kwargs["checkpoint_items"]
    np.savez(dump, *[np.asarray(w.numpy()) for w in items["model"].weights])
    return outcome
  training_loop.run = _run_and_dump
runpy.run_module("trainers.siamese_cbow", run_name="__main__", alter_sys=True)
"""


def _write_corpus(data_dir, seed=0):
  """Two parts of three short 'books' over a 60-word vocabulary (as in
  siamese_cbow_test)."""
  rng = random.Random(seed)
  words = [f"w{i}" for i in range(60)]
  folder = os.path.join(data_dir, "gutenberg")
  os.makedirs(folder, exist_ok=True)
  for part in (1, 2):
    books = []
    for _ in range(3):
      lines = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 9)))
               + "." for _ in range(250)]
      books.append("\n".join(lines))
    with gzip.open(os.path.join(folder, f"part{part:02d}.txt.gz"), "wt") as f:
      f.write("\n\n".join(books) + "\n")


def _final_embeddings(model_dir):
  return trainer_fixtures.checkpoint_table(model_dir, "embeddings")


def _start(args, **env):
  return subprocess.Popen(
      [sys.executable, "-c", _WRAPPER, *args], cwd=REPO_ROOT,
      env=trainer_fixtures.child_env(**env),
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(processes):
  return trainer_fixtures.finish_processes(processes, TIMEOUT_S)


def _losses(model_dir):
  return np.array([r["loss"] for r in training_loop.read_train_log(model_dir)])


class DistributedTrainingTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.root = os.path.join(tf.compat.v1.test.get_temp_dir(),
                            "training_loop_test")
    cls.data_dir = os.path.join(cls.root, "data")
    _write_corpus(cls.data_dir)
    # 2 parts x 750 lines, batches of 20 groups: 74 steps.
    cls.common = ["--data_dir=" + cls.data_dir, "--embedding_dim=16",
                  "--batch_size=20", "--min_count=1", "--learning_rate=0.5",
                  "--num_epochs=1", "--checkpoint_every_steps=10",
                  "--log_every_steps=1", "--eval_every_steps=0", "--noexport"]
    cls._runs = {}

  def _train(self, name, extra_args, **env):
    """Runs the trainer once per name (cached across tests)."""
    if name not in self._runs:
      model_dir = os.path.join(self.root, name)
      (rc, out, err), = _finish(
          [_start(self.common + extra_args + ["--model_dir=" + model_dir],
                  **env)])
      self.assertEqual(rc, 0, err[-3000:])
      self._runs[name] = model_dir
    return self._runs[name]

  def _mirrored(self):
    return self._train("mirrored", ["--strategy=mirrored",
                                    "--num_cpu_devices=2"])

  def test_mirrored_on_two_cpus_matches_one_device(self):
    single = self._train("single", [])
    mirrored = self._mirrored()
    with open(os.path.join(mirrored, "model_config.json")) as f:
      self.assertEqual(json.load(f)["training"]["replicas"], 2)
    log = training_loop.read_train_log(mirrored)
    self.assertEqual([r["step"] for r in log], list(range(1, len(log) + 1)))
    self.assertGreater(len(log), 50)
    self.assertAllClose(_losses(single), _losses(mirrored), atol=1e-5)
    self.assertAllClose(
        [r["learning_rate"] for r in training_loop.read_train_log(single)],
        [r["learning_rate"] for r in log], rtol=1e-6)
    self.assertAllClose(_final_embeddings(single),
                        _final_embeddings(mirrored),
                        atol=1e-5)
    # Training did something: the loss went down.
    losses = _losses(mirrored)
    self.assertLess(losses[-10:].mean(), losses[:10].mean())

  def test_multi_worker_two_processes_end_with_identical_weights(self):
    model_dir = os.path.join(self.root, "multi_worker")
    results = _finish(trainer_fixtures.start_workers(
        _start, self.common + ["--model_dir=" + model_dir], self.root))
    for rc, _, err in results:
      self.assertEqual(rc, 0, err[-3000:])
    weights = [np.load(os.path.join(self.root, f"worker{i}.npz"))
               for i in range(2)]
    self.assertEqual(len(weights[0].files), 1)
    chief, other = weights[0]["arr_0"], weights[1]["arr_0"]
    self.assertAllEqual(chief, other)
    self.assertAllEqual(chief, _final_embeddings(model_dir))
    # Each worker read its own file: 2 x 37 batches of 10 groups, not 74.
    with open(os.path.join(model_dir, "corpus_stats.json")) as f:
      self.assertEqual(json.load(f)["key"]["input_pipelines"], 2)
    log = training_loop.read_train_log(model_dir)
    self.assertEqual(log[-1]["step"], len(log))
    # Only the chief keeps checkpoints.
    self.assertFalse(os.path.exists(
        os.path.join(model_dir, "workertemp_1", "checkpoints")))
    self.assertIn("step 1/", results[1][1])

  def test_sigkill_then_rerun_resumes_and_matches_uninterrupted_run(self):
    straight = self._mirrored()
    model_dir = os.path.join(self.root, "killed")
    args = self.common + ["--strategy=mirrored", "--num_cpu_devices=2",
                          "--model_dir=" + model_dir]
    (rc, out, _), = _finish([_start(args, TEST_KILL_AT_STEP="23")])
    self.assertEqual(rc, -signal.SIGKILL)
    self.assertIn("step 23/", out)
    # Lost: steps 21-23 (logged, not checkpointed).
    self.assertEqual(training_loop.read_train_log(model_dir)[-1]["step"], 23)
    self.assertEqual(tf.train.latest_checkpoint(
        os.path.join(model_dir, "checkpoints")).rsplit("-", 1)[1], "20")
    (rc, out, err), = _finish([_start(args)])
    self.assertEqual(rc, 0, err[-3000:])
    self.assertIn("resumed from", out)
    self.assertIn("at step 20", out)
    self.assertIn("skipping the 20 batches", out)
    total = len(training_loop.read_train_log(straight))
    self.assertIn(f"step {total}/{total}", out)
    resumed_log = training_loop.read_train_log(model_dir)
    self.assertEqual([r["step"] for r in resumed_log],
                     list(range(1, total + 1)))
    # The same batches in the same order: the same loss curve and weights.
    self.assertAllClose(_losses(straight), _losses(model_dir), atol=1e-5)
    self.assertAllClose(_final_embeddings(straight),
                        _final_embeddings(model_dir),
                        atol=1e-5)



class FetchStepMetricsTest(tf.test.TestCase):

  class _Remote:
    """A `RemoteValue` whose `fetch` returns `value` or raises it."""

    def __init__(self, value):
      self.value = value

    def fetch(self):
      if isinstance(value := self.value, Exception):
        raise value
      return value

  def test_metrics_of_a_step_whose_worker_died_are_lost_with_a_line(self):
    lines = []
    self.assertEqual(training_loop.fetch_step_metrics(
        3, self._Remote({"loss": 1.5}), lines.append), {"loss": 1.5})
    self.assertEqual(lines, [])
    # What copying the metrics off a killed worker raises (TF 2.21).
    dead = tf.errors.UnavailableError(
        None, None, "failed to connect to all addresses; last error: "
        "UNKNOWN: ipv4:127.0.0.1:56611: Connection refused\nmore")
    self.assertIsNone(training_loop.fetch_step_metrics(
        7, self._Remote(dead), lines.append))
    self.assertEqual(lines, [
        "step 7: metrics lost: its worker failed after the step (failed to "
        "connect to all addresses; last error: UNKNOWN: "
        "ipv4:127.0.0.1:56611: Connection refused)"])
    # Any other error is the run's failure.
    with self.assertRaises(tf.errors.InvalidArgumentError):
      training_loop.fetch_step_metrics(8, self._Remote(
          tf.errors.InvalidArgumentError(None, None, "bad")), lines.append)


class StepsPerCallTest(tf.test.TestCase):
  """`LoopConfig.steps_per_call`: several steps per graph call, in process."""

  def _run(self, model_dir, steps_per_call, total_steps=20, batches=23,
           eval_fn=None, **config):
    # The step adds its batch to `total` and counts itself: the sum shows
    # which batches ran, in which order they were consumed does not matter.
    total = tf.Variable(0, dtype=tf.int64)
    counter = tf.Variable(0, dtype=tf.int64)
    last = tf.Variable(-1, dtype=tf.int64)

    @tf.function
    def train_step(batch):
      total.assign_add(batch["x"])
      last.assign(batch["x"])
      counter.assign_add(1)
      return {"loss": tf.cast(batch["x"], tf.float32), "seen": counter}

    dataset = tf.data.Dataset.range(batches).map(lambda x: {"x": x})
    lines = []
    outcome = training_loop.run(
        model_dir,
        training_loop.LoopConfig(total_steps=total_steps,
                                 steps_per_call=steps_per_call, **config),
        dataset, train_step, counter,
        {"total": total, "counter": counter, "last": last}, log=lines.append,
        eval_fn=eval_fn)
    return outcome, int(total.numpy()), int(last.numpy()), lines

  def test_same_steps_logs_and_checkpoints_as_one_step_per_call(self):
    counts = []
    make_steps = training_loop.multi_step

    def counting_multi_step(*args, **kwargs):
      steps = make_steps(*args, **kwargs)

      def call(iterator, count):
        counts.append(int(count))
        return steps(iterator, count)

      return call

    runs = {}
    for steps_per_call in (1, 3):
      model_dir = os.path.join(self.get_temp_dir(), f"spc{steps_per_call}")
      with mock.patch.object(training_loop, "multi_step",
                             counting_multi_step):
        outcome, total, last, _ = self._run(
            model_dir, steps_per_call, log_every_steps=8,
            checkpoint_every_steps=10, max_checkpoints=5)
      self.assertEqual(outcome["step"], 20)
      self.assertEqual(total, sum(range(20)))
      self.assertEqual(last, 19)
      log = training_loop.read_train_log(model_dir)
      self.assertEqual([r["step"] for r in log], [8, 16, 20])
      # The logged metrics are those of the logged step.
      self.assertEqual([r["loss"] for r in log], [7.0, 15.0, 19.0])
      checkpoints = tf.train.get_checkpoint_state(
          os.path.join(model_dir, "checkpoints")).all_model_checkpoint_paths
      runs[steps_per_call] = [os.path.basename(p) for p in checkpoints]
    self.assertEqual(runs[3], runs[1])
    self.assertEqual(runs[3], ["ckpt-10", "ckpt-20"])
    # One step per call, then calls of up to 3 steps, cut at the log (8,
    # 16) and checkpoint (10) steps.
    self.assertEqual(counts, [1] * 20 + [3, 3, 2, 2, 3, 3, 3, 1])

  def test_freed_memory_is_released_between_calls_once_its_interval_passed(
      self):
    released = {}
    for seconds in (0.0, 3600.0):
      calls = []
      with mock.patch.object(resources, "release_free_memory",
                             lambda: calls.append(1)), \
          mock.patch.object(training_loop, "RELEASE_MEMORY_SECONDS", seconds):
        self._run(os.path.join(self.get_temp_dir(), f"every{seconds}"), 3,
                  log_every_steps=8, checkpoint_every_steps=10)
      released[seconds] = len(calls)
    # Calls of 3, 3, 2, 2, 3, 3, 3 and 1 steps (see above), then the final
    # checkpoint; no evaluation: a release after each call, or none.
    self.assertEqual(released, {0.0: 8, 3600.0: 0})

  def test_actions_run_after_every_call_of_the_steps(self):
    seen = []
    model_dir = os.path.join(self.get_temp_dir(), "actions")
    total = tf.Variable(0, dtype=tf.int64)
    counter = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def train_step(batch):
      total.assign_add(batch)
      counter.assign_add(1)
      return {"loss": tf.cast(batch, tf.float32)}

    training_loop.run(
        model_dir,
        training_loop.LoopConfig(total_steps=20, steps_per_call=3,
                                 log_every_steps=8, checkpoint_every_steps=10),
        tf.data.Dataset.range(23), train_step, counter, {"total": total},
        log=lambda line: None,
        actions=[lambda step, metrics: seen.append(
            (step, float(metrics["loss"])))])
    # The step and the metrics of the last step of each call.
    self.assertEqual(seen, [(3, 2.0), (6, 5.0), (8, 7.0), (10, 9.0),
                            (13, 12.0), (16, 15.0), (19, 18.0), (20, 19.0)])

  def test_step_threads_share_the_steps_and_the_input(self):
    # Two graph calls at once on one iterator: every call runs its count
    # of steps in all, no batch twice, and the loop logs and checkpoints
    # at the same steps as one thread.
    model_dir = os.path.join(self.get_temp_dir(), "threads")
    outcome, total, _, _ = self._run(
        model_dir, 4, step_threads=2, log_every_steps=8,
        checkpoint_every_steps=10, max_checkpoints=5)
    self.assertEqual(outcome["step"], 20)
    self.assertEqual(total, sum(range(20)))
    self.assertEqual([r["step"] for r in training_loop.read_train_log(
        model_dir)], [8, 16, 20])
    checkpoints = tf.train.get_checkpoint_state(
        os.path.join(model_dir, "checkpoints")).all_model_checkpoint_paths
    self.assertEqual([os.path.basename(p) for p in checkpoints],
                     ["ckpt-10", "ckpt-20"])
    # The input ends inside a call: the threads together ran what was left.
    outcome, total, _, _ = self._run(
        os.path.join(self.get_temp_dir(), "threads_short"), 4,
        step_threads=2, batches=11, log_every_steps=100)
    self.assertEqual(outcome["step"], 11)
    self.assertEqual(total, sum(range(11)))

  def test_multi_step_threads_count(self):
    counter = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def train_step(batch):
      counter.assign_add(batch)
      return {"loss": tf.cast(batch, tf.float32)}

    dataset = tf.data.Dataset.range(10)
    steps = training_loop.multi_step(train_step, dataset.element_spec,
                                     threads=3)
    iterator = iter(dataset)
    metrics, done = steps(iterator, tf.constant(7))
    self.assertEqual((int(done), int(counter.numpy())), (7, sum(range(7))))
    self.assertIn(float(metrics["loss"]), [float(x) for x in range(7)])
    _, done = steps(iterator, tf.constant(7))
    self.assertEqual((int(done), int(counter.numpy())), (3, sum(range(10))))
    _, done = steps(iterator, tf.constant(7))
    self.assertEqual(int(done), 0)

  def test_input_ending_inside_a_call(self):
    outcome, total, _, lines = self._run(
        os.path.join(self.get_temp_dir(), "short"), 5, total_steps=30,
        batches=23, log_every_steps=100)
    self.assertEqual(outcome["step"], 23)
    self.assertEqual(total, sum(range(23)))
    self.assertIn("input ended at step 23", lines)

  def test_evaluations_are_logged_and_trimmed_on_resume(self):
    model_dir = os.path.join(self.get_temp_dir(), "evals")
    calls = []

    def eval_fn():
      calls.append(1)
      return {"score": float(len(calls)), "ranking": np.float32(0.5)}

    first, *_ = self._run(model_dir, 1, eval_every_steps=5,
                          checkpoint_every_steps=5, max_steps_per_run=7,
                          eval_fn=eval_fn)
    self.assertTrue(first["interrupted"])
    log = training_loop.read_train_log(model_dir,
                                       model_dir_lib.EVAL_LOG_FILE)
    self.assertEqual(log, [{"step": 5, "score": 1.0, "ranking": 0.5}])
    # A record of a step after the last checkpoint (7) is dropped on
    # resume, like the training log's.
    with open(os.path.join(model_dir, model_dir_lib.EVAL_LOG_FILE), "a") as f:
      f.write(json.dumps({"step": 9, "score": -1.0}) + "\n")
    self._run(model_dir, 1, eval_every_steps=5, checkpoint_every_steps=5,
              eval_fn=eval_fn)
    log = training_loop.read_train_log(model_dir,
                                       model_dir_lib.EVAL_LOG_FILE)
    # The last step is evaluated once, and a rerun of the finished run
    # does not evaluate again.
    self.assertEqual([r["step"] for r in log], [5, 10, 15, 20])
    self._run(model_dir, 1, eval_every_steps=5, eval_fn=eval_fn)
    self.assertLen(training_loop.read_train_log(
        model_dir, model_dir_lib.EVAL_LOG_FILE), 4)

  def test_interrupted_run_resumes_with_the_next_batch(self):
    model_dir = os.path.join(self.get_temp_dir(), "resume")
    first, total, last, _ = self._run(model_dir, 4, max_steps_per_run=7,
                                      log_every_steps=100)
    self.assertTrue(first["interrupted"])
    self.assertEqual((first["step"], total, last), (7, sum(range(7)), 6))
    second, total, last, _ = self._run(model_dir, 4, log_every_steps=100)
    self.assertFalse(second["interrupted"])
    self.assertEqual((second["step"], total, last), (20, sum(range(20)), 19))

  def test_full_disk_is_a_plain_error_and_the_rerun_resumes(self):
    model_dir = os.path.join(self.get_temp_dir(), "full_disk")
    checkpoints = os.path.join(model_dir, "checkpoints")
    save = tf.train.CheckpointManager.save

    def save_until_full(manager, checkpoint_number=None):
      if checkpoint_number == 10:
        # As SaveV2 on a full disk: part of the checkpoint written, then
        # the error.
        os.makedirs(os.path.join(checkpoints, "ckpt-10_temp"))
        raise tf.errors.ResourceExhaustedError(
            None, None, "ckpt-10_temp/part-00000; No space left on device")
      return save(manager, checkpoint_number=checkpoint_number)

    with mock.patch.object(tf.train.CheckpointManager, "save",
                           save_until_full):
      with self.assertRaises(errors.UserError) as raised:
        self._run(model_dir, 1, checkpoint_every_steps=5)
    message = str(raised.exception)
    self.assertRegex(message, "^no space left on device writing checkpoint "
                     f"ckpt-10 in {checkpoints} \\(each takes [0-9.]+ KB, ")
    self.assertIn("--max_checkpoints=3): make room or lower "
                  "--max_checkpoints, then rerun the same command to resume "
                  f"from {os.path.join(checkpoints, 'ckpt-5')}", message)
    self.assertEqual(sorted(os.listdir(checkpoints)),
                     ["checkpoint", "ckpt-5.data-00000-of-00001",
                      "ckpt-5.index"])
    outcome, total, last, _ = self._run(model_dir, 1,
                                        checkpoint_every_steps=5)
    self.assertEqual((outcome["step"], total, last),
                     (20, sum(range(20)), 19))

  def test_a_non_finite_loss_stops_before_its_step_is_saved(self):
    model_dir = os.path.join(self.get_temp_dir(), "diverges")
    counter = tf.Variable(0, dtype=tf.int64)
    weight = tf.Variable(1.0)

    @tf.function
    def train_step(batch):
      counter.assign_add(1)
      # From step 13 on the "update" is NaN, as a too high learning rate
      # makes it.
      weight.assign(tf.where(counter >= 13, np.nan, weight + 1.0))
      return {"loss": weight * tf.cast(batch["x"], tf.float32)}

    dataset = tf.data.Dataset.range(30).map(lambda x: {"x": x})
    with self.assertRaises(errors.UserError) as raised:
      training_loop.run(
          model_dir, training_loop.LoopConfig(total_steps=20,
                                              checkpoint_every_steps=5),
          dataset, train_step, counter, {"counter": counter,
                                         "weight": weight},
          log=lambda line: None)
    checkpoints = os.path.join(model_dir, "checkpoints")
    self.assertIn("training diverged at step 13", str(raised.exception))
    self.assertIn(os.path.join(checkpoints, "ckpt-10"), str(raised.exception))
    self.assertEqual(tf.train.latest_checkpoint(checkpoints),
                     os.path.join(checkpoints, "ckpt-10"))
    reader = tf.train.load_checkpoint(checkpoints)
    self.assertTrue(np.isfinite(reader.get_tensor(
        "weight/.ATTRIBUTES/VARIABLE_VALUE")))

  def test_warns_when_the_next_checkpoint_would_not_fit(self):
    model_dir = os.path.join(self.get_temp_dir(), "nearly_full")
    with mock.patch.object(disk_errors, "free_bytes", return_value=0):
      _, _, _, lines = self._run(model_dir, 1, checkpoint_every_steps=10)
    warnings = [line for line in lines if line.startswith("warning:")]
    self.assertLen(warnings, 2)  # After ckpt-10 and ckpt-20.
    self.assertRegex(warnings[0], "^warning: the next checkpoint will not "
                     "fit: each takes [0-9.]+ KB, 0 bytes free in ")
    _, _, _, lines = self._run(os.path.join(self.get_temp_dir(), "room"), 1,
                               checkpoint_every_steps=10)
    self.assertEmpty([line for line in lines if "will not fit" in line])


if __name__ == "__main__":
  tf.test.main()
