r"""SentEval transfer tables: `python -m lab.reports.senteval_tables`.

Scores exports on the SentEval transfer tasks (`lab.senteval`) and
prints the accuracy table in the layout of the Sent2Vec paper's Table 1,
under the paper's rows, and the seconds each task took.

  python -m lab.reports.senteval_tables --model=EXPORT [--model=EXPORT ...] \
      [--names=a,b] --data_dir=../shared/data [--tasks=MR,CR,TREC]
"""

import sys
from typing import Mapping, Sequence

from absl import flags

from lab.reports import paper_numbers
from lab.reports import sts_tables
from lab import senteval
from lab import senteval_data
from lab import tables
from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib

# ---------------------------------------------------------------- tables --


def _get(result, name):
  if result is None:
    return None
  return result.get(name) if isinstance(result, Mapping) else getattr(
      result, name)


def format_transfer_table(rows: Sequence[tuple]) -> str:
  """The accuracy table of rows (label, {task: TaskResult or its JSON}).

  Nothing is bold: cross-validated accuracies come without the per-example
  decisions a paired test needs, and pages bold only what a test finds.
  """
  def cell(value):
    return "" if value is None else f"{value:.1f}"
  body = []
  for label, results in rows:
    msrp = results.get("MSRP")
    f1 = _get(msrp, "f1")
    body.append([label, "" if msrp is None else cell(_get(msrp, "accuracy"))
                 + ("" if f1 is None else f" / {f1:.1f}")]
                + [cell(_get(results.get(task), "accuracy"))
                   for task in ("MR", "CR", "SUBJ", "MPQA", "TREC")]
                + [cell(senteval.average_accuracy(results))])
  return tables.table(
      ["model", "MSRP (Acc / F1)", "MR", "CR", "SUBJ", "MPQA", "TREC",
       "Average"], body, "|---|" + "---:|" * 7)


def format_time_table(rows: Sequence[tuple]) -> str:
  """Seconds per task, 'total (of which encoding)' per cell."""
  body = []
  for label, results in rows:
    cells, total = [label], 0.0
    for task in senteval_data.TASKS:
      r = results.get(task)
      if r is None:
        cells.append("")
        continue
      enc, clf = _get(r, "encode_seconds"), _get(r, "classifier_seconds")
      total += enc + clf
      cells.append(f"{enc + clf:.1f} ({enc:.1f})")
    body.append(cells + [f"{total:.1f}"])
  return tables.table(["model", *senteval_data.TASKS, "total"], body,
                          "|---|" + "---:|" * (len(senteval_data.TASKS) + 1))


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
  """The transfer flags (`config_from_flags`), shared with results_page."""
  flags.DEFINE_list("tasks", list(senteval_data.TASKS), "Transfer tasks.",
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
  """Runs the command for parsed flags and prints the tables to `out`;
  returns {"names", "results", "missing", "config", "markdown"}."""
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
  all_results = [senteval.evaluate(encoder, loaded, config, fv.batch_size,
                                   model_name=name)
                 for name, encoder in zip(names, encoders)]
  rows = paper_rows() + list(zip(names, all_results))
  markdown = ("Accuracy \u00d7 100 (MSRP: accuracy / F1); " +
              config.describe() + ".\n\n" + format_transfer_table(rows) +
              "\nSeconds per task: total (of which encoding)\n\n" +
              format_time_table(list(zip(names, all_results))))
  if missing:
    markdown += f"\nMissing tasks (no data): {', '.join(missing)}\n"
  print(markdown, file=out)
  if fv.output_markdown:
    tables.write_page(fv.output_markdown, markdown)
  return {"names": names, "results": all_results, "missing": missing,
          "config": config, "markdown": markdown}


def run(argv: Sequence[str], out=None) -> dict:
  """Runs the command in-process (argv[0] is the program)."""
  return evaluate_flags(cli.parse_own_flags(define_flags, argv), out=out)


if __name__ == "__main__":
  cli.run_with_own_flags(define_flags, evaluate_flags)
