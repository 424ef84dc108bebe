"""Tests for evaluation.significance."""

import math

from absl.testing import absltest
import numpy as np
from scipy import stats

from sentzoo.evaluation import significance
from sentzoo.evaluation import sts


def _results(predicted_by_set):
  sets = {name: sts.SetResult(name, 0.0, 0.0, np.asarray(p, np.float64),
                              np.zeros(len(p)))
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
    self.assertLess(out["shift"].pvalue, significance.ALPHA)
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
