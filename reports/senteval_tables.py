r"""SentEval transfer tables: the `python -m reports.senteval_tables` command.

Evaluates exported encoders on the SentEval transfer tasks with
`evaluation.senteval` (logistic regression on the frozen embeddings; see that
module for the protocol) and prints the accuracy table in the layout of the
Sent2Vec paper's Table 1 (Pagliardini et al., 2018), with the paper's rows
(`reports.paper_numbers`) unless --nopaper_rows, and the seconds each task
took per model.

Usage:

  python -m reports.senteval_tables --model=runs/siamese_cbow_paper/export \
      [--model=OTHER_EXPORT ...] [--names=a,b] --data_dir=../shared/data \
      [--tasks=MR,CR,SUBJ,MPQA,TREC,MSRP] [--output_json=transfer.json] \
      [--output_markdown=transfer.md]
"""

import json
import sys
from typing import Mapping, Sequence

from absl import flags

from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import senteval
from sentzoo.reports import paper_numbers
from sentzoo.reports import sts_tables

# ---------------------------------------------------------------- tables --


def _get(result, name):
  if result is None:
    return None
  return result.get(name) if isinstance(result, Mapping) else getattr(
      result, name)


def format_transfer_table(rows: Sequence[tuple], digits: int = 1) -> str:
  """Markdown accuracy table in the layout of the Sent2Vec paper's Table 1.

  Nothing is bold: the cross-validated accuracies come without the
  per-example decisions a paired test needs, and the pages bold only what a
  test finds significantly better.

  Args:
    rows: (label, {task: senteval.TaskResult or its JSON dict}) per row;
      absent tasks are left empty.
    digits: decimals.

  Returns:
    The table: columns MSRP (Acc / F1), MR, CR, SUBJ, MPQA, TREC, Average.
  """
  order = ("MSRP", "MR", "CR", "SUBJ", "MPQA", "TREC")

  def cell(value):
    return "" if value is None else f"{value:.{digits}f}"

  lines = ["| model | MSRP (Acc / F1) | MR | CR | SUBJ | MPQA | TREC | "
           "Average |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
  for label, results in rows:
    cells = [label]
    msrp = results.get("MSRP")
    if msrp is None:
      cells.append("")
    else:
      f1 = _get(msrp, "f1")
      cells.append(cell(_get(msrp, "accuracy")) +
                   ("" if f1 is None else f" / {f1:.{digits}f}"))
    for task in order[1:]:
      cells.append(cell(_get(results.get(task), "accuracy")))
    cells.append(cell(senteval.average_accuracy(results)))
    lines.append("| " + " | ".join(cells) + " |")
  return "\n".join(lines) + "\n"


def format_time_table(rows: Sequence[tuple]) -> str:
  """Markdown table of seconds per task: 'total (encode)' per cell."""
  lines = ["| model | " + " | ".join(senteval.TASKS) + " | total |",
           "|---|" + "---:|" * (len(senteval.TASKS) + 1)]
  for label, results in rows:
    cells, total = [label], 0.0
    for task in senteval.TASKS:
      r = results.get(task)
      if r is None:
        cells.append("")
        continue
      enc = _get(r, "encode_seconds")
      clf = _get(r, "classifier_seconds")
      total += enc + clf
      cells.append(f"{enc + clf:.1f} ({enc:.1f})")
    cells.append(f"{total:.1f}")
    lines.append("| " + " | ".join(cells) + " |")
  return "\n".join(lines) + "\n"


def paper_rows(models: Sequence[str] = paper_numbers.SENT2VEC_TABLE1_SHOWN
               ) -> list:
  """(label, {task: {"accuracy", "f1"}}) rows of the Sent2Vec Table 1."""
  rows = []
  for name in models:
    row = paper_numbers.SENT2VEC_TABLE1[name]
    results = {task: {"accuracy": row[task]}
               for task in senteval.CV_TASKS + ("TREC",)}
    results["MSRP"] = {"accuracy": row["MSRP_acc"], "f1": row["MSRP_f1"]}
    results["Average"] = row["Average"]  # as printed in the paper
    rows.append((f"{name} (paper, Table 1)", results))
  return rows


# ------------------------------------------------------------------- CLI --


def define_transfer_flags(flag_values: flags.FlagValues) -> None:
  """The transfer evaluation's flags (`config_from_flags` reads them), shared
  with reports.results_page."""
  flags.DEFINE_list("tasks", list(senteval.TASKS), "Transfer tasks.",
                    flag_values=flag_values)
  flags.DEFINE_integer("outer_folds", 10, "Folds of the accuracy CV.",
                       flag_values=flag_values)
  flags.DEFINE_integer("inner_folds", 10, "Folds of the penalty-tuning CV.",
                       flag_values=flag_values)
  flags.DEFINE_list("l2_grid", [f"{x:g}" for x in senteval.DEFAULT_L2_GRID],
                    "L2 penalties tried.", flag_values=flag_values)
  flags.DEFINE_integer("seed", senteval.DEFAULT_SEED,
                       "Seed of the fold splits.", flag_values=flag_values)
  flags.DEFINE_integer("batch_size", 1024, "Sentences per encoder call.",
                       flag_values=flag_values)


def define_flags(flag_values: flags.FlagValues) -> None:
  """Defines this command's flags on `flag_values`."""
  sts_tables.define_export_flags(flag_values, "row")
  define_transfer_flags(flag_values)
  flags.DEFINE_boolean("paper_rows", True, "Show the Sent2Vec paper's "
                       "Table 1 rows above the models.",
                       flag_values=flag_values)


def config_from_flags(fv: flags.FlagValues) -> senteval.TransferConfig:
  """The TransferConfig of parsed --outer_folds, --inner_folds, ... flags."""
  try:
    grid = tuple(float(x) for x in fv.l2_grid)
  except ValueError as e:
    raise errors.UserError(f"--l2_grid: {e}") from e
  return senteval.TransferConfig(outer_folds=fv.outer_folds,
                                 inner_folds=fv.inner_folds, l2_grid=grid,
                                 seed=fv.seed)


def evaluate_flags(fv: flags.FlagValues, out=None) -> dict:
  """Runs the command for parsed flags; prints the tables to `out`.

  Returns:
    dict with "names", "results" (list of {task: senteval.TaskResult}),
    "missing" (tasks without data), "config" and "markdown".
  """
  out = out or sys.stdout
  names = sts_tables.model_names(fv)
  config = config_from_flags(fv)
  data_dir = data_dir_lib.resolve_data_dir(fv.data_dir)
  loaded, missing = senteval.load_tasks(data_dir, fv.tasks)
  if not loaded:
    raise errors.DataDirError(
        f"no transfer task data under {data_dir!r} (missing: "
        f"{', '.join(missing)}): fix --data_dir or ${data_dir_lib.ENV_VAR}")
  encoders = [encoder_lib.load_encoder(m) for m in fv.model]
  all_results = []
  for name, encoder in zip(names, encoders):
    all_results.append(senteval.evaluate(encoder, loaded, config,
                                         fv.batch_size, model_name=name))
  rows = paper_rows() if fv.paper_rows else []
  rows += list(zip(names, all_results))
  markdown = ("Accuracy \u00d7 100 (MSRP: accuracy / F1); " +
              config.describe() + ".\n\n" + format_transfer_table(rows) +
              "\nSeconds per task: total (of which encoding)\n\n" +
              format_time_table(list(zip(names, all_results))))
  if missing:
    markdown += f"\nMissing tasks (no data): {', '.join(missing)}\n"
  print(markdown, file=out)
  if fv.output_markdown:
    with open(fv.output_markdown, "w", encoding="utf-8") as f:
      f.write(markdown)
  if fv.output_json:
    with open(fv.output_json, "w", encoding="utf-8") as f:
      json.dump({"data_dir": data_dir, "config": config.to_json(),
                 "missing": missing,
                 "models": [{"name": n, "path": m,
                             "tasks": {t: r.to_json() for t, r in rs.items()}}
                            for n, m, rs in zip(names, fv.model,
                                                all_results)]},
                f, indent=1)
  return {"names": names, "results": all_results, "missing": missing,
          "config": config, "markdown": markdown}


def run(argv: Sequence[str], out=None) -> dict:
  """Runs the command in-process with its own flags; argv[0] is the program."""
  fv = cli.parse_own_flags(define_flags, argv)
  return evaluate_flags(fv, out=out)


if __name__ == "__main__":
  cli.run_with_own_flags(define_flags, evaluate_flags)
