r"""STS results tables: `python -m lab.reports.sts_tables`.

Scores exports on the STS-style sets (`evaluation.sts`) and prints the
results table with: each further model against the first on every set
(Pearson difference, paired-bootstrap interval, Holm-corrected Williams'
test; the marks in the results table come from it), the Siamese CBOW paper's
Wilcoxon test when asked for (labelled: it says whether scores differ, not
which model agrees better with the gold), and reference columns read from
baseline pages (`lab.reports.baselines`) compared with the first model.

  python -m lab.reports.sts_tables --model=EXPORT [--model=EXPORT ...] \
      [--names=a,b] --data_dir=../shared/data [--sets=sts,sick,stsb] \
      [--reference=word2vec=../shared/baselines/word2vec_books_sts.md] \
      [--output_markdown=PAGE --command_note=COMMAND] [--wilcoxon]
"""

import math
import os
import sys
from typing import Any, Callable, Mapping, Sequence

from absl import flags

from lab.reports import baselines as baselines_lib
from lab import significance as significance_lib
from lab import tables
from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data


# ------------------------------------------------------------ significance --


def _sets_table(significance: Mapping[str, Mapping[str, Any]], title: str,
                cell: Callable[[Any], str]) -> str:
  """`title`, then a row per set and a column per comparison label."""
  labels = list(significance)
  names = dict.fromkeys(n for label in labels for n in significance[label])
  return f"{title}\n\n" + tables.table(
      ["set"] + labels, [[name] + [
          "" if test is None else cell(test)
          for test in (significance[label].get(name) for label in labels)]
                         for name in names], "|---|" + "---:|" * len(labels))


def format_significance_table(significance: Mapping[str, Mapping[str, Any]]
                              ) -> str:
  """{label ("b vs a"): {set: CorrelationComparison}} as markdown; a
  Holm-corrected p below significance.TABLE_ALPHA is marked better or
  worse."""
  alpha = significance_lib.TABLE_ALPHA
  def cell(c):
    if math.isnan(c.difference):
      return tables.MISSING
    interval = ("" if any(math.isnan(x) for x in c.ci95) else
                f" [{c.ci95[0]:+.2f}, {c.ci95[1]:+.2f}]")
    text = (f"{c.difference:+.2f}{interval} "
            f"p={tables.pvalue(c.adjusted_pvalue)}")
    direction = c.direction(alpha)
    return (f"**{text}**" if direction > 0 else
            text + sts.WORSE if direction < 0 else text)

  return _sets_table(
      significance, "Difference in Pearson's r \u00d7 100 [paired-bootstrap "
      "95% interval], Holm-corrected p of Williams' test (**better** / "
      f"{sts.WORSE} worse: p < {alpha:g} and at least "
      f"{significance_lib.MIN_DIFFERENCE:g} apart)", cell)


def format_wilcoxon_table(significance: Mapping[str, Mapping[str, Any]]
                          ) -> str:
  """The Siamese CBOW paper's test: Wilcoxon p-values, labelled as such."""
  alpha = significance_lib.WILCOXON_ALPHA
  return _sets_table(
      significance, "Kenter et al.'s test (Wilcoxon signed-rank on the "
      f"cosines; {significance_lib.DAGGER}: p < {alpha:g}). It asks whether "
      "two models' scores are shifted, not which agrees better with the gold "
      "scores: it is not behind any mark above.",
      lambda test: f"{test.pvalue:.3g}" + (
          significance_lib.DAGGER if test.significant(alpha) else ""))


# ------------------------------------------------------------ references --

# The aggregates that `compare_to_references` reports, in order.
COMPARED_AGGREGATES = (sts.STS_MEAN_KEY, sts.year_mean_key(2014))


def compare_to_references(results: sts.EvalResults,
                          references: Mapping[str, Mapping[str, Any]]) -> dict:
  """One model against reference columns ({name: {row key: value}}), on
  Pearson x 100: {"model", "aggregates" (COMPARED_AGGREGATES both have),
  "sets" (those some reference gives), "wins" (the model beats the best
  reference), "losses" ({"set", "model", "reference", "reference_pearson"})}.
  """
  columns = {}  # name -> {row key: [pearson, spearman or None]}
  for name, column in references.items():
    columns[name] = {}
    for key, value in column.items():
      pearson, spearman, _ = sts.reference_value(value)
      if tables.number_or_none(pearson) is not None:
        columns[name][key] = [float(pearson), tables.number_or_none(spearman)]
  aggregates = []
  for key in COMPARED_AGGREGATES:
    agg = results.aggregates.get(key)
    given = {name: c[key] for name, c in columns.items() if key in c}
    if agg is not None and given:
      aggregates.append({
          "key": key, "label": agg.label,
          "model": [tables.number_or_none(agg.pearson),
                    tables.number_or_none(agg.spearman)],
          "references": given})
  compared, wins, losses = [], [], []
  for name, entry in results.sets.items():
    candidates = [(c[name][0], column) for column, c in columns.items()
                  if name in c]
    if not candidates:
      continue
    best, best_column = max(candidates, key=lambda x: x[0])
    compared.append(name)
    model = tables.number_or_none(entry.pearson)
    if model is not None and model > best:
      wins.append(name)
    else:
      losses.append({"set": name, "model": model, "reference": best_column,
                     "reference_pearson": best})
  return {"model": results.model_name, "aggregates": aggregates,
          "sets": compared, "wins": wins, "losses": losses}


def format_comparison(comparison: Mapping[str, Any]) -> str:
  """Formats `compare_to_references`' output as a markdown block."""
  model = comparison["model"] or "the model"

  def pair(values):
    pearson, spearman = values
    text = sts.format_number(pearson, 2)
    if spearman is None:
      return text
    return f"{text} ({sts.format_number(spearman, 2)})"

  lines = [f"Comparison of {model} with the reference columns (Pearson's r "
           "\u00d7 100 (Spearman's \u03c1 \u00d7 100); differences in "
           "Pearson):", ""]
  for agg in comparison["aggregates"]:
    parts = []
    for name, values in agg["references"].items():
      text = f"{name} {pair(values)}"
      if agg["model"][0] is not None:
        text += f" [{agg['model'][0] - values[0]:+.2f}]"
      parts.append(text)
    lines.append(f"- {agg['label']}: {model} {pair(agg['model'])} vs "
                 + "; ".join(parts))
  sets, wins = comparison["sets"], comparison["wins"]
  if not sets:
    lines.append("- No set in common with the reference columns.")
  else:
    line = (f"- Sets where {model}'s Pearson beats the best reference "
            f"column: {len(wins)} of {len(sets)}")
    if comparison["losses"]:
      line += ". Not beaten: " + "; ".join(
          f"{l['set']} ({sts.format_number(l['model'], 2)} vs "
          f"{sts.format_number(l['reference_pearson'], 2)}, "
          f"{l['reference']})"
          for l in comparison["losses"])
    lines.append(line + ".")
  return "\n".join(lines) + "\n"


# ------------------------------------------------------------------- CLI --


def define_export_flags(flag_values: flags.FlagValues, what: str) -> None:
  """--model, --names (of each `what`), --data_dir, --output_markdown:
  shared with lab.reports.senteval_tables."""
  flags.DEFINE_multi_string(
      "model", [], "Export path of a model (base dir with integer versions, "
      "or a version dir); repeat for several models.",
      flag_values=flag_values)
  flags.DEFINE_list("names", [], f"Comma-separated {what} names, one per "
                    "--model (default: the export folder names).",
                    flag_values=flag_values)
  flags.DEFINE_string("data_dir", "", "Data directory (default: "
                      f"${data_dir_lib.ENV_VAR}).", flag_values=flag_values)
  flags.DEFINE_string("output_markdown", "", "Write the tables to this "
                      "markdown file.", flag_values=flag_values)


def model_names(fv: flags.FlagValues) -> list:
  """The --names of the --model exports (default: the export folders' names,
  a version folder with its parent's), made unique by their position."""
  if not fv.model:
    raise errors.UserError("no model given: pass --model=EXPORT_PATH "
                           "(repeat for several models)")
  if fv.names and len(fv.names) != len(fv.model):
    raise errors.UserError(
        f"--names has {len(fv.names)} names for {len(fv.model)} --model flags")
  out = list(fv.names)
  if not out:
    for path in map(os.path.normpath, fv.model):
      base = os.path.basename(path)
      if base.isdigit():
        base = os.path.join(os.path.basename(os.path.dirname(path)), base)
      out.append(base or path)
  for i, name in enumerate(out):
    if name in out[:i]:
      out[i] = f"{name} ({i + 1})"
  return out


def define_flags(flag_values: flags.FlagValues) -> None:
  """Defines this command's flags on `flag_values`."""
  define_export_flags(flag_values, "column")
  flags.DEFINE_list("sets", list(sts_data.GROUPS), "Set groups to evaluate: "
                    "sts (SemEval 2012-2015), sick (SICK test), stsb (STS "
                    "Benchmark dev).", flag_values=flag_values)
  flags.DEFINE_integer("batch_size", 1024, "Sentences per encoder call.",
                       flag_values=flag_values)
  flags.DEFINE_boolean("wilcoxon", False, "Also print the Siamese CBOW "
                       "paper's Wilcoxon signed-rank p-values, labelled as "
                       "the paper's test.", flag_values=flag_values)
  flags.DEFINE_multi_string(
      "reference", [], "PREFIX=PATH of a baseline markdown page (see "
      "lab/reports/baselines.py) whose columns, named 'PREFIX X', are shown "
      "beside the models and compared with the first model; repeatable.",
      flag_values=flag_values)
  flags.DEFINE_string("command_note", "", "If set, --output_markdown starts "
                      "with the line 'Produced by: `COMMAND_NOTE`'.",
                      flag_values=flag_values)


def evaluate_flags(fv: flags.FlagValues, out=None) -> dict:
  """Runs the command for parsed flags and prints the tables to `out`;
  returns {"results", "names", "significance", "references", "comparison",
  "markdown"}."""
  out = out or sys.stdout
  names = model_names(fv)
  if fv.batch_size < 1:
    raise errors.UserError(f"--batch_size must be >= 1, got {fv.batch_size}")
  unknown = [g for g in fv.sets if g not in sts_data.GROUPS]
  if unknown or not fv.sets:
    raise errors.UserError(f"--sets: unknown groups {unknown}; choose from "
                           f"{','.join(sts_data.GROUPS)}")
  references = baselines_lib.load_references(fv.reference)
  data_dir = data_dir_lib.resolve_data_dir(fv.data_dir)
  pair_sets, missing = sts_data.load_eval_sets(data_dir, fv.sets)
  if not pair_sets:
    raise errors.DataDirError(
        f"no evaluation sets found under {data_dir!r} (missing: "
        f"{', '.join(missing)}): fix --data_dir or ${data_dir_lib.ENV_VAR}")
  encoders = [encoder_lib.load_encoder(m) for m in fv.model]
  results = [sts.evaluate_pair_sets(encoder, pair_sets, missing,
                                    batch_size=fv.batch_size, model_name=name)
             for name, encoder in zip(names, encoders)]
  significance = {name: significance_lib.compare_per_set(r, results[0])
                  for name, r in zip(names[1:], results[1:])}
  wilcoxon = {name: significance_lib.wilcoxon_per_set(r, results[0])
              for name, r in zip(names[1:], results[1:])} if fv.wilcoxon else {}

  markdown = sts.format_table(
      results, names, references=references,
      marks=significance_lib.table_marks(significance),
      marks_caption=significance_lib.marks_caption(names[0]))
  comparison = None
  if references:
    markdown += (f"\nNo mark against {', '.join(references)}: stored scores, "
                 "without the per-pair scores a test needs.\n")
    comparison = compare_to_references(results[0], references)
    markdown += "\n" + format_comparison(comparison)
  if missing:
    markdown += f"\nMissing sets (not in the data): {', '.join(missing)}\n"
  if significance:
    labelled = {f"{n} vs {names[0]}": s for n, s in significance.items()}
    markdown += "\n" + format_significance_table(labelled)
  if wilcoxon:
    markdown += "\n" + format_wilcoxon_table(
        {f"{n} vs {names[0]}": w for n, w in wilcoxon.items()})
  print(markdown, file=out)

  if fv.output_markdown:
    tables.write_page(fv.output_markdown, (
        f"Produced by: {tables.code(fv.command_note)}\n\n"
        if fv.command_note else "") + markdown)
  return {"results": results, "names": names, "significance": significance,
          "references": references, "comparison": comparison,
          "markdown": markdown}


def run(argv: Sequence[str], out=None) -> dict:
  """Runs the command in-process (argv[0] is the program)."""
  return evaluate_flags(cli.parse_own_flags(define_flags, argv), out=out)


if __name__ == "__main__":
  cli.run_with_own_flags(define_flags, evaluate_flags)
