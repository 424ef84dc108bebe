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


if __name__ == "__main__":
  absltest.main()
