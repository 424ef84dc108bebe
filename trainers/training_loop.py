"""The training loop every trainer shares: steps, checkpoints, resume, logs.

What it guarantees:
- Resume: a checkpoint holds the model, the optimizer (its iteration count
  drives the learning-rate schedule) and the input position, so a restarted
  run continues with the next batch it would have seen. On one device the
  input iterator itself is checkpointed; under a `tf.distribute` strategy
  (whose distributed iterators TF 2.21 cannot checkpoint) the number of
  consumed batches is, and the deterministic input is skipped ahead by that
  many batches on resume.
- Interruption: SIGINT/SIGTERM finish the current step, write a checkpoint
  and stop; a second signal stops at once. With several workers SIGTERM is
  handled cluster-wide by `tf.distribute.experimental.
  PreemptionCheckpointHandler`: every worker checkpoints at the same step and
  stops (see docs/distributed.md).
- Progress: a console line with rate and ETA, TensorBoard scalars, a
  machine-readable loss curve `train_log.jsonl` (one JSON object per logged
  step: step, loss, learning_rate, the other metrics), and an optional
  periodic evaluation (e.g. STS dev correlation).

Every run is under a `tf.distribute` strategy (TensorFlow's default
strategy on one device, as TF Model Garden's `train_lib`): `train_step` is
the per-replica step, run with `strategy.run`; each metric it returns must
be the replica's contribution to the global value, so that the SUM over
replicas is that value (e.g. the loss as
`tf.nn.compute_average_loss(per_example)`: per-replica sum / global
batch). The global batch is per-replica batch x
`strategy.num_replicas_in_sync`. Only the chief writes to `model_dir`;
other workers write to `model_dir/workertemp_<task id>`
(`distribution.worker_dir`), which is scratch.

Parameter servers (a `tf.distribute.ParameterServerStrategy`; only the chief
runs this loop, the workers and parameter servers only serve): `dataset` is
one device's dataset of whole batches, read on the chief, and `train_step`
a tf.function taking one batch (one device's step). Every batch is handed
to `ClusterCoordinator.schedule` with its step, so the steps are one
device's sequence of batches, whichever worker runs each; at most
`2 x workers` steps are in flight. A step that was running on a worker that
died is run again, with the same batch, on another worker (TensorFlow may
already have applied part of its updates: at least once, not exactly
once). Before every checkpoint, evaluation and stop the chief waits for
every scheduled step (`coordinator.join`) and sets the step counter to the
steps scheduled, so a checkpoint holds the tables after exactly the batches
its input position (the chief's iterator) has consumed. Logged metrics are
those each logged step returned (fetched in step order). A step's metrics
stay on its worker until the chief fetches them: if that worker dies in
between, the step's update is applied but its metrics are gone, and the
chief prints "step N: metrics lost ..." instead of logging them.
"""

import collections
import concurrent.futures
import dataclasses
import json
import math
import os
import signal
import sys
import time
from typing import Callable, Mapping, Optional, Sequence

import tensorflow as tf

from sentzoo.common import disk_errors
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.common import non_finite
from sentzoo.common import resources
from sentzoo.trainers import checkpoint_restore
from sentzoo.trainers import distribution

# Name of the checkpointed count of distributed batches consumed.
INPUT_POSITION = "input_batches"


@dataclasses.dataclass
class LoopConfig:
  """How long to train and how often to checkpoint, log and evaluate."""
  total_steps: int
  checkpoint_every_steps: int = 2000
  log_every_steps: int = 100
  eval_every_steps: int = 0  # 0: only at the end.
  max_checkpoints: int = 3
  unit_name: str = "examples"  # What a batch is counted in, for rates.
  units_per_step: int = 1
  # Stop (checkpointed, as if interrupted) after this many steps of this
  # invocation; 0: no limit. For time-sliced jobs; rerunning resumes.
  max_steps_per_run: int = 0
  # Steps run per call of one tf.function looping over the iterator in the
  # graph (`multi_step`), sparing the Python dispatch of every step (fast
  # steps of small batches spend a good part of their time there). Calls
  # stop at log, checkpoint and eval steps, so those happen at the same
  # steps whatever this is.
  steps_per_call: int = 1
  # steps_per_call > 1 on one device: graph calls running at once, each from
  # its own thread on the shared iterator (`multi_step(threads=...)`); the
  # train step must make concurrent updates add up.
  step_threads: int = 1


def _checkpoint_bytes(path: str) -> int:
  """Bytes on disk of checkpoint `path` (its index and data files)."""
  return sum(tf.io.gfile.stat(name).length
             for name in tf.io.gfile.glob(path + ".*"))


def _save_checkpoint(manager, step: int, log: Callable[[str], None],
                    max_checkpoints: int) -> str:
  """`manager.save(checkpoint_number=step)`, with a full disk made plain.

  A save that finds the disk full removes what it had written (the partial
  `ckpt-<step>_temp` folder), keeps the checkpoints before it, and raises a
  `UserError` naming the folder, the checkpoint size and the free space.
  After a save, a warning says when the free space left would not hold the
  next one (it is written before the oldest is deleted), while there is
  still time to make room.
  """
  try:
    path = manager.save(checkpoint_number=step)
  except (tf.errors.ResourceExhaustedError, OSError) as e:
    if "No space left on device" not in str(e):
      raise
    partial = os.path.join(manager.directory, f"ckpt-{step}_temp")
    if tf.io.gfile.exists(partial):
      tf.io.gfile.rmtree(partial)
    previous = manager.latest_checkpoint
    each = (f"each takes {disk_errors.size_text(_checkpoint_bytes(previous))}"
            ", " if previous else "")
    free = disk_errors.size_text(disk_errors.free_bytes(manager.directory))
    raise errors.UserError(
        f"no space left on device writing checkpoint ckpt-{step} in "
        f"{manager.directory} ({each}{free} free, "
        f"--max_checkpoints={max_checkpoints}): make room"
        f"{' or lower --max_checkpoints' if max_checkpoints > 1 else ''}, "
        "then rerun the same command to resume from "
        f"{previous or 'the start'}") from None
  if "://" not in path:  # A local disk (statvfs).
    size = _checkpoint_bytes(path)
    free = disk_errors.free_bytes(manager.directory)
    if free < size:
      log("warning: the next checkpoint will not fit: each takes "
          f"{disk_errors.size_text(size)}, {disk_errors.size_text(free)} "
          f"free in {manager.directory}")
  return path


class _StopRequest:
  """Turns the first SIGINT/SIGTERM into a request to stop after this step."""

  def __init__(self, signals=(signal.SIGINT, signal.SIGTERM)):
    self.requested = False
    self._signals = signals
    self._previous = {}

  def __enter__(self):
    for sig in self._signals:
      try:
        self._previous[sig] = signal.signal(sig, self._handle)
      except ValueError:  # Not in the main thread: leave signals alone.
        pass
    return self

  def _handle(self, signum, frame):
    if self.requested:
      # Stop at once: the handler outside the loop raises the
      # KeyboardInterrupt (a command's, common/interrupts.py, then ignores
      # every later signal).
      previous = self._previous.get(signum, signal.SIG_DFL)
      signal.signal(signum, previous)
      if callable(previous):
        previous(signum, frame)
        return
      raise KeyboardInterrupt
    self.requested = True
    print("\nstop requested: checkpointing after this step "
          "(signal again to stop at once)", file=sys.stderr, flush=True)

  def __exit__(self, *exc):
    for sig, handler in self._previous.items():
      signal.signal(sig, handler)


def _format_seconds(seconds):
  seconds = int(seconds)
  if seconds >= 3600:
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
  if seconds >= 60:
    return f"{seconds // 60}m{seconds % 60:02d}s"
  return f"{seconds}s"


def _trim_train_log(path, last_step):
  """Keeps the records of steps <= last_step (drops those a crash lost)."""
  if not os.path.exists(path):
    return
  kept = []
  with open(path) as f:
    for line in f:
      try:
        if json.loads(line)["step"] <= last_step:
          kept.append(line)
      except (ValueError, KeyError):
        pass  # A line cut short by a crash.
  with open(path, "w") as f:
    f.writelines(kept)


def read_train_log(model_dir: str,
                   name: str = model_dir_lib.TRAIN_LOG_FILE):
  """The loss curve a run wrote (or, with name=model_dir_lib.EVAL_LOG_FILE,
  its evaluations): list of dicts (step, loss, ...)."""
  with open(os.path.join(model_dir, name)) as f:
    return [json.loads(line) for line in f if line.strip()]


def multi_step(train_step, element_spec, threads=1):
  """Runs up to `count` steps of `train_step` in one graph call.

  Args:
    train_step: batch -> dict of scalar metrics (a tf.function or a Python
      function; traced once here for its output structure).
    element_spec: the structure of the batches (`dataset.element_spec`).
    threads: > 1: that many calls of the graph run at once, from their own
      Python threads, each taking its batches from the shared iterator
      and running its share of the `count` steps (Hogwild, as the C++
      Sent2Vec code's threads: the steps read and update the same
      variables without waiting for each other, so `train_step` must make
      concurrent updates add up, and the run is not deterministic). A
      graph call releases the GIL, so the calls keep several cores busy
      where one step's ops alone leave them idle.

  Returns:
    A callable (iterator, count: int32 []) -> (metrics of the last step
    run, number of steps run): fewer than `count` only when the iterator
    ends (0: it had ended already). With threads > 1 the metrics are those
    of the last step of the last thread that ran one, and every call
    returns once all its threads are done, so the variables are settled
    between calls (the loop checkpoints there).
  """
  if not isinstance(train_step, tf.types.experimental.PolymorphicFunction):
    train_step = tf.function(train_step)
  outputs = train_step.get_concrete_function(element_spec).structured_outputs
  zeros = tf.nest.map_structure(lambda t: tf.zeros(t.shape, t.dtype), outputs)
  steps = tf.function(_step_loop(train_step, zeros))
  if threads <= 1:
    return steps
  pool = concurrent.futures.ThreadPoolExecutor(
      threads, thread_name_prefix="train_step")

  def concurrent_steps(iterator, count):
    count = int(count)
    shares = [count // threads + (i < count % threads)
              for i in range(threads)]
    results = [future.result() for future in [
        pool.submit(steps, iterator, tf.constant(share, tf.int32))
        for share in shares if share]]
    # A thread that ran no step returns zeros: keep a real step's metrics.
    ran = [metrics for metrics, done in results if int(done)] or [zeros]
    return ran[-1], tf.constant(sum(int(done) for _, done in results))

  return concurrent_steps


def _step_loop(step_fn, first_metrics):
  """(iterator, count) -> (metrics of the last step run, or `first_metrics`
  if none ran; steps run): `step_fn` on the iterator's batches until
  `count` steps ran or the input ended. One call of `step_fn` per step
  when run eagerly; one graph loop inside `tf.function`."""

  def steps(iterator, count):
    metrics, done = first_metrics, tf.constant(0)
    while done < count:
      # Agreed by all workers: stops everyone if any input ended.
      batch = iterator.get_next_as_optional()
      if not batch.has_value():
        break
      metrics = step_fn(batch.get_value())
      done += 1
    return metrics, done

  return steps


def _next_stop(step, config, first_step):
  """The first step after `step` at which the loop must regain control."""
  stops = [config.total_steps,
           (step // config.log_every_steps + 1) * config.log_every_steps,
           (step // config.checkpoint_every_steps + 1)
           * config.checkpoint_every_steps]
  if config.eval_every_steps:
    stops.append((step // config.eval_every_steps + 1)
                 * config.eval_every_steps)
  if config.max_steps_per_run:
    stops.append(first_step + config.max_steps_per_run)
  return min(stops)


def distribute(strategy, dataset, skip_batches=0):
  """Distributes `dataset` (a Dataset of global batches, or a function of a
  `tf.distribute.InputContext` returning per-replica batches) with the first
  `skip_batches` steps' batches skipped."""
  if isinstance(dataset, tf.data.Dataset):
    return strategy.experimental_distribute_dataset(
        dataset.skip(skip_batches) if skip_batches else dataset)

  def dataset_fn(input_context):
    # Every step takes one batch per local replica from this pipeline.
    per_step = distribution.replicas_per_pipeline(input_context)
    pipeline = dataset(input_context)
    return pipeline.skip(skip_batches * per_step) if skip_batches else pipeline

  return strategy.distribute_datasets_from_function(dataset_fn)


def fetch_step_metrics(step, remote, log):
  """Parameter servers: the metrics of `step` (its `RemoteValue`), fetched
  to the chief; None, with a "metrics lost" line, if the worker that ran
  the step died before they were copied (the step's update is applied).

  A step that fails because its worker dies is run again on another worker
  and does not raise here; a dead parameter server stops the run at the
  next `schedule` or `join`.
  """
  try:
    return remote.fetch()
  except tf.errors.UnavailableError as e:
    log(f"step {step}: metrics lost: its worker failed after the step "
        f"({str(e).splitlines()[0]})")
    return None


def run(model_dir: str,
        config: LoopConfig,
        dataset,
        train_step: Callable[[tf.Tensor], Mapping[str, tf.Tensor]],
        step_counter: tf.Variable,
        checkpoint_items: Mapping[str, object],
        learning_rate_fn: Optional[Callable[[], float]] = None,
        eval_fn: Optional[Callable[[], Mapping[str, float]]] = None,
        log=print,
        strategy: Optional[tf.distribute.Strategy] = None,
        actions: Sequence[Callable[[int, Mapping[str, tf.Tensor]], None]] = (),
        ) -> dict:
  """Trains until `config.total_steps`, resuming from `model_dir` if it can.

  Args:
    model_dir: holds `checkpoints/`, `tensorboard/` and `train_log.jsonl`.
    config: the loop's settings.
    dataset: yields the batches `train_step` takes; it may end early. With
      `strategy`: either a `tf.data.Dataset` of global batches (split across
      replicas by `experimental_distribute_dataset`) or a function
      `input_context -> tf.data.Dataset` of per-replica batches (see
      `trainers.distribution`); either must be deterministic, since resuming
      skips the batches already consumed.
    train_step: batch -> dict of scalar metrics (at least "loss"). With
      `strategy`: the per-replica step (see the module docstring).
    step_counter: int variable the step increments (e.g. the optimizer's
      `iterations`); saved in the checkpoint, read for the step number.
    checkpoint_items: trackables to checkpoint besides the input position.
    learning_rate_fn: returns the current learning rate, for logs.
    eval_fn: returns a dict of scalars to log; called every
      `eval_every_steps` and at the end.
    log: where progress lines go.
    strategy: the `tf.distribute.Strategy` the model and optimizer were
      built under (default: TensorFlow's default strategy, one device).
    actions: each called as action(step, metrics) after every call of the
      steps (at the latest at every log, checkpoint and evaluation step), as
      orbit's train actions: what a run adds to the loop without changing it.

  Returns:
    dict with "step", "interrupted", "preempted" and the last metrics and
    evaluation.
  """
  strategy = strategy or tf.distribute.get_strategy()
  out_dir = distribution.worker_dir(model_dir, strategy)
  read_checkpoints = os.path.join(model_dir, model_dir_lib.CHECKPOINT_SUBDIR)
  write_checkpoints = os.path.join(out_dir, model_dir_lib.CHECKPOINT_SUBDIR)
  parameter_server = distribution.is_parameter_server(strategy)
  # Synchronous workers (MultiWorkerMirroredStrategy): every worker runs
  # this loop, in step with the others.
  multi_worker = distribution.is_multi_worker(strategy) and not parameter_server
  # TensorFlow's default strategy (one device) hands out the dataset itself,
  # whose iterator a checkpoint can hold; a distributed iterator it cannot,
  # so the number of consumed batches is checkpointed instead.
  one_device = distribution.is_one_device(strategy)
  consumed = None
  if parameter_server or one_device:
    iterator = iter(dataset if parameter_server
                    else distribute(strategy, dataset))
    items = dict(iterator=iterator, **checkpoint_items)
  else:
    consumed = tf.Variable(0, dtype=tf.int64, trainable=False,
                           name=INPUT_POSITION)
    items = {INPUT_POSITION: consumed, **checkpoint_items}
  checkpoint = tf.train.Checkpoint(**items)
  manager = tf.train.CheckpointManager(
      checkpoint, write_checkpoints, max_to_keep=config.max_checkpoints)
  preemption = None
  preempted = []
  step = int(step_counter.numpy())
  if multi_worker:
    # Watches SIGTERM on every worker; when one gets it, all checkpoint at
    # the same step (through our manager) and the loop stops.
    preemption = tf.distribute.experimental.PreemptionCheckpointHandler(
        strategy.cluster_resolver, checkpoint, read_checkpoints,
        termination_config=tf.distribute.experimental.TerminationConfig(
            exit_fn=lambda: preempted.append(True),
            save_fn=lambda: _save_checkpoint(manager, step, log,
                                             config.max_checkpoints)))
  latest = None  # The checkpoint restored.
  for path in model_dir_lib.checkpoints_newest_first(model_dir):
    try:
      # Large tables are read into their variables slice by slice, not
      # copied (`checkpoint_restore`).
      status = checkpoint_restore.restore(checkpoint, items, path)
      if not multi_worker:
        status.assert_existing_objects_matched()
    except Exception as e:  # pylint: disable=broad-except
      # A damaged newest checkpoint: the one before it is as good a start.
      log(f"warning: cannot restore {path} ({model_dir_lib.first_line(e)}); "
          "trying the checkpoint before it")
      continue
    log(f"resumed from {path} at step {int(step_counter.numpy())}")
    latest = path
    break
  else:
    if model_dir_lib.checkpoints_newest_first(model_dir):
      raise errors.UserError(
          f"no checkpoint in {read_checkpoints!r} can be restored: move the "
          "folder away to train from the start")
  coordinator = None
  if parameter_server:
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    num_workers = len(distribution.cluster_task(strategy)[2].get("worker", []))
    max_in_flight = 2 * max(1, num_workers)
    # (step, RemoteValue of its metrics), oldest first.
    in_flight = collections.deque()
  else:
    if consumed is not None:
      skip = int(consumed.numpy())
      if skip:
        log(f"skipping the {skip} batches consumed before the checkpoint")
      iterator = iter(distribute(strategy, dataset, skip))

    def distributed_step(batch):
      per_replica = strategy.run(train_step, args=(batch,))
      return {name: strategy.reduce(tf.distribute.ReduceOp.SUM, value,
                                    axis=None)
              for name, value in per_replica.items()}

    if one_device:
      run_steps = multi_step(distributed_step, iterator.element_spec,
                             threads=config.step_threads)
    else:
      # A distributed iterator's optional does not survive a graph loop
      # (TF 2.21): one call per step.
      run_steps = _step_loop(tf.function(
          distributed_step, input_signature=[iterator.element_spec]), {})

  writer = disk_errors.summary_writer(os.path.join(out_dir, "tensorboard"))
  step = int(step_counter.numpy())
  train_log_path = os.path.join(out_dir, model_dir_lib.TRAIN_LOG_FILE)
  eval_log_path = os.path.join(out_dir, model_dir_lib.EVAL_LOG_FILE)
  for path in (train_log_path, eval_log_path):
    _trim_train_log(path, step if latest else -1)
  first_step = step
  saved_step = None  # The step of the last checkpoint this run wrote.
  metrics, evaluation, interrupted = {}, {}, False
  window_start, window_step = time.time(), step
  rate = None
  # The step last evaluated (a rerun of a finished run does not evaluate
  # again, and the last step is not evaluated twice).
  evaluated_step = max((r["step"] for r in read_train_log(
      out_dir, model_dir_lib.EVAL_LOG_FILE)), default=None) if os.path.exists(
          eval_log_path) else None

  def write_log(step, metrics):
    """The train_log.jsonl record, TensorBoard scalars and console line of
    `step` (its metrics)."""
    nonlocal window_start, window_step, rate
    now = time.time()
    rate = (step - window_step) / max(now - window_start, 1e-9)
    window_start, window_step = now, step
    values = {k: float(v) for k, v in metrics.items()}
    if learning_rate_fn is not None and "learning_rate" not in values:
      values["learning_rate"] = float(learning_rate_fn())
    with writer.as_default(step=step):
      for name, value in values.items():
        tf.summary.scalar(f"train/{name}", value)
      tf.summary.scalar(f"train/{config.unit_name}_per_second",
                        rate * config.units_per_step)
    train_log.write(json.dumps({"step": step, **values}) + "\n")
    train_log.flush()
    # What the steps since the last log freed and did not reuse (a new
    # shape's XLA compilation, the input pipeline's blocks) goes back to the
    # system: otherwise it stays resident until the next evaluation.
    resources.release_free_memory()
    eta = (config.total_steps - step) / max(rate, 1e-9)
    log(f"step {step}/{config.total_steps} "
        f"({100.0 * step / config.total_steps:.1f}%) "
        + " ".join(f"{k} {v:.4g}" for k, v in values.items())
        + f" {rate * config.units_per_step:,.0f} {config.unit_name}/s"
        f" ETA {_format_seconds(eta)}")

  def is_log_step(step):
    return step % config.log_every_steps == 0 or step == config.total_steps

  def finish_in_flight(keep):
    """Parameter servers: fetches the metrics of the oldest steps in flight
    (waiting for them) until `keep` remain, logging the log steps among
    them; returns the last metrics fetched (None if none)."""
    fetched = None
    while len(in_flight) > keep:
      done_step, remote = in_flight.popleft()
      step_metrics = fetch_step_metrics(done_step, remote, log)
      if step_metrics is None:
        continue
      fetched = step_metrics
      if is_log_step(done_step):
        write_log(done_step, fetched)
    return fetched

  def settle():
    """Parameter servers: waits for every scheduled step; the counter then
    counts the batches consumed (a step run twice after a worker failure
    incremented it twice)."""
    nonlocal metrics
    fetched = finish_in_flight(0)
    if fetched is not None:
      metrics = fetched
    coordinator.join()
    step_counter.assign(step)

  def evaluate():
    nonlocal evaluation, evaluated_step
    if eval_fn is None or evaluated_step == step:
      return
    evaluated_step = step
    # What training and the last evaluation freed goes back before this
    # one, and what this one freed after it: the peak is then training's
    # working set plus one evaluation's (common/resources.py).
    resources.release_free_memory()
    evaluation = dict(eval_fn())
    resources.release_free_memory()
    with writer.as_default(step=step):
      for name, value in evaluation.items():
        tf.summary.scalar(f"eval/{name}", value)
    with open(eval_log_path, "a") as eval_log:
      eval_log.write(json.dumps(
          {"step": step, **{k: float(v) for k, v in evaluation.items()}})
                     + "\n")
    log(f"step {step}: " + ", ".join(
        f"{k} {v:.4f}" for k, v in sorted(evaluation.items())))

  # Several workers: a local stop would leave the others waiting in a
  # collective, so SIGTERM goes to the preemption handler, SIGINT is not
  # caught.
  signals = () if multi_worker else (signal.SIGINT, signal.SIGTERM)
  with _StopRequest(signals) as stop, open(train_log_path, "a") as train_log:
    while step < config.total_steps:
      if coordinator is not None:
        try:
          batch = next(iterator)
        except StopIteration:
          settle()
          log(f"input ended at step {step}")
          break
        step += 1
        in_flight.append((step, coordinator.schedule(train_step,
                                                     args=(batch,))))
        finish_in_flight(max_in_flight)
        if (step % config.checkpoint_every_steps == 0
            or (config.eval_every_steps
                and step % config.eval_every_steps == 0)
            or step == config.total_steps or stop.requested
            or (config.max_steps_per_run
                and step - first_step >= config.max_steps_per_run)):
          settle()
      else:
        count = min(config.steps_per_call,
                    _next_stop(step, config, first_step) - step)
        step_metrics, done = run_steps(iterator,
                                       tf.constant(count, tf.int32))
        if int(done) == 0:
          log(f"input ended at step {step}")
          break
        metrics = step_metrics
        if consumed is not None:
          consumed.assign_add(tf.cast(done, tf.int64))
        step = int(step_counter.numpy())
        # Diverged: stop before this step is logged or saved, so that the
        # last checkpoint stays a finite one.
        if "loss" in metrics:
          loss = float(metrics["loss"])
          non_finite.check_step(step, math.isfinite(loss), loss,
                                manager.latest_checkpoint)
        if is_log_step(step):
          write_log(step, metrics)
      for action in actions:
        action(step, metrics)
      if step % config.checkpoint_every_steps == 0:
        _save_checkpoint(manager, step, log, config.max_checkpoints)
        saved_step = step
      if config.eval_every_steps and step % config.eval_every_steps == 0:
        evaluate()
      if preemption is not None:
        preemption.save_checkpoint_if_preempted()
        if preempted:
          log(f"preempted: checkpointed at step {step} on every worker")
          interrupted = True
          break
      if stop.requested or (config.max_steps_per_run and
                            step - first_step >= config.max_steps_per_run):
        interrupted = True
        break
    if coordinator is not None:
      settle()  # Every step done (already, unless the input ended early).
    # Not twice at one step: a large model's checkpoint takes seconds to
    # write (6.1 GB for Sent2Vec uni+bi). Still under the stop request: a
    # first signal here lets the save finish, a second stops at once.
    if not preempted and saved_step != step:
      _save_checkpoint(manager, step, log, config.max_checkpoints)
    # A signal during the last steps' save: the run stops (exit 75) before
    # it evaluates and exports; its rerun does those.
    interrupted = interrupted or stop.requested
  if preemption is not None:
    # Once every worker is here (a one-number all-reduce), release the
    # handler's thread that waits for a peer's preemption notice, so that it
    # does not fail noisily when the first worker exits.
    strategy.reduce(tf.distribute.ReduceOp.SUM,
                    strategy.run(lambda: tf.ones([])), axis=None)
    # pylint: disable-next=protected-access
    preemption._stop_cluster_wise_termination_watcher_thread()
  if not interrupted:
    evaluate()
  writer.flush()
  if out_dir != model_dir and tf.io.gfile.exists(write_checkpoints):
    # A non-chief worker's checkpoints only served to take part in saving.
    tf.io.gfile.rmtree(write_checkpoints)
  return {"step": step, "interrupted": interrupted,
          "preempted": bool(preempted),
          "metrics": {k: float(v) for k, v in metrics.items()},
          "evaluation": evaluation, "steps_per_second": rate}
