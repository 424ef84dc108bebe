r"""CHARAGRAM-PHRASE training throughput (pairs/s) and the memory of its n-gram table.

  python -m benchmarks.charagram_train --data_dir=../shared/data

Trains on the PPDB 2.0 human-rated pairs of configs/charagram_phrase.flags
(mean rating >= --min_score) with the trainer's own input pipeline and train
step (`trainers/charagram_step.py`: featurisation in tf.data, sparse
gather-sum, margin loss with in-batch negatives, Adam), and prints pairs/s
after a warm-up, the n-gram vocabulary size, the bytes of the n-gram table
(and of Adam's two slots for it), the bytes a dense |V|-wide count batch of
the reference code would take, peak resident memory, and the load average
(numbers taken while other processes load the CPU are not clean).
"""

import os
import resource
import time

from absl import flags
import keras
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.inputs import char_ngrams
from sentzoo.inputs import ppdb
from sentzoo.models import charagram
from sentzoo.models import paraphrase_margin_loss
from sentzoo.trainers import charagram_step

FLAGS = flags.FLAGS
flags.DEFINE_string("data_dir", None, "Data directory (default "
                    f"${data_dir_lib.ENV_VAR}).")
flags.DEFINE_float("min_score", 3.0, "PPDB human rating threshold.")
flags.DEFINE_list("ngram_sizes", ["2", "3", "4"], "n-gram sizes.")
flags.DEFINE_integer("ngram_buckets", 0, "> 0: hashed n-grams.")
flags.DEFINE_integer("embedding_dim", 300, "d.")
flags.DEFINE_integer("batch_size", 100, "Pairs per batch.")
flags.DEFINE_enum("sampling", "max", ["max", "mix"], "Negatives.")
flags.DEFINE_integer("warmup_steps", 20, "Steps before timing.")
flags.DEFINE_integer("steps", 200, "Timed steps.")
flags.DEFINE_integer("threads", 2, "TensorFlow intra- and inter-op threads "
                     "(the project's CPU budget: 2 cores).")


def _mib(n_bytes):
  return n_bytes / 2**20


def main(argv):
  del argv
  tf.config.threading.set_intra_op_parallelism_threads(FLAGS.threads)
  tf.config.threading.set_inter_op_parallelism_threads(FLAGS.threads)
  data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir, "ppdb")
  keras.utils.set_random_seed(0)
  pairs = []
  for name in ("ppdb-2.0-human-labels.ppdb-sample.tsv",
               "ppdb-2.0-human-labels.wiki-sample.tsv"):
    pairs += ppdb.load_human_labels(os.path.join(data_dir, "ppdb", name),
                                    min_score=FLAGS.min_score)
  pairs = ppdb.deduplicate(pairs)
  texts1 = [p.phrase1 for p in pairs]
  texts2 = [p.phrase2 for p in pairs]
  sizes = [int(n) for n in FLAGS.ngram_sizes]
  if FLAGS.ngram_buckets:
    featurizer = char_ngrams.CharNgramFeaturizer(
        sizes, num_buckets=FLAGS.ngram_buckets)
  else:
    featurizer = char_ngrams.CharNgramFeaturizer(
        sizes, vocabulary=char_ngrams.build_ngram_vocabulary(
            texts1 + texts2, sizes))
  model = charagram.Charagram(featurizer.num_ids, FLAGS.embedding_dim)
  model(tf.ragged.constant([[1]], dtype=tf.int32))
  optimizer = keras.optimizers.Adam(1e-3)
  optimizer.build(model.trainable_variables)
  epochs = 1 + (FLAGS.warmup_steps + FLAGS.steps) * FLAGS.batch_size // len(
      pairs)
  dataset = charagram_step.pair_dataset(texts1, texts2, featurizer,
                                        FLAGS.batch_size, num_epochs=epochs)
  step = charagram_step.make_train_step(
      model, optimizer,
      paraphrase_margin_loss.ParaphraseMarginLoss(sampling=FLAGS.sampling),
      l2=1e-6, input_signature=list(dataset.element_spec))
  iterator = iter(dataset)
  for _ in range(FLAGS.warmup_steps):
    step(next(iterator))
  ngrams = 0
  start = time.perf_counter()
  for _ in range(FLAGS.steps):
    batch = next(iterator)
    ngrams += int(batch[0].flat_values.shape[0] + batch[1].flat_values.shape[0])
    float(step(batch)["loss"])
  seconds = time.perf_counter() - start
  table = model.ngram_embedding.embeddings
  table_bytes = int(table.shape[0] * table.shape[1] * 4)
  dense_batch = 2 * FLAGS.batch_size * featurizer.num_ids * 4
  print(f"pairs: {len(pairs):,} (PPDB 2.0 human labels, mean >= "
        f"{FLAGS.min_score}); n-gram sizes {sizes}; "
        + (f"{FLAGS.ngram_buckets:,} hash buckets" if FLAGS.ngram_buckets
           else f"vocabulary {featurizer.vocabulary_size:,} n-grams"))
  print(f"n-gram table: {table.shape[0]:,} x {table.shape[1]} float32 = "
        f"{_mib(table_bytes):.1f} MiB (+ {_mib(2 * table_bytes):.1f} MiB of "
        "Adam slots)")
  print(f"a dense count batch as in the reference code would be "
        f"{_mib(dense_batch):.1f} MiB per batch of {FLAGS.batch_size} pairs; "
        f"the ragged ids of the timed batches averaged "
        f"{ngrams / FLAGS.steps:,.0f} ids ({ngrams / FLAGS.steps * 4 / 1024:.1f}"
        " KiB) per batch")
  print(f"training: {FLAGS.steps} steps of {FLAGS.batch_size} pairs "
        f"({FLAGS.sampling}) in {seconds:.2f} s = "
        f"{FLAGS.steps * FLAGS.batch_size / seconds:,.0f} pairs/s, "
        f"{1000 * seconds / FLAGS.steps:.1f} ms/step, {FLAGS.threads} threads")
  print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f}"
        f" MiB; load average {os.getloadavg()[0]:.2f} (1 min) on "
        f"{os.cpu_count()} CPUs")


if __name__ == "__main__":
  cli.run(main)
