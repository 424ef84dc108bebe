r"""Memory of the paper-size embedding tables, and how a strategy places them.

  python -m benchmarks.table_memory --model=siamese_cbow
  python -m benchmarks.table_memory --model=siamese_cbow \
      --strategy=mirrored --num_cpu_devices=2
  python -m benchmarks.table_memory --model=sent2vec --buckets=500000

Builds the tables under the strategy's scope (MirroredStrategy keeps one full
copy per replica device), runs --steps sparse SGD steps on random ids (a
Siamese CBOW step, or a Sent2Vec-shaped lookup/update of source and target
rows) and prints the computed table bytes, where each copy lives, and the
process's peak resident memory (ru_maxrss) after building and after the
steps (peak includes the initialiser's temporaries; current is what stays).
With logical CPU devices every copy is in host memory, so peak RSS
shows the per-replica copies; on GPUs each copy is in its own GPU's memory.
"""

import resource

from absl import flags
import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.models import siamese_cbow
from sentzoo.trainers import distribution
from sentzoo.trainers import siamese_cbow_step

FLAGS = flags.FLAGS
distribution.define_flags(FLAGS)
flags.DEFINE_enum("model", "siamese_cbow", ["siamese_cbow", "sent2vec"],
                  "Which model's tables to build.")
flags.DEFINE_integer("vocab_size", 315000, "Words (Siamese CBOW: the paper's "
                     "315k; Sent2Vec: source unigram rows and target rows).")
flags.DEFINE_integer("buckets", 2000000, "Sent2Vec bigram hash buckets "
                     "(source rows besides the words).")
flags.DEFINE_integer("dim", 0, "Embedding size (0: 300 for Siamese CBOW, 700 "
                     "for Sent2Vec).")
flags.DEFINE_integer("steps", 5, "Training steps after building.")
flags.DEFINE_integer("batch_size", 100, "Global batch (groups / sentences).")


def _peak_rss_mb():
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _current_rss_mb():
  """Resident memory now (Linux /proc), or None elsewhere."""
  try:
    with open("/proc/self/status") as f:
      for line in f:
        if line.startswith("VmRSS:"):
          return int(line.split()[1]) / 1024.0
  except OSError:
    return None
  return None


def _placement(variable):
  if isinstance(variable, keras.Variable):
    variable = variable.value  # The tf.Variable (MirroredVariable) inside.
  values = getattr(variable, "values", None)
  if values:
    return [v.device for v in values]
  return [variable.device]


def _siamese_cbow(strategy, dim):
  with distribution.scope(strategy):
    model = siamese_cbow.SiameseCBOW(FLAGS.vocab_size + 1, dim)
    optimizer = keras.optimizers.SGD(learning_rate=0.1)
    model(tf.zeros([1, 5, 1], tf.int32))
    optimizer.build(model.trainable_variables)
  tables = [model.embedding.embeddings]
  ids = np.random.RandomState(0).randint(
      1, FLAGS.vocab_size + 1, size=(FLAGS.batch_size, 5, 30)).astype(np.int32)
  if strategy is None:
    step = siamese_cbow_step.make_train_step(model, optimizer, 2)
    return tables, lambda: step(ids)
  step = siamese_cbow_step.make_replica_step(model, optimizer, 2,
                                             FLAGS.batch_size)
  per_replica = FLAGS.batch_size // strategy.num_replicas_in_sync
  dataset = tf.data.Dataset.from_tensors(ids[:per_replica]).repeat()
  iterator = iter(strategy.experimental_distribute_dataset(
      dataset.unbatch().batch(per_replica * strategy.num_replicas_in_sync)))

  @tf.function
  def distributed():
    return strategy.run(step, args=(next(iterator),))

  return tables, distributed


def _sent2vec(strategy, dim):
  """Source (words + buckets) and target (words) tables, plain sparse SGD on
  the rows a batch of 100 sentences x 20 features / 10 targets x 11 touch."""
  rng = np.random.RandomState(0)
  with distribution.scope(strategy):
    source = tf.Variable(tf.random.uniform(
        [FLAGS.vocab_size + FLAGS.buckets, dim], -1.0 / dim, 1.0 / dim),
                         name="source")
    target = tf.Variable(tf.zeros([FLAGS.vocab_size, dim]), name="target")
  features = rng.randint(0, FLAGS.vocab_size + FLAGS.buckets,
                         size=(FLAGS.batch_size, 20))
  targets = rng.randint(0, FLAGS.vocab_size, size=(FLAGS.batch_size, 10, 11))

  def step():
    with tf.GradientTape() as tape:
      h = tf.reduce_mean(tf.gather(source, features), axis=1)
      u = tf.gather(target, targets)
      logits = tf.einsum("bd,btkd->btk", h, u)
      labels = tf.one_hot(tf.zeros([FLAGS.batch_size, 10], tf.int32), 11)
      loss = tf.reduce_mean(
          tf.nn.sigmoid_cross_entropy_with_logits(labels, logits))
    grads = tape.gradient(loss, [source, target])
    for g, v in zip(grads, [source, target]):
      v.scatter_sub(tf.IndexedSlices(0.2 * g.values, g.indices))
    return loss

  if strategy is None:
    return [source, target], tf.function(step)
  return [source, target], tf.function(lambda: strategy.run(step))


def main(argv):
  del argv
  strategy = distribution.make_strategy(FLAGS.strategy,
                                       FLAGS.num_cpu_devices)
  dim = FLAGS.dim or (300 if FLAGS.model == "siamese_cbow" else 700)
  start_rss = _peak_rss_mb(), _current_rss_mb()
  build = _siamese_cbow if FLAGS.model == "siamese_cbow" else _sent2vec
  tables, step = build(strategy, dim)
  built_rss = _peak_rss_mb(), _current_rss_mb()
  for _ in range(FLAGS.steps):
    step()
  end_rss = _peak_rss_mb(), _current_rss_mb()
  replicas = distribution.num_replicas(strategy)
  total = 0
  print(f"{FLAGS.model}, {FLAGS.strategy} strategy, {replicas} replica(s)")
  for table in tables:
    rows, cols = table.shape
    size = rows * cols * 4
    total += size
    print(f"  {table.name}: {rows:,} x {cols} float32 = {size / 1e6:,.0f} MB "
          f"per copy; copies on {', '.join(_placement(table))}")
  print(f"tables: {total / 1e6:,.0f} MB per replica, "
        f"{total * replicas / 1e6:,.0f} MB over {replicas} replica(s)")
  for name, (peak, now) in (("before building", start_rss),
                            ("after building", built_rss),
                            (f"after {FLAGS.steps} steps", end_rss)):
    print(f"RSS {name}: peak {peak:,.0f} MB, current "
          + (f"{now:,.0f} MB" if now is not None else "n/a"))


if __name__ == "__main__":
  cli.run(main)
