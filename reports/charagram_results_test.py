"""Tests for reports.charagram_results (table layout and conclusions)."""

import math
import os

import numpy as np

import tensorflow as tf

from sentzoo.reports import charagram_results


class CharagramResultsTest(tf.test.TestCase):

  def test_rows_means_and_paper_columns(self):
    sets = ["STS2012.MSRpar", "STS2012.MSRvid", "STS2013.FNWN", "SICK.test",
            "Twitter2015.test"]
    scores = {"STS2012.MSRpar": 40.0, "STS2012.MSRvid": 60.0,
              "STS2013.FNWN": 20.0, "SICK.test": 70.0,
              "Twitter2015.test": 50.0}
    text, values = charagram_results.format_markdown([("run A", scores)],
                                                     sets, ["STS2013.SMT"])
    self.assertAlmostEqual(values["run A"]["STS2012.mean"], 50.0)
    self.assertAlmostEqual(values["run A"]["STS2013.mean"], 20.0)
    self.assertAlmostEqual(values["run A"]["all.mean"], 48.0)
    self.assertIn("| **Average** (5 sets) | 48.0 |", text)
    # Paper CHARAGRAM-PHRASE over the same 5 sets: (59.7+79.6+42.3+70+53.6)/5.
    self.assertIn("61.0 |", text.split("**Average**")[1].split("\n")[0])
    self.assertIn("Missing sets (not in the data): STS2013.SMT", text)

  def test_ordering_and_max_vs_mix(self):
    averages = {"CHARAGRAM-PHRASE MAX": 60.0, "CHARAGRAM-PHRASE MIX": 61.0,
                "PARAGRAM-PHRASE MAX": 55.0, "charCNN MAX": 50.0,
                "charLSTM MAX": 52.0}
    groups = {"CHARAGRAM-PHRASE": {"max": "CHARAGRAM-PHRASE MAX",
                                   "mix": "CHARAGRAM-PHRASE MIX"},
              "PARAGRAM-PHRASE": {"max": "PARAGRAM-PHRASE MAX"},
              "charCNN": {"max": "charCNN MAX"},
              "charLSTM": {"max": "charLSTM MAX"}}
    lines = charagram_results.ordering_lines(averages, groups)
    self.assertIn("MIX is better by 1.0", lines[0])
    self.assertIn("order CHARAGRAM-PHRASE > PARAGRAM-PHRASE > charCNN > "
                  "charLSTM? no", lines[-1])
    averages["charLSTM MAX"] = 40.0
    self.assertIn("charLSTM? yes",
                  charagram_results.ordering_lines(averages, groups)[-1])

  def test_nan_scores_are_dashes(self):
    text, values = charagram_results.format_markdown(
        [("r", {"SICK.test": math.nan})], ["SICK.test"])
    self.assertTrue(math.isnan(values["r"]["all.mean"]))
    self.assertIn("| SICK.test | – |", text)

  def test_claims_from_paired_tests(self):
    rng = np.random.default_rng(0)
    gold = {"A": rng.uniform(0, 5, 120), "B": rng.uniform(0, 5, 90)}
    def run(noise, seeds=(0, 1, 2)):
      out = {}
      for k in seeds:
        predicted = {n: g + rng.normal(0, noise, g.size)
                     for n, g in gold.items()}
        average = 100 * np.mean([np.corrcoef(predicted[n], g)[0, 1]
                                 for n, g in gold.items()])
        out[k] = {"average": average, "predicted": predicted}
      return out
    runs = {"CHARAGRAM-PHRASE MAX": run(0.5), "PARAGRAM-PHRASE MAX": run(2.0),
            "charCNN MIX": run(2.0), "charLSTM MAX": run(6.0)}
    best = {m.rpartition(" ")[0]: m for m in runs}
    lines = charagram_results.claim_lines(runs, best, gold, num_samples=200)
    self.assertTrue(lines[0].startswith(
        "- CHARAGRAM-PHRASE > PARAGRAM-PHRASE: holds +"), lines[0])
    self.assertIn("t-test over 3 seeds", lines[0])
    # PARAGRAM-PHRASE and charCNN are the same model: not separable.
    self.assertEqual(lines[-1], "- The paper's ordering CHARAGRAM-PHRASE > "
                     "PARAGRAM-PHRASE > charCNN > charLSTM (each step tested "
                     "as above): not distinguishable at p<0.05.")
    runs["charLSTM MAX"] = run(0.1)
    lines = charagram_results.claim_lines(runs, best, gold, num_samples=200)
    self.assertIn("- CHARAGRAM-PHRASE > charLSTM: does not hold", lines[2])
    self.assertTrue(lines[-1].endswith(": does not hold."))

  def test_seed_dirs(self):
    root = self.get_temp_dir()
    for k in (0, 2):
      os.makedirs(os.path.join(root, "run", f"seed{k}", "export", "1"))
    os.makedirs(os.path.join(root, "single", "export"))
    self.assertEqual(sorted(charagram_results.seed_dirs(
        os.path.join(root, "run"), [0, 1, 2])), [0, 2])
    self.assertEqual(charagram_results.seed_dirs(
        os.path.join(root, "run"), [1]), {})
    self.assertEqual(charagram_results.seed_dirs(
        os.path.join(root, "single"), [0, 1]),
                     {None: os.path.join(root, "single")})


if __name__ == "__main__":
  tf.test.main()
