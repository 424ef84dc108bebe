r"""Sent2Vec training speed on the book corpus, side by side with the C++ code.

Ours only:

  python -m benchmarks.sent2vec_train --data_dir=../shared/data \
      --vocabulary=runs/sent2vec_books_uni/vocab.txt

runs the trainer's own pipeline (`inputs.sent2vec_data`) and step
(`trainers.sent2vec_step`) in this process for --steps batches after
--warmup_steps, --repeats times in a row, by default with the uni book
settings (700-d, 10 negatives, t 1e-5, min target count 8;
--word_ngrams=2 --sample=5e-6 --min_count_label=5 --dropout_k=7 gives the
uni+bi ones), and prints tokens/s, words/s (defined below), wall clock and
per CPU-second of this process, and peak resident memory. The C++ figures
it prints beside them are stored ones (../shared/baselines, measured on
another day on another machine): they are labelled so, and no ratio to them
is a speed claim.

Side by side with the C++ code (epfml/sent2vec's `fasttext` binary, built
by the user from the public repository; never needed by the tests):

  python -m benchmarks.sent2vec_train --data_dir=../shared/data \
      --corpus_parts=1,2 --reference_binary=/path/to/sent2vec/fasttext

1. Tokenises the corpus lines once with the trainer's tokenizer (lower
   case, word and punctuation tokens), drops empty lines, keeps the first
   --max_lines (0: all), and writes them, tokens separated by one space, to
   one file; builds the vocabulary from it (--min_count) and the trainer's
   token cache of it.
2. Then --repeats times, each in a fresh process and in this order: ours
   (this module, reading that file through the token cache with the
   trainer's settings: --steps_per_call, --step_threads, --op_threads,
   --input_threads),
   then theirs (`fasttext sent2vec -input <that file> -epoch 1 -thread
   --reference_threads`, every other flag mapped from ours: see
   `reference_command`).
3. Prints, per repeat and as the median and range over the repeats, words/s
   and peak RSS of both and their ratios (ours / theirs).

Definitions, the same for both:
- words = tokens (unknown words included) + one end-of-line per line: the
  C++ code's `ntokens`, the denominator of its progress. (Its printed
  "words/sec/thread" counts known tokens only, no end-of-lines, per CPU
  second of the whole process: not the same number.)
- words/s = words of one pass over the file, from --warmup_fraction of the
  pass to its end, divided by the wall-clock seconds between those points.
  Ours counts the lines and tokens its step consumed. The C++ rate comes
  from its progress line (progress = known tokens read / (epochs x
  ntokens)), timestamped as it is printed; known tokens are converted to
  words with the file's own ratio (words / known tokens of one pass, exact
  over a pass). The C++ "epoch" ends after epochs x ntokens known tokens,
  ~1.05 passes.
- peak RSS = the child's ru_maxrss (`os.wait4`). The C++ process is stopped
  when it prints 100% (before it writes the model, which is not training).
- cores in use = the child's CPU seconds / wall seconds over the same
  window.
Also prints the load averages before and after (and the 1-min one around
each run): a run shares the cores with whatever else runs, so only the
ratios of one alternating sequence compare.
"""

import json
import os
import re
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from absl import flags
import numpy as np
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.inputs import corpus
from sentzoo.inputs import sent2vec_data
from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import token_cache
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import sent2vec
from sentzoo.trainers import sent2vec_step
from sentzoo.trainers import training_loop

# Stored, another day: ../shared/baselines/sent2vec_books_sts.md (2 CPU
# cores, another machine; known tokens per CPU-second per thread). Shown
# beside ours-only runs, labelled as stored; never a ratio of record.
STORED_REFERENCE_WORDS_PER_SECOND = 2 * 181869
STORED_REFERENCE_PEAK_RSS_MB = 807

FLAGS = flags.FLAGS
flags.DEFINE_string("data_dir", None,
                    f"Data directory (default ${data_dir_lib.ENV_VAR}).")
flags.DEFINE_list("corpus_parts", [], "Corpus parts (default: all).")
flags.DEFINE_string("corpus_file", None, "Read this text file (one "
                    "sentence per line; gzip if .gz) instead of the book "
                    "corpus (the side-by-side run's own children use it).")
flags.DEFINE_string("vocabulary", None, "vocab.txt of a trainer run on the "
                    "same corpus (with corpus_stats.json beside it); built "
                    "from the corpus (--min_count) when not given.")
flags.DEFINE_integer("min_count", 5, "Vocabulary: words seen at least this "
                     "often (C++ -minCount).", lower_bound=1)
flags.DEFINE_integer("steps", 200, "Measured steps (ours only).")
flags.DEFINE_integer("warmup_steps", 20, "Unmeasured steps first (ours "
                     "only).")
flags.DEFINE_integer("repeats", 3, "Ours only: measure --steps this many "
                     "times in a row and report the median (all are in the "
                     "JSON). With --reference_binary: this many alternating "
                     "pairs of fresh processes (ours, then theirs).",
                     lower_bound=1)
flags.DEFINE_integer("embedding_dim", 700, "d (C++ -dim).")
flags.DEFINE_integer("num_negatives", 10, "Negatives per target (C++ -neg).")
flags.DEFINE_integer("word_ngrams", 1, "1: the uni model; 2: uni+bi (C++ "
                     "-wordNgrams).")
flags.DEFINE_integer("num_buckets", 2000000, "Buckets for --word_ngrams=2 "
                     "(C++ -bucket; 0 for the uni model).")
flags.DEFINE_float("sample", 1e-5, "As the trainer's flag (uni book "
                   "config: 1e-5; uni+bi: 5e-6; C++ -t).")
flags.DEFINE_integer("min_count_label", 8, "As the trainer's flag (uni: 8; "
                     "uni+bi: 5; C++ -minCountLabel).")
flags.DEFINE_integer("dropout_k", 0, "As the trainer's flag (uni: 0; "
                     "uni+bi: 7; C++ -dropoutK).")
flags.DEFINE_float("learning_rate", 0.2, "lr0 (C++ -lr).")
flags.DEFINE_integer("negative_group", 8, "As the trainer's flag.")
flags.DEFINE_float("max_multiplicity", 8.0, "As the trainer's flag.")
flags.DEFINE_integer("block_lines", 64, "As the trainer's flag (the book "
                     "configs use 64).")
flags.DEFINE_integer("steps_per_call", 16, "As the trainer's flag: steps "
                     "per graph call (1: one Python call per step).")
flags.DEFINE_string("token_cache", None, "Ours only: read word ids from "
                    "this `inputs.token_cache` file (written first if "
                    "missing or stale), as the trainer does with "
                    "--token_cache; default: tokenise the text. Side by "
                    "side, ours always reads a token cache of the file, "
                    "written once before the first run (the trainer's "
                    "default).")
flags.DEFINE_integer("step_threads", 1, "As the trainer's flag: step loops "
                     "running at once on the shared input and tables "
                     "(Hogwild; needs --steps_per_call >= this).",
                     lower_bound=1)
flags.DEFINE_integer("op_threads", 1, "As the trainer's flag: threads one "
                     "op may use (0: TensorFlow's default, one per core).",
                     lower_bound=0)
flags.DEFINE_integer("input_threads", 1, "As the trainer's flag: threads of "
                     "the input pipeline's own pool (0: TensorFlow's shared "
                     "pool).", lower_bound=0)
flags.DEFINE_string("reference_binary", None, "The C++ sent2vec `fasttext` "
                    "binary (built from github.com/epfml/sent2vec): run it "
                    "side by side with ours on the same tokenised lines. "
                    "Absent: ours only.")
flags.DEFINE_integer("reference_threads", 2, "C++ -thread.", lower_bound=1)
flags.DEFINE_integer("max_lines", 0, "Side by side: the first this many "
                     "non-empty lines of the corpus (0: all).", lower_bound=0)
flags.DEFINE_float("warmup_fraction", 0.05, "Side by side: the part of the "
                   "pass not measured, at its start.", lower_bound=0.0,
                   upper_bound=0.5)
flags.DEFINE_string("work_dir", None, "Side by side: where the tokenised "
                    "file, vocabulary, token cache and logs go (default: a "
                    "temporary folder, removed at the end).")
flags.DEFINE_string("output_json", None, "Also write the numbers here.")
flags.DEFINE_string("output_markdown", None, "Side by side: also write the "
                    "table and both command lines here (markdown).")

# The flags that make a run's settings, passed on to ours' child process.
SETTINGS = ("embedding_dim", "num_negatives", "word_ngrams", "num_buckets",
            "sample", "min_count_label", "dropout_k", "learning_rate",
            "negative_group", "max_multiplicity", "block_lines",
            "steps_per_call", "step_threads", "op_threads", "input_threads")
_PROGRESS = re.compile(rb"Progress: *([0-9]+(?:\.[0-9]*)?)%")


def _peak_rss_mb():
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cpu_seconds():
  usage = resource.getrusage(resource.RUSAGE_SELF)
  return usage.ru_utime + usage.ru_stime


def _load_vocabulary(path):
  """(Vocabulary, corpus tokens) from a vocab.txt and its corpus_stats.json."""
  vocabulary = vocabulary_lib.Vocabulary.load(path)
  stats_path = os.path.join(os.path.dirname(path),
                            model_dir_lib.CORPUS_STATS_FILE)
  if not os.path.exists(stats_path):
    raise errors.UserError(f"no corpus_stats.json beside {path}")
  with open(stats_path) as f:
    return vocabulary, json.load(f)["tokens"]


def _vocabulary_from_counts(counter, min_count):
  kept = sorted(((w, c) for w, c in counter.items() if c >= min_count),
                key=lambda wc: (-wc[1], wc[0]))
  return vocabulary_lib.Vocabulary(
      [w.decode("utf-8") for w, _ in kept], [c for _, c in kept])


def measure_ours():
  """Ours in this process: the numbers of `--steps` x `--repeats`."""
  if FLAGS.op_threads:
    tf.config.threading.set_intra_op_parallelism_threads(FLAGS.op_threads)
  if FLAGS.corpus_file:
    files = [FLAGS.corpus_file]
  else:
    data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir, "gutenberg")
    files = corpus.list_files(corpus.book_corpus_pattern(data_dir,
                                                         FLAGS.corpus_parts))
  tokenizer = tokenizer_lib.Tokenizer(keep_punctuation=True)
  if FLAGS.vocabulary:
    vocabulary, total_tokens = _load_vocabulary(FLAGS.vocabulary)
  else:
    counter, _, total_tokens = vocabulary_lib.count_words(files, tokenizer)
    vocabulary = _vocabulary_from_counts(counter, FLAGS.min_count)
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
      model, FLAGS.learning_rate, total_tokens=10 * total_tokens,
      num_negatives=FLAGS.num_negatives, negative_group=FLAGS.negative_group,
      max_multiplicity=FLAGS.max_multiplicity,
      element_spec=dataset.element_spec, concurrent=FLAGS.step_threads > 1)
  lines_seen = tf.Variable(0, dtype=tf.int64)

  @tf.function(input_signature=[dataset.element_spec])
  def counted_step(batch):
    lines_seen.assign_add(batch["num_lines"])
    return step(batch)

  # As the trainer's loop runs them (`training_loop.run`): one Python call
  # per step reading the step counter, or `steps_per_call` steps per call.
  steps_in_graph = training_loop.multi_step(counted_step,
                                            dataset.element_spec,
                                            threads=FLAGS.step_threads)

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
  return {
      "tokens_per_second": tokens / seconds,
      "words_per_second": words / seconds,
      "words_per_cpu_second": words / cpu,
      "cpu_seconds_per_wall_second": cpu / seconds,
      "peak_rss_mb": _peak_rss_mb(),
      "load_average_1min": [load_before, load_after],
      "steps": FLAGS.steps, "warmup_steps": FLAGS.warmup_steps,
      "seconds": seconds, "tokens": tokens, "lines": lines,
      "repeats": FLAGS.repeats,
      "repeat_words_per_second": rates,
      **{name: FLAGS[name].value for name in SETTINGS},
      "num_buckets": FLAGS.num_buckets if FLAGS.word_ngrams > 1 else 0,
      "cpus": os.cpu_count(),
      "token_cache": bool(cache),
      "vocabulary": len(vocabulary),
  }


def print_ours(result):
  """The ours-only report, stored C++ figures labelled as such."""
  print(f"\nSent2Vec training speed: {FLAGS.embedding_dim}-d, "
        f"{FLAGS.num_negatives} negatives (groups of "
        f"{FLAGS.negative_group}), blocks of {FLAGS.block_lines} lines, "
        f"{FLAGS.steps_per_call} steps per call, "
        f"{FLAGS.step_threads} step loop(s) at once, "
        + ("word ids from the token cache" if result["token_cache"]
           else "tokenising text")
        + f", word n-grams {FLAGS.word_ngrams}, "
        f"{FLAGS.op_threads or 'default'} thread(s) per op, input on "
        + (f"its own {FLAGS.input_threads} thread(s)" if FLAGS.input_threads
           else "the shared pool")
        + f", {os.cpu_count()} cores, {FLAGS.steps} steps in "
        f"{result['seconds']:.1f}s"
        + (f" (the median of {FLAGS.repeats} repeats: words/s "
           + ", ".join(f"{r:,.0f}" for r in result["repeat_words_per_second"])
           + ")" if FLAGS.repeats > 1 else "") + "; "
        f"1-min load average {result['load_average_1min'][0]:.1f} before, "
        f"{result['load_average_1min'][1]:.1f} after\n")
  print("| what | this run | C++ (stored, another day: not a ratio of "
        "record; run it side by side with --reference_binary) |")
  print("|---|---:|---:|")
  print(f"| tokens/s | {result['tokens_per_second']:,.0f} | |")
  print(f"| words/s (tokens + end-of-lines) | "
        f"{result['words_per_second']:,.0f} | "
        f"{STORED_REFERENCE_WORDS_PER_SECOND:,} (known tokens) |")
  print(f"| words per CPU-second of this process | "
        f"{result['words_per_cpu_second']:,.0f} | "
        f"{STORED_REFERENCE_WORDS_PER_SECOND // 2:,} per thread |")
  print(f"| peak RSS (MB) | {result['peak_rss_mb']:,.0f} | "
        f"{STORED_REFERENCE_PEAK_RSS_MB} |")


# Side by side.


def reference_command(binary, input_path, output_path, settings, threads):
  """The C++ command line for ours' settings (a dict of SETTINGS + min_count).

  One epoch; -loss ns; -maxn 0 (the `sent2vec` command turns character
  n-grams on by default, and with -bucket 0 it divides by zero).
  """
  bigrams = settings["word_ngrams"] > 1
  return [binary, "sent2vec", "-input", input_path, "-output", output_path,
          "-minCount", str(settings["min_count"]),
          "-dim", str(settings["embedding_dim"]),
          "-epoch", "1", "-lr", f"{settings['learning_rate']:g}",
          "-wordNgrams", str(settings["word_ngrams"]),
          "-loss", "ns", "-neg", str(settings["num_negatives"]),
          "-thread", str(threads), "-t", f"{settings['sample']:g}",
          "-dropoutK", str(settings["dropout_k"]),
          "-minCountLabel", str(settings["min_count_label"]),
          "-bucket", str(settings["num_buckets"] if bigrams else 0),
          "-maxn", "0"]


class ProgressReader:
  """Timestamps the C++ code's "Progress: x%" lines as they arrive.

  `feed(data, now, cpu)` takes the bytes read since the last call; a line
  cut between two reads counts when its "%" arrives. `samples` holds
  (wall seconds, progress in [0, 1], process CPU seconds or None) for the
  last progress of each read that had one.
  """

  def __init__(self):
    self.samples = []
    self.finished = False
    self._tail = b""

  def feed(self, data, now, cpu=None):
    text = self._tail + data
    new = [m for m in _PROGRESS.finditer(text) if m.end() > len(self._tail)]
    self._tail = text[-64:]
    if new:
      progress = float(new[-1].group(1)) / 100.0
      self.samples.append((now, progress, cpu))
      self.finished = progress >= 1.0


def reference_window(samples, warmup_fraction):
  """(seconds, progress, cpu seconds or None) from the first sample at or
  past `warmup_fraction` to the last one before 100%."""
  inside = [s for s in samples if warmup_fraction <= s[1] < 1.0]
  if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
    raise errors.UserError(
        f"the reference printed {len(samples)} progress lines, too few to "
        "time (a corpus this small trains too fast: use more lines)")
  (t0, p0, c0), (t1, p1, c1) = inside[0], inside[-1]
  return t1 - t0, p1 - p0, (c1 - c0 if None not in (c0, c1) else None)


def reference_words_per_second(samples, warmup_fraction, words, known):
  """C++ (words/s, cores in use, seconds) over the window; words = tokens +
  end-of-lines.

  Its progress is known tokens read / (epochs x ntokens), ntokens = `words`
  of one pass (the file's tokens + lines); one pass reads `known` known
  tokens, so known tokens x words / known are words.
  """
  seconds, progress, cpu = reference_window(samples, warmup_fraction)
  known_read = progress * words  # -epoch 1.
  return (known_read * words / known / seconds,
          None if cpu is None else cpu / seconds, seconds)


def _process_cpu_seconds(pid):
  """utime + stime of a running process (Linux /proc), or None."""
  try:
    with open(f"/proc/{pid}/stat", "rb") as f:
      fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
  except (OSError, ValueError, IndexError):
    return None


def _reap(proc):
  """Waits for a child; returns its peak RSS in MB (its own ru_maxrss)."""
  _, status, usage = os.wait4(proc.pid, 0)
  proc.returncode = os.waitstatus_to_exitcode(status)
  return usage.ru_maxrss / 1024.0


def run_reference(command, log_path, poll_seconds=0.05):
  """Runs the C++ binary until it prints 100%; returns (samples, peak RSS
  MB, wall seconds). Its output is also written to `log_path`."""
  start = time.perf_counter()
  reader = ProgressReader()
  with open(log_path, "wb") as log:
    proc = subprocess.Popen(command, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    ended = False
    while not ended and not reader.finished:
      time.sleep(poll_seconds)
      chunks = []
      while True:
        try:
          data = os.read(fd, 1 << 20)
        except BlockingIOError:
          break
        if not data:
          ended = True
          break
        chunks.append(data)
      if chunks:
        data = b"".join(chunks)
        log.write(data)
        reader.feed(data, time.perf_counter(), _process_cpu_seconds(proc.pid))
    # Past training: skip writing the model. (Not Popen.kill: it polls, and
    # a poll that reaps the child loses its rusage.)
    os.kill(proc.pid, signal.SIGKILL)
    peak_rss_mb = _reap(proc)
    proc.stdout.close()
  if not reader.finished:
    with open(log_path, "rb") as f:
      tail = f.read()[-2000:].decode("utf-8", "replace")
    raise errors.UserError(
        f"the reference binary stopped (exit {proc.returncode}) before "
        f"100%: {shlex.join(command)}\n{tail}")
  return reader.samples, peak_rss_mb, time.perf_counter() - start


def run_ours(command, log_path, output_json):
  """Runs ours' child; returns (its JSON, peak RSS MB, wall seconds)."""
  start = time.perf_counter()
  with open(log_path, "wb") as log:
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    peak_rss_mb = _reap(proc)
  if proc.returncode != 0:
    with open(log_path, "rb") as f:
      tail = f.read()[-3000:].decode("utf-8", "replace")
    raise RuntimeError(f"ours failed (exit {proc.returncode}): "
                       f"{shlex.join(command)}\n{tail}")
  with open(output_json) as f:
    return json.load(f), peak_rss_mb, time.perf_counter() - start


def write_tokenised_lines(files, tokenizer, path, max_lines=0,
                          block_lines=8192):
  """Writes the files' non-empty lines, tokenised and space-separated.

  Returns (Counter of token bytes -> count, lines written, tokens written).
  """
  counter = {}
  lines = tokens = 0
  tokenise = tf.function(lambda batch: tokenizer.tokenize(batch))
  with open(path, "wb") as out:
    for batch in corpus.line_dataset(files).batch(block_lines):
      words = tokenise(batch)
      words = tf.ragged.boolean_mask(words, words.row_lengths() > 0)
      if max_lines:
        words = words[:max_lines - lines]
      joined = tf.strings.reduce_join(words, axis=1, separator=" ").numpy()
      if len(joined):
        out.write(b"\n".join(joined) + b"\n")
      unique, _, counts = tf.unique_with_counts(words.flat_values)
      for word, count in zip(unique.numpy().tolist(), counts.numpy().tolist()):
        counter[word] = counter.get(word, 0) + count
      lines += len(joined)
      tokens += int(words.flat_values.shape[0])
      if max_lines and lines >= max_lines:
        break
  return counter, lines, tokens


def summary(values):
  """{"median", "min", "max"} of a list of numbers (None if any is None)."""
  if not values or None in values:
    return None
  return {"median": statistics.median(values), "min": min(values),
          "max": max(values)}


def _ratio(a, b):
  return None if a is None or not b else a / b


# (summary key, side, per-run field) of every number summarised.
_SUMMARIES = (
    ("ours_words_per_second", "ours", "words_per_second"),
    ("reference_words_per_second", "reference", "words_per_second"),
    ("words_per_second_ratio", None, "words_per_second_ratio"),
    ("ours_words_per_cpu_second", "ours", "words_per_cpu_second"),
    ("reference_words_per_cpu_second", "reference", "words_per_cpu_second"),
    ("words_per_cpu_second_ratio", None, "words_per_cpu_second_ratio"),
    ("ours_peak_rss_mb", "ours", "peak_rss_mb"),
    ("reference_peak_rss_mb", "reference", "peak_rss_mb"),
    ("peak_rss_ratio", None, "peak_rss_ratio"),
)


def add_ratios(result):
  """Fills in, from each repeat's measurements ("ours" and "reference":
  words_per_second, cores_in_use or None, peak_rss_mb), its words per
  CPU-second, its ratios ours / C++ and, over the repeats, the median and
  range of each (`summary`). Returns `result`."""
  for r in result["repeats"]:
    ours, ref = r["ours"], r["reference"]
    for side in (ours, ref):
      side["words_per_cpu_second"] = _ratio(side["words_per_second"],
                                            side.get("cores_in_use"))
    for field in ("words_per_second", "words_per_cpu_second", "peak_rss_mb"):
      name = "peak_rss_ratio" if field == "peak_rss_mb" else field + "_ratio"
      r[name] = _ratio(ours[field], ref[field])
  for key, side, field in _SUMMARIES:
    result[key] = summary([(r[side] if side else r)[field]
                           for r in result["repeats"]])
  return result


def _number(value, text="{:,.0f}"):
  return "" if value is None else text.format(value)


def _ratio_text(stats):
  if stats is None:
    return ""
  return f"{stats['median']:.2f}x ({stats['min']:.2f}-{stats['max']:.2f})"


def _range_text(stats, unit=""):
  if stats is None:
    return ""
  return (f"{stats['median']:,.0f}{unit} ({stats['min']:,.0f}-"
          f"{stats['max']:,.0f})")


def side_by_side_markdown(result):
  """The per-repeat table, medians and ranges, and both command lines (of a
  result that `add_ratios` filled in)."""
  corpus_info = result["corpus"]
  out = [
      f"Same file for both: {corpus_info['lines']:,} lines, "
      f"{corpus_info['tokens']:,} tokens ({corpus_info['words']:,} words "
      f"with end-of-lines; {corpus_info['known_tokens']:,} known tokens), "
      f"vocabulary {corpus_info['vocabulary']:,} words (count >= "
      f"{result['settings']['min_count']}); {corpus_info['source']}. "
      f"{result['cpus']} cores; load average (1 / 5 / 15 min) "
      + " / ".join(f"{v:.2f}" for v in result["load_average_before"])
      + " before, "
      + " / ".join(f"{v:.2f}" for v in result["load_average_after"])
      + " after.",
      "",
      f"- C++: `{result['reference_command_display']}`",
      f"- ours: `{result['ours_command_display']}`",
      "",
      "| repeat | ours words/s | C++ words/s | words/s ours / C++ | cores in "
      "use, ours / C++ | ours words per CPU-s | C++ words per CPU-s | per "
      "CPU-s ours / C++ | ours peak RSS | C++ peak RSS | RSS ours / C++ | "
      "1-min load before ours / C++ |",
      "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|",
  ]
  for i, r in enumerate(result["repeats"], start=1):
    ours, ref = r["ours"], r["reference"]
    out.append(
        f"| {i} | {ours['words_per_second']:,.0f} | "
        f"{ref['words_per_second']:,.0f} | {r['words_per_second_ratio']:.2f}x "
        f"| {_number(ours['cores_in_use'], '{:.2f}')} / "
        f"{_number(ref['cores_in_use'], '{:.2f}')} | "
        f"{_number(ours['words_per_cpu_second'])} | "
        f"{_number(ref['words_per_cpu_second'])} | "
        f"{_number(r['words_per_cpu_second_ratio'], '{:.2f}x')} | "
        f"{ours['peak_rss_mb']:,.0f} MB | {ref['peak_rss_mb']:,.0f} MB | "
        f"{r['peak_rss_ratio']:.2f}x | {ours['load_average_1min']:.2f} / "
        f"{ref['load_average_1min']:.2f} |")
  out.append(
      f"| median (range) | {_range_text(result['ours_words_per_second'])} | "
      f"{_range_text(result['reference_words_per_second'])} | "
      f"**{_ratio_text(result['words_per_second_ratio'])}** | | "
      f"{_range_text(result['ours_words_per_cpu_second'])} | "
      f"{_range_text(result['reference_words_per_cpu_second'])} | "
      f"{_ratio_text(result['words_per_cpu_second_ratio'])} | "
      f"{_range_text(result['ours_peak_rss_mb'], ' MB')} | "
      f"{_range_text(result['reference_peak_rss_mb'], ' MB')} | "
      f"**{_ratio_text(result['peak_rss_ratio'])}** | |")
  return "\n".join(out) + "\n"


def _this_module_command():
  """This module run as it was run here (`-m` with the same module name,
  or the file), so that ours' child runs this very code."""
  spec = globals().get("__spec__")
  if spec is not None:
    return [sys.executable, "-m", spec.name]
  return [sys.executable, os.path.abspath(__file__)]


def _display(command, work_dir):
  return shlex.join(command).replace(work_dir, "$WORK")


def side_by_side():
  """Ours and the C++ binary alternately on the same lines; the ratios."""
  binary = FLAGS.reference_binary
  if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
    raise errors.UserError(f"--reference_binary={binary}: not an executable "
                           "file (build it with `make` in a checkout of "
                           "github.com/epfml/sent2vec)")
  load_before = os.getloadavg()
  if FLAGS.corpus_file:
    files = [FLAGS.corpus_file]
    source = f"the first lines of {FLAGS.corpus_file}"
  else:
    data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir, "gutenberg")
    files = corpus.list_files(corpus.book_corpus_pattern(data_dir,
                                                         FLAGS.corpus_parts))
    source = ("book corpus " + ", ".join(os.path.basename(f) for f in files)
              + (f", its first {FLAGS.max_lines:,} non-empty lines"
                 if FLAGS.max_lines else ", every non-empty line"))
  work_dir = FLAGS.work_dir or tempfile.mkdtemp(prefix="sent2vec_speed_")
  os.makedirs(work_dir, exist_ok=True)
  try:
    lines_path = os.path.join(work_dir, "lines.txt")
    tokenizer = tokenizer_lib.Tokenizer(keep_punctuation=True)
    print(f"tokenising into {lines_path}", flush=True)
    counter, lines, tokens = write_tokenised_lines(
        files, tokenizer, lines_path, FLAGS.max_lines)
    vocabulary = _vocabulary_from_counts(counter, FLAGS.min_count)
    known = int(vocabulary.counts.sum())
    words = tokens + lines
    vocab_dir = os.path.join(work_dir, "vocabulary")
    os.makedirs(vocab_dir, exist_ok=True)
    vocabulary.save(os.path.join(vocab_dir, model_dir_lib.VOCABULARY_FILE))
    with open(os.path.join(vocab_dir, model_dir_lib.CORPUS_STATS_FILE),
              "w") as f:
      json.dump({"tokens": tokens, "lines": lines, "known_tokens": known}, f)
    featurizer = sent2vec_featurizer.Sent2VecFeaturizer(
        vocabulary, tokenizer, word_ngrams=FLAGS.word_ngrams,
        num_buckets=FLAGS.num_buckets)
    cache_path = os.path.join(work_dir, "token_cache.tfrecord")
    token_cache.ensure(cache_path, [lines_path], featurizer, vocabulary,
                       FLAGS.block_lines)
    steps_per_pass = lines // FLAGS.block_lines
    warmup_steps = max(1, round(FLAGS.warmup_fraction * steps_per_pass))
    steps = steps_per_pass - warmup_steps
    if steps < 1:
      raise errors.UserError(f"{lines} lines make {steps_per_pass} blocks of "
                             f"{FLAGS.block_lines}: too few to measure")
    settings = {name: FLAGS[name].value for name in SETTINGS}
    settings["min_count"] = FLAGS.min_count
    ref_command = reference_command(
        binary, lines_path, os.path.join(work_dir, "cxx_model"), settings,
        FLAGS.reference_threads)
    ours_json = os.path.join(work_dir, "ours.json")
    ours_command = (
        _this_module_command()
        + [f"--corpus_file={lines_path}",
           f"--vocabulary={os.path.join(vocab_dir, 'vocab.txt')}",
           f"--token_cache={cache_path}", f"--steps={steps}",
           f"--warmup_steps={warmup_steps}", "--repeats=1",
           f"--output_json={ours_json}"]
        + [FLAGS[name].serialize() for name in SETTINGS])
    print(f"{lines:,} lines, {tokens:,} tokens, vocabulary "
          f"{len(vocabulary):,}; ours: {warmup_steps} + {steps} steps of "
          f"{FLAGS.block_lines} lines\nC++: {_display(ref_command, work_dir)}"
          f"\nours: {_display(ours_command, work_dir)}", flush=True)
    repeats = []
    for repeat in range(FLAGS.repeats):
      load = os.getloadavg()[0]
      ours, ours_rss, ours_wall = run_ours(
          ours_command, os.path.join(work_dir, f"ours_{repeat}.log"),
          ours_json)
      ours_row = {"words_per_second": ours["words_per_second"],
                  "peak_rss_mb": ours_rss,
                  "cores_in_use": ours["cpu_seconds_per_wall_second"],
                  "load_average_1min": load, "wall_seconds": ours_wall,
                  "measured_seconds": ours["seconds"]}
      load = os.getloadavg()[0]
      samples, ref_rss, ref_wall = run_reference(
          ref_command, os.path.join(work_dir, f"cxx_{repeat}.log"))
      rate, cores, seconds = reference_words_per_second(
          samples, FLAGS.warmup_fraction, words, known)
      ref_row = {"words_per_second": rate, "peak_rss_mb": ref_rss,
                 "cores_in_use": cores, "load_average_1min": load,
                 "wall_seconds": ref_wall, "measured_seconds": seconds}
      repeats.append({"ours": ours_row, "reference": ref_row})
      print(f"repeat {repeat + 1}: words/s ours "
            f"{ours_row['words_per_second']:,.0f}, C++ {rate:,.0f} "
            f"({ours_row['words_per_second'] / rate:.2f}x); peak RSS ours "
            f"{ours_rss:,.0f} MB, C++ {ref_rss:,.0f} MB", flush=True)
  finally:
    if not FLAGS.work_dir:
      shutil.rmtree(work_dir, ignore_errors=True)
  result = {
      "definition": "words/s: (tokens + end-of-lines) per wall-clock second "
                    "over the same part of one pass for both; words per "
                    "CPU-second: words/s / cores in use (the process's CPU "
                    "seconds / wall seconds over that part); peak RSS: each "
                    "child's ru_maxrss; ratios: ours / C++",
      "settings": settings, "reference_threads": FLAGS.reference_threads,
      "warmup_fraction": FLAGS.warmup_fraction, "cpus": os.cpu_count(),
      "corpus": {"source": source, "lines": lines, "tokens": tokens,
                 "words": words, "known_tokens": known,
                 "vocabulary": len(vocabulary)},
      "reference_command": ref_command,
      "reference_command_display": _display(ref_command, work_dir),
      "ours_command_display": _display(ours_command, work_dir),
      "load_average_before": list(load_before),
      "load_average_after": list(os.getloadavg()),
      "repeats": repeats,
  }
  return add_ratios(result)


def main(argv):
  del argv
  if FLAGS.steps_per_call < FLAGS.step_threads:
    raise errors.UserError(
        f"--step_threads={FLAGS.step_threads} needs --steps_per_call >= "
        "--step_threads")
  if FLAGS.reference_binary:
    result = side_by_side()
    markdown = side_by_side_markdown(result)
    print("\nSent2Vec training speed, side by side (ours / C++, "
          f"{FLAGS.repeats} alternating repeats)\n\n" + markdown)
    if FLAGS.output_markdown:
      with open(FLAGS.output_markdown, "w") as f:
        f.write(markdown)
  else:
    result = measure_ours()
    print_ours(result)
  if FLAGS.output_json:
    with open(FLAGS.output_json, "w") as f:
      json.dump(result, f, indent=2)


if __name__ == "__main__":
  cli.run(main)
