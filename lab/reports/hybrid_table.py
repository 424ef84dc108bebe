r"""The hybrid siamese matcher's page: encoders x losses, one table per task.

`make docs` (lab/docs.py, `page`) renders docs/hybrid_siamese.md in the
layout of Nicosia and Moschitti (CIKM 2017) Tables 1-2 from the records of
<task>_<encoder>_<loss>/seed<k>/ runs (docs/records/hybrid_table), which
`lab.reports.hybrid_sweep` trains and records. Contrastive runs are shown
under the paper's fixed threshold and a dev-tuned one. "joint >= each single
loss" is decided by a paired t-test over seeds and McNemar's test on the
pooled test decisions (`significance.claim_verdict`); the page states the
rule.
"""

import os
from typing import Sequence

from absl import flags
import numpy as np

from lab import records
from lab.reports import paper_numbers
from lab.reports import word_vector_choice
from lab import significance
from lab import tables
from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.inputs import pair_datasets
from sentzoo.trainers import hybrid_siamese

TASKS = {"msrp": "MSRP (paraphrase, test 1,725 pairs)",
         "sick": "SICK-E binary (entailment vs contradiction, test 2,134 "
                 "pairs)"}
ENCODERS = {"lstm": "LSTM", "gru": "GRU", "cnn": "CNN",
            "bigru": "Stacked BiGRU"}
MODES = {"contrastive": "Contrastive", "logistic": "Logistic",
         "joint": "Joint loss"}
# The page's columns: (mode, decision rule); "tuned" is the contrastive
# mode's dev-tuned distance threshold.
TUNED = "tuned"
COLUMN_NAMES = {("contrastive", None): "Contrastive (d < 0.5)",
                ("contrastive", TUNED): "Contrastive (dev-tuned threshold)",
                ("logistic", None): "Logistic",
                ("joint", None): "Joint loss"}

PAPER = paper_numbers.HYBRID_SIAMESE_TABLES


def define_flags(flag_values: flags.FlagValues) -> None:
  """Defines this command's flags on `flag_values`."""
  flags.DEFINE_string("data_dir", None, "Data directory (default "
                      "$SENTZOO_DATA_DIR).", flag_values=flag_values)
  flags.DEFINE_string("word_vector_choice", None, "Instead of "
                      "--word_vectors: the JSON of lab.reports.word_vector_choice "
                      "(e.g. runs/zoo_word_vectors.json); its selected model "
                      "dir is the word vectors of every run.",
                      flag_values=flag_values)
  flags.DEFINE_string("runs_dir", "runs/hybrid_table",
                      "One model dir per run.", flag_values=flag_values)
  flags.DEFINE_string("records_dir", "docs/records/hybrid_table",
                      "Records of finished runs (read when a run folder is "
                      "absent; written when a run finishes). Empty: none.",
                      flag_values=flag_values)
  flags.DEFINE_list("tasks", list(TASKS), "Tasks.", flag_values=flag_values)
  flags.DEFINE_list("encoders", list(ENCODERS), "Encoders.",
                    flag_values=flag_values)
  flags.DEFINE_list("modes", list(MODES), "Losses.", flag_values=flag_values)
  flags.DEFINE_list("seeds", ["0", "1", "2"], "Training seeds (--seed of "
                    "the trainer): one run per seed and cell.",
                    flag_values=flag_values)


def cell_name(task, encoder, mode):
  return f"{task}_{encoder}_{mode}"


def run_dir(fv, task, encoder, mode, seed):
  return fv.runs_dir and os.path.join(
      fv.runs_dir, cell_name(task, encoder, mode), f"seed{seed}")


def record_dir(fv, task, encoder, mode, seed):
  return (records.record_dir(fv.records_dir, cell_name(task, encoder,
                                                            mode), seed)
          if fv.records_dir else None)


def source_dir(fv, task, encoder, mode, seed):
  """The run folder, else its record, that has results.json; or None."""
  return records.first_with(
      hybrid_siamese.RESULTS_FILE, run_dir(fv, task, encoder, mode, seed),
      record_dir(fv, task, encoder, mode, seed))


def read_results(fv, task, encoder, mode, seed):
  """The run's results.json (from `source_dir`), or None."""
  folder = source_dir(fv, task, encoder, mode, seed)
  return folder and records.read_json(
      os.path.join(folder, hybrid_siamese.RESULTS_FILE))


def read_test_decisions(fv, task, encoder, mode, seed, rule=None):
  """bool [n]: test pairs right at the best dev epoch (or None)."""
  folder = source_dir(fv, task, encoder, mode, seed)
  path = folder and os.path.join(folder, hybrid_siamese.TEST_PREDICTIONS_FILE)
  if not path or not os.path.exists(path):
    return None
  with np.load(path) as saved:
    key = "correct_tuned" if rule == TUNED else "correct"
    return saved[key] if key in saved else None


def test_accuracy(result, rule=None):
  """Test accuracy (%) of one run under a decision rule, or None."""
  if rule == TUNED:
    result = result and result.get("tuned_threshold")
  return None if not result else 100 * result["test_accuracy"]


def _cell(values):
  """'mean ± sd (n=k)' of the seeds' accuracies present; 'not run'."""
  spread = significance.mean_std([v for v in values if v is not None])
  return tables.mean_std(spread, count=True) if spread[2] else "not run"


def compare(fv, task, encoder, seeds, a, b):
  """(t-test over common seeds, McNemar on their pooled test decisions) of
  column a = (mode, rule) against b; None for a test without data."""
  acc_a, acc_b, dec_a, dec_b = [], [], [], []
  for seed in seeds:
    ra = test_accuracy(read_results(fv, task, encoder, a[0], seed), a[1])
    rb = test_accuracy(read_results(fv, task, encoder, b[0], seed), b[1])
    if ra is None or rb is None:
      continue
    acc_a.append(ra)
    acc_b.append(rb)
    da = read_test_decisions(fv, task, encoder, a[0], seed, a[1])
    db = read_test_decisions(fv, task, encoder, b[0], seed, b[1])
    if da is not None and db is not None and da.shape == db.shape:
      dec_a.append(da)
      dec_b.append(db)
  t_test = significance.paired_t_test(acc_a, acc_b) if acc_a else None
  mcnemar = (significance.mcnemar_exact(np.stack(dec_a), np.stack(dec_b))
             if dec_a else None)
  return t_test, mcnemar


def joint_claim(fv, task, encoder, seeds):
  """(verdict, detail) on "joint >= each single loss" for one encoder."""
  joint = ("joint", None)
  singles = [("contrastive", None), ("logistic", None)]
  if any(m not in fv.modes for m, _ in [joint] + singles):
    return "not run", ""
  directions, details = [], []
  for single in singles:
    t_test, mcnemar = compare(fv, task, encoder, seeds, joint, single)
    if t_test is None:
      return "not run", ""
    tests = [t for t in (t_test, mcnemar) if t is not None]
    directions.append(significance.direction(tests) if mcnemar else 0)
    details.append(f"{t_test.difference:+.2f} vs {single[0]}, p "
                   f"{tables.pvalue(t_test.pvalue)} / {tables.pvalue(mcnemar and mcnemar.pvalue)}")
  return significance.claim_verdict(directions), "; ".join(details)


def _word_vectors_source(fv):
  """What the page says the word vectors are."""
  if not fv.word_vector_choice:
    return "this project's own vectors trained on the book corpus"
  choice = word_vector_choice.read_choice(fv.word_vector_choice)
  scores = "; ".join(f"{c['name']} {c['dev_pearson']:.2f}"
                     for c in choice["candidates"])
  return (f"{choice['selected']}, the zoo's word vectors with the highest "
          f"STS-B dev Pearson among those trained on the book corpus "
          f"(`{fv.word_vector_choice}`: {scores})")


def majority_accuracy(fv, task):
  """(accuracy, label) of always answering the test split's majority class;
  None without the file or its pairs."""
  try:
    path = pair_datasets.task_files(
        data_dir_lib.resolve_data_dir(fv.data_dir), task)["test"]
  except errors.DataDirError:
    return None
  if not os.path.isfile(path):
    return None
  labels = pair_datasets.load_file(task, path).labels
  if not labels.size:
    return None
  share = float(np.mean(labels))
  return (share, "match") if share >= 0.5 else (1 - share, "no match")


def majority_line(fv, task, seeds):
  """The majority class's accuracy, and the contrastive cells (dev-tuned)
  below it."""
  majority = majority_accuracy(fv, task)
  if majority is None:
    return ("Majority class of the test set: unknown (its file is not in "
            "the data directory, or has no pairs).")
  accuracy, label = majority
  below, present = [], []
  for encoder in fv.encoders:
    values = [test_accuracy(read_results(fv, task, encoder, "contrastive",
                                         seed), TUNED) for seed in seeds]
    values = [v for v in values if v is not None]
    if values:
      present.append(ENCODERS[encoder])
      if np.mean(values) < 100 * accuracy:
        below.append(f"{ENCODERS[encoder]} ({np.mean(values):.2f})")
  line = (f"Always answering \"{label}\", the test set's majority class, "
          f"scores {100 * accuracy:.2f}%.")
  if present:
    line += (" Contrastive cells (dev-tuned threshold, mean over seeds) "
             "below it: " + (", ".join(below) if below else "none") +
             f" (of {', '.join(present)}).")
  return line


def format_page(fv):
  """The Markdown page of the runs present under --runs_dir."""
  seeds = records.parse_seeds(fv.seeds)
  columns = [(m, r) for (m, r) in COLUMN_NAMES if m in fv.modes]
  lines = [
      "# Hybrid siamese + MLP sentence matcher: results",
      "",
      "Generated by `make docs` from the records of the runs that `python -m "
      f"lab.reports.hybrid_sweep` trains (`{fv.records_dir}`); do not edit "
      "by hand.",
      "",
      "Nicosia and Moschitti, *Accurate Sentence Matching with Hybrid "
      "Siamese Networks*, CIKM 2017. Test accuracy (%) at the best dev "
      "epoch, mean ± standard deviation over the training seeds "
      f"{', '.join(str(k) for k in seeds)} (n = the seeds present in a "
      "cell). Contrastive-only runs are shown under the paper's fixed "
      "distance threshold (match if d < 0.5) and under the threshold "
      "tuned for dev accuracy (each epoch; the best dev epoch of that "
      "rule); logistic and joint runs predict a match when the MLP's "
      "probability is above 0.5.",
      "",
      "**Paired tests.** \"joint ≥ each single loss\" is judged against "
      "Contrastive (d < 0.5) and Logistic, each by a paired t-test over "
      "seeds (seed k vs seed k) and McNemar's exact test on the test "
      "decisions pooled over the seed-matched runs (discordant counts "
      "summed). A difference counts when both give p < 0.05 with the same "
      "sign: the claim holds when joint is significantly better than both, "
      "does not hold when it is significantly worse than either, and is "
      "otherwise not distinguishable at p<0.05. The cell after the verdict "
      "gives the mean difference and the two p-values (t-test / McNemar).",
      "",
  ]
  any_result = None
  total_runs, total_seconds = 0, 0.0
  for task in fv.tasks:
    lines += [f"## {TASKS.get(task, task)}", "",
              "| Siamese encoder | " + " | ".join(
                  COLUMN_NAMES[c] for c in columns) + " | joint ≥ each "
              "single loss? | differences, p (t-test / McNemar) |",
              "|---|" + "---:|" * len(columns) + "---|---|"]
    details, tests = [], []
    for encoder in fv.encoders:
      cells = []
      for mode, rule in columns:
        cells.append(_cell(test_accuracy(
            read_results(fv, task, encoder, mode, seed), rule)
                           for seed in seeds))
      for mode in fv.modes:
        for seed in seeds:
          result = read_results(fv, task, encoder, mode, seed)
          if result is None:
            continue
          any_result = any_result or result
          total_runs += 1
          total_seconds += result["seconds_this_run"]
          tuned = result.get("tuned_threshold") or {}
          details.append(
              f"| {ENCODERS[encoder]} | {MODES[mode]} | {seed} | "
              f"{result['best_epoch']} | {100 * result['dev_accuracy']:.2f} | "
              f"{100 * result['test_accuracy']:.2f} | "
              + (f"{tuned['threshold']:.3f} (epoch {tuned['epoch']}) | "
                 f"{100 * tuned['dev_accuracy']:.2f} | "
                 f"{100 * tuned['test_accuracy']:.2f} | " if tuned else
                 "| | | ")
              + f"{result['parameters_without_embeddings']:,} | "
              f"{result['seconds_this_run']:.0f} |")
      verdict, detail = joint_claim(fv, task, encoder, seeds)
      lines.append(f"| {ENCODERS[encoder]} | " + " | ".join(cells) +
                   f" | {verdict} | {detail} |")
      if ("contrastive" in fv.modes and "joint" in fv.modes):
        t_test, mcnemar = compare(fv, task, encoder, seeds, ("joint", None),
                                  ("contrastive", TUNED))
        if t_test is not None:
          tests.append(
              f"| {ENCODERS[encoder]} | {t_test.difference:+.2f} | "
              f"{tables.pvalue(t_test.pvalue)} | {tables.pvalue(mcnemar and mcnemar.pvalue)} | "
              f"{t_test.num} |")
    if "contrastive" in fv.modes:
      lines += ["", majority_line(fv, task, seeds)]
    if tests:
      lines += ["", "Joint loss against Contrastive (dev-tuned threshold), "
                "the same two tests:", "",
                "| encoder | joint − contrastive (tuned) | t-test p | "
                "McNemar p | seeds |", "|---|---:|---:|---:|---:|"] + tests
    lines += ["", "Per run: seed, best dev epoch, dev and test accuracy "
              "(fixed rule), for contrastive runs the dev-tuned threshold "
              "(its best dev epoch) with its dev and test accuracy, "
              "parameters without the embedding table, wall-clock seconds "
              "of the last invocation (2 shared CPU cores).", "",
              "| encoder | loss | seed | best epoch | dev | test | tuned "
              "threshold | dev (tuned) | test (tuned) | parameters | "
              "seconds |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"
              "---:|---:|"] + details
    lines.append("")
  if any_result is not None:
    lines += [
        f"**Wall time.** The {total_runs} runs on this page took "
        f"{total_seconds / 60:.1f} min in all: the per-run seconds summed "
        "(each run's last invocation, so a resumed run's earlier "
        "invocations are not counted; 2 shared CPU cores).", "",
        "## Setup", "",
        f"- Word vectors: `{any_result['word_vectors']}` — "
        f"{_word_vectors_source(fv)} (GloVe, which the "
        "paper uses, is not available offline), rescaled by one factor to "
        f"standard deviation {any_result['word_vectors_scale_to_std']} (the "
        "std of U[−0.25, 0.25]); words without a vector ~ U[−0.25, 0.25]; "
        "fine-tuned.",
        f"- Adam (lazy updates of the looked-up embedding rows: "
        f"{any_result['lazy_adam']}), learning rate "
        f"{any_result['learning_rate']}, batch {any_result['batch_size']}, "
        f"{any_result['num_epochs']} epochs, sentences truncated to 50 ids, "
        "margin 1, contrastive threshold 0.5 (and dev-tuned); λc = 1.0 "
        "(MSRP) and 0.01 "
        "(SICK-E), as the paper's paraphrase and entailment settings.",
        "- Flagfiles: `configs/hybrid_<task>_<encoder>.flags`; the loss is "
        "`--mode`.", ""]
  lines += ["## The paper's numbers (other data sets: Quora, SNLI; GloVe)", "",
            tables.table(
                ["data set", "encoder", "Contrastive", "Logistic",
                 "Joint loss"],
                [[name, ENCODERS[encoder]] + [f"{v:.2f}" for v in values]
                 for name, table in PAPER.items()
                 for encoder, values in table.items()],
                "|---|---|---:|---:|---:|")]
  return "\n".join(lines)


def check_flags(fv):
  """Raises errors.UserError for an unknown task, encoder, mode or seed."""
  for what, given, known in (("task", fv.tasks, TASKS),
                             ("encoder", fv.encoders, ENCODERS),
                             ("mode", fv.modes, MODES)):
    for value in given:
      if value not in known:
        raise errors.UserError(f"unknown {what} {value!r}; one of "
                               f"{list(known)}")
  records.parse_seeds(fv.seeds)
  if fv.word_vector_choice:
    word_vector_choice.read_choice(fv.word_vector_choice)


def page(context):
  """docs/hybrid_siamese.md from the records (lab/docs.py)."""
  fv = cli.parse_own_flags(define_flags, [
      "hybrid_table", f"--data_dir={context.data_dir}", "--runs_dir=",
      "--word_vector_choice=docs/records/zoo_word_vectors.json"])
  return render(fv)


def render(fv) -> str:
  """The page of the runs present (or recorded)."""
  check_flags(fv)
  return tables.readable(format_page(fv))


def run(argv: Sequence[str]) -> str:
  """Renders the page in-process (argv[0] is the program); returns it."""
  return render(cli.parse_own_flags(define_flags, argv))


if __name__ == "__main__":
  cli.run_with_own_flags(define_flags, lambda fv: print(render(fv)))
