"""Tests for reports.charagram_results (table layout and conclusions)."""

import math

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
    self.assertIn("does not hold", lines[-1])
    averages["charLSTM MAX"] = 40.0
    self.assertIn(" holds here",
                  charagram_results.ordering_lines(averages, groups)[-1])

  def test_nan_scores_are_dashes(self):
    text, values = charagram_results.format_markdown(
        [("r", {"SICK.test": math.nan})], ["SICK.test"])
    self.assertTrue(math.isnan(values["r"]["all.mean"]))
    self.assertIn("| SICK.test | – |", text)


if __name__ == "__main__":
  tf.test.main()
