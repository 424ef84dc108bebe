r"""Siamese CBOW training speed on the book corpus, side by side with gensim.

  python -m lab.benchmarks.siamese_cbow_train \
      --flagfile=configs/siamese_cbow_best.flags --data_dir=../shared/data \
      [--gensim_python=PYTHON_WITH_GENSIM] [--earlier_steps] [--end_to_end] \
      [--profile_steps=300] [--record_dir=docs/records/siamese_cbow_train]

Takes the trainer's own flags. Each side runs --repeats times in a fresh
process, alternating: ours, --steps of the trainer's plan after
--warmup_steps (groups/s as the time of one epoch); the earlier steps
(--earlier_steps); the trainer itself for one epoch (--end_to_end);
gensim 4's CBOW with the paper's baseline settings on a tokenised copy of the
corpus (`build_vocab`, one epoch). Only the ratios of one sequence compare.
"""

import collections
import glob
import json
import os
import re
import shutil
import sys
import time

from absl import flags

from lab.benchmarks import child_process
from lab import tables
from sentzoo.common import cli
from sentzoo.common import errors
from sentzoo.common import resources
from sentzoo.trainers import siamese_cbow

FLAGS = siamese_cbow.FLAGS
# The trainer's flags, passed on to the children (--model_dir: per child).
_TRAINERS = (frozenset(FLAGS) | {"flagfile"}) - {"model_dir"}
flags.DEFINE_integer("steps", 3000, "Timed steps of ours.", lower_bound=1,
                     flag_values=FLAGS)
flags.DEFINE_integer("warmup_steps", 300, "Untimed steps first (XLA "
                     "compilation of the batch shapes, pipeline warm-up).",
                     lower_bound=0, flag_values=FLAGS)
flags.DEFINE_integer("repeats", 2, "Alternating repeats.", lower_bound=1,
                     flag_values=FLAGS)
flags.DEFINE_string("gensim_python", None, "A Python that imports gensim "
                    "(4.x, with its compiled corpus_file extension); "
                    "optional.", flag_values=FLAGS)
flags.DEFINE_bool("end_to_end", False, "Also time the trainer itself, from "
                  "a fresh model dir and count cache (minutes per repeat).",
                  flag_values=FLAGS)
flags.DEFINE_string("work_dir", "/tmp/sentzoo_siamese_cbow_train",
                    "Cached vocabulary, batch count and tokenised corpus.",
                    flag_values=FLAGS)
flags.DEFINE_string("record_dir", None, "Record the results here: "
                    "docs/records/siamese_cbow_train for "
                    "docs/siamese_cbow_train_speed.md.", flag_values=FLAGS)
flags.DEFINE_bool("earlier_steps", False, "Also time, in the same "
                  "sequence, the earlier steps, on by-length "
                  "batches (--batch_layout=by_length): the flat step "
                  "(`siamese_cbow_step.make_train_step`) and the padded step "
                  "before it (`make_dense_train_step`: XLA on the padded "
                  "groups).", flag_values=FLAGS)
flags.DEFINE_integer("profile_steps", 0, "After its timed steps, the first "
                     "repeat of ours traces this many more with the TF "
                     "profiler (in <work_dir>/profile) and prints where their "
                     "time went; 0: no trace.", lower_bound=0,
                     flag_values=FLAGS)

# The train-step children: the trainer's step on the flags' batches, and the
# earlier steps (--earlier_steps), with the rows they print.
CHILDREN = {"ours": "ours, train step",
            "by_length": "ours, by-length batches (the flat step)",
            "padded": "ours, by-length batches, the padded step"}
flags.DEFINE_enum("child", None, list(CHILDREN), "Internal: one "
                  "measurement.", flag_values=FLAGS)

# The paper's word2vec CBOW baseline settings (../shared/notes/peers.md).
GENSIM_SETTINGS = dict(vector_size=300, window=5, min_count=5, sample=1e-5,
                       negative=5, hs=0, sg=0, workers=2)

_GENSIM_CHILD = """\
import json, sys, time
from gensim.models import word2vec_corpusfile  # the compiled extension
from gensim.models import Word2Vec
path, settings = sys.argv[1], json.loads(sys.argv[2])
start = time.perf_counter()
model = Word2Vec(**settings)
model.build_vocab(corpus_file=path)
vocabulary_done = time.perf_counter()
model.train(corpus_file=path, total_examples=model.corpus_count,
            total_words=model.corpus_total_words, epochs=1)
end = time.perf_counter()
print(json.dumps({"seconds": end - start,
                  "epoch_seconds": end - vocabulary_done,
                  "vocabulary": len(model.wv),
                  "words": model.corpus_total_words}))
"""

_TOKEN = re.compile(r"\w+|[^\w\s]")


def write_gensim_corpus(files, path):
  """Tokenised lines of `files` (gzip text) -> `path`: (lines, tokens)."""
  import gzip  # pylint: disable=g-import-not-at-top
  lines = tokens = 0
  partial = path + ".partial"
  with open(partial, "w", encoding="utf-8") as out:
    for name in files:
      with gzip.open(name, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
          words = _TOKEN.findall(line.lower())
          if words:
            out.write(" ".join(words) + "\n")
            lines += 1
            tokens += len(words)
  os.replace(partial, path)
  return lines, tokens


def run_child(command):
  """Runs `command` in a fresh process: (its JSON result, {} if none, with
  its wall_seconds and peak_rss_mb; the 1-min load before)."""
  done = child_process.run(command)
  result = child_process.last_json(done.output) or {}
  result.update(wall_seconds=done.seconds, peak_rss_mb=done.peak_rss_mb)
  return result, done.load_before


# Profiler trace events that are not one kernel's or op's own work: the
# executors, runtimes and iterators around them (their time is their
# children's).
_WRAPPER_EVENTS = re.compile(
    r"^(ThreadpoolListener|ExecutorState|CpuExecutable|ThunkExecutor|"
    r"BlockUntilReady|Iterator::|Eager|TFE_|KernelAndDevice|steps$|"
    r"InstantiatedCapturedFunction|FunctionRun|IteratorGetNext|"
    r"ExecutorDoneCallback|ParallelFor|MemoryAllocation|MemoryDeallocation)")
# XLA kernels (thunks of the compiled step): HLO instruction names.
_XLA_KERNEL = re.compile(r"(fusion|^wrapped_|^copy|^custom-call|^dot|"
                         r"^scatter|^gather|^sort|^while|^call)")


def _trace_events(profile_dir):
  """The trace events of the profile in `profile_dir`, through the TF
  profiler's own converter (the one TensorBoard's profile plugin calls;
  internal to TF): [(thread name, event name, duration us)]."""
  # pylint: disable=g-import-not-at-top
  from tensorflow.python.profiler.internal import _pywrap_profiler_plugin
  paths = glob.glob(os.path.join(profile_dir, "**", "*.xplane.pb"),
                    recursive=True)
  data, ok = _pywrap_profiler_plugin.xspace_to_tools_data(
      paths, "trace_viewer@", {})
  if not ok:
    raise RuntimeError(f"cannot read the trace in {profile_dir}")
  events = json.loads(data)["traceEvents"]
  threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
  return [(threads.get((e["pid"], e.get("tid")), ""), e["name"],
           e.get("dur", 0.0)) for e in events if e.get("ph") == "X"]


def summarise_events(events, steps, wall_seconds, top=12):
  """Markdown lines: where the traced steps' time went, per step.

  Three parts: the XLA kernels of the compiled step (HLO fusion names),
  the TF ops that run on the step's own threads outside XLA, and the
  input pipeline's (tf.data threads: the map functions' ops); then the top
  kernels and ops. Times are per step, in ms of thread time (the threads
  run at once on the cores, so the parts can add up to more than the
  wall time).
  """
  per_step = lambda us: us / 1e3 / max(steps, 1)
  parts = collections.Counter()
  names = collections.Counter()
  xla_run = 0.0
  for thread, name, duration in events:
    if name == "CpuExecutable::ExecuteAsyncOnStream":
      xla_run += duration
    if _WRAPPER_EVENTS.match(name):
      continue
    if thread.startswith("tf_data"):
      part = "input pipeline (tf.data threads)"
    elif _XLA_KERNEL.search(name):
      part = "compiled step: XLA kernels"
    else:
      part = "step: TF ops outside XLA"
    parts[part] += duration
    names[(part, name)] += duration
  lines = [f"Traced: {steps} steps, {1e3 * wall_seconds / max(steps, 1):.2f} "
           "ms wall per step.", "",
           "| where | ms per step |", "|---|---:|"]
  for part, duration in parts.most_common():
    lines.append(f"| {part} | {per_step(duration):.2f} |")
  lines.append(f"| (the XLA executable's runs, kernels included) | "
               f"{per_step(xla_run):.2f} |")
  lines += ["", "| kernel or op | where | ms per step |", "|---|---|---:|"]
  for (part, name), duration in names.most_common(top):
    lines.append(f"| `{name}` | {part.split(':')[0].split(' (')[0]} | "
                 f"{per_step(duration):.3f} |")
  return lines


def profile_summary(profile_dir, steps, wall_seconds):
  """`summarise_events` of the trace in `profile_dir`, or one line saying
  why there is none."""
  try:
    events = _trace_events(profile_dir)
  except (ImportError, RuntimeError, ValueError, KeyError) as e:
    return [f"(no profile summary: {e})"]
  return summarise_events(events, steps, wall_seconds)


def _child_ours():
  """Measures the trainer's plan; prints one JSON line."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from sentzoo.trainers import trainer  # pylint: disable=g-import-not-at-top
  from sentzoo.trainers import training_loop  # pylint: disable=g-import-not-at-top
  from sentzoo.trainers import siamese_cbow_step  # pylint: disable=g-import-not-at-top
  model_trainer = siamese_cbow.SiameseCBOWTrainer()
  cfg = model_trainer.settings()
  rss = {"imported": resources.current_rss_mb()}
  plan_start = time.perf_counter()
  with trainer.plan_to_measure(model_trainer) as plan:
    plan_seconds = time.perf_counter() - plan_start
    rss["plan_built"] = resources.current_rss_mb()
    train_step = plan.train_step
    if FLAGS.child == "padded":
      train_step = siamese_cbow_step.make_dense_train_step(
          plan.checkpoint_items["model"], plan.checkpoint_items["optimizer"],
          cfg.num_negatives, cfg.jit_compile)
    iterator = iter(plan.dataset)
    run_steps = training_loop.multi_step(train_step, iterator.element_spec)
    warmup_start = time.perf_counter()
    if FLAGS.warmup_steps:
      run_steps(iterator, tf.constant(FLAGS.warmup_steps))[0]["loss"].numpy()
    warmup_seconds = time.perf_counter() - warmup_start
    rss["warmed_up"] = resources.current_rss_mb()
    cpu = time.process_time()
    start = time.perf_counter()
    metrics, done = run_steps(iterator, tf.constant(FLAGS.steps))
    loss = float(metrics["loss"].numpy())
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    done = int(done.numpy())
    if not done:
      raise errors.UserError(
          f"the training data ran out within the {FLAGS.warmup_steps} warm-up "
          "steps: lower --warmup_steps or raise --num_epochs")
    profile = None
    if FLAGS.profile_steps:
      profile_dir = os.path.join(os.path.abspath(FLAGS.work_dir), "profile")
      shutil.rmtree(profile_dir, ignore_errors=True)
      tf.profiler.experimental.start(profile_dir)
      traced_start = time.perf_counter()
      traced = int(run_steps(iterator, tf.constant(FLAGS.profile_steps))[1])
      traced_seconds = time.perf_counter() - traced_start
      tf.profiler.experimental.stop()
      profile = profile_summary(profile_dir, traced, traced_seconds)
    groups_per_second = done * cfg.batch_size / seconds
    epoch_groups = plan.steps_per_epoch * cfg.batch_size
    print(json.dumps({
        "steps": done, "seconds": seconds, "cpu_seconds": cpu,
        "groups_per_second": groups_per_second,
        "epoch_groups": epoch_groups,
        "epoch_seconds": epoch_groups / groups_per_second,
        "loss": loss,
        "plan_seconds": plan_seconds, "warmup_seconds": warmup_seconds,
        "rss_mb": dict(rss, timed=resources.current_rss_mb()),
        "profile": profile,
        "own_peak_rss_mb": resources.peak_rss_mb()}))


def _trainer_flags(argv):
  """The command-line flags that are the trainer's (not this module's)."""
  names = [a.lstrip("-").split("=")[0] for a in argv]
  return [a for a, name in zip(argv, names) if name in _TRAINERS or (
      name.startswith("no") and name[2:] in _TRAINERS)]


def _gensim_command(work_dir):
  """The gensim child on a tokenised copy of the corpus (written once)."""
  from sentzoo.common import data_dir as data_dir_lib  # pylint: disable=g-import-not-at-top
  from sentzoo.trainers import corpus_flags  # pylint: disable=g-import-not-at-top
  cfg = siamese_cbow.SiameseCBOWTrainer().settings()
  files = corpus_flags.corpus_files(cfg, data_dir_lib.resolve_data_dir(
      FLAGS.data_dir, corpus_flags.data_subdir(cfg)))
  path = os.path.join(work_dir, "tokens_" + "_".join(
      os.path.basename(f).split(".")[0] for f in files) + ".txt")
  if not os.path.exists(path):
    print(f"writing the tokenised corpus for gensim: {path}", flush=True)
    start = time.perf_counter()
    lines, tokens = write_gensim_corpus(files, path)
    print(f"  {lines:,} lines, {tokens:,} tokens "
          f"({time.perf_counter() - start:.0f}s)", flush=True)
  return [FLAGS.gensim_python, "-c", _GENSIM_CHILD, path,
          json.dumps(GENSIM_SETTINGS)]


def side_by_side(argv):
  """The alternating sequence; returns the printed lines."""
  out = child_process.Printed()
  say = out.say

  work_dir = os.path.abspath(FLAGS.work_dir)
  os.makedirs(work_dir, exist_ok=True)
  trainer_flags = _trainer_flags(argv)
  ours = [sys.executable, "-m", "lab.benchmarks.siamese_cbow_train",
          *trainer_flags, f"--model_dir={os.path.join(work_dir, 'plan')}",
          f"--steps={FLAGS.steps}", f"--warmup_steps={FLAGS.warmup_steps}",
          "--child=ours"]
  gensim_command = (_gensim_command(work_dir) if FLAGS.gensim_python
                    else None)
  say(f"Load average before: {child_process.load_averages()}; "
      f"{os.cpu_count()} CPUs",
      f"ours: {FLAGS.steps} timed steps after {FLAGS.warmup_steps} warm-up "
      "steps; flags: " + " ".join(trainer_flags), "",
      "| repeat | run | groups/s | one epoch (s) | peak RSS (MB) | "
      "1-min load |", "|---|---|---:|---:|---:|---:|")

  def step_child(child, extra=()):
    def side(repeat):
      r, load = run_child(ours[:-1] + list(extra) + [f"--child={child}"] + (
          [f"--profile_steps={FLAGS.profile_steps}"]
          if child == "ours" and repeat == 0 else []))
      # The traced child's peak holds the profiler's events too.
      traced = " (with the profiler's trace)" if r.get("profile") else ""
      say(f"| {repeat + 1} | {CHILDREN[child]} | "
          f"{r['groups_per_second']:,.0f} | {r['epoch_seconds']:.1f} | "
          f"{r['peak_rss_mb']:,.0f}{traced} | {load:.1f} |")
      return r
    return side

  def end_to_end(repeat):
    e2e_dir = os.path.join(work_dir, f"end_to_end_{repeat + 1}")
    shutil.rmtree(e2e_dir, ignore_errors=True)
    r, load = run_child(
        [sys.executable, "-m", "trainers.siamese_cbow", *trainer_flags,
         "--noexport", "--num_epochs=1", f"--model_dir={e2e_dir}",
         f"--count_cache_dir={os.path.join(e2e_dir, 'count_cache')}"])
    say(f"| {repeat + 1} | ours, trainer end to end (one epoch) | | "
        f"{r['wall_seconds']:.1f} | {r['peak_rss_mb']:,.0f} | {load:.1f} |")
    return r

  def gensim(repeat):
    r, load = run_child(gensim_command)
    say(f"| {repeat + 1} | gensim CBOW, vocabulary + 1 epoch (epoch alone) | "
        f"| {r['seconds']:.1f} ({r['epoch_seconds']:.1f}) | "
        f"{r['peak_rss_mb']:,.0f} | {load:.1f} |")
    return r

  sides = {"ours": step_child("ours")}
  earlier = ("by_length", "padded") if FLAGS.earlier_steps else ()
  for child in earlier:
    sides[child] = step_child(child, ["--batch_layout=by_length"])
  if FLAGS.end_to_end:
    sides["end_to_end"] = end_to_end
  if gensim_command:
    sides["gensim"] = gensim
  results = child_process.alternate(FLAGS.repeats, sides)
  say("", f"Load average after: {child_process.load_averages()}",
      "", "Fixed costs and memory of ours (the train-step children; repeat 1 "
      "builds the plan: vocabulary and batch count, or reads them from "
      "the caches):", "",
      "| repeat | plan built (s) | warm-up steps (s) | RSS after import / "
      "plan / warm-up / timed steps (MB) |", "|---|---:|---:|---|")
  for repeat, r in enumerate(results["ours"], start=1):
    rss = r["rss_mb"]
    say(f"| {repeat} | {r['plan_seconds']:.1f} | {r['warmup_seconds']:.1f} "
        f"| {rss['imported']:,.0f} / {rss['plan_built']:,.0f} / "
        f"{rss['warmed_up']:,.0f} / {rss['timed']:,.0f} |")
  say("")
  if results["ours"][0].get("profile"):
    say(f"Profile of ours (TF profiler, repeat 1, after its timed steps; "
        f"trace in {os.path.join(work_dir, 'profile')}):", "",
        *results["ours"][0]["profile"], "")
  say(f"Medians (ranges) over {FLAGS.repeats} repeat(s):", "",
      "| what | median (range) |", "|---|---:|")

  def row(what, values, spec=",.0f"):
    say(f"| {what} | {tables.median_range(values, spec)} |")

  def field(side, name):
    return [r[name] for r in results.get(side, [])]

  our_epoch = field("ours", "epoch_seconds")
  row("ours, train step: groups/s", field("ours", "groups_per_second"))
  row(f"ours, train step: one epoch of "
      f"{results['ours'][0]['epoch_groups']:,} groups (s)", our_epoch, ".1f")
  untraced = [r["peak_rss_mb"] for r in results["ours"]
              if not r.get("profile")]
  say("| ours, train step: peak RSS (MB; without the profiler) | "
      + (tables.median_range(untraced) if untraced
         else "only the traced repeat") + " |")
  for child in earlier:
    row(f"{CHILDREN[child]}: groups/s", field(child, "groups_per_second"))
    row(f"speed ratio, train step / {CHILDREN[child]}",
        child_process.ratios(field(child, "epoch_seconds"), our_epoch), ".2f")
  e2e = field("end_to_end", "wall_seconds")
  if e2e:
    row("ours, trainer end to end (one epoch) (s)", e2e, ".1f")
    row("ours, trainer end to end (one epoch): peak RSS (MB)",
        field("end_to_end", "peak_rss_mb"))
  if gensim_command:
    total, epoch = field("gensim", "seconds"), field("gensim", "epoch_seconds")
    row("gensim, vocabulary + 1 epoch (s)", total, ".1f")
    row("gensim, 1 epoch alone (s)", epoch, ".1f")
    row("gensim: peak RSS (MB)", field("gensim", "peak_rss_mb"))
    say("| **speed ratio, ours train step / gensim vocabulary + epoch** "
        "(gensim s / our s) | **" + tables.median_range(
            child_process.ratios(total, our_epoch), ".2f") + "** |")
    row("speed ratio, ours train step / gensim epoch alone",
        child_process.ratios(epoch, our_epoch), ".2f")
    if e2e:
      row("speed ratio, ours end to end / gensim vocabulary + epoch",
          child_process.ratios(total, e2e), ".2f")
  else:
    say("| gensim | not run (no --gensim_python) |")
  if FLAGS.record_dir:
    child_process.write_record(FLAGS.record_dir,
                               "lab.benchmarks.siamese_cbow_train", argv, out)
  return out


def main(argv):
  del argv
  if FLAGS.child:
    _child_ours()
    return
  side_by_side(sys.argv[1:])


if __name__ == "__main__":
  cli.run(main, FLAGS)
