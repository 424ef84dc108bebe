r"""Sent2Vec training speed on the book corpus, next to the C++ reference.

  python -m benchmarks.sent2vec_train --data_dir=../shared/data \
      --vocabulary=runs/sent2vec_books_uni/vocab.txt

Runs the trainer's own pipeline (`inputs.sent2vec_data`) and step
(`trainers.sent2vec_step`) for --steps batches after --warmup_steps, by
default with the uni book settings (700-d, 10 negatives, t 1e-5, min target
count 8; --word_ngrams=2 --sample=5e-6 --min_count_label=5 --dropout_k=7
gives the uni+bi ones), and prints, from the same run:
- tokens/s (every token read, unknown words included) and words/s counted
  as the C++ code counts them (tokens + one end-of-line per line), wall
  clock and per CPU-second of this process;
- the ratio to the reference's 2 x 181,869 words/s on 2 threads;
- peak resident memory and its ratio to the reference's 807 MB.
Also prints the 1-minute load average before and after: numbers taken while
other processes load the CPU understate the rate; say so when quoting them.

The trainer runs --steps_per_call=16 steps per graph call, reads word ids
from its token cache (written once, before the first epoch) and runs each op
on one thread with the input pipeline on its own thread; the flags
`--steps_per_call=1`, no `--token_cache` and `--op_threads=0
--input_threads=0` (TensorFlow's defaults) measure without them. The time
spent writing the cache (about one epoch of tokenising, once per run) is
not in the rate: it is printed separately.
"""

import json
import os
import resource
import time

from absl import flags
import numpy as np
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.inputs import corpus
from sentzoo.inputs import sent2vec_data
from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import token_cache
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import sent2vec
from sentzoo.trainers import sent2vec_step
from sentzoo.trainers import training_loop

# ../shared/baselines/sent2vec_books_sts.md (measured on 2 CPU cores).
REFERENCE_WORDS_PER_SECOND = 2 * 181869
REFERENCE_PEAK_RSS_MB = 807

FLAGS = flags.FLAGS
flags.DEFINE_string("data_dir", None,
                    f"Data directory (default ${data_dir_lib.ENV_VAR}).")
flags.DEFINE_list("corpus_parts", [], "Corpus parts (default: all).")
flags.DEFINE_string("vocabulary", None, "vocab.txt of a trainer run on the "
                    "same corpus (with corpus_stats.json beside it); built "
                    "from --corpus_parts when not given.")
flags.DEFINE_integer("steps", 200, "Measured steps.")
flags.DEFINE_integer("warmup_steps", 20, "Unmeasured steps first.")
flags.DEFINE_integer("repeats", 1, "Measure --steps this many times in a row "
                     "and report the median (all are in the JSON).")
flags.DEFINE_integer("embedding_dim", 700, "d.")
flags.DEFINE_integer("num_negatives", 10, "Negatives per target.")
flags.DEFINE_integer("word_ngrams", 1, "1: the uni model; 2: uni+bi.")
flags.DEFINE_integer("num_buckets", 2000000, "Buckets for --word_ngrams=2.")
flags.DEFINE_float("sample", 1e-5, "As the trainer's flag (uni book "
                   "config: 1e-5; uni+bi: 5e-6).")
flags.DEFINE_integer("min_count_label", 8, "As the trainer's flag (uni: 8; "
                     "uni+bi: 5).")
flags.DEFINE_integer("dropout_k", 0, "As the trainer's flag (uni: 0; "
                     "uni+bi: 7).")
flags.DEFINE_integer("negative_group", 8, "As the trainer's flag.")
flags.DEFINE_float("max_multiplicity", 8.0, "As the trainer's flag.")
flags.DEFINE_integer("block_lines", 64, "As the trainer's flag (the book "
                     "configs use 64).")
flags.DEFINE_integer("steps_per_call", 16, "As the trainer's flag: steps "
                     "per graph call (1: one Python call per step).")
flags.DEFINE_string("token_cache", None, "Read word ids from this "
                    "`inputs.token_cache` file (written first if missing or "
                    "stale), as the trainer does with --token_cache; "
                    "default: tokenise the text.")
flags.DEFINE_integer("op_threads", 1, "As the trainer's flag: threads one "
                     "op may use (0: TensorFlow's default, one per core).",
                     lower_bound=0)
flags.DEFINE_integer("input_threads", 1, "As the trainer's flag: threads of "
                     "the input pipeline's own pool (0: TensorFlow's shared "
                     "pool).", lower_bound=0)
flags.DEFINE_string("output_json", None, "Also write the numbers here.")


def _peak_rss_mb():
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cpu_seconds():
  usage = resource.getrusage(resource.RUSAGE_SELF)
  return usage.ru_utime + usage.ru_stime


def main(argv):
  del argv
  if FLAGS.op_threads:
    tf.config.threading.set_intra_op_parallelism_threads(FLAGS.op_threads)
  data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir, "gutenberg")
  files = corpus.list_files(corpus.book_corpus_pattern(data_dir,
                                                       FLAGS.corpus_parts))
  tokenizer = tokenizer_lib.Tokenizer(keep_punctuation=True)
  if FLAGS.vocabulary:
    vocabulary = vocabulary_lib.Vocabulary.load(FLAGS.vocabulary)
    stats_path = os.path.join(os.path.dirname(FLAGS.vocabulary),
                              "corpus_stats.json")
    if not os.path.exists(stats_path):
      raise errors.UserError(f"no corpus_stats.json beside {FLAGS.vocabulary}")
    with open(stats_path) as f:
      total_tokens = json.load(f)["tokens"]
  else:
    counter, _, total_tokens = vocabulary_lib.count_words(files, tokenizer)
    kept = sorted(((w, c) for w, c in counter.items() if c >= 5),
                  key=lambda wc: (-wc[1], wc[0]))
    vocabulary = vocabulary_lib.Vocabulary(
        [w.decode("utf-8") for w, _ in kept], [c for _, c in kept])
  featurizer = sent2vec_featurizer.Sent2VecFeaturizer(
      vocabulary, tokenizer, word_ngrams=FLAGS.word_ngrams,
      num_buckets=FLAGS.num_buckets)
  cache = None
  if FLAGS.token_cache:
    cache = token_cache.ensure(FLAGS.token_cache, files, featurizer,
                               vocabulary, FLAGS.block_lines)
  dataset = sent2vec_data.batch_dataset(
      files, featurizer,
      sent2vec_data.keep_probabilities(vocabulary.counts, total_tokens,
                                       FLAGS.sample, FLAGS.min_count_label),
      sent2vec_data.negative_cdf(vocabulary.counts),
      num_negatives=FLAGS.num_negatives, block_lines=FLAGS.block_lines,
      num_epochs=10, negative_group=FLAGS.negative_group,
      dropout_k=FLAGS.dropout_k,
      token_cache=cache, input_threads=FLAGS.input_threads)
  model = sent2vec.Sent2Vec(vocabulary.size_with_padding,
                            featurizer.num_buckets, FLAGS.embedding_dim)
  model(np.zeros([1, 1], np.int32))
  step, step_counter, tokens_seen, _ = sent2vec_step.make_train_step(
      model, 0.2, total_tokens=10 * total_tokens,
      num_negatives=FLAGS.num_negatives, negative_group=FLAGS.negative_group,
      max_multiplicity=FLAGS.max_multiplicity,
      element_spec=dataset.element_spec)
  lines_seen = tf.Variable(0, dtype=tf.int64)

  @tf.function(input_signature=[dataset.element_spec])
  def counted_step(batch):
    lines_seen.assign_add(batch["num_lines"])
    return step(batch)

  # As the trainer's loop runs them (`training_loop.run`): one Python call
  # per step reading the step counter, or `steps_per_call` steps per call.
  steps_in_graph = training_loop.multi_step(counted_step,
                                            dataset.element_spec)

  def run(num_steps):
    if FLAGS.steps_per_call == 1:
      for _ in range(num_steps):
        counted_step(next(iterator))
        int(step_counter.numpy())
      return
    while num_steps > 0:
      count = min(num_steps, FLAGS.steps_per_call)
      steps_in_graph(iterator, tf.constant(count, tf.int32))
      int(step_counter.numpy())
      num_steps -= count

  load_before = os.getloadavg()[0]
  iterator = iter(dataset)
  run(FLAGS.warmup_steps)
  measured = []  # (seconds, tokens, lines, cpu seconds) per repeat.
  for _ in range(FLAGS.repeats):
    tokens_before, lines_before = int(tokens_seen.numpy()), int(
        lines_seen.numpy())
    cpu_start, start = _cpu_seconds(), time.perf_counter()
    run(FLAGS.steps)
    measured.append((time.perf_counter() - start,
                     int(tokens_seen.numpy()) - tokens_before,
                     int(lines_seen.numpy()) - lines_before,
                     _cpu_seconds() - cpu_start))
  load_after = os.getloadavg()[0]
  # The repeat of median words/s (the machine's speed varies between runs
  # by up to ~15%; a single short run can land anywhere in that range).
  rates = [(t + l) / s for s, t, l, _ in measured]
  seconds, tokens, lines, cpu = measured[
      sorted(range(len(rates)), key=rates.__getitem__)[len(rates) // 2]]
  words = tokens + lines
  result = {
      "tokens_per_second": tokens / seconds,
      "cxx_words_per_second": words / seconds,
      "ratio_to_reference": words / seconds / REFERENCE_WORDS_PER_SECOND,
      "cxx_words_per_cpu_second": words / cpu,
      "cpu_seconds_per_wall_second": cpu / seconds,
      "peak_rss_mb": _peak_rss_mb(),
      "rss_ratio_to_reference": _peak_rss_mb() / REFERENCE_PEAK_RSS_MB,
      "load_average_1min": [load_before, load_after],
      "steps": FLAGS.steps, "seconds": seconds, "tokens": tokens,
      "repeats": FLAGS.repeats,
      "repeat_words_per_second": rates,
      "embedding_dim": FLAGS.embedding_dim,
      "num_negatives": FLAGS.num_negatives,
      "word_ngrams": FLAGS.word_ngrams,
      "num_buckets": FLAGS.num_buckets if FLAGS.word_ngrams > 1 else 0,
      "sample": FLAGS.sample,
      "min_count_label": FLAGS.min_count_label,
      "dropout_k": FLAGS.dropout_k,
      "negative_group": FLAGS.negative_group,
      "block_lines": FLAGS.block_lines,
      "max_multiplicity": FLAGS.max_multiplicity,
      "op_threads": FLAGS.op_threads,
      "input_threads": FLAGS.input_threads,
      "cpus": os.cpu_count(),
      "steps_per_call": FLAGS.steps_per_call,
      "token_cache": bool(FLAGS.token_cache),
      "vocabulary": len(vocabulary),
  }
  print(f"\nSent2Vec training speed: {FLAGS.embedding_dim}-d, "
        f"{FLAGS.num_negatives} negatives (groups of "
        f"{FLAGS.negative_group}), blocks of {FLAGS.block_lines} lines, "
        f"{FLAGS.steps_per_call} steps per call, "
        f"{'word ids from the token cache' if cache else 'tokenising text'}, "
        f"word n-grams {FLAGS.word_ngrams}, "
        f"{FLAGS.op_threads or 'default'} thread(s) per op, input on "
        + (f"its own {FLAGS.input_threads} thread(s)" if FLAGS.input_threads
           else "the shared pool")
        + f", {os.cpu_count()} cores, {FLAGS.steps} steps in {seconds:.1f}s"
        + (f" (the median of {FLAGS.repeats} repeats: words/s "
           + ", ".join(f"{r:,.0f}" for r in rates) + ")"
           if FLAGS.repeats > 1 else "") + "; "
        f"1-min load average {load_before:.1f} before, {load_after:.1f} "
        "after (2 cores)\n")
  print("| what | this run | C++ reference | ratio |")
  print("|---|---:|---:|---:|")
  print(f"| tokens/s | {result['tokens_per_second']:,.0f} | | |")
  print(f"| words/s (tokens + end-of-lines, as the C++ counts) | "
        f"{result['cxx_words_per_second']:,.0f} | "
        f"{REFERENCE_WORDS_PER_SECOND:,} | "
        f"{result['ratio_to_reference']:.2f}x |")
  print(f"| words per CPU-second of this process | "
        f"{result['cxx_words_per_cpu_second']:,.0f} | "
        f"{REFERENCE_WORDS_PER_SECOND // 2:,} per thread | "
        f"{result['cxx_words_per_cpu_second'] / (REFERENCE_WORDS_PER_SECOND / 2):.2f}x |")
  print(f"| peak RSS (MB) | {result['peak_rss_mb']:,.0f} | "
        f"{REFERENCE_PEAK_RSS_MB} | {result['rss_ratio_to_reference']:.2f}x |")
  if FLAGS.output_json:
    with open(FLAGS.output_json, "w") as f:
      json.dump(result, f, indent=2)


if __name__ == "__main__":
  cli.run(main)
