r"""Memory of the paper-size embedding tables, and how a strategy places them.

  python -m lab.benchmarks.table_memory --model=siamese_cbow \
      [--strategy=mirrored --num_cpu_devices=2]
  python -m lab.benchmarks.table_memory --model=sent2vec --train \
      --buckets=300000 --data_dir=../shared/data --work_dir=runs/s2v_memory

Builds the tables under the strategy's scope, runs STEPS sparse SGD steps
and prints the table bytes, where each copy lives and the RSS. --train
measures the Sent2Vec trainer itself against the memory bound (peak RSS <=
1.3 x table bytes + 1 GB): a fresh run and a resumed one, each in a child
that records each phase's own peak (`run_probed_trainer`); exits 1 above it.
"""

import json
import os
import shutil
import sys
import tempfile

from absl import flags
import keras
import numpy as np
import tensorflow as tf

from lab.benchmarks import child_process
from sentzoo.common import cli
from sentzoo.common import resources
from sentzoo.models import siamese_cbow
from sentzoo.trainers import distribution
from sentzoo.trainers import siamese_cbow_step
from sentzoo.trainers import training_loop

# Words: Siamese CBOW's paper's 315k; Sent2Vec's unigram and target rows.
VOCAB_SIZE = 315000
# The papers' embedding sizes.
DIMS = {"siamese_cbow": 300, "sent2vec": 700}
# Steps after building, of 100 groups (Siamese CBOW) or sentences.
STEPS, BATCH_SIZE = 5, 100
# --train: the trainer's settings on part01 (--buckets overrides).
TRAIN_FLAGFILE = "configs/sent2vec_books_unibi.flags"
FLAGS = flags.FLAGS
distribution.define_flags(FLAGS)
flags.DEFINE_enum("model", "siamese_cbow", ["siamese_cbow", "sent2vec"],
                  "Which model's tables to build.")
flags.DEFINE_integer("buckets", 2000000, "Sent2Vec bigram hash buckets "
                     "(source rows besides the words).")
flags.DEFINE_bool("train", False, "--model=sent2vec: measure the trainer "
                  "itself, a fresh and a resumed run (see the module doc).")
flags.DEFINE_string("data_dir", None, "--train: the data directory "
                    "(default $SENTZOO_DATA_DIR).")
flags.DEFINE_integer("train_steps", 300, "--train: steps of the fresh run; "
                     "the resumed run goes on to twice as many.",
                     lower_bound=1)
flags.DEFINE_string("work_dir", None, "--train: where the runs and the "
                    "shared vocabulary and token cache go (default: a "
                    "temporary folder, removed at the end).")
flags.DEFINE_string("output_json", None, "--train: also write the numbers "
                    "here.")
flags.DEFINE_string("output_markdown", None, "--train: also write the "
                    "table here (markdown).")
flags.DEFINE_string("phase_log", None, "Internal: --train's child runs the "
                    "trainer with --trainer_argv and writes its phases here.")
flags.DEFINE_string("trainer_argv", None, "Internal: a JSON list of flags.")


def _placement(variable):
  if isinstance(variable, keras.Variable):
    variable = variable.value  # The tf.Variable (MirroredVariable) inside.
  values = getattr(variable, "values", None)
  if values:
    return [v.device for v in values]
  return [variable.device]


def _siamese_cbow(strategy, dim):
  with strategy.scope():
    model = siamese_cbow.SiameseCBOW(VOCAB_SIZE + 1, dim)
    optimizer = keras.optimizers.SGD(learning_rate=0.1)
    model(tf.zeros([1, 5, 1], tf.int32))
    optimizer.build(model.trainable_variables)
  tables = [model.embedding.embeddings]
  ids = np.random.RandomState(0).randint(
      1, VOCAB_SIZE + 1, size=(BATCH_SIZE, 5, 30)).astype(np.int32)
  # As the trainer runs it: the update outside XLA under several replicas.
  step = siamese_cbow_step.make_train_step(
      model, optimizer, 2, apply_in_xla=distribution.is_one_device(strategy))
  iterator = iter(training_loop.distribute(
      strategy, tf.data.Dataset.from_tensors(ids).repeat()))
  return tables, tf.function(lambda: strategy.run(step, args=(next(iterator),)))


def _sent2vec(strategy, dim):
  """Source (words + buckets) and target (words) tables, plain sparse SGD on
  the rows a batch of 100 sentences x 20 features / 10 targets x 11 touch."""
  rng = np.random.RandomState(0)
  with strategy.scope():
    source = tf.Variable(tf.random.uniform(
        [VOCAB_SIZE + FLAGS.buckets, dim], -1.0 / dim, 1.0 / dim),
                         name="source")
    target = tf.Variable(tf.zeros([VOCAB_SIZE, dim]), name="target")
  features = rng.randint(0, VOCAB_SIZE + FLAGS.buckets,
                         size=(BATCH_SIZE, 20))
  targets = rng.randint(0, VOCAB_SIZE, size=(BATCH_SIZE, 10, 11))

  def step():
    with tf.GradientTape() as tape:
      h = tf.reduce_mean(tf.gather(source, features), axis=1)
      u = tf.gather(target, targets)
      logits = tf.einsum("bd,btkd->btk", h, u)
      labels = tf.one_hot(tf.zeros([BATCH_SIZE, 10], tf.int32), 11)
      loss = tf.reduce_mean(
          tf.nn.sigmoid_cross_entropy_with_logits(labels, logits))
    grads = tape.gradient(loss, [source, target])
    for g, v in zip(grads, [source, target]):
      v.scatter_sub(tf.IndexedSlices(0.2 * g.values, g.indices))
    return loss

  return [source, target], tf.function(lambda: strategy.run(step))


# --train: the Sent2Vec trainer's phases, measured in a child process.

# The memory bound: peak RSS <= BOUND_FACTOR x table bytes + BOUND_EXTRA.
BOUND_FACTOR = 1.3
BOUND_EXTRA_BYTES = 1 << 30
# What is copied from the first run into every later run's model directory.
_SHARED_FILES = ("vocab.txt", "corpus_stats.json", "token_cache")


def _wrap(owner, name, before=lambda: None, after=lambda: None):
  """Replaces owner.name by a function that calls before(), the original,
  then after()."""
  original = getattr(owner, name)

  def wrapped(*args, **kwargs):
    before()
    result = original(*args, **kwargs)
    after()
    return result

  setattr(owner, name, wrapped)


def run_probed_trainer(argv, phase_log):
  """Runs the Sent2Vec trainer with `argv`, its phases marked (the child;
  trainers/sent2vec_memory_test.py runs it too)."""
  from sentzoo.evaluation import encoder as encoder_lib  # pylint: disable=g-import-not-at-top
  from sentzoo.export import saved_model_writer  # pylint: disable=g-import-not-at-top
  from sentzoo.export import sent2vec as sent2vec_export  # pylint: disable=g-import-not-at-top
  from sentzoo.inputs import token_cache  # pylint: disable=g-import-not-at-top
  from sentzoo.trainers import sent2vec as sent2vec_trainer  # pylint: disable=g-import-not-at-top
  from sentzoo.trainers import trainer  # pylint: disable=g-import-not-at-top

  recorder = child_process.PhaseRecorder()
  mark = recorder.mark
  mark("start (imports)")
  # build_plan: vocabulary, model built and initialised, then the token
  # cache, input pipeline and train step.
  _wrap(token_cache, "ensure",
        before=lambda: mark("vocabulary; model built and initialised"))
  _wrap(sent2vec_trainer.Sent2VecTrainer, "build_plan",
        after=lambda: mark("token cache, input pipeline, train step"))
  # The loop restores (a resumed run) before it builds its multi-step call.
  _wrap(training_loop, "multi_step",
        before=lambda: mark("checkpoint restore (resumed run)"))
  _wrap(tf.train.CheckpointManager, "save",
        before=lambda: mark("training steps"),
        after=lambda: mark("checkpoint saves"))
  _wrap(sent2vec_export, "module_from_model",
        after=lambda: mark("export: module built"))
  _wrap(saved_model_writer, "write",
        before=lambda: mark("export: export-time scores"),
        after=lambda: mark("export: SavedModel written"))
  _wrap(encoder_lib, "load_encoder",
        after=lambda: mark("final evaluation: export loaded"))
  _wrap(trainer, "_evaluate_export",
        after=lambda: mark("final evaluation: scores"))
  summary = sent2vec_trainer.run(argv)
  mark("end")
  with open(phase_log, "w") as f:
    json.dump({"phases": recorder.phases, "resets": recorder.resets,
               "step": summary.step}, f, indent=2)


def measure_training():
  """A fresh run and its resumed continuation; returns the numbers."""
  work_dir = FLAGS.work_dir or tempfile.mkdtemp(prefix="s2v_memory_")
  shared = os.path.join(work_dir, "shared")
  common = [f"--flagfile={os.path.abspath(TRAIN_FLAGFILE)}",
            f"--num_buckets={FLAGS.buckets}", "--corpus_parts=1",
            "--log_every_steps=100", "--checkpoint_every_steps=100"]
  if FLAGS.data_dir:
    common.append(f"--data_dir={FLAGS.data_dir}")
  model_dir = os.path.join(work_dir, f"run_{FLAGS.buckets}")
  runs = {}
  try:
    shutil.rmtree(model_dir, ignore_errors=True)
    os.makedirs(model_dir)
    if os.path.exists(shared):
      shutil.copytree(shared, model_dir, dirs_exist_ok=True)
    for run, steps in (("fresh", FLAGS.train_steps),
                       ("resumed", 2 * FLAGS.train_steps)):
      print(f"{run} run: {steps} steps in {model_dir}", flush=True)
      phase_log = os.path.join(work_dir, f"phases_{run}.json")
      argv = common + [f"--model_dir={model_dir}", f"--train_steps={steps}"]
      child_process.run([sys.executable, "-m", "lab.benchmarks.table_memory",
                         f"--phase_log={phase_log}",
                         f"--trainer_argv={json.dumps(argv)}"],
                        os.path.join(work_dir, f"{run}.log"))
      with open(phase_log) as f:
        runs[run] = json.load(f)
      if run == "fresh" and not os.path.exists(shared):
        os.makedirs(shared)
        for name in _SHARED_FILES:
          copy = shutil.copytree if name == "token_cache" else shutil.copy
          copy(os.path.join(model_dir, name), os.path.join(shared, name))
    with open(os.path.join(model_dir, "model_config.json")) as f:
      model = json.load(f)["model"]
    target = model["vocab_size"] * model["embedding_dim"] * 4
    source = target + model["num_buckets"] * model["embedding_dim"] * 4
  finally:
    if not FLAGS.work_dir:
      shutil.rmtree(work_dir, ignore_errors=True)
  bound = BOUND_FACTOR * (source + target) + BOUND_EXTRA_BYTES
  result = {"source_bytes": source, "target_bytes": target,
            "bound_bytes": bound, "buckets": FLAGS.buckets,
            "trainer_flags": common, "train_steps": FLAGS.train_steps,
            "runs": runs}
  for run in runs.values():
    run["peak_mb"] = max(p["peak_mb"] for p in run["phases"].values())
    run["within_bound"] = run["peak_mb"] * 2**20 <= bound
  return result


def training_markdown(result):
  """The phase table of both runs, the tables' sizes and the bound."""
  mb = 2.0**20
  source, target = result["source_bytes"], result["target_bytes"]
  runs = result["runs"]
  names = list(runs["fresh"]["phases"])
  names += [n for n in runs["resumed"]["phases"] if n not in names]
  out = [f"Tables: source {source / mb:,.0f} MB + target {target / mb:,.0f} "
         f"MB = {(source + target) / mb:,.0f} MB ({result['buckets']:,} "
         f"buckets); bound {BOUND_FACTOR} x tables + 1 GB = "
         f"{result['bound_bytes'] / mb:,.0f} MB.", "",
         "| phase | fresh: peak | fresh: at its end | resumed: peak | "
         "resumed: at its end |", "|---|---:|---:|---:|---:|"]
  for name in names:
    cells = []
    for run in ("fresh", "resumed"):
      phase = runs[run]["phases"].get(name)
      cells += (["", ""] if phase is None else
                [f"{phase['peak_mb']:,.0f} MB", f"{phase['end_mb']:,.0f} MB"])
    out.append(f"| {name} | " + " | ".join(cells) + " |")
  out.append(
      "| **peak of the run** | " + " | ".join(
          f"**{runs[r]['peak_mb']:,.0f} MB** ({runs[r]['peak_mb'] * mb / (source + target):.2f}x tables) | "
          + ("within" if runs[r]["within_bound"] else "**above**")
          + " the bound" for r in ("fresh", "resumed")) + " |")
  return "\n".join(out) + "\n"


def train_main():
  result = measure_training()
  markdown = training_markdown(result)
  print("\nSent2Vec trainer, peak RSS per phase (MB = 2^20 bytes)\n\n"
        + markdown)
  if FLAGS.output_json:
    with open(FLAGS.output_json, "w") as f:
      json.dump(result, f, indent=2)
  if FLAGS.output_markdown:
    with open(FLAGS.output_markdown, "w") as f:
      f.write(markdown)
  if not all(r["within_bound"] for r in result["runs"].values()):
    sys.exit(1)


def main(argv):
  del argv
  if FLAGS.phase_log:
    run_probed_trainer(json.loads(FLAGS.trainer_argv), FLAGS.phase_log)
    return
  if FLAGS.train:
    if FLAGS.model != "sent2vec":
      raise flags.ValidationError("--train measures --model=sent2vec")
    train_main()
    return
  strategy = distribution.make_strategy(FLAGS.strategy,
                                       FLAGS.num_cpu_devices)
  dim = DIMS[FLAGS.model]
  start_rss = resources.peak_rss_mb(), resources.current_rss_mb()
  build = _siamese_cbow if FLAGS.model == "siamese_cbow" else _sent2vec
  tables, step = build(strategy, dim)
  built_rss = resources.peak_rss_mb(), resources.current_rss_mb()
  for _ in range(STEPS):
    step()
  end_rss = resources.peak_rss_mb(), resources.current_rss_mb()
  replicas = strategy.num_replicas_in_sync
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
                            (f"after {STEPS} steps", end_rss)):
    print(f"RSS {name}: peak {peak:,.0f} MB, current "
          + (f"{now:,.0f} MB" if now is not None else "n/a"))


if __name__ == "__main__":
  cli.run(main)
