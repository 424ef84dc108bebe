"""Peer baselines for the STS tables, read from markdown result pages.

A baseline page holds one results table whose header's first cell is "set":

  | set | pairs | CBOW Pearson | CBOW Spearman | skip-gram Pearson |
  |---|---:|---:|---:|---:|
  | STS2012.MSRpar | 750 | 24.20 | 27.36 | 28.13 |
  | SICK.test | 4927 | 59.18 | 53.41 | 65.09 |
  | **mean of the 19 STS 2012–2015 sets** | | 41.56 | 44.78 | 49.11 |
  | **STS 2014 mean (6 sets)** | | 44.65 | 45.87 | 53.50 |

Each "X Pearson" column is paired with "X Spearman" when there is one, giving
a reference column named "PREFIX X". Set rows are keyed by their name;
bold aggregate rows by the keys of `evaluation.sts` ("STS.mean",
"STS2014.mean"). Bold rows with no values (group headings) are skipped, and
so is a "pairs" column. Values are x 100, like the evaluation's.
"""

import math
import re
from typing import Optional, Sequence

from sentzoo.common import errors

_SEPARATOR = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")
_METRIC = re.compile(r"^(.*\S)\s+(Pearson|Spearman)$")
_ALL_STS_MEAN = re.compile(r"^mean of the \d+ STS\b")
_YEAR_MEAN = re.compile(r"^STS (\d{4}) mean\b")


def _cells(line: str) -> list:
  """"| a | b |" -> ["a", "b"]."""
  return [c.strip() for c in line.strip().strip("|").split("|")]


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
  """Parses the results table of a baseline markdown page.

  Args:
    path: the markdown file.
    prefix: put before every column name, e.g. "word2vec" -> "word2vec CBOW".

  Returns:
    dict column name -> {row key: (pearson, spearman or None)}, columns in
    the table's order, rows in file order; a row without a Pearson value in
    a column is left out of that column.

  Raises:
    errors.DataFormatError: no results table, or a malformed one (the message
      names the file and line).
  """
  with open(path, encoding="utf-8") as f:
    lines = f.read().splitlines()
  start = next((i for i, line in enumerate(lines) if line.startswith("|") and
                _cells(line)[0].lower() == "set"), None)
  if start is None:
    raise errors.DataFormatError(path, max(len(lines), 1),
                                 "no results table (header '| set | ...')")
  header = _cells(lines[start])
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
      if any(l.startswith("|") and _cells(l)[0].lower() == "set"
             for l in lines[i:]):
        raise errors.DataFormatError(path, line_number, "more than one "
                                     "results table")
      break
    cells = _cells(line)
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
  """Loads "PREFIX=PATH" baseline pages into one dict of reference columns.

  Raises:
    errors.UserError: a bad spec, an unreadable or malformed file, or two
      columns with the same name.
  """
  out = {}
  for spec in specs:
    prefix, sep, path = (part.strip() for part in spec.partition("="))
    if not sep or not prefix or not path:
      raise errors.UserError(f"--reference must be PREFIX=PATH, got {spec!r}")
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
