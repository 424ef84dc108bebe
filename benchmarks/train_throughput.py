r"""Training throughput on the real corpus: groups/s, tokens/s, peak memory.

  python -m benchmarks.train_throughput --data_dir=../shared/data \
      [--flagfile=configs/siamese_cbow_paper.flags] [--optimizer=adagrad ...]

Takes the Siamese CBOW trainer's own flags and builds its training plan
(`trainers.siamese_cbow.SiameseCBOWTrainer.build_plan`: vocabulary, held-out
books, input pipeline, model, optimizer, XLA train step), so it measures
exactly what `python -m trainers.siamese_cbow` with the same flags trains,
for --steps batches after --warmup_steps. Prints, measured in the same run:
- the input pipeline alone (the ceiling the step cannot beat),
- pipeline + train step (what training achieves),
- tokens/s counted as real (non-padding) word ids in the trained batches,
- peak resident memory of the process.
--model_dir (default: a temporary folder) caches the vocabulary and the
batch count between runs.
"""


import resource
import time

from absl import flags
import numpy as np
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.trainers import siamese_cbow
from sentzoo.trainers import trainer

FLAGS = siamese_cbow.FLAGS
flags.DEFINE_integer("steps", 3000, "Measured steps.", lower_bound=1,
                     flag_values=FLAGS)
flags.DEFINE_integer("warmup_steps", 300, "Unmeasured steps first (XLA "
                     "compilation of each batch length, pipeline warm-up).",
                     lower_bound=0, flag_values=FLAGS)


def _peak_rss_mb():
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _measure(batches, warmup, steps, per_batch):
  """Runs `per_batch` on `warmup + steps` batches; rate over the last `steps`."""
  iterator = iter(batches)
  for _ in range(warmup):
    per_batch(next(iterator))
  groups = tokens = 0
  start = time.perf_counter()
  for _ in range(steps):
    batch = next(iterator)
    per_batch(batch)
    groups += batch.shape[0]
    tokens += int(np.count_nonzero(batch))
  seconds = time.perf_counter() - start
  return groups / seconds, tokens / seconds, seconds


def main(argv):
  del argv
  start = time.perf_counter()
  model_trainer = siamese_cbow.SiameseCBOWTrainer()
  with trainer.plan_to_measure(model_trainer) as plan:
    _benchmark(model_trainer.settings(), plan, start)


def _benchmark(cfg, plan, start):
  """Measures `plan`, the one the trainer builds from the settings `cfg`."""
  print(f"plan built in {time.perf_counter() - start:.1f}s")
  members = 3 + cfg.num_negatives
  rows = []
  groups_s, tokens_s, _ = _measure(plan.dataset, FLAGS.warmup_steps,
                                   FLAGS.steps, lambda batch: None)
  rows.append(("input pipeline alone", groups_s, tokens_s))
  groups_s, tokens_s, seconds = _measure(
      plan.dataset, FLAGS.warmup_steps, FLAGS.steps,
      lambda batch: plan.train_step(batch)["loss"].numpy())
  rows.append(("pipeline + train step"
               + (" (XLA)" if cfg.jit_compile else ""), groups_s, tokens_s))

  print(f"\nSiamese CBOW training throughput, {cfg.embedding_dim}-d, batch "
        f"{cfg.batch_size} groups of {members} sentences, optimizer "
        f"{cfg.optimizer}, negatives {cfg.negatives}, "
        f"{tf.config.threading.get_intra_op_parallelism_threads() or 'all'} "
        f"intra-op threads, {FLAGS.steps} measured steps "
        f"({seconds:.1f}s)\n")
  print("| what | groups/s | sentences/s | tokens/s |")
  print("|---|---:|---:|---:|")
  for name, g, t in rows:
    print(f"| {name} | {g:,.0f} | {g * members:,.0f} | {t:,.0f} |")
  print(f"\npeak RSS: {_peak_rss_mb():,.0f} MB")
  groups_per_epoch = plan.steps_per_epoch * cfg.batch_size
  print(f"one epoch = {groups_per_epoch:,} groups -> "
        f"{groups_per_epoch / rows[-1][1] / 60:.1f} min at the training rate")


if __name__ == "__main__":
  cli.run(main, FLAGS)
