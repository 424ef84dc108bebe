"""Semantic textual similarity evaluation: cosine scores vs. gold scores.

For every sentence pair the predicted score is the cosine of the two
sentence embeddings (0.0 when either embedding is the zero vector). Per set,
Pearson's r and Spearman's rho between predicted and gold scores are
reported x100, as in the Siamese CBOW paper (Kenter et al., 2016, Table 1)
and the project's word2vec baselines; pairs without a gold score are not
loaded (see sts_data). Aggregate rows: the
mean of each STS year, and the mean over the STS 2012-2015 sets present.

This is the library that trainers and exporters call: `evaluate_pair_sets`
(any `encoder.Encoder`), the periodic `stsb_dev_evaluator`, the results
table of a model directory (`format_table`) and its JSON form. The command
that evaluates exports and compares them with each other and with reference
pages is `python -m lab.reports.sts_tables` (lab/reports/sts_tables.py).
"""

import dataclasses
import math
import os
import time
from typing import Any, Mapping, Optional, Sequence

from absl import logging
import numpy as np

from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts_data
from sentzoo.inputs import scored_pairs

STS_MEAN_KEY = "STS.mean"


def year_mean_key(year: int) -> str:
  """Returns the aggregate key of a year's mean, e.g. "STS2014.mean"."""
  return f"STS{year}.mean"


@dataclasses.dataclass
class SetResult:
  """One model's result on one pair set.

  Attributes:
    name: the set's name.
    pearson: Pearson's r x 100 (nan if undefined, e.g. constant scores).
    spearman: Spearman's rho x 100.
    predicted: np.ndarray float64 [n], the cosine score of every pair.
    gold: np.ndarray float64 [n], the gold scores.
  """
  name: str
  pearson: float
  spearman: float
  predicted: np.ndarray
  gold: np.ndarray

  @property
  def num_pairs(self) -> int:
    return int(self.gold.size)


@dataclasses.dataclass
class Aggregate:
  """A mean over several sets' correlations (each x 100).

  Attributes:
    key: a stable id, e.g. "STS2014.mean" or "STS.mean".
    label: the table's row label, e.g. "STS 2014 mean (6 sets)".
    members: the names of the averaged sets.
    pearson: the mean of their Pearson's r x 100.
    spearman: the mean of their Spearman's rho x 100.
  """
  key: str
  label: str
  members: list
  pearson: float
  spearman: float


@dataclasses.dataclass
class EvalResults:
  """One model's results on a collection of pair sets.

  Attributes:
    sets: dict name -> SetResult, in evaluation order.
    missing: names of sets that were asked for but absent from the data.
    aggregates: dict key -> Aggregate (year means, then STS.mean).
    model_name: a label for tables.
  """
  sets: dict
  missing: list
  aggregates: dict
  model_name: str = ""


def _unit_rows(x: np.ndarray) -> np.ndarray:
  """float64 [n, dim] rows scaled to norm 1; zero rows stay zero."""
  x = np.asarray(x, np.float64)
  norms = np.linalg.norm(x, axis=1, keepdims=True)
  return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def correlations(predicted: np.ndarray, gold: np.ndarray) -> tuple:
  """Returns (Pearson's r x 100, Spearman's rho x 100); nan if undefined.

  The arithmetic is scipy 1.17's `stats.pearsonr` and `stats.spearmanr`
  (same values to the bit; the test compares them). It is written here
  because importing `scipy.stats` adds about 50 MB to every trainer's
  resident memory, and the trainers evaluate STS while they train.
  """
  predicted = np.asarray(predicted, np.float64)
  gold = np.asarray(gold, np.float64)
  if (predicted.size < 2 or np.all(predicted == predicted[0]) or
      np.all(gold == gold[0])):
    return math.nan, math.nan
  pearson = _pearson(predicted, gold)
  spearman = np.corrcoef(np.stack([_average_ranks(predicted),
                                   _average_ranks(gold)]))[1, 0]
  return 100.0 * float(pearson), 100.0 * float(spearman)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
  """Pearson's r of two non-constant float64 vectors [n], n >= 2."""
  def centred_and_norm(v):
    centred = v - np.mean(v)
    largest = np.max(np.abs(centred))  # Scaled first, against overflow.
    return centred, largest * np.linalg.norm(centred / largest, ord=2, axis=-1)
  xm, x_norm = centred_and_norm(x)
  ym, y_norm = centred_and_norm(y)
  r = np.clip(np.vecdot(xm / x_norm, ym / y_norm), -1.0, 1.0)
  return float(np.round(r)) if x.size == 2 else float(r)


def _average_ranks(values: np.ndarray) -> np.ndarray:
  """Ranks 1..n as float64 [n]; tied values share their mean rank."""
  order = np.argsort(values, kind="mergesort")
  ordered = values[order]
  starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
  ends = np.r_[starts[1:], values.size]  # one past each tie group
  ranks = np.empty(values.size, np.float64)
  ranks[order] = np.repeat((starts + 1 + ends) / 2.0, ends - starts)
  return ranks


def compute_aggregates(sets: Mapping[str, Any], missing: Sequence[str] = ()
                       ) -> dict:
  """Computes the year means and the all-STS mean of the canonical sets.

  Args:
    sets: name -> object with `pearson` and `spearman` (x 100).
    missing: names of absent sets, named in the all-STS row's label.

  Returns:
    dict key -> Aggregate: "STS2012.mean" ... "STS2015.mean" for years with
    a set present, then "STS.mean" if any STS set is present.
  """
  out = {}
  years = sorted({y for y, _ in sts_data.STS_TEST_SETS})
  for year in years:
    members = [n for n in sts_data.STS_TEST_SET_NAMES
               if sts_data.sts_year(n) == year and n in sets]
    if members:
      key = year_mean_key(year)
      out[key] = _aggregate(key, f"STS {year} mean ({len(members)} sets)",
                            members, sets)
  members = [n for n in sts_data.STS_TEST_SET_NAMES if n in sets]
  if members:
    label = (f"mean of the {len(members)} STS {years[0]}\u2013{years[-1]} "
             "sets present")
    absent = [n for n in missing if n in sts_data.STS_TEST_SET_NAMES]
    if absent:
      label += f" ({', '.join(absent)} missing)"
    out[STS_MEAN_KEY] = _aggregate(STS_MEAN_KEY, label, members, sets)
  return out


def _aggregate(key, label, members, sets):
  return Aggregate(
      key=key, label=label, members=list(members),
      pearson=float(np.mean([sets[n].pearson for n in members])),
      spearman=float(np.mean([sets[n].spearman for n in members])))


def stsb_dev_evaluator(data_dir, encode_fn):
  """A trainer's periodic evaluation: STS Benchmark dev correlations.

  Args:
    data_dir: the data directory; without STS Benchmark files the evaluator
      returns {} (training goes on, unevaluated).
    encode_fn: callable tf.string [batch] -> float [batch, dim] over the
      model's current weights.

  Returns:
    A function () -> {"stsb_dev_pearson": ..., "stsb_dev_spearman": ...}
    (x 100), for `trainers.training_loop.run(eval_fn=...)`.
  """
  dev_set = None
  if os.path.exists(os.path.join(data_dir, "sts", "STSBenchmark")):
    dev_set = sts_data.load_stsb_split(data_dir, "dev")

  def evaluate():
    if dev_set is None:
      return {}
    result = evaluate_pair_sets(encoder_lib.FunctionEncoder(encode_fn),
                                [dev_set]).sets[dev_set.name]
    return {"stsb_dev_pearson": result.pearson,
            "stsb_dev_spearman": result.spearman}

  return evaluate


def evaluate_pair_sets(encoder: encoder_lib.Encoder,
                       pair_sets: Sequence[scored_pairs.PairSet],
                       missing: Sequence[str] = (),
                       batch_size: int = 1024,
                       model_name: str = "") -> EvalResults:
  """Scores every pair by cosine and correlates with the gold scores.

  Each distinct sentence (over all sets) is encoded once.

  Args:
    encoder: an `encoder.Encoder` (float32 [n, dim] per n sentences).
    pair_sets: the sets to evaluate.
    missing: names of sets that could not be loaded (kept for tables).
    batch_size: sentences per encoder call.
    model_name: a label for tables.

  Returns:
    EvalResults with per-set correlations, per-pair predictions and the
    aggregates of `compute_aggregates`.
  """
  index = {}
  for pair_set in pair_sets:
    for sentence in (*pair_set.sentences1, *pair_set.sentences2):
      index.setdefault(sentence, len(index))
  start = time.time()
  embeddings = encoder.encode(list(index), batch_size=batch_size)
  if model_name:  # Unnamed: a trainer's periodic dev evaluation, which logs.
    logging.info("%s: encoded %d distinct sentences in %.1f s", model_name,
                 len(index), time.time() - start)
  unit = _unit_rows(embeddings)
  sets = {}
  for pair_set in pair_sets:
    ids1 = np.array([index[s] for s in pair_set.sentences1], np.int64)
    ids2 = np.array([index[s] for s in pair_set.sentences2], np.int64)
    # An empty set gives float64 [0] (unit is float64 [distinct, dim]).
    predicted = np.clip(np.sum(unit[ids1] * unit[ids2], axis=1), -1.0, 1.0)
    pearson, spearman = correlations(predicted, pair_set.scores)
    sets[pair_set.name] = SetResult(pair_set.name, pearson, spearman,
                                    predicted, pair_set.scores.copy())
  missing = [n for n in missing if n not in sets]
  return EvalResults(sets=sets, missing=list(missing),
                     aggregates=compute_aggregates(sets, missing),
                     model_name=model_name)


# ---------------------------------------------------------------- tables --


def format_number(value: float, digits: int) -> str:
  return "nan" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def reference_value(value) -> tuple:
  """A reference cell's (pearson, spearman, verbatim text).

  `value` is a row's entry of a reference column (see `format_table`):
  None, a verbatim string, {"pearson": .., "spearman": ..}, (pearson,
  spearman) or a Pearson number; absent parts are None.
  """
  if value is None:
    return None, None, ""
  if isinstance(value, str):
    return None, None, value
  if isinstance(value, Mapping):
    return value.get("pearson"), value.get("spearman"), None
  if isinstance(value, (tuple, list)):
    return (value[0] if len(value) > 0 else None,
            value[1] if len(value) > 1 else None, None)
  return float(value), None, None


def _row_names(results_list) -> list:
  """Set rows in table order: canonical STS sets, then the others (in the
  order they first appear)."""
  seen = dict.fromkeys(n for r in results_list for n in (*r.sets, *r.missing))
  sts_rows = [n for n in sts_data.STS_TEST_SET_NAMES if n in seen]
  return sts_rows + [n for n in seen if n not in sts_data.STS_TEST_SET_NAMES]


# The mark after a Pearson significantly below the first column's.
WORSE = "\u25bc"


def format_table(results, names: Optional[Sequence[str]] = None,
                 references: Optional[Mapping[str, Mapping[str, Any]]] = None,
                 marks: Optional[Mapping[str, Mapping[str, int]]] = None,
                 marks_caption: str = "") -> str:
  """Formats results as a markdown table in the layout of the paper's Table 1.

  Rows: the STS sets grouped by year (missing ones shown as "missing"),
  then other sets (SICK.test, STSB.dev, ...), then the aggregate rows.
  Columns: the reference columns, then one per model; a cell is
  "r (rho)", x 100, two decimals.

  Args:
    results: an EvalResults or a list of them (one column each).
    names: column names (default: each result's model_name, else "model i").
    references: extra columns, name -> {row key: value}, where a row key is a
      set name or an aggregate key ("STS2014.mean", "STS.mean") and a value
      is (pearson, spearman), {"pearson": .., "spearman": ..}, a Pearson
      number or a verbatim string. Numbers are x 100, like the results.
    marks: column name -> {set name: +1 (the cell is bold) or -1 (WORSE
      after it)}: which of its sets a test found better or worse than the
      first column's (lab/significance.py); nothing else is marked.
    marks_caption: what the marks mean, added to the caption when there
      are marks.
  """
  results_list = [results] if isinstance(results, EvalResults) else list(
      results)
  if names is None:
    names = [r.model_name or f"model {i + 1}"
             for i, r in enumerate(results_list)]
  names = list(names)
  if len(names) != len(results_list):
    raise ValueError(f"{len(names)} names for {len(results_list)} results")
  references = dict(references or {})
  marks = dict(marks or {})
  columns = list(references) + names

  def column_cells(row_key, is_set):
    """Per column: (pearson or None, spearman or None, text or None)."""
    cells = []
    for ref in references.values():
      cells.append(reference_value(ref.get(row_key)))
    for r in results_list:
      entry = r.sets.get(row_key) if is_set else r.aggregates.get(row_key)
      if entry is not None:
        cells.append((entry.pearson, entry.spearman, None))
      elif is_set and row_key in r.missing:
        cells.append((None, None, "missing"))
      else:
        cells.append((None, None, ""))
    return cells

  def render(row_label, pairs, row_key, is_set):
    out = [row_label, pairs]
    for column, (pearson, spearman, text) in zip(
        columns, column_cells(row_key, is_set)):
      if text is not None:
        out.append(text)
        continue
      direction = (marks.get(column, {}).get(row_key, 0)
                   if is_set and pearson is not None else 0)
      p_text = "" if pearson is None else format_number(pearson, 2)
      if direction < 0:
        p_text += WORSE
      if direction > 0:
        p_text = f"**{p_text}**"
      s_text = "" if spearman is None else format_number(spearman, 2)
      out.append(f"{p_text} ({s_text})" if s_text else p_text)
    return "| " + " | ".join(out) + " |"

  header = ["set", "pairs"] + columns
  caption = ("Pearson's r \u00d7 100 (Spearman's \u03c1 \u00d7 100); cosine "
             "similarity of the sentence embeddings.")
  if marks:
    caption += " " + marks_caption
  lines = [caption, "", "| " + " | ".join(header) + " |",
           "|---|---:|" + "---:|" * (len(header) - 2)]

  def pairs_of(name):
    for r in results_list:
      if name in r.sets:
        return str(r.sets[name].num_pairs)
    return ""

  current_year = None
  width = len(header)
  for name in _row_names(results_list):
    year = sts_data.sts_year(name)
    if year is not None and year != current_year:
      lines.append("| " + " | ".join([f"**{year}**"] + [""] * (width - 1)) +
                   " |")
      current_year = year
    elif year is None and current_year is not None:
      lines.append("| " + " | ".join(["**other**"] + [""] * (width - 1)) +
                   " |")
      current_year = None
    lines.append(render(name, pairs_of(name), name, is_set=True))

  aggregate_labels = {}
  for r in results_list:
    for key, agg in r.aggregates.items():
      aggregate_labels.setdefault(key, agg.label)
  for key, label in aggregate_labels.items():
    lines.append(render(f"**{label}**", "", key, is_set=False))
  return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ json --


def _json_float(value):
  return None if value is None or math.isnan(value) else float(value)


def results_to_json(results: EvalResults, include_predictions: bool = True
                    ) -> dict:
  """Returns a JSON-serialisable dict of `results` (nan -> None)."""
  sets = {}
  for name, r in results.sets.items():
    entry = {"num_pairs": r.num_pairs, "pearson": _json_float(r.pearson),
             "spearman": _json_float(r.spearman)}
    if include_predictions:
      entry["predicted"] = [float(x) for x in r.predicted]
      entry["gold"] = [float(x) for x in r.gold]
    sets[name] = entry
  return {
      "model": results.model_name,
      "sets": sets,
      "missing": list(results.missing),
      "aggregates": {
          key: {"label": a.label, "members": list(a.members),
                "pearson": _json_float(a.pearson),
                "spearman": _json_float(a.spearman)}
          for key, a in results.aggregates.items()},
  }


def results_from_json(data: Mapping[str, Any]) -> EvalResults:
  """Inverse of `results_to_json` (needs include_predictions=True)."""

  def number(x):
    return math.nan if x is None else float(x)

  sets = {}
  for name, entry in data["sets"].items():
    sets[name] = SetResult(
        name, number(entry["pearson"]), number(entry["spearman"]),
        np.asarray(entry.get("predicted", []), np.float64),
        np.asarray(entry.get("gold", []), np.float64))
  aggregates = {
      key: Aggregate(key, a["label"], list(a["members"]),
                     number(a["pearson"]), number(a["spearman"]))
      for key, a in data.get("aggregates", {}).items()}
  return EvalResults(sets, list(data.get("missing", [])), aggregates,
                     data.get("model", ""))



if __name__ == "__main__":
  # A library module: say which command prints its table.
  import sys  # pylint: disable=g-import-not-at-top
  print("error: evaluation.sts is a library, not a command: `sentzoo "
        "evaluate MODEL [--data_dir DIR]` prints a model's STS table "
        "(python -m reports.sts_tables --model=... compares several)",
        file=sys.stderr)
  sys.exit(2)
