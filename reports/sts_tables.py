r"""STS results tables: the `python -m reports.sts_tables` command.

Evaluates exported encoders on the STS-style sets with `evaluation.sts`
(cosine scores; Pearson's r and Spearman's rho x 100 per set, year means and
the all-STS mean) and prints its results table (`evaluation.sts.format_table`)
with:

  * each further model against the first on every set: the difference in
    Pearson's r with its paired-bootstrap 95% interval and Williams' test
    of dependent correlations, Holm-corrected over the sets
    (`format_significance_table`); bold cells in the results table are
    significantly better than the first model, WORSE-marked ones worse;
  * with --wilcoxon, also the Siamese CBOW paper's test (Wilcoxon
    signed-rank on the cosines, p < 0.0001), labelled as such: it says
    whether two models' scores differ, not which agrees better with the
    gold;
  * reference columns read from baseline pages (`reports.baselines`,
    --reference=PREFIX=PATH) and a block comparing the first model with them
    (`compare_to_references`, `format_comparison`);
  * optionally, a "Produced by: `COMMAND`" first line (`command_note_line`).

Usage:

  python -m reports.sts_tables --model=exports/siamese_cbow \
      [--model=exports/word2vec_cbow ...] [--names=siamese,w2v] \
      --data_dir=../shared/data [--sets=sts,sick,stsb] \
      [--output_json=results.json] [--output_markdown=results.md] \
      [--reference=word2vec=../shared/baselines/word2vec_books_sts.md ...] \
      [--command_note="python -m reports.sts_tables ..."]
"""

import json
import math
import os
import re
import sys
from typing import Any, Callable, Mapping, Sequence

from absl import flags

from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import significance as significance_lib
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.reports import baselines as baselines_lib
from sentzoo.reports import formatting


# ------------------------------------------------------------ significance --


def _sets_table(significance: Mapping[str, Mapping[str, Any]], title: str,
                cell: Callable[[Any], str]) -> str:
  """`title`, then a table: a row per set, a column per comparison label,
  `cell(test)` in each cell where the comparison has that set."""
  labels = list(significance)
  rows = list(dict.fromkeys(n for label in labels for n in significance[label]))
  lines = [title, "", "| set | " + " | ".join(labels) + " |",
           "|---|" + "---:|" * len(labels)]
  for name in rows:
    tests = [significance[label].get(name) for label in labels]
    lines.append(f"| {name} | " + " | ".join(
        "" if test is None else cell(test) for test in tests) + " |")
  return "\n".join(lines) + "\n"


def format_significance_table(significance: Mapping[str, Mapping[str, Any]],
                              alpha: float = significance_lib.TABLE_ALPHA
                              ) -> str:
  """Formats correlation comparisons as markdown: rows sets, columns pairs.

  Args:
    significance: comparison label (e.g. "b vs a") -> {set name:
      CorrelationComparison}.
    alpha: Holm-corrected p-values below it are marked better/worse.
  """
  def cell(c):
    if math.isnan(c.difference):
      return formatting.MISSING
    interval = ("" if any(math.isnan(x) for x in c.ci95) else
                f" [{c.ci95[0]:+.2f}, {c.ci95[1]:+.2f}]")
    text = (f"{c.difference:+.2f}{interval} "
            f"p={formatting.pvalue(c.adjusted_pvalue)}")
    direction = c.direction(alpha)
    return (f"**{text}**" if direction > 0 else
            text + significance_lib.WORSE if direction < 0 else text)

  return _sets_table(
      significance, "Difference in Pearson's r \u00d7 100 [paired-bootstrap "
      "95% interval], Holm-corrected p of Williams' test (**better** / "
      f"{significance_lib.WORSE} worse: p < {alpha:g} and at least "
      f"{significance_lib.MIN_DIFFERENCE:g} apart)", cell)


def format_wilcoxon_table(significance: Mapping[str, Mapping[str, Any]],
                          alpha: float = significance_lib.WILCOXON_ALPHA
                          ) -> str:
  """The Siamese CBOW paper's test: Wilcoxon p-values, labelled as such."""
  return _sets_table(
      significance, "Kenter et al.'s test (Wilcoxon signed-rank on the "
      f"cosines; {significance_lib.DAGGER}: p < {alpha:g}). It asks whether "
      "two models' scores are shifted, not which agrees better with the gold "
      "scores: it is not behind any mark above.",
      lambda test: f"{test.pvalue:.3g}" + (
          significance_lib.DAGGER if test.significant(alpha) else ""))


def without_marks(page: str, note: str, headers=("| set |",)) -> str:
  """A page written by an older generator, with none of its marks left.

  Those pages marked scores with the Wilcoxon test (a dagger) and bolded the
  best of a row; neither says "better" (issue 35). Here every table cell
  but a row's label loses its bold, daggers and WORSE marks, the caption
  sentence that explained the daggers and the unlabelled Wilcoxon p-value
  tables go, and `note` (one line: why nothing is marked, and the command
  that adds the marks) stands above the first table that had a mark. Only
  tables whose header row starts with one of `headers` are touched.

  Args:
    page: the page's markdown.
    note: the line to add.
    headers: how the header row of a table with marks starts.
  """
  marks = ("**", significance_lib.DAGGER, significance_lib.WORSE)
  out, noted, skipping, in_set_table = [], False, "", False
  for line in page.split("\n"):
    if line.startswith("Wilcoxon signed-rank test p-values"):
      skipping = "caption"  # this caption, its table, the blank line after
    if skipping:
      in_table = line.startswith("|")
      skipping = ("table" if in_table else "" if skipping == "table"
                  else skipping)
      continue
    if line.startswith("|"):
      in_set_table = in_set_table or line.startswith(tuple(headers))
      label, *cells = line.split(" | ")
      unmarked = cells
      for mark in marks if in_set_table else ():
        unmarked = [c.replace(mark, "") for c in unmarked]
      if unmarked != cells and not noted:
        at = max(i for i, l in enumerate(out) if not l.startswith("|"))
        out[at:at] = ["", note]
        noted = True
      line = " | ".join([label] + unmarked)
    else:
      in_set_table = False
      line = re.sub(f" *{significance_lib.DAGGER}: significantly different "
                    r"from .*?\(Wilcoxon signed-rank, p < 0\.0001\)\.",
                    "", line)
    out.append(line)
  return "\n".join(out)


# ------------------------------------------------------------ references --

# The aggregates that `compare_to_references` reports, in order.
COMPARED_AGGREGATES = (sts.STS_MEAN_KEY, sts.year_mean_key(2014))


def compare_to_references(results: sts.EvalResults,
                          references: Mapping[str, Mapping[str, Any]]) -> dict:
  """Compares one model with reference columns, on Pearson's r x 100.

  Args:
    results: the model's results.
    references: name -> {row key: value}, as for
      `evaluation.sts.format_table`.

  Returns:
    dict with
      "model": the model's name;
      "aggregates": for each of COMPARED_AGGREGATES that the model has and a
        reference gives: {"key", "label", "model": [pearson, spearman],
        "references": {name: [pearson, spearman]}} (a model's nan and a
        reference's absent Spearman are None);
      "sets": the set names that the model has and some reference column
        gives a Pearson for, in evaluation order;
      "wins": those where the model's Pearson beats the best reference's;
      "losses": the others, each {"set", "model" (Pearson or None if nan),
        "reference" (the best column's name), "reference_pearson"}.
  """
  columns = {}  # name -> {row key: [pearson, spearman or None]}
  for name, column in references.items():
    columns[name] = {}
    for key, value in column.items():
      pearson, spearman, _ = sts.reference_value(value)
      if formatting.number_or_none(pearson) is not None:
        columns[name][key] = [float(pearson), formatting.number_or_none(spearman)]
  aggregates = []
  for key in COMPARED_AGGREGATES:
    agg = results.aggregates.get(key)
    given = {name: c[key] for name, c in columns.items() if key in c}
    if agg is not None and given:
      aggregates.append({
          "key": key, "label": agg.label,
          "model": [formatting.number_or_none(agg.pearson),
                    formatting.number_or_none(agg.spearman)],
          "references": given})
  compared, wins, losses = [], [], []
  for name, entry in results.sets.items():
    candidates = [(c[name][0], column) for column, c in columns.items()
                  if name in c]
    if not candidates:
      continue
    best, best_column = max(candidates, key=lambda x: x[0])
    compared.append(name)
    model = formatting.number_or_none(entry.pearson)
    if model is not None and model > best:
      wins.append(name)
    else:
      losses.append({"set": name, "model": model, "reference": best_column,
                     "reference_pearson": best})
  return {"model": results.model_name, "aggregates": aggregates,
          "sets": compared, "wins": wins, "losses": losses}


def format_comparison(comparison: Mapping[str, Any], digits: int = 2) -> str:
  """Formats `compare_to_references`' output as a markdown block."""
  model = comparison["model"] or "the model"

  def pair(values):
    pearson, spearman = values
    text = sts.format_number(pearson, digits)
    if spearman is None:
      return text
    return f"{text} ({sts.format_number(spearman, digits)})"

  lines = [f"Comparison of {model} with the reference columns (Pearson's r "
           "\u00d7 100 (Spearman's \u03c1 \u00d7 100); differences in "
           "Pearson):", ""]
  for agg in comparison["aggregates"]:
    parts = []
    for name, values in agg["references"].items():
      text = f"{name} {pair(values)}"
      if agg["model"][0] is not None:
        text += f" [{agg['model'][0] - values[0]:+.{digits}f}]"
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
          f"{l['set']} ({sts.format_number(l['model'], digits)} vs "
          f"{sts.format_number(l['reference_pearson'], digits)}, "
          f"{l['reference']})"
          for l in comparison["losses"])
    lines.append(line + ".")
  return "\n".join(lines) + "\n"


def command_note_line(command: str) -> str:
  """The "Produced by: `command`" line of a results page."""
  return f"Produced by: {formatting.code(command)}"


# ------------------------------------------------------------------- CLI --


def define_export_flags(flag_values: flags.FlagValues, what: str) -> None:
  """The flags of a command that evaluates exports (this one and
  reports.senteval_tables): --model, --names (of each `what`: "column" or
  "row"), --data_dir, --output_json and --output_markdown."""
  flags.DEFINE_multi_string(
      "model", [], "Export path of a model (base dir with integer versions, "
      "or a version dir); repeat for several models.",
      flag_values=flag_values)
  flags.DEFINE_list("names", [], f"Comma-separated {what} names, one per "
                    "--model (default: the export folder names).",
                    flag_values=flag_values)
  flags.DEFINE_string("data_dir", "", "Data directory (default: "
                      f"${data_dir_lib.ENV_VAR}).", flag_values=flag_values)
  flags.DEFINE_string("output_json", "", "Write the results to this JSON "
                      "file.", flag_values=flag_values)
  flags.DEFINE_string("output_markdown", "", "Write the tables to this "
                      "markdown file.", flag_values=flag_values)


def model_names(fv: flags.FlagValues) -> list:
  """The --names of the --model exports (default: the export folder names,
  a version folder with its parent's), made unique by their position.

  Raises:
    errors.UserError: no --model, or not one name per --model.
  """
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
  flags.DEFINE_enum("table_style", "brackets", ["brackets", "columns"],
                    "brackets: 'r (rho)' per cell; columns: two columns.",
                    flag_values=flag_values)
  flags.DEFINE_float("alpha", significance_lib.TABLE_ALPHA, "Threshold "
                     "of the Holm-corrected Williams test behind the marks.",
                     flag_values=flag_values)
  flags.DEFINE_boolean("wilcoxon", False, "Also print the Siamese CBOW "
                       "paper's Wilcoxon signed-rank p-values, labelled as "
                       "the paper's test.", flag_values=flag_values)
  flags.DEFINE_multi_string(
      "reference", [], "PREFIX=PATH of a baseline markdown page (see "
      "reports/baselines.py) whose columns, named 'PREFIX X', are shown "
      "beside the models and compared with the first model; repeatable.",
      flag_values=flag_values)
  flags.DEFINE_string("command_note", "", "If set, --output_markdown starts "
                      "with the line 'Produced by: `COMMAND_NOTE`'.",
                      flag_values=flag_values)


def evaluate_flags(fv: flags.FlagValues, out=None) -> dict:
  """Runs the command for parsed flags; prints the tables to `out`.

  Returns:
    dict with "results" (list of sts.EvalResults), "names", "significance"
    (column name -> {set: CorrelationComparison against the first model}), "references" (column name
    -> {row key: (pearson, spearman)}), "comparison" (what
    `compare_to_references` returns for the first model, None without
    references) and "markdown" (the printed text; the file written to
    --output_markdown adds the --command_note line above it).

  Raises:
    errors.UserError: bad flags, data directory or model path.
  """
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

  results = []
  for name, encoder in zip(names, encoders):
    results.append(sts.evaluate_pair_sets(encoder, pair_sets, missing,
                                          batch_size=fv.batch_size,
                                          model_name=name))
  significance = {name: significance_lib.compare_per_set(r, results[0])
                  for name, r in zip(names[1:], results[1:])}
  wilcoxon = {name: significance_lib.wilcoxon_per_set(r, results[0])
              for name, r in zip(names[1:], results[1:])} if fv.wilcoxon else {}

  markdown = sts.format_table(results, names, references=references,
                              style=fv.table_style, significance=significance,
                              alpha=fv.alpha)
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
    markdown += "\n" + format_significance_table(labelled, alpha=fv.alpha)
  if wilcoxon:
    markdown += "\n" + format_wilcoxon_table(
        {f"{n} vs {names[0]}": w for n, w in wilcoxon.items()})
  print(markdown, file=out)

  if fv.output_markdown:
    with open(fv.output_markdown, "w", encoding="utf-8") as f:
      if fv.command_note:
        f.write(command_note_line(fv.command_note) + "\n\n")
      f.write(markdown)
  if fv.output_json:
    payload = {
        "data_dir": data_dir,
        "alpha": fv.alpha,
        "models": [dict(sts.results_to_json(r), path=m)
                   for r, m in zip(results, fv.model)],
        "significance": {
            f"{n} vs {names[0]}": {
                set_name: {"difference": formatting.number_or_none(c.difference),
                           "ci95": [formatting.number_or_none(x) for x in c.ci95],
                           "williams_t": formatting.number_or_none(c.t),
                           "pvalue": formatting.number_or_none(c.pvalue),
                           "holm_pvalue": formatting.number_or_none(c.adjusted_pvalue),
                           "num_pairs": c.num_pairs,
                           "direction": c.direction(fv.alpha)}
                for set_name, c in s.items()}
            for n, s in significance.items()},
    }
    if references:
      payload["references"] = {
          name: {key: list(sts.reference_value(v)[:2])
                 for key, v in c.items()}
          for name, c in references.items()}
      payload["reference_comparison"] = comparison
    with open(fv.output_json, "w", encoding="utf-8") as f:
      json.dump(payload, f, ensure_ascii=False)
  return {"results": results, "names": names, "significance": significance,
          "references": references, "comparison": comparison,
          "markdown": markdown}


def run(argv: Sequence[str], out=None) -> dict:
  """Runs the command in-process with its own flags; argv[0] is the program.

  Returns what `evaluate_flags` returns.

  Raises:
    errors.UserError: bad flags, data directory or model path.
  """
  fv = cli.parse_own_flags(define_flags, argv)
  return evaluate_flags(fv, out=out)


if __name__ == "__main__":
  cli.run_with_own_flags(define_flags, evaluate_flags)
