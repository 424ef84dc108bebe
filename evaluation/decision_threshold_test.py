"""Tests for evaluation.decision_threshold."""

import math

from absl.testing import absltest
import numpy as np

from sentzoo.evaluation import decision_threshold


def _brute_force(distances, labels, prefer=0.5):
  d = np.asarray(distances, np.float64)
  grid = np.concatenate([[d.min() - 1], np.unique(d) + 1e-9])
  accs = [decision_threshold.accuracy_at(d, labels, t) for t in grid]
  return max(accs)


class TuneThresholdTest(absltest.TestCase):

  def test_separable_fixture_finds_the_known_threshold(self):
    # Matches have distances below 1.2, non-matches above 1.4: any
    # threshold in (1.2, 1.4] is perfect; the midpoint is 1.3, far from
    # the paper's 0.5, which gets only the pairs below 0.5 right.
    distances = [0.9, 1.0, 1.1, 1.2, 1.4, 1.6, 1.8, 2.0]
    labels = [1, 1, 1, 1, 0, 0, 0, 0]
    threshold, accuracy = decision_threshold.tune_threshold(distances, labels)
    self.assertAlmostEqual(threshold, 1.3)
    self.assertEqual(accuracy, 1.0)
    self.assertEqual(decision_threshold.accuracy_at(distances, labels, 0.5),
                     0.5)

  def test_noisy_fixture_matches_brute_force(self):
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, size=300)
    distances = np.round(np.where(labels == 1, rng.normal(0.8, 0.3, 300),
                                  rng.normal(1.3, 0.3, 300)), 2)  # ties
    threshold, accuracy = decision_threshold.tune_threshold(distances, labels)
    self.assertAlmostEqual(accuracy, _brute_force(distances, labels))
    self.assertAlmostEqual(
        decision_threshold.accuracy_at(distances, labels, threshold),
        accuracy)
    self.assertGreater(threshold, 0.8)
    self.assertLess(threshold, 1.3)

  def test_all_one_class_and_ties_prefer_the_paper_value(self):
    threshold, accuracy = decision_threshold.tune_threshold([0.2, 0.7, 3.0],
                                                            [1, 1, 1])
    self.assertEqual(accuracy, 1.0)
    self.assertGreater(threshold, 3.0)
    # Every threshold in (0.4, 0.6] is equally good; 0.5 is the midpoint.
    threshold, _ = decision_threshold.tune_threshold([0.4, 0.6], [1, 0])
    self.assertAlmostEqual(threshold, 0.5)

  def test_empty(self):
    threshold, accuracy = decision_threshold.tune_threshold([], [])
    self.assertEqual(threshold, 0.5)
    self.assertTrue(math.isnan(accuracy))


if __name__ == "__main__":
  absltest.main()
