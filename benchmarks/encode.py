r"""Encode throughput of an exported sentence encoder on CPU, from raw strings.

  python -m benchmarks.encode --export=runs/siamese_cbow_paper/export/1 \
      --data_dir=../shared/data

On the distinct sentences of the STS 2012-2015 and SICK sets (34,070 with
the shared data), measured in one run and printed:
- sentences/s through the loaded SavedModel's `serving_default` at
  --batch_size (default 1024) and at batch 1, Python strings in, numpy out
  (tokenisation, vocabulary lookup and averaging all happen in the graph);
- seconds per sentence pair one pair at a time (encode the two sentences,
  cosine), the Siamese CBOW paper's 0.0004 s/pair figure;
- a baseline measured in the same run for the ratio: the same computation in
  Python + numpy (regex tokenisation, dict lookup, mean of the export's own
  word vectors), like averaged word2vec vectors in numpy.
Each figure is the median of --repeats passes after one warm-up pass.
"""

import os
import re
import statistics
import time

from absl import flags
import numpy as np
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts_data

FLAGS = flags.FLAGS


def distinct_sentences(data_dir):
  pair_sets, _ = sts_data.load_eval_sets(data_dir, ("sts", "sick"))
  seen = {}
  for pair_set in pair_sets:
    for a, b in zip(pair_set.sentences1, pair_set.sentences2):
      seen.setdefault(a, None)
      seen.setdefault(b, None)
  return list(seen), pair_sets


def _median_time(fn, repeats):
  fn()  # Warm-up: traces, allocator, caches.
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    fn()
    times.append(time.perf_counter() - start)
  return statistics.median(times)


def _numpy_encoder(export_path, vocab_path):
  """Python/numpy re-implementation over the export's own vectors."""
  if not vocab_path:
    # A trainer's layout: <model_dir>/export/<version>, <model_dir>/vocab.txt.
    vocab_path = os.path.join(export_path, os.pardir, os.pardir,
                              model_dir_lib.VOCABULARY_FILE)
  if not os.path.exists(vocab_path):
    return None
  trainable = tf.saved_model.load(export_path).trainable_variables
  if not trainable:  # A quantised export (export/table_quantization.py).
    return None
  table = trainable[0].numpy()
  with open(vocab_path, encoding="utf-8") as f:
    index = {line.split("\t")[0]: i + 1 for i, line in enumerate(f)}
  token = re.compile(r"\w+|[^\w\s]")
  dim = table.shape[1]

  def encode(sentences):
    out = np.zeros((len(sentences), dim), np.float32)
    for row, sentence in enumerate(sentences):
      ids = [index[t] for t in token.findall(sentence.lower()) if t in index]
      if ids:
        out[row] = table[ids].mean(0)
    return out

  return encode


def main(argv):
  del argv
  data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir)
  export_path = encoder_lib.resolve_export_dir(FLAGS.export)
  sentences, pair_sets = distinct_sentences(data_dir)
  pairs = [(a, b) for s in pair_sets
           for a, b in zip(s.sentences1, s.sentences2)][:FLAGS.num_pairs]
  print(f"export: {export_path}")
  print(f"{len(sentences):,} distinct STS/SICK sentences; "
        f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}")

  serve = tf.saved_model.load(export_path).signatures["serving_default"]

  def run_batches(batch_size, items):
    def run():
      for start in range(0, len(items), batch_size):
        serve(sentences=tf.constant(items[start:start + batch_size]))[
            "embeddings"].numpy()
    return run

  batch_seconds = _median_time(run_batches(FLAGS.batch_size, sentences),
                               FLAGS.repeats)
  single = sentences[:FLAGS.num_single]
  single_seconds = _median_time(run_batches(1, single), FLAGS.repeats)

  def run_pairs():
    for a, b in pairs:
      u, v = serve(sentences=tf.constant([a, b]))["embeddings"].numpy()
      float(np.dot(u, v) / max(np.linalg.norm(u) * np.linalg.norm(v), 1e-12))

  pair_seconds = _median_time(run_pairs, FLAGS.repeats)
  rows = [
      (f"SavedModel, batch {FLAGS.batch_size}",
       f"{len(sentences) / batch_seconds:,.0f} sentences/s"),
      ("SavedModel, batch 1", f"{len(single) / single_seconds:,.0f} "
       f"sentences/s ({single_seconds / len(single) * 1e3:.3f} ms each)"),
      ("SavedModel, one pair at a time",
       f"{pair_seconds / len(pairs):.6f} s/pair"),
  ]
  numpy_encode = _numpy_encoder(export_path, FLAGS.vocabulary)
  if numpy_encode is not None:
    numpy_seconds = _median_time(lambda: numpy_encode(sentences),
                                 FLAGS.repeats)
    rows.append(("baseline: Python regex + numpy mean, same vectors",
                 f"{len(sentences) / numpy_seconds:,.0f} sentences/s "
                 f"(SavedModel batch {FLAGS.batch_size} is "
                 f"{numpy_seconds / batch_seconds:.1f}x)"))
  width = max(len(r[0]) for r in rows)
  for name, value in rows:
    print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
  flags.DEFINE_string("export", None, "Export folder (base or version).",
                      required=True)
  flags.DEFINE_string("data_dir", None,
                      f"Data directory (default ${data_dir_lib.ENV_VAR}).")
  flags.DEFINE_string("vocabulary", None, "vocab.txt of the export's model "
                      "for the numpy baseline (default: <export>/../../"
                      "vocab.txt; skipped if absent).")
  flags.DEFINE_integer("batch_size", 1024, "Sentences per call.")
  flags.DEFINE_integer("num_single", 3000, "Sentences encoded one per call.")
  flags.DEFINE_integer("num_pairs", 3000, "Pairs scored one at a time.")
  flags.DEFINE_integer("repeats", 5, "Timed passes (median reported).")
  cli.run(main)
