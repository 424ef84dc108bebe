"""Significance tests behind the results pages' marks.

Which model agrees better with the human scores (every "better"/"worse" mark
and every bold cell on the pages): `compare_correlations` tests the
difference between two dependent correlations with the gold scores, r(A,
gold) - r(B, gold) on the same pairs, with Williams' (1959) t-test, as
Graham and Baldwin (EMNLP 2014) use it to compare MT metrics with human
judgements, and gives a paired-bootstrap 95% interval for the difference.
`compare_per_set` runs it on every set of a table and corrects the p-values
for the number of sets with Holm's step-down method.

Whether two models' cosines differ at all (not which is better):
`wilcoxon`, the signed-rank test of Kenter et al. (2016), section 3.3, kept
for the Siamese CBOW paper's own comparisons only (p < 0.0001, a dagger in a
separate, labelled table).

Claims over seeds (lab.reports.hybrid_table, lab.reports.charagram_results):
`paired_t_test`, `mcnemar_exact`, `bootstrap_pearson_difference`.
"""

import dataclasses
import math
from typing import Mapping

import numpy as np
from scipy import stats

from sentzoo.evaluation import sts

# Kenter et al.'s threshold for "statistically significantly different".
WILCOXON_ALPHA = 1e-4
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

  def significant(self, alpha: float = WILCOXON_ALPHA) -> bool:
    return not math.isnan(self.pvalue) and self.pvalue < alpha


def wilcoxon(predicted_a, predicted_b, name: str = "") -> WilcoxonResult:
  """Wilcoxon signed-rank test between two prediction vectors [n].

  Args:
    predicted_a: float [n], model A's scores for n pairs.
    predicted_b: float [n], model B's scores for the same pairs.
    name: the set's name, for the result.

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
  result = stats.wilcoxon(a, b, zero_method="wilcox")
  return WilcoxonResult(name, n, float(result.statistic), float(result.pvalue))


def _set_results(results) -> Mapping:
  return results.sets if hasattr(results, "sets") else results


def wilcoxon_per_set(results_a, results_b) -> dict:
  """Tests model A against model B on every set both were evaluated on.

  Args:
    results_a: an `sts.EvalResults` (or a mapping name -> object with a
      `predicted` array [n]) of model A.
    results_b: the same for model B, on the same pair sets.

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
    out[name] = wilcoxon(set_a.predicted, sets_b[name].predicted, name=name)
  return out


# ---------------------------------------------- dependent correlations --

# Marks on the pages: Holm-corrected p below this ...
TABLE_ALPHA = 0.05
# ... and a difference of at least this much (Pearson's r x 100). Rounding
# an export to float16 or int8 moves r by less (at most 0.03 on the demo
# model's 21 sets); on thousands of nearly identical scores (r(A, B) >
# 0.9999) Williams' test still calls such a shift significant, but it is
# no difference a reader could use.
MIN_DIFFERENCE = 0.1


def table_marks(comparisons: Mapping[str, Mapping]) -> dict:
  """`sts.format_table`'s marks of {column: {set: CorrelationComparison
  against the first column}}."""
  return {column: {name: test.direction() for name, test in tests.items()}
          for column, tests in comparisons.items()}


def marks_caption(first: str) -> str:
  """What `table_marks` mean, for the table's caption."""
  return (f"**Bold**: Pearson significantly higher than {first}'s, "
          f"{sts.WORSE}: significantly lower (Williams' test of dependent "
          "correlations with the gold scores, Holm-corrected over the "
          f"table's sets, p < {TABLE_ALPHA:g}, and at least "
          f"{MIN_DIFFERENCE:g} apart); other differences are not "
          "significant.")


def williams_test(r12: float, r13: float, r23: float, n: int) -> tuple:
  """Williams' t for r12 - r13, two correlations that share variable 1.

  Here 1 is the gold score, 2 and 3 the two models' scores, r23 the
  correlation of the two models' scores (Williams 1959; Steiger 1980, eq. 7;
  Graham and Baldwin 2014, eq. 1).

  Returns:
    (t, two-sided p) with n - 3 degrees of freedom; (0.0, 1.0) when r12 ==
    r13 (identical models included), (nan, nan) for n < 4 or a nan input.
  """
  if n < 4 or any(math.isnan(x) for x in (r12, r13, r23)):
    return math.nan, math.nan
  if r12 == r13:
    return 0.0, 1.0
  k = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
  denominator = (2 * k * (n - 1) / (n - 3)
                 + (r12 + r13) ** 2 / 4 * (1 - r23) ** 3)
  if denominator <= 0:  # r23 = 1 up to rounding: the same scores
    return 0.0, 1.0
  t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / denominator)
  return t, float(2 * stats.t.sf(abs(t), n - 3))


def holm(pvalues) -> list:
  """Holm's step-down adjusted p-values, in the input's order (nan stays)."""
  p = np.asarray(pvalues, np.float64)
  out = np.full(p.shape, math.nan)
  valid = np.flatnonzero(~np.isnan(p))
  order = valid[np.argsort(p[valid], kind="stable")]
  m, running = len(order), 0.0
  for i, index in enumerate(order):
    running = max(running, min(1.0, (m - i) * p[index]))
    out[index] = running
  return out.tolist()


@dataclasses.dataclass
class CorrelationComparison:
  """Model A against model B on one set: who agrees better with the gold.

  Attributes:
    name: the set's name.
    num_pairs: n.
    pearson_a: r(A, gold) x 100.
    pearson_b: r(B, gold) x 100.
    pearson_ab: r(A, B), the correlation of the two models' scores.
    t: Williams' t.
    pvalue: its two-sided p-value.
    adjusted_pvalue: Holm-corrected over the sets of a table (`holm`); the
      plain p-value until `compare_per_set` corrects it.
    ci95: paired-bootstrap 95% interval of pearson_a - pearson_b.
  """
  name: str
  num_pairs: int
  pearson_a: float
  pearson_b: float
  pearson_ab: float
  t: float
  pvalue: float
  adjusted_pvalue: float
  ci95: tuple

  @property
  def difference(self) -> float:
    return self.pearson_a - self.pearson_b

  def direction(self, alpha: float = TABLE_ALPHA) -> int:
    """+1: A significantly better, -1: significantly worse, 0: neither.

    Significantly: Holm-corrected p < alpha and |difference| >=
    MIN_DIFFERENCE.
    """
    if math.isnan(self.adjusted_pvalue) or not self.adjusted_pvalue < alpha:
      return 0
    if not abs(self.difference) >= MIN_DIFFERENCE:
      return 0
    return 1 if self.difference > 0 else -1 if self.difference < 0 else 0


def _pearson(x, y) -> float:
  return float(_pearson_rows(np.asarray(x)[None], np.asarray(y)[None])[0])


def compare_correlations(gold, predicted_a, predicted_b, name: str = "",
                         num_samples: int = 1000, seed: int = 0
                         ) -> CorrelationComparison:
  """Williams' test and a paired-bootstrap interval for r(A,gold)-r(B,gold).

  Args:
    gold: float [n], the human scores.
    predicted_a: float [n], model A's scores for the same pairs.
    predicted_b: float [n], model B's.
    name: the set's name.
    num_samples: bootstrap samples (0: no interval); each redraws the n
      pairs with replacement, the same draw for A and B.
    seed: the resampling's seed.
  """
  gold = np.asarray(gold, np.float64).reshape([-1])
  a = np.asarray(predicted_a, np.float64).reshape([-1])
  b = np.asarray(predicted_b, np.float64).reshape([-1])
  if not gold.shape == a.shape == b.shape:
    raise ValueError(f"set {name}: {gold.size} gold, {a.size} and {b.size} "
                     "predictions")
  n = int(gold.size)
  r_a, r_b = _pearson(a, gold), _pearson(b, gold)
  if np.array_equal(a, b):
    t, p, r_ab = 0.0, 1.0, 1.0
  else:
    r_ab = _pearson(a, b)
    t, p = williams_test(r_a, r_b, r_ab, n)
  ci = (math.nan, math.nan)
  if math.isnan(p):
    pass
  elif num_samples and n > 1 and not np.array_equal(a, b):
    rng = np.random.default_rng(seed)
    boot = []
    for start in range(0, num_samples, 100):  # chunks bound the memory
      idx = rng.integers(0, n, size=[min(100, num_samples - start), n])
      boot.append(_pearson_rows(a[idx], gold[idx])
                  - _pearson_rows(b[idx], gold[idx]))
    low, high = np.nanpercentile(np.concatenate(boot), [2.5, 97.5])
    ci = (100 * float(low), 100 * float(high))
  elif num_samples and np.array_equal(a, b):
    ci = (0.0, 0.0)
  return CorrelationComparison(name, n, 100 * r_a, 100 * r_b, r_ab, t, p, p,
                               ci)


def compare_per_set(results_a, results_b, num_samples: int = 1000
                    ) -> dict:
  """`compare_correlations` on every set both results have, Holm-corrected.

  Args:
    results_a: an `sts.EvalResults` (or a mapping name -> object with
      `predicted` and `gold` arrays [n]) of model A.
    results_b: the same for model B, on the same pair sets.
    num_samples: bootstrap samples per set.

  Returns:
    dict set name -> CorrelationComparison (A against B), in results_a's
    set order, adjusted_pvalue corrected over these sets.
  """
  sets_a, sets_b = _set_results(results_a), _set_results(results_b)
  out = {name: compare_correlations(s.gold, s.predicted,
                                    sets_b[name].predicted, name,
                                    num_samples=num_samples)
         for name, s in sets_a.items() if name in sets_b}
  for c, adjusted in zip(out.values(),
                         holm([c.pvalue for c in out.values()])):
    c.adjusted_pvalue = adjusted
  return out


# Tests for the results pages' paper claims (lab.reports.hybrid_table,
# lab.reports.charagram_results): across seeds and per example, at CLAIM_ALPHA.

CLAIM_ALPHA = 0.05
HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
NOT_DISTINGUISHABLE = "not distinguishable at p<0.05"


def mean_std(values):
  """(mean, sample standard deviation (ddof 1; 0.0 for one value), n).

  NaN values are left out; (nan, nan, 0) when none is left.
  """
  v = np.asarray([x for x in values if x is not None and not math.isnan(x)],
                 np.float64)
  if not v.size:
    return math.nan, math.nan, 0
  return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0, int(
      v.size)


@dataclasses.dataclass
class PairedTestResult:
  """One comparison of A with B.

  Attributes:
    difference: the observed mean difference A - B.
    pvalue: two-sided p-value (nan when the test cannot be computed).
    num: what was paired: seeds (t-test), examples (McNemar, bootstrap).
    detail: test-specific numbers, e.g. McNemar's discordant counts.
  """
  difference: float
  pvalue: float
  num: int
  detail: dict = dataclasses.field(default_factory=dict)


def paired_t_test(values_a, values_b) -> PairedTestResult:
  """Paired t-test of A vs B over seeds (value k of A and of B: seed k).

  With fewer than 2 pairs p is nan. When every difference is the same
  (zero variance) scipy's t is undefined: p = 1.0 if that difference is 0,
  else 0.0 (every seed moved the same way by the same amount).
  """
  a = np.asarray(values_a, np.float64).reshape([-1])
  b = np.asarray(values_b, np.float64).reshape([-1])
  if a.shape != b.shape:
    raise ValueError(f"{a.size} vs {b.size} paired values")
  n = int(a.size)
  if n == 0:
    return PairedTestResult(math.nan, math.nan, 0)
  d = a - b
  diff = float(d.mean())
  if n < 2:
    return PairedTestResult(diff, math.nan, n)
  if np.all(d == d[0]):
    return PairedTestResult(diff, 1.0 if d[0] == 0 else 0.0, n)
  return PairedTestResult(diff, float(stats.ttest_rel(a, b).pvalue), n)


def mcnemar_exact(correct_a, correct_b) -> PairedTestResult:
  """McNemar's exact test on paired right/wrong decisions.

  Args:
    correct_a: bool [n] or [seeds, n]: whether model A got example i right
      (row k: seed k). Several rows are pooled: the discordant counts are
      summed over the seed-matched rows (seed k of A with seed k of B).
    correct_b: the same for model B, same shape.

  Returns:
    difference = accuracy(A) - accuracy(B) over all rows; pvalue = the exact
    two-sided binomial test of b (A right, B wrong) among b + c discordant
    decisions with p = 1/2 (1.0 when there is no discordant decision);
    detail {"a_only": b, "b_only": c}.
  """
  a = np.asarray(correct_a, bool)
  b = np.asarray(correct_b, bool)
  if a.shape != b.shape:
    raise ValueError(f"shapes {a.shape} vs {b.shape}")
  if not a.size:
    return PairedTestResult(math.nan, math.nan, 0)
  a_only = int(np.sum(a & ~b))
  b_only = int(np.sum(~a & b))
  diff = (a_only - b_only) / a.size
  if a_only + b_only == 0:
    p = 1.0
  else:
      p = float(stats.binomtest(a_only, a_only + b_only, 0.5).pvalue)
  return PairedTestResult(float(diff), p, int(a.shape[-1]),
                          {"a_only": a_only, "b_only": b_only})


def _pearson_rows(predicted, gold):
  """Pearson r of each row of predicted [..., n] with gold [..., n]."""
  p = predicted - predicted.mean(axis=-1, keepdims=True)
  g = gold - gold.mean(axis=-1, keepdims=True)
  num = np.sum(p * g, axis=-1)
  den = np.sqrt(np.sum(p * p, axis=-1) * np.sum(g * g, axis=-1))
  with np.errstate(invalid="ignore", divide="ignore"):
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def bootstrap_pearson_difference(sets, num_samples=1000, seed=0
                                 ) -> PairedTestResult:
  """Paired bootstrap of the mean-over-sets Pearson difference of A and B.

  The statistic is the average over sets of (mean over A's seeds of r(A) -
  mean over B's seeds of r(B)), x 100 — the difference of the two models'
  "Average" rows. Each bootstrap sample redraws the pairs of every set with
  replacement (the same draw for A, B and all their seeds); the two-sided
  p-value is 2 x the share of samples on the far side of 0, with the usual
  +1 correction: min(1, 2 (1 + #{d* <= 0 or >= 0}) / (1 + num_samples)).

  Args:
    sets: list of (gold [n], predicted_a [seeds_a, n], predicted_b
      [seeds_b, n]) per evaluation set.
    num_samples: bootstrap samples.
    seed: the resampling's seed.

  Returns:
    PairedTestResult(difference, pvalue, num = pairs over all sets,
    detail {"ci95": (low, high)}).
  """
  rng = np.random.default_rng(seed)
  observed = []
  boot = np.zeros([num_samples])
  total = 0
  for gold, pa, pb in sets:
    gold = np.asarray(gold, np.float64)
    pa = np.atleast_2d(np.asarray(pa, np.float64))
    pb = np.atleast_2d(np.asarray(pb, np.float64))
    n = gold.size
    if pa.shape[1] != n or pb.shape[1] != n:
      raise ValueError(f"{n} gold scores, predictions {pa.shape} {pb.shape}")
    total += n
    observed.append(100 * (np.nanmean(_pearson_rows(pa, gold))
                           - np.nanmean(_pearson_rows(pb, gold))))
    # Chunks of samples keep memory at ~ chunk x seeds x n.
    for start in range(0, num_samples, 100):
      stop = min(num_samples, start + 100)
      idx = rng.integers(0, n, size=[stop - start, n])
      g = gold[idx]  # [k, n]
      ra = _pearson_rows(pa[:, idx], g[None])  # [seeds_a, k]
      rb = _pearson_rows(pb[:, idx], g[None])
      boot[start:stop] += 100 * (np.nanmean(ra, axis=0)
                                 - np.nanmean(rb, axis=0))
  if not observed:
    return PairedTestResult(math.nan, math.nan, 0)
  boot /= len(observed)
  diff = float(np.mean(observed))
  far = min(np.sum(boot <= 0), np.sum(boot >= 0))
  p = min(1.0, 2 * (1 + far) / (1 + num_samples))
  low, high = np.percentile(boot, [2.5, 97.5])
  return PairedTestResult(diff, float(p), total,
                          {"ci95": (float(low), float(high))})


def direction(tests, alpha=CLAIM_ALPHA) -> int:
  """+1 / -1 when every test in `tests` (PairedTestResults of the same
  comparison A vs B) has p < alpha and a difference of that sign; else 0."""
  if not tests:
    return 0
  signs = set()
  for t in tests:
    if math.isnan(t.pvalue) or not t.pvalue < alpha or t.difference == 0:
      return 0
    signs.add(1 if t.difference > 0 else -1)
  return signs.pop() if len(signs) == 1 else 0


def claim_verdict(directions) -> str:
  """The verdict on a claim made of comparisons "A > B" (one direction each,
  +1 for A significantly above B): HOLDS when all are +1, DOES_NOT_HOLD when
  any is -1, NOT_DISTINGUISHABLE otherwise (or with no comparison)."""
  directions = list(directions)
  if any(d < 0 for d in directions):
    return DOES_NOT_HOLD
  if directions and all(d > 0 for d in directions):
    return HOLDS
  return NOT_DISTINGUISHABLE
