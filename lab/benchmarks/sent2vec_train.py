r"""Sent2Vec training speed: the trainer's plan, side by side with the C++ code.

  python -m lab.benchmarks.sent2vec_train \
      --flagfile=configs/sent2vec_books_uni.flags --data_dir=../shared/data \
      --corpus_parts=1 [--reference_binary=PATH/fasttext]

Ours: the plan `python -m trainers.sent2vec` trains with the same flags
(`trainer.plan_to_measure`), --steps after --warmup_steps, as the loop runs
them. With --reference_binary (epfml/sent2vec's `fasttext`), ours on one
tokenised file in a fresh process and `fasttext sent2vec -epoch 1` on it
(`reference_command`) alternate --repeats times; --small_job then times
whole one-epoch processes by phase. Both sides count words as the C++
`ntokens` (tokens + one end-of-line per line) from WARMUP_FRACTION of the
pass to its end; the C++ rate comes from its timestamped progress lines.
"""

import dataclasses
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import time

from absl import flags
import tensorflow as tf

from lab.benchmarks import child_process
from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.common import resources
from sentzoo.inputs import corpus
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.trainers import corpus_flags
from sentzoo.trainers import sent2vec
from sentzoo.trainers import trainer
from sentzoo.trainers import training_loop

# This module's own flags, beside the trainer's (one --flagfile for both).
FLAGS = sent2vec.FLAGS
flags.DEFINE_integer("steps", 200, "Measured steps (ours).", lower_bound=0,
                     flag_values=FLAGS)
flags.DEFINE_integer("warmup_steps", 20, "Unmeasured steps first (ours).",
                     lower_bound=0, flag_values=FLAGS)
flags.DEFINE_integer("repeats", 3, "Ours only: measured runs of --steps in "
                     "a row (median reported); side by side: alternating "
                     "pairs of processes.", lower_bound=1, flag_values=FLAGS)
flags.DEFINE_string("reference_binary", None, "The C++ sent2vec `fasttext` "
                    "binary to run side by side (absent: ours only).",
                    flag_values=FLAGS)
flags.DEFINE_integer("max_lines", 0, "Side by side: the first this many "
                     "non-empty lines (0: all).", lower_bound=0,
                     flag_values=FLAGS)
flags.DEFINE_bool("small_job", True, "Side by side: also time whole "
                  "one-epoch processes.", flag_values=FLAGS)
flags.DEFINE_string("work_dir", None, "Side by side: the tokenised file, "
                    "model directories and logs (default: a temporary "
                    "folder, removed).", flag_values=FLAGS)
flags.DEFINE_string("output_json", None, "Also write the numbers here.",
                    flag_values=FLAGS)
flags.DEFINE_string("output_markdown", None, "Side by side: also write the "
                    "tables here.", flag_values=FLAGS)

# The unmeasured start of a pass, and the C++ code's -thread (its default,
# 12, oversubscribes the machine).
WARMUP_FRACTION = 0.05
REFERENCE_THREADS = 2
_PROGRESS = re.compile(rb"Progress: *([0-9]+(?:\.[0-9]*)?)%")
# Ours' phases in a whole run: (name, what of its model directory the phase
# writes last: its time ends the phase; the training log's last record is
# the last step's).
OUR_PHASES = (
    ("start-up (Python, TensorFlow, flags)", "flags.txt"),
    ("data check and vocabulary (counting pass)", "vocab.txt"),
    ("token cache", "token_cache"),
    ("training (model, graph, steps)", "train_log.jsonl"),
    ("export", "export"),
    ("final evaluation", "finished.json"),
    ("exit", None),
)
REFERENCE_PHASES = ("dictionary pass", "training", "model written, exit")
# Where a run reads and writes: set per child, never inherited.
_PLACES = ("data_dir", "corpus_parts", "corpus_files", "model_dir",
           "verify_data")


def _per(a, b):
  return a / b if b else 0.0


def measure_ours(cfg, plan):
  """`--repeats` x `--steps` of the plan's step, as the loop runs them."""
  lines_seen = tf.Variable(0, dtype=tf.int64)
  tokens_seen = plan.checkpoint_items["tokens_seen"]
  spec = plan.dataset.element_spec

  @tf.function(input_signature=[spec])
  def counted_step(batch):
    lines_seen.assign_add(batch["num_lines"])
    return plan.train_step(batch)

  run_steps = training_loop.multi_step(counted_step, spec,
                                       threads=cfg.step_threads)
  iterator = iter(plan.dataset)

  def run(num_steps):
    while num_steps > 0:
      count = min(num_steps, cfg.steps_per_call)
      run_steps(iterator, tf.constant(count, tf.int32))
      num_steps -= count

  load_before = os.getloadavg()[0]
  run(FLAGS.warmup_steps)
  measured = []  # (seconds, tokens, lines, cpu seconds) per repeat.
  for _ in range(FLAGS.repeats):
    tokens, lines = int(tokens_seen.numpy()), int(lines_seen.numpy())
    cpu, start = time.process_time(), time.perf_counter()
    run(FLAGS.steps)
    measured.append((time.perf_counter() - start,
                     int(tokens_seen.numpy()) - tokens,
                     int(lines_seen.numpy()) - lines,
                     time.process_time() - cpu))
  rates = [_per(t + l, s) for s, t, l, _ in measured]
  seconds, tokens, lines, cpu = sorted(
      measured, key=lambda m: _per(m[1] + m[2], m[0]))[len(measured) // 2]
  return {
      "tokens_per_second": _per(tokens, seconds),
      "words_per_second": _per(tokens + lines, seconds),
      "words_per_cpu_second": _per(tokens + lines, cpu),
      "cpu_seconds_per_wall_second": _per(cpu, seconds),
      "peak_rss_mb": resources.peak_rss_mb(),
      "load_average_1min": [load_before, os.getloadavg()[0]],
      "steps": FLAGS.steps, "warmup_steps": FLAGS.warmup_steps,
      "seconds": seconds, "tokens": tokens, "lines": lines,
      "repeat_words_per_second": rates, "cpus": os.cpu_count(),
      "settings": dataclasses.asdict(cfg),
  }


def print_ours(result):
  cfg = result["settings"]
  print(f"\nSent2Vec training speed: {cfg['embedding_dim']}-d, word n-grams "
        f"{cfg['word_ngrams']}, blocks of {cfg['block_lines']} lines, "
        f"{cfg['steps_per_call']} steps per call, {cfg['step_threads']} step "
        "loop(s) at once, "
        + ("word ids from the token cache" if cfg["token_cache"]
           else "tokenising text")
        + f", {cfg['op_threads'] or 'default'} thread(s) per op, "
        f"{os.cpu_count()} cores; {result['steps']} steps in "
        f"{result['seconds']:.1f}s (the median of "
        f"{len(result['repeat_words_per_second'])} repeats: words/s "
        + ", ".join(f"{r:,.0f}" for r in result["repeat_words_per_second"])
        + "); 1-min load average "
        + " / ".join(f"{v:.1f}" for v in result["load_average_1min"])
        + " before / after\n")
  print("| tokens/s | words/s (tokens + end-of-lines) | words per CPU-second "
        "| peak RSS |\n|---:|---:|---:|---:|")
  print(f"| {result['tokens_per_second']:,.0f} | "
        f"{result['words_per_second']:,.0f} | "
        f"{result['words_per_cpu_second']:,.0f} | "
        f"{result['peak_rss_mb']:,.0f} MB |")
  print("(The C++ code: run side by side with --reference_binary.)")


# Side by side.


def reference_command(binary, input_path, output_path, cfg, threads):
  """The C++ command line for ours' settings; one epoch, -loss ns, -maxn 0
  (`sent2vec` turns character n-grams on by default, and with -bucket 0 it
  divides by zero)."""
  return [binary, "sent2vec", "-input", input_path, "-output", output_path,
          "-minCount", str(cfg.min_count), "-dim", str(cfg.embedding_dim),
          "-epoch", "1", "-lr", f"{cfg.learning_rate:g}",
          "-wordNgrams", str(cfg.word_ngrams), "-loss", "ns",
          "-neg", str(cfg.num_negatives), "-thread", str(threads),
          "-t", f"{cfg.sample:g}", "-dropoutK", str(cfg.dropout_k),
          "-minCountLabel", str(cfg.min_count_label),
          "-bucket", str(cfg.num_buckets if cfg.word_ngrams > 1 else 0),
          "-maxn", "0"]


class ProgressReader:
  """Timestamps the C++ code's "Progress: x%" lines as they arrive.

  `samples`: (wall seconds, progress in [0, 1], CPU seconds or None) of the
  last progress of each read that had one; a line cut between two reads
  counts when its "%" arrives.
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


def reference_words_per_second(samples, warmup_fraction, words, known):
  """C++ (words/s, cores in use, seconds) from the first progress sample at
  or past `warmup_fraction` to the last before 100%: its progress is known
  tokens read / ntokens (= `words`); a pass reads `known` of them."""
  inside = [s for s in samples if warmup_fraction <= s[1] < 1.0]
  if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
    raise errors.UserError(
        f"the reference printed {len(samples)} progress lines, too few to "
        "time (a corpus this small trains too fast: use more lines)")
  (t0, p0, c0), (t1, p1, c1) = inside[0], inside[-1]
  return ((p1 - p0) * words * words / known / (t1 - t0),
          None if None in (c0, c1) else (c1 - c0) / (t1 - t0), t1 - t0)


def our_phases(model_dir, start, end):
  """{phase: seconds} of a whole run of ours in `model_dir`, from the times
  its files were last written (a phase that wrote nothing is left out);
  start, end: the process's, as `time.time()`."""
  found, last = {}, start
  for name, written in OUR_PHASES:
    path = written and os.path.join(model_dir, written)
    if path is None or os.path.exists(path):
      at = end if path is None else os.path.getmtime(path)
      found[name], last = at - last, at
  return found


def reference_phases(samples, end):
  """{phase: seconds} of a whole C++ run from its progress samples."""
  first, done = samples[0][0], next(t for t, p, _ in samples if p >= 1.0)
  return dict(zip(REFERENCE_PHASES, (first, done - first, end - done)))


def write_tokenised_lines(files, tokenizer, path, max_lines=0,
                          block_lines=8192):
  """Writes the files' non-empty lines, tokenised, space-separated: returns
  ({token bytes: count}, lines written, tokens written)."""
  counter = {}
  lines = tokens = 0
  tokenise = tf.function(tokenizer.tokenize)
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


_FIELDS = ("words_per_second", "words_per_cpu_second", "peak_rss_mb")


def add_ratios(result):
  """Fills in each side's words per CPU-second, the ratios ours / C++ per
  repeat and, over the repeats, each one's `summary`. Returns `result`."""
  runs = result["repeats"]
  for r in runs:
    for side in (r["ours"], r["reference"]):
      side["words_per_cpu_second"] = child_process.ratios(
          [side["words_per_second"]], [side.get("cores_in_use")])[0]
  for field in _FIELDS:
    name = field.replace("_mb", "") + "_ratio"
    for r, ratio in zip(runs, child_process.ratios(
        [r["ours"][field] for r in runs],
        [r["reference"][field] for r in runs])):
      r[name] = ratio
    for side in ("ours", "reference"):
      result[f"{side}_{field}"] = child_process.summary(
          [r[side][field] for r in runs])
    result[name] = child_process.summary([r[name] for r in runs])
  return result


def _cell(value, spec=",.0f", unit=""):
  return "" if value is None else f"{value:{spec}}{unit}"


def _range(stats, unit="", spec=",.0f"):
  """'median (min-max)' of a `child_process.summary`; "" for None."""
  return "" if stats is None else (
      f"{stats['median']:{spec}}{unit} ({stats['min']:{spec}}-"
      f"{stats['max']:{spec}})")


def side_by_side_markdown(result):
  """The per-repeat table, medians and ranges, and both command lines (of a
  result that `add_ratios` filled in)."""
  c, load = result["corpus"], lambda v: " / ".join(f"{x:.2f}" for x in v)
  out = [
      f"Same file for both: {c['lines']:,} lines, {c['tokens']:,} tokens "
      f"({c['words']:,} words with end-of-lines; {c['known_tokens']:,} known "
      f"tokens), vocabulary {c['vocabulary']:,} words (count >= "
      f"{result['settings']['min_count']}); {c['source']}. "
      f"{result['cpus']} cores; load average (1 / 5 / 15 min) "
      f"{load(result['load_average_before'])} before, "
      f"{load(result['load_average_after'])} after.", "",
      f"- C++: `{result['reference_command_display']}`",
      f"- ours: `{result['ours_command_display']}`", "",
      "| repeat | ours words/s | C++ words/s | words/s ours / C++ | cores in "
      "use, ours / C++ | ours words per CPU-s | C++ words per CPU-s | per "
      "CPU-s ours / C++ | ours peak RSS | C++ peak RSS | RSS ours / C++ | "
      "1-min load before ours / C++ |",
      "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|",
  ]
  for i, r in enumerate(result["repeats"], start=1):
    ours, ref = r["ours"], r["reference"]
    both = lambda key, spec=",.0f", unit="": [  # pylint: disable=cell-var-from-loop
        _cell(ours[key], spec, unit), _cell(ref[key], spec, unit)]
    out.append("| " + " | ".join([
        str(i), *both("words_per_second"),
        _cell(r["words_per_second_ratio"], ".2f", "x"),
        " / ".join(both("cores_in_use", ".2f")),
        *both("words_per_cpu_second"),
        _cell(r["words_per_cpu_second_ratio"], ".2f", "x"),
        *both("peak_rss_mb", ",.0f", " MB"),
        _cell(r["peak_rss_ratio"], ".2f", "x"),
        " / ".join(both("load_average_1min", ".2f"))]) + " |")
  g = lambda name, unit="", spec=",.0f": _range(result[name], unit, spec)  # pylint: disable=unnecessary-lambda-assignment
  out.append(
      f"| median (range) | {g('ours_words_per_second')} | "
      f"{g('reference_words_per_second')} | "
      f"**{g('words_per_second_ratio', 'x', '.2f')}** | | "
      f"{g('ours_words_per_cpu_second')} | "
      f"{g('reference_words_per_cpu_second')} | "
      f"{g('words_per_cpu_second_ratio', 'x', '.2f')} | "
      f"{g('ours_peak_rss_mb', ' MB')} | {g('reference_peak_rss_mb', ' MB')} "
      f"| **{g('peak_rss_ratio', 'x', '.2f')}** | |")
  return "\n".join(out) + "\n"


def small_job_markdown(job):
  """The whole-process table of the small job and each side's phases."""
  runs = job["repeats"]
  out = [
      f"- ours: `{job['ours_command_display']}`",
      f"- C++: `{job['reference_command_display']}`", "",
      "| repeat | ours s | C++ s | speed ours / C++ (C++ s / ours s) | ours "
      "peak RSS | C++ peak RSS | 1-min load before ours / C++ |",
      "|---:|---:|---:|---:|---:|---:|---|"]
  for i, r in enumerate(runs, start=1):
    ours, ref = r["ours"], r["reference"]
    out.append(
        f"| {i} | {ours['seconds']:.1f} | {ref['seconds']:.1f} | "
        f"{r['speed_ratio']:.2f}x | {ours['peak_rss_mb']:,.0f} MB | "
        f"{ref['peak_rss_mb']:,.0f} MB | {ours['load_average_1min']:.2f} / "
        f"{ref['load_average_1min']:.2f} |")
  out += [f"| median (range) | {_range(job['ours_seconds'], '', '.1f')} | "
          f"{_range(job['reference_seconds'], '', '.1f')} | "
          f"**{_range(job['speed_ratio'], 'x', '.2f')}** | | | |", "",
          "| side | phase | seconds, median (range) |", "|---|---|---:|"]
  for side, key, names in (("ours", "ours", [n for n, _ in OUR_PHASES]),
                           ("C++", "reference", REFERENCE_PHASES)):
    for name in names:
      values = [r[key]["phases"].get(name) for r in runs]
      if any(v is not None for v in values):
        out.append(f"| {side} | {name} | "
                   + _range(child_process.summary([v or 0.0 for v in values]),
                            "", ".1f") + " |")
  return "\n".join(out) + "\n"


def _passed_on(cfg, places=False):
  """Our trainer's flags that differ from their defaults, as arguments; the
  places a run reads and writes only if `places`, never --model_dir."""
  return [FLAGS[f.name].serialize() for f in dataclasses.fields(cfg)
          if (places or f.name not in _PLACES) and f.name != "model_dir"
          and FLAGS[f.name].value != FLAGS[f.name].default]


def side_by_side(model_trainer):
  """Ours and the C++ binary alternately on the same lines; the ratios."""
  binary = FLAGS.reference_binary
  if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
    raise errors.UserError(f"--reference_binary={binary}: not an executable "
                           "file (build it with `make` in a checkout of "
                           "github.com/epfml/sent2vec)")
  cfg = model_trainer.settings()
  load_before = os.getloadavg()
  files = corpus_flags.corpus_files(cfg, data_dir_lib.resolve_data_dir(
      FLAGS.data_dir, model_trainer.data_subdir(cfg)))
  source = (", ".join(os.path.basename(f) for f in files)
            + (f", its first {FLAGS.max_lines:,} non-empty lines"
               if FLAGS.max_lines else ", every non-empty line"))
  work_dir = FLAGS.work_dir or tempfile.mkdtemp(prefix="sent2vec_speed_")
  os.makedirs(work_dir, exist_ok=True)
  display = lambda command: shlex.join(command).replace(work_dir, "$WORK")  # pylint: disable=unnecessary-lambda-assignment
  log = lambda name: os.path.join(work_dir, name + ".log")  # pylint: disable=unnecessary-lambda-assignment
  repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  try:
    lines_path = os.path.join(work_dir, "lines.txt")
    print(f"tokenising into {lines_path}", flush=True)
    counter, lines, tokens = write_tokenised_lines(
        files, tokenizer_lib.Tokenizer(keep_punctuation=cfg.keep_punctuation),
        lines_path, FLAGS.max_lines)
    vocabulary = sum(1 for c in counter.values() if c >= cfg.min_count)
    known = sum(c for c in counter.values() if c >= cfg.min_count)
    words = tokens + lines
    steps_per_pass = lines // cfg.block_lines
    warmup_steps = max(1, round(WARMUP_FRACTION * steps_per_pass))
    if steps_per_pass - warmup_steps < 1:
      raise errors.UserError(f"{lines} lines make {steps_per_pass} blocks of "
                             f"{cfg.block_lines}: too few to measure")
    ref_command = reference_command(binary, lines_path,
                                    os.path.join(work_dir, "cxx_model"), cfg,
                                    REFERENCE_THREADS)
    ours_json = os.path.join(work_dir, "ours.json")
    ours_command = [
        sys.executable, "-m", "lab.benchmarks.sent2vec_train",
        f"--corpus_files={lines_path}", "--noverify_data",
        f"--model_dir={os.path.join(work_dir, 'ours')}",
        f"--steps={steps_per_pass - warmup_steps}",
        f"--warmup_steps={warmup_steps}", "--repeats=1",
        f"--output_json={ours_json}"] + _passed_on(cfg)
    print(f"{lines:,} lines, {tokens:,} tokens, vocabulary {vocabulary:,}; "
          f"ours: {warmup_steps} + {steps_per_pass - warmup_steps} steps\n"
          f"C++: {display(ref_command)}\nours: {display(ours_command)}",
          flush=True)

    last = {}

    def ours(repeat):
      done = child_process.run(ours_command, log(f"ours_{repeat}"), cwd=repo)
      with open(ours_json) as f:
        measured = json.load(f)
      last["ours"] = {"words_per_second": measured["words_per_second"],
                      "cores_in_use": measured["cpu_seconds_per_wall_second"],
                      "peak_rss_mb": done.peak_rss_mb,
                      "load_average_1min": done.load_before}
      return last["ours"]

    def reference(repeat):
      reader = ProgressReader()
      done = child_process.run(ref_command, log(f"cxx_{repeat}"), reader,
                               stop=lambda: reader.finished)
      rate, cores, _ = reference_words_per_second(
          reader.samples, WARMUP_FRACTION, words, known)
      ours_rate, ours_rss = (last["ours"]["words_per_second"],
                             last["ours"]["peak_rss_mb"])
      print(f"repeat {repeat + 1}: words/s ours {ours_rate:,.0f}, C++ "
            f"{rate:,.0f} ({ours_rate / rate:.2f}x); peak RSS ours "
            f"{ours_rss:,.0f} MB, C++ {done.peak_rss_mb:,.0f} MB", flush=True)
      return {"words_per_second": rate, "cores_in_use": cores,
              "peak_rss_mb": done.peak_rss_mb,
              "load_average_1min": done.load_before}

    sides = child_process.alternate(FLAGS.repeats,
                                    {"ours": ours, "reference": reference})
    result = add_ratios({
        "settings": dataclasses.asdict(cfg),
        "reference_threads": REFERENCE_THREADS,
        "warmup_fraction": WARMUP_FRACTION, "cpus": os.cpu_count(),
        "corpus": {"source": source, "lines": lines, "tokens": tokens,
                   "words": words, "known_tokens": known,
                   "vocabulary": vocabulary},
        "reference_command": ref_command,
        "reference_command_display": display(ref_command),
        "ours_command_display": display(ours_command),
        "load_average_before": list(load_before),
        "repeats": [{"ours": o, "reference": r}
                    for o, r in zip(sides["ours"], sides["reference"])]})
    if FLAGS.small_job:
      result["small_job"] = small_job(cfg, ref_command, work_dir, repo,
                                      display, log)
    result["load_average_after"] = list(os.getloadavg())
  finally:
    if not FLAGS.work_dir:
      shutil.rmtree(work_dir, ignore_errors=True)
  return result


def small_job(cfg, ref_command, work_dir, repo, display, log):
  """Whole processes of a one-epoch job, alternately: ours (the trainer on
  the corpus, a new model directory each time) and the C++ command."""
  model_dir = os.path.join(work_dir, "job")
  ours_command = [sys.executable, "-m", "trainers.sent2vec"] + [
      a for a in _passed_on(cfg, places=True)
      if not a.startswith("--num_epochs")] + [
          "--num_epochs=1", f"--model_dir={model_dir}"]

  def ours(repeat):
    shutil.rmtree(model_dir, ignore_errors=True)
    start = time.time()
    done = child_process.run(ours_command, log(f"job_ours_{repeat}"),
                             cwd=repo)
    phases = our_phases(model_dir, start, start + done.seconds)
    shutil.rmtree(model_dir, ignore_errors=True)
    return {"seconds": done.seconds, "peak_rss_mb": done.peak_rss_mb,
            "phases": phases, "load_average_1min": done.load_before}

  def reference(repeat):
    reader = ProgressReader()
    done = child_process.run(ref_command, log(f"job_reference_{repeat}"),
                             reader)
    return {"seconds": done.seconds, "peak_rss_mb": done.peak_rss_mb,
            "phases": reference_phases(reader.samples, done.seconds),
            "load_average_1min": done.load_before}

  sides = child_process.alternate(FLAGS.repeats,
                                  {"ours": ours, "reference": reference})
  runs = [{"ours": o, "reference": r,
           "speed_ratio": r["seconds"] / o["seconds"]}
          for o, r in zip(sides["ours"], sides["reference"])]
  for repeat, row in enumerate(runs, start=1):
    print(f"small job {repeat}: ours {row['ours']['seconds']:.1f}s, C++ "
          f"{row['reference']['seconds']:.1f}s ({row['speed_ratio']:.2f}x); "
          "ours: " + ", ".join(f"{k} {v:.1f}s" for k, v in
                               row["ours"]["phases"].items()), flush=True)
  return {
      "ours_command_display": display(ours_command),
      "reference_command_display": display(ref_command), "repeats": runs,
      **{f"{key}_seconds": child_process.summary(
          [r[key]["seconds"] for r in runs]) for key in ("ours", "reference")},
      "speed_ratio": child_process.summary([r["speed_ratio"] for r in runs])}


def main(argv):
  del argv
  model_trainer = sent2vec.Sent2VecTrainer()
  if FLAGS.reference_binary:
    result = side_by_side(model_trainer)
    markdown = side_by_side_markdown(result)
    if "small_job" in result:
      markdown += ("\nThe small job, whole processes (ours / C++, "
                   f"{FLAGS.repeats} alternating repeats)\n\n"
                   + small_job_markdown(result["small_job"]))
    print("\nSent2Vec training speed, side by side (ours / C++, "
          f"{FLAGS.repeats} alternating repeats)\n\n" + markdown)
    if FLAGS.output_markdown:
      with open(FLAGS.output_markdown, "w") as f:
        f.write(markdown)
  else:
    cfg = model_trainer.settings()
    model_trainer.check_flags(cfg, tf.distribute.get_strategy())
    model_trainer.configure_runtime(cfg)
    with trainer.plan_to_measure(model_trainer) as plan:
      result = measure_ours(cfg, plan)
    print_ours(result)
  if FLAGS.output_json:
    with open(FLAGS.output_json, "w") as f:
      json.dump(result, f, indent=2)


if __name__ == "__main__":
  cli.run(main, FLAGS)
