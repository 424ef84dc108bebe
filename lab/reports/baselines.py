"""Peer baselines for the STS tables, read from markdown result pages.

A baseline page holds one table whose header starts with "set", e.g.
`| set | pairs | CBOW Pearson | CBOW Spearman |`: each "X Pearson" column
(paired with "X Spearman" if there is one) becomes a reference column
"PREFIX X"; set rows are keyed by name, bold aggregate rows by
`evaluation.sts`'s keys ("STS.mean", "STS2014.mean"); bold rows without
values (group headings) and a "pairs" column are skipped. Values are x 100.
"""

import math
import re
from typing import Optional, Sequence

from lab import tables
from sentzoo.common import errors

_SEPARATOR = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")
_METRIC = re.compile(r"^(.*\S)\s+(Pearson|Spearman)$")
_ALL_STS_MEAN = re.compile(r"^mean of the \d+ STS\b")
_YEAR_MEAN = re.compile(r"^STS (\d{4}) mean\b")


def _row_key(label: str) -> Optional[str]:
  """A row label -> its key; None for an unrecognised bold label."""
  if not (label.startswith("**") and label.endswith("**")):
    return label
  text = label[2:-2].strip()
  if _ALL_STS_MEAN.match(text):
    return "STS.mean"
  match = _YEAR_MEAN.match(text)
  if match:
    return f"STS{match.group(1)}.mean"
  return None


def _number(text: str, path: str, line_number: int) -> Optional[float]:
  if not text:
    return None
  try:
    value = float(text.replace("\u2212", "-"))
  except ValueError:
    value = math.nan
  if not math.isfinite(value):
    raise errors.DataFormatError(path, line_number,
                                 f"not a correlation: {text!r}")
  return value


def _columns(header: Sequence[str], path: str, line_number: int) -> list:
  """Header cells -> [(name, pearson cell index, spearman index or None)]."""
  metrics = {}
  for i, cell in enumerate(header[1:], start=1):
    if cell.lower() == "pairs":
      continue
    match = _METRIC.match(cell)
    if not match:
      raise errors.DataFormatError(
          path, line_number, f"column {cell!r} is not 'X Pearson' or "
          "'X Spearman'")
    name, metric = match.groups()
    if metric in metrics.setdefault(name, {}):
      raise errors.DataFormatError(path, line_number,
                                   f"column {cell!r} appears twice")
    metrics[name][metric] = i
  out = []
  for name, indices in metrics.items():
    if "Pearson" not in indices:
      raise errors.DataFormatError(path, line_number,
                                   f"'{name} Spearman' has no '{name} "
                                   "Pearson' column")
    out.append((name, indices["Pearson"], indices.get("Spearman")))
  if not out:
    raise errors.DataFormatError(path, line_number, "no Pearson column")
  return out


def load_baseline_file(path: str, prefix: str = "") -> dict:
  """{"prefix X": {row key: (pearson, spearman or None)}} of the page's
  table, in its order; a DataFormatError (file and line) if malformed."""
  with open(path, encoding="utf-8") as f:
    lines = f.read().splitlines()
  start = next((i for i, line in enumerate(lines) if line.startswith("|") and
                tables.cells(line)[0].lower() == "set"), None)
  if start is None:
    raise errors.DataFormatError(path, max(len(lines), 1),
                                 "no results table (header '| set | ...')")
  header = tables.cells(lines[start])
  columns = _columns(header, path, start + 1)
  if start + 1 >= len(lines) or not _SEPARATOR.match(lines[start + 1].strip()):
    raise errors.DataFormatError(path, start + 2, "expected the table's "
                                 "'|---|' separator line")
  metric_cells = {j for _, p, s in columns for j in (p, s) if j is not None}
  out = {(f"{prefix} {name}" if prefix else name): {}
         for name, _, _ in columns}
  for i in range(start + 2, len(lines)):
    line, line_number = lines[i], i + 1
    if not line.startswith("|"):
      if any(l.startswith("|") and tables.cells(l)[0].lower() == "set"
             for l in lines[i:]):
        raise errors.DataFormatError(path, line_number, "more than one "
                                     "results table")
      break
    cells = tables.cells(line)
    if len(cells) != len(header):
      raise errors.DataFormatError(path, line_number, f"{len(cells)} cells, "
                                   f"the header has {len(header)}")
    values = [_number(c, path, line_number) if j in metric_cells else None
              for j, c in enumerate(cells)]
    key = _row_key(cells[0])
    if not key:
      if cells[0].startswith("**") and all(
          values[p] is None and (s is None or values[s] is None)
          for _, p, s in columns):
        continue  # A group heading such as "**2012**".
      raise errors.DataFormatError(path, line_number,
                                   f"unknown row {cells[0]!r}")
    for (name, p, s), column in zip(columns, out.values()):
      if key in column:
        raise errors.DataFormatError(path, line_number,
                                     f"row {key!r} appears twice")
      if values[p] is not None:
        column[key] = (values[p], None if s is None else values[s])
  return out


def load_references(specs: Sequence[str]) -> dict:
  """The reference columns of "PREFIX=PATH" baseline pages, in one dict."""
  out = {}
  for spec in specs:
    prefix, path = tables.name_value(spec, "--reference", "PREFIX=PATH")
    try:
      columns = load_baseline_file(path, prefix)
    except OSError as e:
      raise errors.UserError(f"--reference={spec}: cannot read {path!r}: "
                             f"{e.strerror or e}") from e
    for name, column in columns.items():
      if name in out:
        raise errors.UserError(f"--reference={spec}: column {name!r} is "
                               "already given; use another prefix")
      out[name] = column
  return out
