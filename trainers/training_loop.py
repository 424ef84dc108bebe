"""The training loop every trainer shares: steps, checkpoints, resume, logs.

What it guarantees:
- Resume: a checkpoint holds the model, the optimizer (its iteration count
  drives the learning-rate schedule) and the input iterator's position, so a
  restarted run continues with the next batch it would have seen.
- Interruption: SIGINT/SIGTERM finish the current step, write a checkpoint
  and stop; a second signal stops at once.
- Progress: a console line with rate and ETA, TensorBoard scalars, and an
  optional periodic evaluation (e.g. STS dev correlation).
"""

import dataclasses
import signal
import sys
import time
from typing import Callable, Mapping, Optional

import tensorflow as tf


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


class _StopRequest:
  """Turns the first SIGINT/SIGTERM into a request to stop after this step."""

  def __init__(self):
    self.requested = False
    self._previous = {}

  def __enter__(self):
    for sig in (signal.SIGINT, signal.SIGTERM):
      try:
        self._previous[sig] = signal.signal(sig, self._handle)
      except ValueError:  # Not in the main thread: leave signals alone.
        pass
    return self

  def _handle(self, signum, frame):
    if self.requested:
      signal.signal(signum, self._previous.get(signum, signal.SIG_DFL))
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


def run(model_dir: str,
        config: LoopConfig,
        dataset: tf.data.Dataset,
        train_step: Callable[[tf.Tensor], Mapping[str, tf.Tensor]],
        step_counter: tf.Variable,
        checkpoint_items: Mapping[str, object],
        learning_rate_fn: Optional[Callable[[], float]] = None,
        eval_fn: Optional[Callable[[], Mapping[str, float]]] = None,
        log=print) -> dict:
  """Trains until `config.total_steps`, resuming from `model_dir` if it can.

  Args:
    model_dir: holds `checkpoints/` and `tensorboard/`.
    config: the loop's settings.
    dataset: yields the batches `train_step` takes; it may end early.
    train_step: batch -> dict of scalar metrics (at least "loss").
    step_counter: int variable the step increments (e.g. the optimizer's
      `iterations`); saved in the checkpoint, read for the step number.
    checkpoint_items: trackables to checkpoint besides the iterator.
    learning_rate_fn: returns the current learning rate, for logs.
    eval_fn: returns a dict of scalars to log; called every
      `eval_every_steps` and at the end.
    log: where progress lines go.

  Returns:
    dict with "step", "interrupted" and the last metrics and evaluation.
  """
  iterator = iter(dataset)
  checkpoint = tf.train.Checkpoint(iterator=iterator, **checkpoint_items)
  manager = tf.train.CheckpointManager(
      checkpoint, f"{model_dir}/checkpoints",
      max_to_keep=config.max_checkpoints)
  if manager.latest_checkpoint:
    checkpoint.restore(manager.latest_checkpoint).assert_existing_objects_matched()
    log(f"resumed from {manager.latest_checkpoint} at step "
        f"{int(step_counter.numpy())}")
  writer = tf.summary.create_file_writer(f"{model_dir}/tensorboard")
  step = int(step_counter.numpy())
  first_step = step
  metrics, evaluation, interrupted = {}, {}, False
  window_start, window_step = time.time(), step
  rate = None

  def evaluate():
    nonlocal evaluation
    if eval_fn is None:
      return
    evaluation = dict(eval_fn())
    with writer.as_default(step=step):
      for name, value in evaluation.items():
        tf.summary.scalar(f"eval/{name}", value)
    log(f"step {step}: " + ", ".join(
        f"{k} {v:.4f}" for k, v in sorted(evaluation.items())))

  with _StopRequest() as stop:
    while step < config.total_steps:
      try:
        batch = next(iterator)
      except StopIteration:
        log(f"input ended at step {step}")
        break
      metrics = train_step(batch)
      step = int(step_counter.numpy())
      if step % config.log_every_steps == 0 or step == config.total_steps:
        now = time.time()
        rate = (step - window_step) / max(now - window_start, 1e-9)
        window_start, window_step = now, step
        values = {k: float(v) for k, v in metrics.items()}
        if learning_rate_fn is not None:
          values["learning_rate"] = float(learning_rate_fn())
        with writer.as_default(step=step):
          for name, value in values.items():
            tf.summary.scalar(f"train/{name}", value)
          tf.summary.scalar(f"train/{config.unit_name}_per_second",
                            rate * config.units_per_step)
        eta = (config.total_steps - step) / max(rate, 1e-9)
        log(f"step {step}/{config.total_steps} "
            f"({100.0 * step / config.total_steps:.1f}%) "
            + " ".join(f"{k} {v:.4g}" for k, v in values.items())
            + f" {rate * config.units_per_step:,.0f} {config.unit_name}/s"
            f" ETA {_format_seconds(eta)}")
      if step % config.checkpoint_every_steps == 0:
        manager.save(checkpoint_number=step)
      if config.eval_every_steps and step % config.eval_every_steps == 0:
        evaluate()
      if stop.requested or (config.max_steps_per_run and
                            step - first_step >= config.max_steps_per_run):
        interrupted = True
        break
  manager.save(checkpoint_number=step)
  if not interrupted:
    evaluate()
  writer.flush()
  return {"step": step, "interrupted": interrupted,
          "metrics": {k: float(v) for k, v in metrics.items()},
          "evaluation": evaluation, "steps_per_second": rate}
