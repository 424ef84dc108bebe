"""The training loop every trainer shares: steps, checkpoints, resume, logs.

- Resume: a checkpoint holds the model, the optimizer and the input
  position, so a restarted run continues with the batch it would have seen
  next. On one device the input iterator itself is checkpointed; a
  distributed iterator cannot be (TF 2.21), so the count of consumed
  batches is, and the deterministic input is skipped ahead on resume.
- Interruption: the first SIGINT/SIGTERM checkpoints after the current step
  and stops; a second stops at once. With several workers SIGTERM goes to
  `PreemptionCheckpointHandler`: all checkpoint at one step and stop.
- Progress: a console line with rate and ETA, TensorBoard scalars,
  train_log.jsonl and eval_log.jsonl.

`train_step` is the per-replica step, run with `strategy.run` (TensorFlow's
default strategy on one device); each metric is the replica's share, so
that the SUM over replicas is the global value (e.g.
`tf.nn.compute_average_loss`). Only the chief writes `model_dir`; other
workers write scratch in `distribution.worker_dir`.

Parameter servers (only the chief runs this loop): `dataset` is one
device's batches, read on the chief, and every batch goes to
`ClusterCoordinator.schedule` with its step, at most 2 x workers in
flight. A step whose worker died is run again on another (at least once,
not exactly once). Before every checkpoint, evaluation and stop the chief
waits for every scheduled step and sets the step counter to the steps
scheduled, so a checkpoint matches its input position. A step whose
worker dies before its metrics are fetched logs "metrics lost".
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
  # Stop, checkpointed as if interrupted, after this many steps of this
  # invocation (0: no limit).
  max_steps_per_run: int = 0
  # Steps per call of one graph loop (`multi_step`): spares small steps
  # the Python dispatch. Calls stop at log, checkpoint and eval steps.
  steps_per_call: int = 1
  # One device: graph calls at once on the shared iterator (Hogwild).
  step_threads: int = 1


def _checkpoint_bytes(path: str) -> int:
  """Bytes on disk of checkpoint `path` (its index and data files)."""
  return sum(tf.io.gfile.stat(name).length
             for name in tf.io.gfile.glob(path + ".*"))


def _save_checkpoint(manager, step: int, log: Callable[[str], None],
                    max_checkpoints: int) -> str:
  """`manager.save(checkpoint_number=step)`. A full disk removes the
  partial save and raises a `UserError` with the sizes; a warning comes
  while there is still time, when the next save would not fit (it is
  written before the oldest is deleted)."""
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
  """The records of train_log.jsonl (or of `name`, e.g. eval_log.jsonl)."""
  with open(os.path.join(model_dir, name)) as f:
    return [json.loads(line) for line in f if line.strip()]


def multi_step(train_step, element_spec, threads=1):
  """(iterator, count: int32 []) -> (metrics of the last step run, steps
  run): up to `count` steps of `train_step` in one graph call, fewer only
  when the input ends.

  threads > 1: that many graph calls at once from their own Python threads
  (a graph call releases the GIL), sharing the iterator and the `count`
  steps: Hogwild, as the C++ Sent2Vec code's threads, so `train_step` must
  make concurrent updates add up and the run is not deterministic. A call
  returns once all its threads are done, so the loop checkpoints settled
  variables.
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
  """(iterator, count) -> (metrics of the last step, or `first_metrics` if
  none ran; steps run) of `step_fn` until `count` steps or the input's
  end."""

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


# Between graph calls, the memory the steps freed goes back to the system at
# most this often. glibc keeps what TensorFlow's threads free in its arenas,
# the steps' temporaries touch it again, and each XLA compilation and
# evaluation lands on top of it. Siamese CBOW's trainer (best flagfile, 1
# epoch, alternating runs on a quiet machine) peaked at 1,011-1,020 MB
# without, 985-999 MB with a call each second (~90 calls of ~7 ms; one after
# every 16-step graph call would be ~2,300). Later, with the imports trimmed
# (common/resources.py): 907-951 MB (5 runs) at 1 s, 911-916 MB (3 runs) at
# 0.5 s, the same median groups/s.
RELEASE_MEMORY_SECONDS = 0.5


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
  """`dataset` (global batches, or input_context -> per-replica batches)
  distributed, the first `skip_batches` steps' batches skipped."""
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
  """Parameter servers: the metrics of `step` (its `RemoteValue`); None,
  with a "metrics lost" line, if its worker died after the step."""
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
    model_dir: holds checkpoints/, tensorboard/ and the logs.
    config: the loop's settings.
    dataset: the batches, deterministic (resuming skips the consumed ones):
      a Dataset of global batches, or input_context -> Dataset of
      per-replica batches (`distribution`); it may end early.
    train_step: the per-replica step, batch -> scalar metrics ("loss").
    step_counter: the int variable the step increments (checkpointed).
    checkpoint_items: trackables to checkpoint besides the input position.
    learning_rate_fn: the current learning rate, for logs.
    eval_fn: a dict of scalars, every `eval_every_steps` and at the end.
    log: where progress lines go.
    strategy: the strategy the model was built under (default: one device).
    actions: action(step, metrics) after every call of the steps, as
      orbit's train actions.

  Returns:
    dict with "step", "interrupted", "preempted" and the last metrics and
    evaluation.
  """
  strategy = strategy or tf.distribute.get_strategy()
  out_dir = distribution.worker_dir(model_dir, strategy)
  read_checkpoints = os.path.join(model_dir, model_dir_lib.CHECKPOINT_SUBDIR)
  write_checkpoints = os.path.join(out_dir, model_dir_lib.CHECKPOINT_SUBDIR)
  parameter_server = distribution.is_parameter_server(strategy)
  # Synchronous workers: every worker runs this loop in step.
  multi_worker = distribution.is_multi_worker(strategy) and not parameter_server
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
  # Divergence: the parameters' norm against theirs at this run's start,
  # before a step is logged or saved (reading them changes nothing).
  variables = [v for item in checkpoint_items.values()
               for v in getattr(item, "trainable_variables", ())]
  start_norm = non_finite.global_norm(variables) if variables else 0.0
  checked_step = step

  def check_growth(step):
    nonlocal checked_step
    if variables and checked_step != step:
      checked_step = step
      non_finite.check_growth(step, non_finite.global_norm(variables),
                              start_norm, manager.latest_checkpoint)
  train_log_path = os.path.join(out_dir, model_dir_lib.TRAIN_LOG_FILE)
  eval_log_path = os.path.join(out_dir, model_dir_lib.EVAL_LOG_FILE)
  for path in (train_log_path, eval_log_path):
    _trim_train_log(path, step if latest else -1)
  first_step = step
  saved_step = None  # The step of the last checkpoint this run wrote.
  metrics, evaluation, interrupted = {}, {}, False
  window_start, window_step = time.time(), step
  released_at = time.time()
  rate = None
  # The step last evaluated (a rerun of a finished run does not evaluate
  # again, and the last step is not evaluated twice).
  evaluated_step = max((r["step"] for r in read_train_log(
      out_dir, model_dir_lib.EVAL_LOG_FILE)), default=None) if os.path.exists(
          eval_log_path) else None

  def write_log(step, metrics):
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
    eta = (config.total_steps - step) / max(rate, 1e-9)
    log(f"step {step}/{config.total_steps} "
        f"({100.0 * step / config.total_steps:.1f}%) "
        + " ".join(f"{k} {v:.4g}" for k, v in values.items())
        + f" {rate * config.units_per_step:,.0f} {config.unit_name}/s"
        f" ETA {_format_seconds(eta)}")

  def is_log_step(step):
    return step % config.log_every_steps == 0 or step == config.total_steps

  def finish_in_flight(keep):
    """Parameter servers: fetches (and logs) the oldest steps' metrics
    until `keep` steps remain in flight; returns the last fetched."""
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
    """Parameter servers: waits for every scheduled step, then sets the
    counter to the batches consumed (a step run twice counted twice)."""
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
        if time.time() - released_at >= RELEASE_MEMORY_SECONDS:
          resources.release_free_memory()
          released_at = time.time()
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
          check_growth(step)
          write_log(step, metrics)
      for action in actions:
        action(step, metrics)
      if step % config.checkpoint_every_steps == 0:
        check_growth(step)
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
      check_growth(step)
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
