"""Formatting shared by the results pages: numbers, p-values, code, commands.

Every page says a missing number the same way ("–"), prints p-values the
same way and puts the commands that made it in one collapsed section, so
that the text a reader sees stays short.
"""

import math
from typing import Optional, Sequence

MISSING = "\u2013"


def number_or_none(value) -> Optional[float]:
  """float(value), or None for None and nan (JSON's null)."""
  if value is None or (isinstance(value, float) and math.isnan(value)):
    return None
  return float(value)


def number(value, digits: int = 2) -> str:
  """value with `digits` decimals; MISSING for None and nan."""
  value = number_or_none(value)
  return MISSING if value is None else f"{value:.{digits}f}"


def pvalue(value) -> str:
  """A p-value in 3 decimals, "<0.001" below; MISSING for None and nan."""
  value = number_or_none(value)
  if value is None:
    return MISSING
  return f"{value:.3f}" if value >= 0.001 else "<0.001"


def mean_std(mean_std_n, digits: int = 2, count: bool = False) -> str:
  """'mean ± sd' (and ' (n=k)') of `significance.mean_std`'s triple."""
  mean, std, n = mean_std_n
  if not n:
    return MISSING
  text = f"{mean:.{digits}f} \u00b1 {std:.{digits}f}"
  return text + f" (n={n})" if count else text


def code(text: str) -> str:
  """`text` as inline code, with a fence longer than any backtick run."""
  fence = "`"
  while fence in text:
    fence += "`"
  pad = " " if text.startswith("`") or text.endswith("`") else ""
  return f"{fence}{pad}{text}{pad}{fence}"


def commands_section(commands: Sequence[str],
                     summary: str = "Commands that produced this page"
                     ) -> str:
  """A collapsed <details> block holding the commands in a code block."""
  body = "\n".join(commands)
  return (f"<details><summary>{summary}</summary>\n\n```\n{body}\n```\n\n"
          "</details>\n")
