"""Tests for evaluation.significance."""

import math

from absl.testing import absltest
import numpy as np
from scipy import stats

from lab import significance
from sentzoo.evaluation import sts


def _results(predicted_by_set, gold_by_set=None):
  gold_by_set = gold_by_set or {}
  sets = {name: sts.SetResult(name, 0.0, 0.0, np.asarray(p, np.float64),
                              np.asarray(gold_by_set.get(name,
                                                         np.zeros(len(p)))))
          for name, p in predicted_by_set.items()}
  return sts.EvalResults(sets, [], {})


class WilcoxonTest(absltest.TestCase):

  def test_identical_scores(self):
    a = _results({"x": [0.1, 0.5, 0.9, 0.3]})
    out = significance.wilcoxon_per_set(a, a)
    self.assertEqual(out["x"].pvalue, 1.0)
    self.assertEqual(out["x"].statistic, 0.0)
    self.assertEqual(out["x"].num_pairs, 4)
    self.assertFalse(out["x"].significant())

  def test_different_scores(self):
    rng = np.random.default_rng(0)
    base = rng.uniform(size=300)
    shifted = base + 0.05 + rng.normal(scale=0.01, size=300)
    noisy = base + rng.normal(scale=0.05, size=300)
    a = _results({"shift": base, "noise": base})
    b = _results({"shift": shifted, "noise": noisy, "only_b": base})
    out = significance.wilcoxon_per_set(a, b)
    self.assertEqual(list(out), ["shift", "noise"])
    expected = stats.wilcoxon(base, shifted)
    self.assertAlmostEqual(out["shift"].pvalue, expected.pvalue)
    self.assertAlmostEqual(out["shift"].statistic, expected.statistic)
    self.assertLess(out["shift"].pvalue, significance.WILCOXON_ALPHA)
    self.assertTrue(out["shift"].significant())
    self.assertGreater(out["noise"].pvalue, 0.01)

  def test_mapping_input_and_errors(self):
    a = {"x": _results({"x": [1.0, 2.0]}).sets["x"]}
    b = {"x": _results({"x": [1.0, 2.0, 3.0]}).sets["x"]}
    with self.assertRaisesRegex(ValueError, "2 vs 3"):
      significance.wilcoxon_per_set(a, b)
    empty = significance.wilcoxon([], [], name="e")
    self.assertTrue(math.isnan(empty.pvalue))
    self.assertFalse(empty.significant())


def _permutation_pvalue(gold, a, b, num, rng):
  """Two-sided p of r(A,gold) - r(B,gold) under swapping a_i and b_i."""
  def pearson(x, y):
    x = x - x.mean(-1, keepdims=True)
    y = y - y.mean(-1, keepdims=True)
    return (x * y).sum(-1) / np.sqrt((x * x).sum(-1) * (y * y).sum(-1))
  observed = pearson(a, gold) - pearson(b, gold)
  swap = rng.random([num, gold.size]) < 0.5
  d = (pearson(np.where(swap, b, a), gold[None])
       - pearson(np.where(swap, a, b), gold[None]))
  return (1 + np.sum(np.abs(d) >= abs(observed))) / (1 + num)


class DependentCorrelationsTest(absltest.TestCase):

  def test_williams_worked_example(self):
    # Howell, Statistical Methods for Psychology (6th ed., p. 262):
    # r12 = .80, r13 = .72, r23 = .89, n = 26 -> t(23) = 1.361, p = .187.
    t, p = significance.williams_test(0.80, 0.72, 0.89, 26)
    self.assertAlmostEqual(t, 1.361, places=3)
    self.assertAlmostEqual(p, 0.187, places=3)
    t, p = significance.williams_test(0.72, 0.80, 0.89, 26)
    self.assertAlmostEqual(t, -1.361, places=3)
    self.assertTrue(math.isnan(significance.williams_test(.5, .4, .3, 3)[1]))

  def test_against_permutation_reference(self):
    rng = np.random.default_rng(0)
    # (noise of A, noise of B, noise both share): differences from none to
    # clear; Williams' p follows the permutation test's.
    for noise_a, noise_b, shared in ((1.0, 1.0, 1.0), (1.0, 1.1, 0.5),
                                     (1.0, 1.15, 2.0), (0.8, 1.0, 0.3)):
      gold = rng.uniform(0, 5, 300)
      common = gold + rng.normal(0, shared, 300)
      a = common + rng.normal(0, noise_a, 300)
      b = common + rng.normal(0, noise_b, 300)
      williams = significance.compare_correlations(gold, a, b,
                                                   num_samples=0).pvalue
      reference = _permutation_pvalue(gold, a, b, 4000, rng)
      self.assertAlmostEqual(williams, reference, delta=0.03,
                             msg=(noise_a, noise_b, shared))

  def test_level_under_the_null(self):
    rng = np.random.default_rng(1)
    rejected = 0
    for _ in range(400):
      gold = rng.uniform(0, 5, 100)
      common = gold + rng.normal(0, 1, 100)
      a, b = (common + rng.normal(0, 1, [2, 100]))
      rejected += significance.compare_correlations(
          gold, a, b, num_samples=0).pvalue < 0.05
    self.assertBetween(rejected / 400, 0.02, 0.09)

  def test_holm(self):
    adjusted = significance.holm([0.01, 0.04, 0.03, math.nan, 0.5])
    self.assertEqual(adjusted[:3], [0.04, 0.09, 0.09])
    self.assertTrue(math.isnan(adjusted[3]))
    self.assertEqual(adjusted[4], 0.5)
    self.assertEqual(significance.holm([0.6, 0.7]), [1.0, 1.0])

  def test_bootstrap_interval_and_direction(self):
    rng = np.random.default_rng(2)
    gold = rng.uniform(0, 5, 500)
    good = gold + rng.normal(0, 1, 500)
    bad = gold + rng.normal(0, 3, 500)
    out = significance.compare_correlations(gold, good, bad, "x",
                                            num_samples=300, seed=3)
    self.assertAlmostEqual(out.pearson_a,
                           100 * stats.pearsonr(good, gold)[0])
    self.assertAlmostEqual(out.difference,
                           100 * (stats.pearsonr(good, gold)[0]
                                  - stats.pearsonr(bad, gold)[0]))
    low, high = out.ci95
    self.assertLess(low, out.difference)
    self.assertGreater(high, out.difference)
    self.assertGreater(low, 0)
    self.assertEqual(out.direction(), 1)
    reverse = significance.compare_correlations(gold, bad, good,
                                                num_samples=0)
    self.assertEqual(reverse.direction(), -1)
    self.assertAlmostEqual(reverse.pvalue, out.pvalue)

  def test_same_model_and_its_float16_int8_copies_are_not_different(self):
    # A model's cosines on 20 sets of real sizes; its float16 copy and an
    # int8 copy (symmetric per-vector scale, as export --quantize=int8)
    # change each cosine by rounding only.
    rng = np.random.default_rng(4)
    first, second = {}, {}
    copies = {"itself": {}, "float16": {}, "int8": {}}
    for k in range(20):
      n = int(rng.choice([300, 750, 1500, 4927]))
      gold = rng.uniform(0, 5, n)
      first[f"s{k}"] = (gold, None)
      x = rng.normal(size=[n, 64]) + gold[:, None] * 0.05
      y = x + rng.normal(scale=1.0, size=[n, 64])
      def cosines(u, v):
        return np.sum(u * v, 1) / np.linalg.norm(u, axis=1) / np.linalg.norm(
            v, axis=1)
      def int8(u):
        scale = np.abs(u).max(1, keepdims=True) / 127
        return np.round(u / scale) * scale
      second[f"s{k}"] = cosines(x, y)
      copies["itself"][f"s{k}"] = cosines(x, y)
      copies["float16"][f"s{k}"] = cosines(
          x.astype(np.float16).astype(np.float64),
          y.astype(np.float16).astype(np.float64))
      copies["int8"][f"s{k}"] = cosines(int8(x), int8(y))
    base = _results(second, {n: g for n, (g, _) in first.items()})
    for label, predicted in copies.items():
      copy = _results(predicted, {n: g for n, (g, _) in first.items()})
      out = significance.compare_per_set(copy, base, num_samples=0)
      self.assertLen(out, 20)
      for c in out.values():
        self.assertEqual(c.direction(), 0, (label, c))
        self.assertGreater(c.adjusted_pvalue, 0.05, (label, c))
      if label == "itself":
        self.assertTrue(all(c.pvalue == 1.0 and c.difference == 0
                            for c in out.values()))

  def test_a_significant_but_negligible_shift_is_no_difference(self):
    # As the demo model's float16 export does on SICK: every score moves a
    # little, r drops by 0.04 points, and r(A, B) > 0.99999 makes the shift
    # "significant". It is below MIN_DIFFERENCE: no mark.
    rng = np.random.default_rng(5)
    gold = rng.uniform(0, 5, 4927)
    a = gold + rng.normal(0, 3, 4927)
    b = a - 0.001 * (gold - gold.mean())
    out = significance.compare_correlations(gold, b, a, num_samples=0)
    self.assertLess(out.pvalue, 0.001)
    self.assertLess(abs(out.difference), significance.MIN_DIFFERENCE)
    self.assertEqual(out.direction(), 0)

  def test_errors_and_degenerate_input(self):
    with self.assertRaisesRegex(ValueError, "3 gold, 3 and 2"):
      significance.compare_correlations([1, 2, 3], [1, 2, 3], [1, 2])
    constant = significance.compare_correlations([1, 2, 3, 4, 5],
                                                 [1, 1, 1, 1, 1],
                                                 [1, 2, 3, 4, 6])
    self.assertTrue(math.isnan(constant.pvalue))
    self.assertEqual(constant.direction(), 0)


class PairedTestsTest(absltest.TestCase):

  def test_mean_std(self):
    self.assertEqual(significance.mean_std([1.0, 2.0, 3.0]), (2.0, 1.0, 3))
    self.assertEqual(significance.mean_std([4.0, math.nan]), (4.0, 0.0, 1))
    self.assertTrue(math.isnan(significance.mean_std([])[0]))

  def test_paired_t_test_against_scipy_and_known_value(self):
    out = significance.paired_t_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
    # t = 2 / (1 / sqrt(3)) = 3.4641 with 2 degrees of freedom.
    self.assertAlmostEqual(out.pvalue, 0.07417990, places=6)
    self.assertEqual(out.difference, 2.0)
    a, b = [0.71, 0.74, 0.69, 0.73], [0.70, 0.70, 0.68, 0.69]
    self.assertAlmostEqual(significance.paired_t_test(a, b).pvalue,
                           stats.ttest_rel(a, b).pvalue)
    self.assertEqual(significance.paired_t_test([1, 2], [1, 2]).pvalue, 1.0)
    self.assertEqual(significance.paired_t_test([2, 3], [1, 2]).pvalue, 0.0)
    self.assertTrue(math.isnan(significance.paired_t_test([1], [0]).pvalue))

  def test_mcnemar_exact_known_values_and_pooling(self):
    # b = 1 (A only right), c = 9: p = 2 * (1 + 10) / 2**10.
    a = [True] * 5 + [True] + [False] * 9
    b = [True] * 5 + [False] + [True] * 9
    out = significance.mcnemar_exact(a, b)
    self.assertEqual(out.detail, {"a_only": 1, "b_only": 9})
    self.assertAlmostEqual(out.pvalue, 22 / 1024)
    self.assertAlmostEqual(out.difference, -8 / 15)
    self.assertAlmostEqual(out.pvalue,
                           stats.binomtest(1, 10, 0.5).pvalue)
    # Two seeds pooled: the discordant counts add up (0 + 5 vs 0 + 0).
    pooled = significance.mcnemar_exact([[1, 1, 1], [1, 1, 1]],
                                        [[1, 1, 1], [1, 1, 1]])
    self.assertEqual(pooled.pvalue, 1.0)
    seeds_a = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    seeds_b = np.array([[0, 0, 0, 0, 0], [1, 1, 0, 0, 1]], bool)
    pooled = significance.mcnemar_exact(seeds_a, seeds_b)
    self.assertEqual(pooled.detail, {"a_only": 5, "b_only": 0})
    self.assertAlmostEqual(pooled.pvalue, 0.0625)
    self.assertEqual(pooled.num, 5)

  def test_bootstrap_pearson_difference(self):
    rng = np.random.default_rng(1)
    gold = rng.uniform(0, 5, size=80)
    good = np.stack([gold + rng.normal(0, 1, 80) for _ in range(2)])
    bad = np.stack([gold + rng.normal(0, 4, 80) for _ in range(3)])
    out = significance.bootstrap_pearson_difference(
        [(gold, good, bad)], num_samples=50, seed=7)
    expected = 100 * (np.mean([stats.pearsonr(p, gold)[0] for p in good])
                      - np.mean([stats.pearsonr(p, gold)[0] for p in bad]))
    self.assertAlmostEqual(out.difference, expected)
    # The same resampling done the slow way.
    draw = np.random.default_rng(7).integers(0, 80, size=[50, 80])
    slow = [100 * (np.mean([stats.pearsonr(p[i], gold[i])[0] for p in good])
                   - np.mean([stats.pearsonr(p[i], gold[i])[0] for p in bad]))
            for i in draw]
    low, high = np.percentile(slow, [2.5, 97.5])
    self.assertAlmostEqual(out.detail["ci95"][0], low)
    self.assertAlmostEqual(out.detail["ci95"][1], high)
    self.assertAlmostEqual(out.pvalue, 2 / 51)  # no sample at or below 0
    same = significance.bootstrap_pearson_difference(
        [(gold, good, good), (gold, bad, bad)], num_samples=20)
    self.assertEqual(same.difference, 0.0)
    self.assertEqual(same.pvalue, 1.0)
    self.assertEqual(same.num, 160)

  def test_direction_and_verdict(self):
    r = significance.PairedTestResult
    up, down, weak = r(1.0, 0.01, 3), r(-1.0, 0.001, 3), r(2.0, 0.2, 3)
    self.assertEqual(significance.direction([up, up]), 1)
    self.assertEqual(significance.direction([down]), -1)
    self.assertEqual(significance.direction([up, weak]), 0)
    self.assertEqual(significance.direction([up, down]), 0)
    self.assertEqual(significance.direction([r(1.0, math.nan, 1)]), 0)
    self.assertEqual(significance.claim_verdict([1, 1]), "holds")
    self.assertEqual(significance.claim_verdict([1, -1]), "does not hold")
    self.assertEqual(significance.claim_verdict([1, 0]),
                     "not distinguishable at p<0.05")
    self.assertEqual(significance.claim_verdict([]),
                     "not distinguishable at p<0.05")


if __name__ == "__main__":
  absltest.main()
