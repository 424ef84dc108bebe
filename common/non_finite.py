"""A non-finite loss or update stops the run at the step where it appears.

`--learning_rate=inf` trained to NaN, exited 0 and exported all-NaN vectors
(which `similarity` reported as 0). The training loop asks `all_finite`
inside its step (one fused reduction over the loss and the updates, a bool
scalar: no extra host round trip besides the one that fetches it with the
loss) and calls `check_step` on the host before it saves or logs the step:
a `NonFiniteError` (a `UserError`: one `error:` line and exit 2) names the
step and the last checkpoint, which was written before the values went bad
and is kept. `check_variables` guards an export: no export holds a NaN.
"""

import numpy as np
import tensorflow as tf

from sentzoo.common import errors


# Values checked at a time by `check_variables`.
_CHUNK = 1 << 24


class NonFiniteError(errors.UserError):
  """Training produced nan or inf; the run stopped without saving it."""

  def __init__(self, message, step=None):
    self.step = step
    super().__init__(message)


def _values(tensor):
  """The dense values of a tensor, `tf.IndexedSlices` (sparse gradients) or
  `tf.RaggedTensor`."""
  if isinstance(tensor, tf.IndexedSlices):
    return tensor.values
  if isinstance(tensor, tf.RaggedTensor):
    return tensor.flat_values
  return tensor


def all_finite(tensors):
  """Whether every value of `tensors` (a tensor or a nest of them: the loss,
  the gradients or the updated rows; None entries are skipped) is finite:
  a bool scalar tensor, usable inside a `tf.function` step.

  Integer tensors are skipped (always finite).
  """
  checks = []
  for tensor in tf.nest.flatten(tensors, expand_composites=False):
    if tensor is None:
      continue
    values = tf.convert_to_tensor(_values(tensor))
    if not values.dtype.is_floating:
      continue
    checks.append(tf.reduce_all(tf.math.is_finite(values)))
  if not checks:
    return tf.constant(True)
  return tf.reduce_all(tf.stack(checks))


def check_step(step, finite, loss=None, last_checkpoint=None):
  """Raises `NonFiniteError` when `finite` (from `all_finite`, fetched to the
  host) is false; call it before the step is saved, logged or exported.

  Args:
    step: the step whose loss or update was not finite.
    finite: bool (a Python, NumPy or eager tensor value).
    loss: the step's loss, said in the message when given.
    last_checkpoint: the checkpoint the rerun would resume from (None: none
      was written).
  """
  if bool(np.asarray(finite)):
    return
  loss_text = ""
  if loss is not None:
    loss_text = f" (loss {float(np.asarray(loss))})"
  kept = (f"the last checkpoint, {last_checkpoint}, was written before and "
          "is kept" if last_checkpoint else "no checkpoint was written")
  raise NonFiniteError(
      f"training diverged at step {step}: its loss or update is not finite"
      f"{loss_text}; stopped without saving it ({kept}). Lower "
      "--learning_rate (or check the flags that scale the updates), then "
      "train again in a new --model_dir or rerun to resume from the last "
      "checkpoint", step=step)


class StepWatch:
  """Remembers the first step whose loss or update was not finite, inside
  the compiled step, so the host learns the exact step without fetching a
  flag every step (it checks at its log and checkpoint points).

    watch = non_finite.StepWatch()            # beside the step counter
    ... in the step: watch.record(step, [loss, gradients, updated rows])
    ... before a save or a log: watch.check(manager.latest_checkpoint)

  Create it in the scope the step's variables live in. Under a
  distribution strategy call `record` where the loss is reduced (cross-
  replica context), not in each replica.
  """

  def __init__(self):
    self.first_step = tf.Variable(-1, dtype=tf.int64, trainable=False,
                                  name="first_non_finite_step")

  def record(self, step, tensors):
    """Records `step` if `tensors` hold nan or inf and no step was recorded
    before; returns `all_finite(tensors)`."""
    finite = all_finite(tensors)
    first = tf.logical_and(tf.logical_not(finite), self.first_step < 0)
    self.first_step.assign(
        tf.where(first, tf.cast(step, tf.int64), self.first_step))
    return finite

  def check(self, last_checkpoint=None):
    """Raises `NonFiniteError` naming the recorded step, if any."""
    step = int(self.first_step.numpy())
    if step >= 0:
      check_step(step, False, last_checkpoint=last_checkpoint)


def check_variables(variables, what, action="not exported. Export an "
                    "earlier checkpoint, or train again with a lower "
                    "--learning_rate"):
  """Raises `NonFiniteError` naming the first variable of `variables` that
  holds nan or inf.

  Args:
    variables: tf.Variables (or arrays); integer ones are skipped.
    what: what they are, e.g. "the model to export from 'runs/m'".
    action: what was not done and what to do, after the colon (the
      default is the export's; a checkpoint save would say "not saved" and
      name the checkpoint kept).
  """
  for variable in variables:
    if not variable.dtype.is_floating:
      continue
    values = np.asarray(variable.numpy() if hasattr(variable, "numpy")
                        else variable).reshape(-1)
    # In pieces: a 6 GB table is not copied into a 1.5 GB mask at once.
    bad = sum(int(np.count_nonzero(~np.isfinite(values[i:i + _CHUNK])))
              for i in range(0, values.size, _CHUNK))
    if bad:
      raise NonFiniteError(
          f"{what} holds non-finite values ({bad:,} of "
          f"{values.size:,} in {getattr(variable, 'name', 'a variable')}): "
          f"{action}")
