r"""CHARAGRAM training throughput (pairs/s) and the memory of its n-gram table.

  python -m benchmarks.charagram_train --data_dir=../shared/data \
      [--flagfile=configs/charagram_phrase.flags] [--sampling=mix ...]

Takes the CHARAGRAM trainer's own flags and builds its training plan
(`trainers.charagram.CharagramTrainer.build_plan`: the PPDB pairs,
featurisation in tf.data, sparse gather-sum, margin loss with in-batch
negatives, Adam), so it measures what `python -m trainers.charagram` with
the same flags trains. Prints pairs/s after a warm-up, the feature-id count,
the bytes of the n-gram table (and of Adam's two slots for it), the bytes a
dense |V|-wide count batch of the reference code would take, peak resident
memory, and the load average (numbers taken while other processes load the
CPU are not clean).
"""


import os
import time

from absl import flags
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import resources
from sentzoo.trainers import charagram
from sentzoo.trainers import trainer

FLAGS = charagram.FLAGS
flags.DEFINE_integer("warmup_steps", 20, "Steps before timing.",
                     lower_bound=0, flag_values=FLAGS)
flags.DEFINE_integer("steps", 200, "Timed steps.", lower_bound=1,
                     flag_values=FLAGS)
flags.DEFINE_integer("threads", 2, "TensorFlow intra- and inter-op threads "
                     "(the project's CPU budget: 2 cores).", lower_bound=1,
                     flag_values=FLAGS)


def _mib(n_bytes):
  return n_bytes / 2**20


def main(argv):
  del argv
  tf.config.threading.set_intra_op_parallelism_threads(FLAGS.threads)
  tf.config.threading.set_inter_op_parallelism_threads(FLAGS.threads)
  with trainer.plan_to_measure(charagram.CharagramTrainer()) as plan:
    _benchmark(plan)


def _benchmark(plan):
  model = plan.checkpoint_items["model"]
  iterator = iter(plan.dataset)
  for _ in range(FLAGS.warmup_steps):
    plan.train_step(next(iterator))
  ids = 0
  start = time.perf_counter()
  for _ in range(FLAGS.steps):
    batch = next(iterator)
    ids += int(batch[0].flat_values.shape[0] + batch[1].flat_values.shape[0])
    float(plan.train_step(batch)["loss"])
  seconds = time.perf_counter() - start
  table = model.trainable_variables[0]
  table_bytes = int(table.shape[0] * table.shape[1] * 4)
  dense_batch = 2 * FLAGS.batch_size * int(table.shape[0]) * 4
  print(f"{FLAGS.model}: {plan.config['training']['num_pairs']:,} pairs "
        f"({', '.join(FLAGS.train_files)}, score >= {FLAGS.min_score})")
  print(f"first table ({table.name}): {table.shape[0]:,} x {table.shape[1]} "
        f"float32 = {_mib(table_bytes):.1f} MiB (+ {_mib(2 * table_bytes):.1f}"
        " MiB of Adam slots)")
  print(f"a dense count batch as in the reference code would be "
        f"{_mib(dense_batch):.1f} MiB per batch of {FLAGS.batch_size} pairs; "
        f"the ragged ids of the timed batches averaged "
        f"{ids / FLAGS.steps:,.0f} ids ({ids / FLAGS.steps * 4 / 1024:.1f}"
        " KiB) per batch")
  print(f"training: {FLAGS.steps} steps of {FLAGS.batch_size} pairs "
        f"({FLAGS.sampling}) in {seconds:.2f} s = "
        f"{FLAGS.steps * FLAGS.batch_size / seconds:,.0f} pairs/s, "
        f"{1000 * seconds / FLAGS.steps:.1f} ms/step, {FLAGS.threads} threads")
  print(f"peak RSS: {resources.peak_rss_mb():,.0f}"
        f" MiB; load average {os.getloadavg()[0]:.2f} (1 min) on "
        f"{os.cpu_count()} CPUs")


if __name__ == "__main__":
  cli.run(main, FLAGS)
