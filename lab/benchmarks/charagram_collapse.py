r"""Collapse probe of the CHARAGRAM family's margin loss (charCNN, charLSTM).

  python -m lab.benchmarks.charagram_collapse \
      --flagfile=configs/charagram_char_cnn.flags --data_dir=../shared/data \
      [--sampling=max|mix] [--learning_rate=1e-3] [--steps=300]

Trains the trainer's plan for the same flags and, every --report_every
steps, prints the loss and the cosines of a held-out probe batch (`diagnose`).
The margin loss has a degenerate point, every text in one direction (loss 2 x
margin per pair): the table shows whether and how fast a run falls into it.
"""

import time

from absl import flags
import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import errors
from sentzoo.models import paraphrase_margin_loss
from sentzoo.trainers import charagram
from sentzoo.trainers import trainer

FLAGS = charagram.FLAGS
flags.DEFINE_integer("steps", 300, "Training steps.", lower_bound=0,
                     flag_values=FLAGS)
flags.DEFINE_integer("report_every", 50, "A table row every this many "
                     "steps (and at step 0).", lower_bound=1,
                     flag_values=FLAGS)

THREADS = 1  # TF op threads, as docs/charagram.md's tables ran.
COLUMNS = ("step", "train loss", "probe loss", "positive", "hardest negative",
           "neg > pos", "off-diagonal", "norm", "ties", "saturated")
TIE = 1e-6


def diagnose(model, loss_fn, ids1, ids2):
  """The probe batch's numbers (a dict keyed as COLUMNS, without the step
  and the train loss)."""
  e1, e2 = model(ids1), model(ids2)
  loss, _ = loss_fn(e1, e2)
  _, hardest = paraphrase_margin_loss.ParaphraseMarginLoss(
      loss_fn.margin, "max")(e1, e2)
  positive = np.asarray(hardest["positive_cosine"], np.float64)
  negative = np.asarray(hardest["negative_cosine1"], np.float64)
  e = np.concatenate([np.asarray(e1), np.asarray(e2)]).astype(np.float64)
  u = e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)
  cosines = u @ u.T
  off_diagonal = cosines[~np.eye(len(u), dtype=bool)]
  return {"probe loss": float(loss),
          "positive": float(positive.mean()),
          "hardest negative": float(negative.mean()),
          "neg > pos": float(np.mean(negative > positive)),
          "off-diagonal": float(off_diagonal.mean()),
          "norm": float(np.linalg.norm(e, axis=1).mean()),
          "ties": float(np.mean(np.abs(negative - positive) < TIE)),
          "saturated": float(np.mean(np.abs(e) > 0.99))}


def format_row(step, train_loss, numbers):
  cells = [str(step), "–" if train_loss is None else f"{train_loss:.4f}"]
  cells += [f"{numbers[c]:{spec}}" for c, spec in zip(COLUMNS[2:], (
      ".4f", ".4f", ".4f", ".2f", ".4f", ".2f", ".2f", ".3f"))]
  return "| " + " | ".join(cells) + " |"


def probe(plan, steps, report_every):
  """Trains `steps` steps of the plan; yields table rows as they come."""
  model = plan.checkpoint_items["model"]
  # The plan's loss, as build_plan makes it (for the probe batch's loss).
  loss_fn = paraphrase_margin_loss.ParaphraseMarginLoss(
      FLAGS.margin, FLAGS.sampling, seed=FLAGS.seed)
  iterator = iter(plan.dataset)
  fixed = next(iterator)
  yield format_row(0, None, diagnose(model, loss_fn, fixed[0], fixed[1]))
  losses = []
  for step in range(1, steps + 1):
    try:
      batch = next(iterator)
    except StopIteration:
      raise errors.UserError(
          f"the training data ran out after {step - 1} steps; raise "
          "--num_epochs or lower --steps") from None
    losses.append(float(plan.train_step(batch)["margin_loss"]))
    if step % report_every == 0 or step == steps:
      yield format_row(step, float(np.mean(losses)),
                       diagnose(model, loss_fn, fixed[0], fixed[1]))
      losses = []


def main(argv):
  cli.reject_arguments(argv)
  tf.config.threading.set_intra_op_parallelism_threads(THREADS)
  tf.config.threading.set_inter_op_parallelism_threads(THREADS)
  keras.utils.set_random_seed(FLAGS.seed)
  start = time.perf_counter()
  with trainer.plan_to_measure(charagram.CharagramTrainer()) as plan:
    print(f"{FLAGS.model}, {FLAGS.sampling.upper()} negatives, margin "
          f"{FLAGS.margin}, Adam {FLAGS.learning_rate:g}, L2 {FLAGS.l2:g}, "
          f"batch {FLAGS.batch_size}, seed {FLAGS.seed}: {FLAGS.steps} steps; "
          "probe batch = the first batch of the stream (not trained on)")
    print()
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---:|" * len(COLUMNS))
    for row in probe(plan, FLAGS.steps, FLAGS.report_every):
      print(row, flush=True)
  print(f"\n{time.perf_counter() - start:.0f} s, {THREADS} thread(s)")


if __name__ == "__main__":
  cli.run(main, FLAGS)
