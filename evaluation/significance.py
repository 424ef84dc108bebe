"""Wilcoxon signed-rank tests between two models' per-pair STS predictions.

As in Kenter et al. (2016), section 3.3: for every evaluation set, the two
runs' predicted scores for the same sentence pairs are compared with a
Wilcoxon signed-rank test; runs count as significantly different for
p < 0.0001 (marked with a dagger in tables).
"""

import dataclasses
import math
from typing import Mapping

import numpy as np
from scipy import stats

# The paper's threshold for "statistically significantly different".
ALPHA = 1e-4
DAGGER = "\u2020"


@dataclasses.dataclass
class WilcoxonResult:
  """The test's outcome on one set.

  Attributes:
    name: the set's name.
    num_pairs: n, the number of paired predictions compared.
    statistic: the Wilcoxon statistic (0.0 if all differences are zero).
    pvalue: two-sided p-value (1.0 if all differences are zero).
  """
  name: str
  num_pairs: int
  statistic: float
  pvalue: float

  def significant(self, alpha: float = ALPHA) -> bool:
    return not math.isnan(self.pvalue) and self.pvalue < alpha


def wilcoxon(predicted_a, predicted_b, name: str = "",
             zero_method: str = "wilcox") -> WilcoxonResult:
  """Wilcoxon signed-rank test between two prediction vectors [n].

  Args:
    predicted_a: float [n], model A's scores for n pairs.
    predicted_b: float [n], model B's scores for the same pairs.
    name: the set's name, for the result.
    zero_method: passed to scipy.stats.wilcoxon.

  Returns:
    A WilcoxonResult; p = 1.0 (statistic 0.0) when every difference is zero,
    p = nan for n == 0.
  """
  a = np.asarray(predicted_a, np.float64).reshape([-1])
  b = np.asarray(predicted_b, np.float64).reshape([-1])
  if a.shape != b.shape:
    raise ValueError(f"set {name}: {a.size} vs {b.size} predictions")
  n = int(a.size)
  if n == 0:
    return WilcoxonResult(name, 0, math.nan, math.nan)
  if np.all(a - b == 0):
    return WilcoxonResult(name, n, 0.0, 1.0)
  result = stats.wilcoxon(a, b, zero_method=zero_method)
  return WilcoxonResult(name, n, float(result.statistic), float(result.pvalue))


def _set_results(results) -> Mapping:
  return results.sets if hasattr(results, "sets") else results


def wilcoxon_per_set(results_a, results_b, zero_method: str = "wilcox"
                     ) -> dict:
  """Tests model A against model B on every set both were evaluated on.

  Args:
    results_a: an `sts.EvalResults` (or a mapping name -> object with a
      `predicted` array [n]) of model A.
    results_b: the same for model B, on the same pair sets.
    zero_method: passed to scipy.stats.wilcoxon.

  Returns:
    dict set name -> WilcoxonResult, in results_a's set order.

  Raises:
    ValueError: a set with different pair counts in the two results.
  """
  sets_a, sets_b = _set_results(results_a), _set_results(results_b)
  out = {}
  for name, set_a in sets_a.items():
    if name not in sets_b:
      continue
    out[name] = wilcoxon(set_a.predicted, sets_b[name].predicted, name=name,
                         zero_method=zero_method)
  return out
