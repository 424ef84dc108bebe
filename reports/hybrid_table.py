r"""Trains and tests the hybrid siamese matcher: encoders x losses, one table.

  python -m reports.hybrid_table --data_dir=../shared/data \
      --word_vectors=runs/siamese_cbow_paper/export/1 \
      --runs_dir=runs/hybrid_table --output=docs/hybrid_siamese.md

For each task (MSRP, SICK binary entailment), encoder (LSTM, GRU, CNN,
stacked BiGRU) and loss (contrastive, logistic, joint) it trains, in this
process, `trainers.hybrid_siamese.run(["--flagfile=configs/hybrid_<task>_
<encoder>.flags", "--mode=<loss>", ...])` into
<runs_dir>/<task>_<encoder>_<loss>/ (its console output goes to train.log
there) — a run that already has results.json is not trained again, one that
was interrupted resumes — then writes the test accuracies at the best dev
epoch in the layout of Nicosia and Moschitti (CIKM 2017) Tables 1-2, whether
"joint >= each single loss" holds per encoder, and the paper's own numbers.
--table_only rebuilds the page from the runs present.

The command's flags are its own (`define_flags`, parsed by `run`): absl's
process-wide flags are the trainer's, which `hybrid_siamese.run` parses
anew for each run.
"""

import contextlib
import json
import os
import sys
import time
from typing import Sequence

from absl import flags

from sentzoo.common import cli
from sentzoo.common import errors
from sentzoo.trainers import hybrid_siamese

TASKS = {"msrp": "MSRP (paraphrase, test 1,725 pairs)",
         "sick": "SICK-E binary (entailment vs contradiction, test 2,134 "
                 "pairs)"}
ENCODERS = {"lstm": "LSTM", "gru": "GRU", "cnn": "CNN",
            "bigru": "Stacked BiGRU"}
MODES = {"contrastive": "Contrastive", "logistic": "Logistic",
         "joint": "Joint loss"}

OPTIMIZERS = {"lazy": "lazy Adam", "dense": "Keras Adam (dense)"}

# Nicosia and Moschitti (CIKM 2017), test accuracy: Table 1 (Quora) and
# Table 2 (binary SNLI); columns contrastive, logistic, joint.
PAPER = {
    "Quora (paper, Table 1)": {"lstm": (85.26, 81.98, 85.71),
                               "gru": (86.72, 83.00, 86.82),
                               "cnn": (83.1, 83.04, 83.95),
                               "bigru": (85.74, 84.38, 86.06)},
    "SNLI binary (paper, Table 2)": {"lstm": (84.58, 88.25, 89.08),
                                     "gru": (84.96, 88.53, 90.58),
                                     "cnn": (80.78, 90.99, 92.00),
                                     "bigru": (85.58, 91.40, 91.97)},
}


def define_flags(flag_values: flags.FlagValues) -> None:
  """Defines this command's flags on `flag_values`."""
  flags.DEFINE_string("data_dir", None, "Data directory (default "
                      "$SENTZOO_DATA_DIR).", flag_values=flag_values)
  flags.DEFINE_string("word_vectors", None, "Word vectors for every run, "
                      "e.g. this project's Siamese CBOW export "
                      "runs/siamese_cbow_paper/export/1.",
                      flag_values=flag_values)
  flags.DEFINE_string("word_vectors_vocab", None, "Vocabulary of an export "
                      "given as --word_vectors (default: found beside it).",
                      flag_values=flag_values)
  flags.DEFINE_string("runs_dir", "runs/hybrid_table",
                      "One model dir per run.", flag_values=flag_values)
  flags.DEFINE_string("output", "docs/hybrid_siamese.md", "Markdown page.",
                      flag_values=flag_values)
  flags.DEFINE_list("tasks", list(TASKS), "Tasks.", flag_values=flag_values)
  flags.DEFINE_list("encoders", list(ENCODERS), "Encoders.",
                    flag_values=flag_values)
  flags.DEFINE_list("modes", list(MODES), "Losses.", flag_values=flag_values)
  flags.DEFINE_integer("num_epochs", 0, "Override the flagfiles' epochs "
                       "(0: keep them, 20).", flag_values=flag_values)
  flags.DEFINE_list("extra_flags", [], "More trainer flags for every run.",
                    flag_values=flag_values)
  flags.DEFINE_bool("table_only", False, "Do not train; tabulate the runs.",
                    flag_values=flag_values)
  flags.DEFINE_list("speed_results", [], "JSON files written by "
                    "benchmarks.hybrid_siamese_speed --output, to include.",
                    flag_values=flag_values)


def run_dir(fv, task, encoder, mode):
  return os.path.join(fv.runs_dir, f"{task}_{encoder}_{mode}")


def train_argv(fv, task, encoder, mode):
  """The flags of one run for `hybrid_siamese.run` (no program name)."""
  argv = [f"--flagfile=configs/hybrid_{task}_{encoder}.flags",
          f"--mode={mode}", f"--model_dir={run_dir(fv, task, encoder, mode)}",
          "--noexport"]
  if fv.data_dir:
    argv.append(f"--data_dir={fv.data_dir}")
  if fv.word_vectors:
    argv.append(f"--word_vectors={fv.word_vectors}")
  if fv.word_vectors_vocab:
    argv.append(f"--word_vectors_vocab={fv.word_vectors_vocab}")
  if fv.num_epochs:
    argv.append(f"--num_epochs={fv.num_epochs}")
  return argv + list(fv.extra_flags)


def read_results(fv, task, encoder, mode):
  path = os.path.join(run_dir(fv, task, encoder, mode), "results.json")
  if not os.path.exists(path):
    return None
  with open(path) as f:
    return json.load(f)


@contextlib.contextmanager
def _output_to(path):
  """Appends this process's stdout and stderr to the file `path`.

  At the level of file descriptors 1 and 2, so that Python's, absl's and
  TensorFlow's C++ output all go there.
  """
  sys.stdout.flush()
  sys.stderr.flush()
  saved = [os.dup(1), os.dup(2)]
  try:
    with open(path, "a", buffering=1) as log:
      os.dup2(log.fileno(), 1)
      os.dup2(log.fileno(), 2)
      try:
        # Also the Python streams, where they are not descriptors 1 and 2
        # (a test runner's capture).
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
          yield
      finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
  finally:
    for fd in saved:
      os.close(fd)


def train_all(fv):
  """Trains every run of the table that has no results.json yet."""
  for task in fv.tasks:
    for encoder in fv.encoders:
      for mode in fv.modes:
        if read_results(fv, task, encoder, mode) is not None:
          continue
        folder = run_dir(fv, task, encoder, mode)
        os.makedirs(folder, exist_ok=True)
        log = os.path.join(folder, "train.log")
        print(f"{time.strftime('%H:%M:%S')} training {task} {encoder} "
              f"{mode}: log {log}", flush=True)
        try:
          with _output_to(log):
            hybrid_siamese.run(train_argv(fv, task, encoder, mode))
        except errors.UserError as e:
          raise errors.UserError(f"{task} {encoder} {mode}: {e} (log: "
                                 f"{log})") from e
        result = read_results(fv, task, encoder, mode)
        print(f"  test accuracy {100 * result['test_accuracy']:.2f} at best "
              f"dev epoch {result['best_epoch']}", flush=True)


def _cell(result):
  if result is None:
    return "not run"
  return f"{100 * result['test_accuracy']:.2f}"


def joint_holds(results):
  """'yes'/'no' (with the margins) whether joint >= contrastive and logistic."""
  joint = results.get("joint")
  singles = [results.get("contrastive"), results.get("logistic")]
  if joint is None or any(r is None for r in singles):
    return "incomplete"
  deltas = [100 * (joint["test_accuracy"] - r["test_accuracy"])
            for r in singles]
  holds = all(d >= -1e-9 for d in deltas)
  return (f"{'yes' if holds else 'no'} ({deltas[0]:+.2f} vs contrastive, "
          f"{deltas[1]:+.2f} vs logistic)")


def format_page(fv):
  """The Markdown page of the runs present under --runs_dir."""
  lines = [
      "# Hybrid siamese + MLP sentence matcher: results",
      "",
      "Generated by `python -m reports.hybrid_table` "
      f"(runs in `{fv.runs_dir}`); do not edit by hand.",
      "",
      "Nicosia and Moschitti, *Accurate Sentence Matching with Hybrid "
      "Siamese Networks*, CIKM 2017. Test accuracy (%) at the best dev "
      "epoch; each cell is one training run (seed 0).",
      "",
  ]
  any_result = None
  for task in fv.tasks:
    lines += [f"## {TASKS.get(task, task)}", "",
              "| Siamese encoder | " + " | ".join(
                  MODES[m] for m in fv.modes) + " | joint ≥ each single "
              "loss? |",
              "|---|" + "---:|" * len(fv.modes) + "---|"]
    details = []
    for encoder in fv.encoders:
      results = {m: read_results(fv, task, encoder, m) for m in fv.modes}
      for mode, result in results.items():
        if result is not None:
          any_result = any_result or result
          details.append(
              f"| {ENCODERS[encoder]} | {MODES[mode]} | "
              f"{result['best_epoch']} | {100 * result['dev_accuracy']:.2f} | "
              f"{100 * result['test_accuracy']:.2f} | "
              f"{result['parameters_without_embeddings']:,} | "
              f"{result['seconds_this_run']:.0f} |")
      lines.append(f"| {ENCODERS[encoder]} | " + " | ".join(
          _cell(results[m]) for m in fv.modes) + f" | "
          f"{joint_holds(results)} |")
    lines += ["", "Per run: best dev epoch, dev and test accuracy, parameters "
              "without the embedding table, wall-clock seconds of the last "
              "invocation (2 shared CPU cores).", "",
              "| encoder | loss | best epoch | dev | test | parameters | "
              "seconds |", "|---|---|---:|---:|---:|---:|---:|"] + details
    lines.append("")
  if any_result is not None:
    lines += [
        "## Setup", "",
        f"- Word vectors: `{any_result['word_vectors']}` — this project's own "
        "Siamese CBOW vectors trained on the book corpus (GloVe, which the "
        "paper uses, is not available offline), rescaled by one factor to "
        f"standard deviation {any_result['word_vectors_scale_to_std']} (the "
        "std of U[−0.25, 0.25]); words without a vector ~ U[−0.25, 0.25]; "
        "fine-tuned.",
        f"- Adam (lazy updates of the looked-up embedding rows: "
        f"{any_result['lazy_adam']}), learning rate "
        f"{any_result['learning_rate']}, batch {any_result['batch_size']}, "
        f"{any_result['num_epochs']} epochs, sentences truncated to 50 ids, "
        "margin 1, contrastive threshold 0.5; λc = 1.0 (MSRP) and 0.01 "
        "(SICK-E), as the paper's paraphrase and entailment settings.",
        "- Flagfiles: `configs/hybrid_<task>_<encoder>.flags`; the loss is "
        "`--mode`.", ""]
  lines += ["## The paper's numbers (other data sets: Quora, SNLI; GloVe)", "",
            "| data set | encoder | Contrastive | Logistic | Joint loss |",
            "|---|---|---:|---:|---:|"]
  for name, table in PAPER.items():
    for encoder, values in table.items():
      lines.append(f"| {name} | {ENCODERS[encoder]} | " + " | ".join(
          f"{v:.2f}" for v in values) + " |")
  lines.append("")
  for path in fv.speed_results:
    with open(path) as f:
      speed = json.load(f)
    lines += [f"## Size and training speed (`{os.path.basename(path)}`)", "",
              f"`python -m benchmarks.hybrid_siamese_speed`: batch "
              f"{speed['batch_size']}, length {speed['length']}, word table "
              f"{speed.get('vocab_size', 0):,} x 300, joint loss, "
              f"{speed['threads']} TensorFlow threads; load average (1 min) "
              f"{speed['load_average']} — measured while other processes "
              "shared the 2 CPU cores when that is above 2. Paper: ~300k "
              "parameters, 10 s per 100 steps on a K40 GPU (BiMPM 100 s).",
              "",
              "| encoder | optimizer | parameters without embeddings | "
              "seconds per 100 steps |", "|---|---|---:|---:|"]
    for row in speed["encoders"]:
      lines.append(f"| {ENCODERS.get(row['encoder'], row['encoder'])} | "
                   f"{OPTIMIZERS.get(row.get('optimizer'), '?')} | "
                   f"{row['parameters_without_embeddings']:,} | "
                   f"{row['seconds_per_100_steps']:.1f} |")
    lines.append("")
  return "\n".join(lines)


def run(argv: Sequence[str]) -> str:
  """Runs the command in-process; argv[0] is the program. Returns the page.

  Raises:
    errors.UserError: a bad flag (of this command, or of a run's trainer).
    errors.Interrupted: a run stopped early with a checkpoint saved (run the
      command again to resume it).
  """
  fv = cli.parse_own_flags(define_flags, argv)
  for task in fv.tasks:
    if task not in TASKS:
      raise errors.UserError(f"unknown task {task!r}; one of {list(TASKS)}")
  for encoder in fv.encoders:
    if encoder not in ENCODERS:
      raise errors.UserError(f"unknown encoder {encoder!r}")
  for mode in fv.modes:
    if mode not in MODES:
      raise errors.UserError(f"unknown mode {mode!r}")
  if not fv.table_only:
    train_all(fv)
  page = format_page(fv)
  os.makedirs(os.path.dirname(os.path.abspath(fv.output)), exist_ok=True)
  with open(fv.output, "w") as f:
    f.write(page)
  print(page)
  return page


def main(command_line):
  run(command_line)


if __name__ == "__main__":
  # absl parses only the program name here (its process-wide flags are the
  # trainer's); `run` parses the whole command line with this command's own.
  _command_line, sys.argv = sys.argv, sys.argv[:1]
  cli.run(lambda unused_argv: main(_command_line))
