r"""Training throughput on the real corpus: groups/s, tokens/s, peak memory.

  python -m benchmarks.train_throughput --model=siamese_cbow \
      --data_dir=../shared/data

Runs the trainer's own input pipeline and train step (the code
`trainers.siamese_cbow` runs) for --steps batches after --warmup_steps, and
prints, measured in the same run:
- the input pipeline alone (the ceiling the step cannot beat),
- pipeline + train step (what training achieves),
- tokens/s counted as real (non-padding) word ids in the trained batches,
- peak resident memory of the process.
"""

import resource
import time

from absl import flags
import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.inputs import corpus
from sentzoo.inputs import siamese_cbow_data
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import siamese_cbow
from sentzoo.trainers import siamese_cbow_step

FLAGS = flags.FLAGS
flags.DEFINE_enum("model", "siamese_cbow", ["siamese_cbow"],
                  "Which model's training to measure.")
flags.DEFINE_string("data_dir", None,
                    f"Data directory (default ${data_dir_lib.ENV_VAR}).")
flags.DEFINE_list("corpus_parts", [], "Corpus parts (default: all).")
flags.DEFINE_integer("steps", 3000, "Measured steps.")
flags.DEFINE_integer("warmup_steps", 300, "Unmeasured steps first (XLA "
                     "compilation of each batch length, pipeline warm-up).")
flags.DEFINE_integer("embedding_dim", 300, "Embedding size.")
flags.DEFINE_integer("batch_size", 100, "Groups per batch.")
flags.DEFINE_integer("num_negatives", 2, "Negatives per group.")
flags.DEFINE_integer("max_length", 50, "Ids per sentence.")
flags.DEFINE_enum("negatives", "mix", list(siamese_cbow_data.NEGATIVE_SOURCES),
                  "Where negatives come from (as the trainer's flag).")
flags.DEFINE_integer("min_sentence_length", 1, "As the trainer's flag.",
                     lower_bound=1)
flags.DEFINE_enum("optimizer", "sgd", list(siamese_cbow_step.OPTIMIZERS),
                  "As the trainer's flag.")


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
  data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir, "gutenberg")
  files = corpus.list_files(corpus.book_corpus_pattern(data_dir,
                                                       FLAGS.corpus_parts))
  tokenizer = tokenizer_lib.Tokenizer()
  start = time.perf_counter()
  vocabulary = vocabulary_lib.build_vocabulary(files, tokenizer, min_count=5)
  print(f"vocabulary: {len(vocabulary):,} words from {len(files)} files in "
        f"{time.perf_counter() - start:.1f}s")
  text_to_ids = text_to_ids_lib.TextToIds(vocabulary, tokenizer,
                                          max_length=FLAGS.max_length)

  def dataset():
    return siamese_cbow_data.group_dataset(
        files, text_to_ids, batch_size=FLAGS.batch_size,
        num_negatives=FLAGS.num_negatives, max_length=FLAGS.max_length,
        num_epochs=10, negatives=FLAGS.negatives,
        min_sentence_ids=FLAGS.min_sentence_length)

  members = 3 + FLAGS.num_negatives
  rows = []
  groups_s, tokens_s, _ = _measure(dataset(), FLAGS.warmup_steps, FLAGS.steps,
                                   lambda batch: None)
  rows.append(("input pipeline alone", groups_s, tokens_s))

  keras.utils.set_random_seed(0)
  model = siamese_cbow.SiameseCBOW(vocabulary.size_with_padding,
                                   FLAGS.embedding_dim)
  optimizer, apply_in_xla = siamese_cbow_step.make_optimizer(
      FLAGS.optimizer, 0.01)
  model(tf.zeros([1, members, 1], tf.int32))
  optimizer.build(model.trainable_variables)
  train_step = siamese_cbow_step.make_train_step(
      model, optimizer, FLAGS.num_negatives, jit_compile=True,
      apply_in_xla=apply_in_xla)
  groups_s, tokens_s, seconds = _measure(
      dataset(), FLAGS.warmup_steps, FLAGS.steps,
      lambda batch: train_step(batch)["loss"].numpy())
  rows.append(("pipeline + train step (XLA)", groups_s, tokens_s))

  print(f"\nSiamese CBOW training throughput, {FLAGS.embedding_dim}-d, batch "
        f"{FLAGS.batch_size} groups of {members} sentences, optimizer "
        f"{FLAGS.optimizer}, negatives {FLAGS.negatives}, "
        f"{tf.config.threading.get_intra_op_parallelism_threads() or 'all'} "
        f"intra-op threads, {FLAGS.steps} measured steps "
        f"({seconds:.1f}s)\n")
  print("| what | groups/s | sentences/s | tokens/s |")
  print("|---|---:|---:|---:|")
  for name, g, t in rows:
    print(f"| {name} | {g:,.0f} | {g * members:,.0f} | {t:,.0f} |")
  print(f"\npeak RSS: {_peak_rss_mb():,.0f} MB")
  groups_per_epoch = siamese_cbow_data.count_batches(
      files, text_to_ids, batch_size=FLAGS.batch_size,
      max_length=FLAGS.max_length,
      min_sentence_ids=FLAGS.min_sentence_length) * FLAGS.batch_size
  print(f"one epoch = {groups_per_epoch:,} groups -> "
        f"{groups_per_epoch / rows[-1][1] / 60:.1f} min at the training rate")


if __name__ == "__main__":
  cli.run(main)
