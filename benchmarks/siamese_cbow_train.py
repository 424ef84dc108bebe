r"""Siamese CBOW training speed on the book corpus, side by side with gensim.

Ours only:

  python -m benchmarks.siamese_cbow_train \
      --flagfile=configs/siamese_cbow_best.flags --data_dir=../shared/data

Side by side with gensim's word2vec CBOW (a Python that has gensim 4,
installed by the user outside the repository; never needed by the tests):

  python -m benchmarks.siamese_cbow_train \
      --flagfile=configs/siamese_cbow_best.flags --data_dir=../shared/data \
      --gensim_python=/path/to/venv/bin/python --repeats=2 \
      [--docs_page=docs/siamese_cbow_train_speed.md]

Takes the Siamese CBOW trainer's own flags. The trainer's vocabulary and
batch count are built by the first run of ours (before its timed steps)
and cached in --work_dir; with --gensim_python, a tokenised copy of the
corpus for gensim is written there first (lower case, `\w+|[^\w\s]` tokens, one sentence per line, the
books' empty separator lines dropped). Then --repeats times, each in a
fresh process and in this order:
- ours: the trainer's plan (`trainers.siamese_cbow.SiameseCBOWTrainer.
  build_plan`: its input pipeline and train step) run by the training
  loop's graph loop (`training_loop.multi_step`) for --warmup_steps, then
  --steps timed; groups/s converted to the time of one epoch (the trainer's
  batches per epoch x batch size groups);
- with --end_to_end: the trainer itself (`python -m trainers.siamese_cbow`
  with these flags, one epoch or --end_to_end_steps steps, in a fresh
  --model_dir and a fresh --count_cache_dir, with --noexport: no export
  and no final evaluation, but its vocabulary and counting passes and its
  periodic STS-B dev evaluations), wall clock and peak RSS;
- with --gensim_python: `Word2Vec(vector_size=300, window=5, min_count=5,
  sample=1e-5, negative=5, hs=0, sg=0, workers=2)`, `build_vocab` then one
  epoch of `train` on the tokenised file (`corpus_file` mode), wall clock
  of both (its vocabulary pass included, as the issue compares) and of the
  epoch alone.
Each train-step child also reports its fixed costs (the plan's build:
vocabulary and batch count, counted or read from the caches; the warm-up
steps: XLA compilation of the batch shapes) and its RSS after each stage.
With --profile_steps the first one traces that many more steps with the TF
profiler and prints where their time went (`summarise_events`).
Prints every run, then the medians and ranges and the ratios
gensim time / our time (> 1: ours is faster), the peak RSS of every child
(ru_maxrss from `os.wait4`) and the 1-min load average around every run:
the machine may be shared, so only the ratios of one sequence compare.
--docs_page writes it all as a generated page.
"""

import collections
import glob
import json
import os
import re
import shlex
import shutil
import sys
import time

from absl import flags

from sentzoo.benchmarks import child_process
from sentzoo.common import cli
from sentzoo.common import errors
from sentzoo.common import resources
from sentzoo.reports import formatting
from sentzoo.trainers import siamese_cbow

FLAGS = siamese_cbow.FLAGS
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
flags.DEFINE_integer("end_to_end_steps", 0, "With --end_to_end: the trainer "
                     "runs this many steps (--train_steps); 0: one epoch.",
                     lower_bound=0, flag_values=FLAGS)
flags.DEFINE_string("work_dir", "/tmp/sentzoo_siamese_cbow_train",
                    "Cached vocabulary, batch count and tokenised corpus.",
                    flag_values=FLAGS)
flags.DEFINE_string("docs_page", None, "Write the results as this generated "
                    "page, e.g. docs/siamese_cbow_train_speed.md.",
                    flag_values=FLAGS)
flags.DEFINE_bool("earlier_steps", False, "Also time, in the same "
                  "sequence, the steps issue 34 replaced, on by-length "
                  "batches (--batch_layout=by_length): the flat step "
                  "(`siamese_cbow_step.make_train_step`) and the padded step "
                  "before it (`make_dense_train_step`: XLA on the padded "
                  "groups).", flag_values=FLAGS)
flags.DEFINE_integer("profile_steps", 0, "After its timed steps, the first "
                     "repeat of ours traces this many more with the TF "
                     "profiler (in <work_dir>/profile) and prints where their "
                     "time went; 0: no trace.", lower_bound=0,
                     flag_values=FLAGS)
flags.DEFINE_string("child", None, "Internal: one measurement (one of "
                    "CHILDREN).", flag_values=FLAGS)

# The train-step children: the trainer's step on the flags' batches, and the
# steps issue 34 replaced (--earlier_steps), with the rows they print.
CHILDREN = {"ours": "ours, train step",
            "by_length": "ours, by-length batches (the flat step)",
            "padded": "ours, by-length batches, the padded step"}

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
  """Runs `command` in a fresh process: (its JSON result, {} if it prints
  none, with its wall_seconds and peak_rss_mb; the 1-min load before)."""
  done = child_process.run(command)
  result = child_process.last_json(done.output) or {}
  result.update(wall_seconds=done.seconds, peak_rss_mb=done.peak_rss_mb)
  return result, done.load_before


def ratios(peer_seconds, our_seconds):
  """Per repeat, peer time / our time (> 1: ours is faster)."""
  return [p / o for p, o in zip(peer_seconds, our_seconds)]


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
  own = ("--steps", "--warmup_steps", "--repeats", "--gensim_python",
         "--end_to_end", "--noend_to_end", "--end_to_end_steps",
         "--work_dir", "--docs_page", "--child", "--model_dir",
         "--earlier_steps", "--noearlier_steps", "--profile_steps")
  return [a for a in argv if not a.split("=")[0] in own]


def side_by_side(argv):
  """The alternating sequence; returns the printed lines."""
  out = []

  def say(text=""):
    print(text, flush=True)
    out.append(text)

  work_dir = os.path.abspath(FLAGS.work_dir)
  os.makedirs(work_dir, exist_ok=True)
  trainer_flags = _trainer_flags(argv)
  model_dir = os.path.join(work_dir, "plan")
  ours = [sys.executable, "-m", "benchmarks.siamese_cbow_train",
          *trainer_flags, f"--model_dir={model_dir}",
          f"--steps={FLAGS.steps}", f"--warmup_steps={FLAGS.warmup_steps}",
          "--child=ours"]
  # The first child builds the vocabulary and the batch count (cached in
  # model_dir), before its timed steps.
  gensim = None
  if FLAGS.gensim_python:
    from sentzoo.inputs import corpus  # pylint: disable=g-import-not-at-top
    from sentzoo.trainers import corpus_flags  # pylint: disable=g-import-not-at-top
    del corpus
    from sentzoo.common import data_dir as data_dir_lib  # pylint: disable=g-import-not-at-top
    cfg = siamese_cbow.SiameseCBOWTrainer().settings()
    data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir,
                                             corpus_flags.data_subdir(cfg))
    files = corpus_flags.corpus_files(cfg, data_dir)
    corpus_path = os.path.join(
        work_dir, "tokens_" + "_".join(os.path.basename(f).split(".")[0]
                                       for f in files) + ".txt")
    if not os.path.exists(corpus_path):
      print(f"writing the tokenised corpus for gensim: {corpus_path}",
            flush=True)
      start = time.perf_counter()
      lines, tokens = write_gensim_corpus(files, corpus_path)
      print(f"  {lines:,} lines, {tokens:,} tokens "
            f"({time.perf_counter() - start:.0f}s)", flush=True)
    gensim = [FLAGS.gensim_python, "-c", _GENSIM_CHILD, corpus_path,
              json.dumps(GENSIM_SETTINGS)]
  end_to_end = None
  if FLAGS.end_to_end:
    end_to_end = [sys.executable, "-m", "trainers.siamese_cbow",
                  *trainer_flags, "--noexport", "--num_epochs=1"]
    if FLAGS.end_to_end_steps:
      end_to_end.append(f"--train_steps={FLAGS.end_to_end_steps}")

  e2e_what = (f" ({FLAGS.end_to_end_steps:,} steps, not an epoch)"
              if FLAGS.end_to_end_steps else " (one epoch)")
  load = os.getloadavg()
  say(f"Load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
      f"{os.cpu_count()} CPUs")
  say(f"ours: {FLAGS.steps} timed steps after {FLAGS.warmup_steps} warm-up "
      "steps; flags: " + " ".join(trainer_flags))
  say("")
  say("| repeat | run | groups/s | one epoch (s) | peak RSS (MB) | "
      "1-min load |")
  say("|---|---|---:|---:|---:|---:|")
  results = {"ours": [], "by_length": [], "padded": [], "end_to_end": [],
             "gensim": []}
  for repeat in range(1, FLAGS.repeats + 1):
    r, load = run_child(ours + ([f"--profile_steps={FLAGS.profile_steps}"]
                                if repeat == 1 else []))
    results["ours"].append(r)
    # The traced child's peak holds the profiler's events too.
    traced = " (with the profiler's trace)" if r.get("profile") else ""
    say(f"| {repeat} | ours, train step | {r['groups_per_second']:,.0f} | "
        f"{r['epoch_seconds']:.1f} | {r['peak_rss_mb']:,.0f}{traced} | "
        f"{load:.1f} |")
    for child in ("by_length", "padded") if FLAGS.earlier_steps else ():
      r, load = run_child(ours[:-1] + ["--batch_layout=by_length",
                                       f"--child={child}"])
      results[child].append(r)
      say(f"| {repeat} | {CHILDREN[child]} | "
          f"{r['groups_per_second']:,.0f} | {r['epoch_seconds']:.1f} | "
          f"{r['peak_rss_mb']:,.0f} | {load:.1f} |")
    if end_to_end:
      e2e_dir = os.path.join(work_dir, f"end_to_end_{repeat}")
      if os.path.exists(e2e_dir):
        import shutil  # pylint: disable=g-import-not-at-top
        shutil.rmtree(e2e_dir)
      r, load = run_child(end_to_end + [
          f"--model_dir={e2e_dir}",
          f"--count_cache_dir={os.path.join(e2e_dir, 'count_cache')}"])
      results["end_to_end"].append(r)
      seconds = f"{r['wall_seconds']:.1f}"
      if FLAGS.end_to_end_steps:  # Not an epoch: not under "one epoch".
        seconds = f"({seconds} for {FLAGS.end_to_end_steps:,} steps)"
      say(f"| {repeat} | ours, trainer end to end{e2e_what} | | {seconds} | "
          f"{r['peak_rss_mb']:,.0f} | {load:.1f} |")
    if gensim:
      r, load = run_child(gensim)
      results["gensim"].append(r)
      say(f"| {repeat} | gensim CBOW, vocabulary + 1 epoch (epoch alone) | "
          f"| {r['seconds']:.1f} ({r['epoch_seconds']:.1f}) | "
          f"{r['peak_rss_mb']:,.0f} | {load:.1f} |")
  load = os.getloadavg()
  say("")
  say(f"Load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
  say("")
  say("Fixed costs and memory of ours (the train-step children; repeat 1 "
      "builds the plan: vocabulary and batch count, or reads them from "
      "the caches):")
  say("")
  say("| repeat | plan built (s) | warm-up steps (s) | RSS after import / "
      "plan / warm-up / timed steps (MB) |")
  say("|---|---:|---:|---|")
  for repeat, r in enumerate(results["ours"], start=1):
    rss = r["rss_mb"]
    say(f"| {repeat} | {r['plan_seconds']:.1f} | {r['warmup_seconds']:.1f} "
        f"| {rss['imported']:,.0f} / {rss['plan_built']:,.0f} / "
        f"{rss['warmed_up']:,.0f} / {rss['timed']:,.0f} |")
  say("")
  if results["ours"][0].get("profile"):
    say(f"Profile of ours (TF profiler, repeat 1, after its timed steps; "
        f"trace in {os.path.join(work_dir, 'profile')}):")
    say("")
    for line in results["ours"][0]["profile"]:
      say(line)
    say("")
  our_epoch = [r["epoch_seconds"] for r in results["ours"]]
  say(f"Medians (ranges) over {FLAGS.repeats} repeat(s):")
  say("")
  say("| what | median (range) |")
  say("|---|---:|")
  def row(what, values, spec=",.0f"):
    say(f"| {what} | {formatting.median_range(values, spec)} |")

  row("ours, train step: groups/s",
      [r["groups_per_second"] for r in results["ours"]])
  row(f"ours, train step: one epoch of "
      f"{results['ours'][0]['epoch_groups']:,} groups (s)", our_epoch, ".1f")
  untraced = [r["peak_rss_mb"] for r in results["ours"]
              if not r.get("profile")]
  if untraced:
    row("ours, train step: peak RSS (MB; without the profiler)", untraced)
  else:
    say("| ours, train step: peak RSS (MB; without the profiler) | "
        "only the traced repeat |")
  for child in ("by_length", "padded") if FLAGS.earlier_steps else ():
    earlier = [r["epoch_seconds"] for r in results[child]]
    row(f"{CHILDREN[child]}: groups/s",
        [r["groups_per_second"] for r in results[child]])
    row(f"speed ratio, train step / {CHILDREN[child]}",
        ratios(earlier, our_epoch), ".2f")
  if results["end_to_end"]:
    e2e = [r["wall_seconds"] for r in results["end_to_end"]]
    row(f"ours, trainer end to end{e2e_what} (s)", e2e, ".1f")
    row(f"ours, trainer end to end{e2e_what}: peak RSS (MB)",
        [r["peak_rss_mb"] for r in results["end_to_end"]])
  if results["gensim"]:
    total = [r["seconds"] for r in results["gensim"]]
    epoch = [r["epoch_seconds"] for r in results["gensim"]]
    row("gensim, vocabulary + 1 epoch (s)", total, ".1f")
    row("gensim, 1 epoch alone (s)", epoch, ".1f")
    row("gensim: peak RSS (MB)", [r["peak_rss_mb"] for r in results["gensim"]])
    say("| **speed ratio, ours train step / gensim vocabulary + epoch** "
        "(gensim s / our s) | **"
        f"{formatting.median_range(ratios(total, our_epoch), '.2f')}** |")
    row("speed ratio, ours train step / gensim epoch alone",
        ratios(epoch, our_epoch), ".2f")
    if results["end_to_end"] and not FLAGS.end_to_end_steps:
      row("speed ratio, ours end to end / gensim vocabulary + epoch",
          ratios(total, e2e), ".2f")
  else:
    say("| gensim | not run (no --gensim_python) |")
  if FLAGS.docs_page:
    write_docs_page(FLAGS.docs_page,
                    shlex.join(["python", "-m", "benchmarks.siamese_cbow_train"]
                               + argv), out)
  return out


def write_docs_page(path, argv_line, lines):
  """The generated page: what is measured, then `lines`."""
  formatting.write_generated_page(
      path, "Siamese CBOW training speed, side by side with gensim's CBOW",
      "benchmarks.siamese_cbow_train", argv_line,
      ["Ours: the trainer's input pipeline and train step, run by the "
      "training loop's graph loop for a fixed number of steps after a "
      "warm-up; groups/s is converted to the time of one epoch of the "
      "trainer's batches. gensim 4 (built outside the repository, "
      "../shared/notes/peers.md): word2vec CBOW with the paper's baseline "
      "settings (300-d, window 5, negative 5, sample 1e-5, min count 5, "
      "2 workers) on a tokenised copy of the same corpus files, its "
      "vocabulary pass included. Every figure is from a fresh process; the "
      "sides alternate in one sequence. See "
      "`benchmarks/siamese_cbow_train.py` for the definitions.",
      "Where the time goes (issue 34), in three steps, each timed by "
      "--earlier_steps beside the next. (1) The padded step: XLA on the "
      "dense groups, where padding was 47.5% of the id positions it "
      "gathered, averaged and scattered gradients into. (2) The flat step "
      "on the same by-length batches: the real ids listed outside XLA "
      "(`flat_sentences`), padded to a multiple of 1,024, then gathered, "
      "summed by sentence, scored and updated under XLA; its profile "
      "(before this page's run) was 2.74 ms of XLA kernels a step, four "
      "passes over the ~9.2k ids x 300 floats (the forward gather, the sum "
      "by sentence, the rows' gradients and the SGD scatter into the table) "
      "making ~80% of it: bound by XLA CPU's gather and scatter loops, not "
      "by the table size or dispatch. (3) The consecutive layout "
      "(--batch_layout=consecutive, in configs/siamese_cbow_best.flags): a "
      "batch holds the groups of 100 consecutive centres, and a sentence is "
      "the centre of one, a neighbour of two and often a nearby negative of "
      "others, so it lists 138 distinct sentences and 2.6k ids instead of "
      "500 and 9.2k (1,000 batches of the best flagfile), and the step "
      "averages and updates each sentence once: the same per-row work on "
      "3.6x fewer rows. Its STS-B dev Pearson is the by-length batches' "
      "(57.379 against 57.380, docs/siamese_cbow.md). In the profile below, "
      "the compiled step now takes about as long as the input pipeline "
      "(regex replace, split, lower case, lookup on the tf.data threads, on "
      "the other core). Rejected earlier with A/B runs on the same real "
      "batches: the gather + sum and the update as TF kernels outside XLA "
      "(the same losses, 8.0 against 4.1-5.4 ms wall), the whole step "
      "without XLA (32 ms), and the distinct rows gathered once "
      "(`tf.unique`) with a fused `tf.sparse.segment_mean` (12.8 ms against "
      "7.4)."],
      lines)


def main(argv):
  del argv
  if FLAGS.child in CHILDREN:
    _child_ours()
    return
  if FLAGS.child:
    raise errors.UserError(f"--child={FLAGS.child}: internal (one of "
                           f"{', '.join(CHILDREN)})")
  side_by_side(sys.argv[1:])


if __name__ == "__main__":
  cli.run(main, FLAGS)
