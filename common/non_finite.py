"""A non-finite loss or update, or parameters grown far past their start, stop
the run at the step where it appears.

`--learning_rate=inf` trained to NaN, exited 0 and exported all-NaN vectors
(which `similarity` reported as 0). The training loop calls `check_step` on
the host before it saves or logs a step: a `NonFiniteError` (a `UserError`:
one `error:` line and exit 2) names the step and the last checkpoint, which
was written before the values went bad and is kept; `check_growth` does
the same for a run whose parameters' norm grew past a bound. `check_variables`
guards an export: no export holds a NaN.
"""

import numpy as np
import tensorflow as tf

from sentzoo.common import errors


# Values checked at a time by `check_variables`.
_CHUNK = 1 << 24
# Values squared at a time by `global_norm` (4 MB of float32: a small
# fraction of any table it is called on).
_NORM_CHUNK = 1 << 20
# How many times its starting norm (at least 1) a run's parameters may grow
# to before `check_growth` stops it: far above a healthy run (the Siamese
# CBOW demo's grows by 0.001%), far below a diverged one (the demo with
# --learning_rate=1e30 overflows to inf by its first check).
MAX_NORM_GROWTH = 1e4


class NonFiniteError(errors.UserError):
  """Training produced nan or inf; the run stopped without saving it."""

  def __init__(self, message, step=None):
    self.step = step
    super().__init__(message)


def check_step(step, finite, loss=None, last_checkpoint=None):
  """Raises `NonFiniteError` when `finite` (a Python, NumPy or eager bool) is
  false; call it before the step is saved, logged or exported.
  `last_checkpoint`: the one a rerun would resume from (None: none).
  """
  if bool(np.asarray(finite)):
    return
  loss_text = ""
  if loss is not None:
    loss_text = f" (loss {float(np.asarray(loss))})"
  _diverged(step, f"its loss or update is not finite{loss_text}",
            last_checkpoint)


def check_growth(step, norm, start_norm, last_checkpoint=None):
  """Raises `NonFiniteError` when the parameters' global norm `norm` passes
  `MAX_NORM_GROWTH` times `start_norm` (their norm when the run started,
  taken as at least 1): a run that diverged without overflowing (a
  cosine loss stays finite while the vectors grow to 1e27). Call it where
  `check_step` is called."""
  if norm <= MAX_NORM_GROWTH * max(start_norm, 1.0):
    return
  _diverged(step, f"its parameters' norm grew to {norm:.3g}, over "
            f"{MAX_NORM_GROWTH:g} times its {start_norm:.3g} at the start",
            last_checkpoint)


def _diverged(step, what, last_checkpoint):
  kept = (f"the last checkpoint, {last_checkpoint}, was written before and "
          "is kept" if last_checkpoint else "no checkpoint was written")
  raise NonFiniteError(
      f"training diverged at step {step}: {what}; stopped without saving it "
      f"({kept}). Lower --learning_rate (or check the flags that scale the "
      "updates), then train again in a new --model_dir or rerun to resume "
      "from the last checkpoint", step=step)


@tf.function
def _sum_of_squares(variable, rows):
  """The sum of squares of a 2+-d tf.Variable, gathered `rows` rows at a
  time in one graph loop (one piece alive at a time)."""
  count = tf.shape(variable, out_type=tf.int64)[0]

  def add_piece(start, total):
    piece = tf.gather(variable, tf.range(start, tf.minimum(start + rows,
                                                          count)))
    return (start + rows,
            total + tf.reduce_sum(tf.square(tf.cast(piece, tf.float64))))

  _, total = tf.while_loop(
      lambda start, _: start < count, add_piece,
      (tf.constant(0, tf.int64), tf.constant(0.0, tf.float64)),
      parallel_iterations=1)
  return total


def global_norm(variables):
  """The global L2 norm of `variables` (tf or Keras Variables), as a float.

  Like `tf.linalg.global_norm`, which reads each variable whole: after
  sparse updates a read copies the variable, and squaring it makes another
  copy (a 6 GB table twice over, at every check). Here a table is gathered
  and squared `_NORM_CHUNK` values (whole rows) at a time.
  """
  total = 0.0
  for variable in variables:
    if not isinstance(variable, tf.Variable):
      variable = variable.value  # A Keras Variable's tf.Variable.
    if not variable.dtype.is_floating:
      continue
    shape = variable.shape
    if shape.rank == 0 or shape.num_elements() <= _NORM_CHUNK:
      total += float(tf.reduce_sum(tf.square(tf.cast(variable, tf.float64))))
    else:
      rows = max(1, _NORM_CHUNK // max(1, shape[1:].num_elements()))
      total += float(_sum_of_squares(variable, tf.constant(rows, tf.int64)))
  return total ** 0.5


def check_variables(variables, what):
  """Raises `NonFiniteError` naming the first of `variables` (tf.Variables
  or arrays; integer ones skipped) that holds nan or inf; `what` says what
  they are, e.g. "the model to export from 'runs/m'"."""
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
          "not exported. Export an earlier checkpoint, or train again with a "
          "lower --learning_rate")
