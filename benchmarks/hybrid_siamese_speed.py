r"""Training speed and size of the hybrid siamese matcher, per encoder.

  python -m benchmarks.hybrid_siamese_speed --threads=2 \
      --output=runs/hybrid_speed.json

Times the real train step (`trainers.hybrid_siamese_step`, joint loss) on
random ids: batch 128, every sentence 50 ids long (no padding), 300-d word
vectors, as Nicosia and Moschitti (CIKM 2017) report it: seconds per 100
steps (theirs: 10 s on a Tesla K40 GPU; BiMPM 100 s), and parameters without
the embedding table (theirs: ~300k). The step time is the median of
--measure_steps timed steps after --warmup_steps, times 100. Prints the load
average before and after: numbers taken while other processes use the CPU
are slower than the machine's.
"""

import json
import os
import time

from absl import flags
import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.models import hybrid_siamese
from sentzoo.trainers import hybrid_siamese_optimizer
from sentzoo.trainers import hybrid_siamese_step

FLAGS = flags.FLAGS
flags.DEFINE_list("encoders", list(hybrid_siamese.ENCODERS), "Encoders.")
flags.DEFINE_list("optimizers", ["lazy"], "lazy (LazyAdam) and/or dense "
                  "(Keras Adam, updates every table row).")
flags.DEFINE_integer("threads", 2, "TensorFlow intra- and inter-op threads.")
flags.DEFINE_integer("batch_size", 128, "Pairs per step.")
flags.DEFINE_integer("length", 50, "Ids per sentence.")
flags.DEFINE_integer("vocab_size", 20000, "Rows of the word table.")
flags.DEFINE_integer("embedding_dim", 300, "Word vector size.")
flags.DEFINE_integer("warmup_steps", 3, "Untimed steps (tracing).")
flags.DEFINE_integer("measure_steps", 10, "Timed steps.")
flags.DEFINE_bool("jit_compile", False, "XLA-compile the step.")
flags.DEFINE_string("output", None, "Write the results as JSON here.")


def measure(encoder, optimizer_name):
  keras.utils.set_random_seed(0)
  model = hybrid_siamese.HybridSiamese(FLAGS.vocab_size, FLAGS.embedding_dim,
                                       encoder)
  model.build()
  if optimizer_name == "lazy":
    optimizer = hybrid_siamese_optimizer.LazyAdam(1e-3)
  elif optimizer_name == "dense":
    optimizer = keras.optimizers.Adam(1e-3)
  else:
    raise ValueError(f"unknown optimizer {optimizer_name!r}")
  step = hybrid_siamese_step.make_train_step(model, optimizer, "joint",
                                             jit_compile=FLAGS.jit_compile)
  optimizer.build(step.variables)
  rng = np.random.default_rng(0)
  shape = (FLAGS.batch_size, FLAGS.length)

  def batch():
    return ((tf.constant(rng.integers(1, FLAGS.vocab_size, shape), tf.int32),
             tf.constant(rng.integers(1, FLAGS.vocab_size, shape), tf.int32)),
            tf.constant(rng.integers(0, 2, FLAGS.batch_size), tf.int32))

  batches = [batch() for _ in range(4)]
  for i in range(FLAGS.warmup_steps):
    float(step(batches[i % 4])["loss"])
  times = []
  for i in range(FLAGS.measure_steps):
    start = time.perf_counter()
    float(step(batches[i % 4])["loss"])
    times.append(time.perf_counter() - start)
  return {"encoder": encoder, "optimizer": optimizer_name,
          "parameters_without_embeddings":
              model.count_params_without_embeddings(),
          "seconds_per_100_steps": 100 * float(np.median(times)),
          "step_seconds": [round(t, 4) for t in times]}


def main(argv):
  del argv
  tf.config.threading.set_intra_op_parallelism_threads(FLAGS.threads)
  tf.config.threading.set_inter_op_parallelism_threads(FLAGS.threads)
  load_before = os.getloadavg()
  rows = []
  for encoder in FLAGS.encoders:
    for optimizer_name in FLAGS.optimizers:
      row = measure(encoder, optimizer_name)
      rows.append(row)
      print(f"{encoder:6s} {optimizer_name:5s} "
            f"{row['parameters_without_embeddings']:>10,} parameters  "
            f"{row['seconds_per_100_steps']:7.1f} s / 100 steps", flush=True)
  load_after = os.getloadavg()
  print(f"load average before {load_before[0]:.2f}, after "
        f"{load_after[0]:.2f} (1 min); {FLAGS.threads} threads")
  result = {"batch_size": FLAGS.batch_size, "length": FLAGS.length,
            "vocab_size": FLAGS.vocab_size, "threads": FLAGS.threads,
            "jit_compile": FLAGS.jit_compile,
            "load_average": f"{load_before[0]:.2f} before, "
                            f"{load_after[0]:.2f} after",
            "encoders": rows}
  if FLAGS.output:
    with open(FLAGS.output, "w") as f:
      json.dump(result, f, indent=2)


if __name__ == "__main__":
  cli.run(main)
