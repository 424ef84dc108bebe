"""Tests for evaluation.sts."""

import json
import math
import os
import subprocess
import sys
import tempfile

from absl.testing import absltest
import numpy as np
from scipy import stats
import tensorflow as tf

from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.inputs import scored_pairs
from sentzoo.tests import test_util


def letter_counts(sentence):
  """The toy encoder's vector: counts of a-z, float32 [26]."""
  v = np.zeros([26], np.float32)
  for ch in sentence.lower():
    if "a" <= ch <= "z":
      v[ord(ch) - ord("a")] += 1
  return v


_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class LetterEncoder(encoder_lib.Encoder):
  """Counts letters; records every batch it is given."""

  def __init__(self):
    self.batches = []

  def _encode_batch(self, sentences):
    self.batches.append(list(sentences))
    return np.stack([letter_counts(s) for s in sentences])


def expected_correlations(pair_set):
  """Pearson and Spearman x 100 of the letter encoder, computed directly."""
  predicted = []
  for s1, s2 in zip(pair_set.sentences1, pair_set.sentences2):
    a, b = letter_counts(s1), letter_counts(s2)
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    predicted.append(0.0 if na == 0 or nb == 0 else float(a @ b) / (na * nb))
  return (100 * stats.pearsonr(predicted, pair_set.scores)[0],
          100 * stats.spearmanr(predicted, pair_set.scores)[0], predicted)


TOY = scored_pairs.PairSet(
    "toy", ["abc", "aaa", "", "xyz zz", "hello", "b"],
    ["abd", "bbb", "abc", "zzz", "hello world", "!!!"],
    [4.0, 1.0, 0.5, 3.0, 3.5, 2.0])


class EvaluateTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.data_dir = test_util.write_fixture_data_dir(
        test_util.make_tempdir(self))
    self.pair_sets, self.missing = sts_data.load_eval_sets(self.data_dir)

  def test_correlations_match_scipy(self):
    encoder = LetterEncoder()
    results = sts.evaluate_pair_sets(encoder, self.pair_sets + [TOY],
                                     self.missing, batch_size=4,
                                     model_name="letters")
    for pair_set in self.pair_sets + [TOY]:
      pearson, spearman, predicted = expected_correlations(pair_set)
      result = results.sets[pair_set.name]
      self.assertAlmostEqual(result.pearson, pearson, places=4)
      self.assertAlmostEqual(result.spearman, spearman, places=4)
      np.testing.assert_allclose(result.predicted, predicted, atol=1e-6)
      np.testing.assert_array_equal(result.gold, pair_set.scores)
      self.assertEqual(result.num_pairs, len(pair_set))
    # Zero vectors ("" and "!!!") give cosine 0.
    self.assertEqual(results.sets["toy"].predicted[2], 0.0)
    self.assertEqual(results.sets["toy"].predicted[5], 0.0)
    # Each distinct sentence is encoded once, in batches of at most 4.
    encoded = [s for batch in encoder.batches for s in batch]
    self.assertEqual(len(encoded), len(set(encoded)))
    self.assertTrue(all(len(b) <= 4 for b in encoder.batches))
    all_sentences = {s for p in self.pair_sets + [TOY]
                     for s in p.sentences1 + p.sentences2}
    self.assertEqual(set(encoded), all_sentences)

  def test_aggregates(self):
    results = sts.evaluate_pair_sets(LetterEncoder(), self.pair_sets,
                                     self.missing)
    self.assertIn("STS2013.SMT", results.missing)
    self.assertEqual(list(results.aggregates),
                     ["STS2012.mean", "STS2014.mean", "STS2015.mean",
                      "STS.mean"])
    sts_names = ["STS2012.MSRpar", "STS2014.images", "STS2015.answers-forums"]
    overall = results.aggregates["STS.mean"]
    self.assertEqual(overall.members, sts_names)
    self.assertAlmostEqual(
        overall.pearson,
        np.mean([results.sets[n].pearson for n in sts_names]))
    self.assertAlmostEqual(
        overall.spearman,
        np.mean([results.sets[n].spearman for n in sts_names]))
    self.assertStartsWith(overall.label,
                          "mean of the 3 STS 2012\u20132015 sets present")
    self.assertIn("STS2013.SMT", overall.label)
    self.assertAlmostEqual(results.aggregates["STS2014.mean"].pearson,
                           results.sets["STS2014.images"].pearson)
    self.assertEqual(results.aggregates["STS2014.mean"].label,
                     "STS 2014 mean (1 sets)")

  def test_correlations_equal_scipy_to_the_bit(self):
    # Ties, two pairs, values near overflow and nearly perfect agreement:
    # the cases where a different order of operations shows in the last bits.
    rng = np.random.default_rng(7)
    cases = [(rng.normal(size=n), rng.normal(size=n)) for n in (2, 3, 50, 301)]
    cases.append((rng.integers(0, 5, 200).astype(float),
                  rng.integers(0, 6, 200).astype(float)))
    cases.append((rng.normal(size=97) * 1e200, rng.uniform(size=97)))
    x = np.round(rng.normal(size=400), 1)
    cases.append((x, x + 0.1 * rng.normal(size=400)))
    # Where the last bits differ (a BLAS dot for the norm instead of the
    # reduction along the axis) only some random cases show it.
    cases += [(rng.normal(size=n), rng.normal(size=n))
              for n in rng.integers(3, 400, size=200)]
    for predicted, gold in cases:
      self.assertEqual(
          sts.correlations(predicted, gold),
          (100 * float(stats.pearsonr(predicted, gold).statistic),
           100 * float(stats.spearmanr(predicted, gold).statistic)))

  def test_importing_sts_does_not_import_scipy_stats(self):
    # The trainers import this module; scipy.stats would add about 50 MB
    # to their resident memory.
    done = subprocess.run(
        [sys.executable, "-c",
         "import sys; from sentzoo.evaluation import sts; "
         "print(sorted(m for m in sys.modules if m.startswith("
         "('scipy.stats', 'scipy.optimize'))))"],
        capture_output=True, text=True, timeout=120, check=True)
    self.assertEqual(done.stdout.strip(), "[]")

  def test_running_the_module_says_which_command_to_run(self):
    done = subprocess.run(
        [sys.executable, "-m", "evaluation.sts", "--model=runs/m/export"],
        capture_output=True, text=True, timeout=120, cwd=_REPO_ROOT,
        check=False)
    self.assertEqual(done.returncode, 2, done.stderr)
    self.assertEqual(done.stderr.count("\n"), 1, done.stderr)
    self.assertStartsWith(done.stderr, "error: evaluation.sts is a library")
    self.assertIn("sentzoo evaluate MODEL", done.stderr)

  def test_constant_predictions_give_nan_not_crash(self):

    class Constant(encoder_lib.Encoder):

      def _encode_batch(self, sentences):
        return np.ones([len(sentences), 3], np.float32)

    results = sts.evaluate_pair_sets(Constant(), [TOY])
    self.assertTrue(math.isnan(results.sets["toy"].pearson))
    table = sts.format_table(results)
    self.assertIn("| toy | 6 | nan (nan) |", table)

  def test_table(self):
    results_a = sts.evaluate_pair_sets(LetterEncoder(), self.pair_sets,
                                       self.missing, model_name="A")
    module = test_util.HashBagEncoder()  # Kept alive: .encode holds a weakref.
    results_b = sts.evaluate_pair_sets(
        encoder_lib.FunctionEncoder(module.encode), self.pair_sets,
        self.missing, model_name="B")
    reference = {"STS2013.SMT": (24.94, 29.19), "STS.mean": (41.56, 44.78),
                 "STS2012.MSRpar": {"pearson": 34.19, "spearman": 35.21}}
    table = sts.format_table([results_a, results_b],
                             references={"w2v": reference},
                             marks={"B": {"STS2012.MSRpar": 0}},
                             marks_caption="Marks: none.")
    lines = table.splitlines()
    header = next(l for l in lines if l.startswith("| set"))
    self.assertEqual(header, "| set | pairs | w2v | A | B |")
    rows = [l.split(" | ")[0].lstrip("| ") for l in lines
            if l.startswith("| ")][1:]
    self.assertEqual(rows, (
        ["**2012**"] + list(sts_data.STS_TEST_SET_NAMES[:5]) +
        ["**2013**"] + list(sts_data.STS_TEST_SET_NAMES[5:9]) +
        ["**2014**"] + list(sts_data.STS_TEST_SET_NAMES[9:15]) +
        ["**2015**"] + list(sts_data.STS_TEST_SET_NAMES[15:]) +
        ["**other**", "SICK.test", "STSB.dev",
         "**STS 2012 mean (1 sets)**", "**STS 2014 mean (1 sets)**",
         "**STS 2015 mean (1 sets)**",
         "**mean of the 3 STS 2012\u20132015 sets present (" +
         ", ".join(n for n in self.missing if n.startswith("STS20")) +
         " missing)**"]))
    smt = next(l for l in lines if l.startswith("| STS2013.SMT |"))
    self.assertEqual(smt, "| STS2013.SMT |  | 24.94 (29.19) | missing | "
                     "missing |")
    msrpar = results_a.sets["STS2012.MSRpar"]
    row = next(l for l in lines if l.startswith("| STS2012.MSRpar |"))
    self.assertIn(f"| 4 | ", row)
    self.assertIn("| 34.19 (35.21) |", row)
    # No test says B differs on 4 pairs: nothing is bold.
    self.assertIn(f"| {msrpar.pearson:.2f} ({msrpar.spearman:.2f}) |", row)
    self.assertNotIn("**", row)
    forums = next(l for l in lines
                  if l.startswith("| STS2015.answers-forums |"))
    self.assertIn("| 3 |", forums)  # Scored pairs only.

  def test_marks_only_significant_differences(self):
    results = sts.evaluate_pair_sets(LetterEncoder(), [TOY], model_name="A")

    for direction, bold, worse in ((1, True, False), (-1, False, True),
                                   (0, False, False)):
      table = sts.format_table(
          [results, results, results], names=["A", "B", "C"],
          marks={"B": {"toy": direction}}, marks_caption="What marks mean.")
      row = next(l for l in table.splitlines() if l.startswith("| toy |"))
      cells = row.split(" | ")
      self.assertEqual("**" in cells[3], bold, row)
      self.assertEqual(sts.WORSE in cells[3], worse, row)
      self.assertNotIn("**", cells[2] + cells[4])
      self.assertIn("embeddings. What marks mean.", table)

  def test_json_round_trip(self):
    results = sts.evaluate_pair_sets(LetterEncoder(), self.pair_sets,
                                     self.missing, model_name="letters")
    data = json.loads(json.dumps(sts.results_to_json(results)))
    self.assertEqual(data["model"], "letters")
    self.assertEqual(data["sets"]["STS2014.images"]["num_pairs"], 3)
    self.assertIn("STS2013.SMT", data["missing"])
    back = sts.results_from_json(data)
    for name, r in results.sets.items():
      self.assertAlmostEqual(back.sets[name].pearson, r.pearson)
      np.testing.assert_allclose(back.sets[name].predicted, r.predicted)
    self.assertEqual(back.aggregates["STS.mean"].label,
                     results.aggregates["STS.mean"].label)
    small = sts.results_to_json(results, include_predictions=False)
    self.assertNotIn("predicted", small["sets"]["STS2014.images"])


class StsbDevEvaluatorTest(absltest.TestCase):

  def _data_dir(self, with_stsb):
    data_dir = tempfile.mkdtemp()
    if with_stsb:
      folder = os.path.join(data_dir, "sts", "STSBenchmark")
      os.makedirs(folder)
      with open(os.path.join(folder, "sts-dev.csv"), "w") as f:
        for i, (a, b, score) in enumerate([("ab", "ab", 5.0), ("ab", "cd", 0.5),
                                           ("abc", "ab", 3.0), ("d", "ab", 1.0)]):
          f.write(f"g\tf\t2012\t{i}\t{score}\t{a}\t{b}\n")
    return data_dir

  def test_scores_and_hook(self):

    def encode(sentences):
      letters = tf.strings.unicode_decode(sentences, "UTF-8")
      one_hot = tf.one_hot(letters - ord("a"), 4)
      return tf.reduce_sum(one_hot, axis=1)

    evaluate = sts.stsb_dev_evaluator(self._data_dir(True), encode)
    scores = evaluate()
    self.assertEqual(sorted(scores), ["stsb_dev_pearson",
                                      "stsb_dev_spearman"])
    gold = [5.0, 0.5, 3.0, 1.0]
    predicted = [1.0, 0.0, 2 / np.sqrt(6), 0.0]
    self.assertAlmostEqual(scores["stsb_dev_pearson"],
                           100 * stats.pearsonr(predicted, gold).statistic,
                           places=4)

  def test_without_stsb_returns_nothing(self):
    evaluate = sts.stsb_dev_evaluator(self._data_dir(False), None)
    self.assertEqual(evaluate(), {})



class RealDataTest(absltest.TestCase):
  """A quick run on the real sets with the untrained hashing encoder."""

  def test_real_sets(self):
    data_dir = test_util.real_data_dir()
    if data_dir is None:
      self.skipTest("no real data: set SENTZOO_DATA_DIR")
    pair_sets, missing = sts_data.load_eval_sets(data_dir)
    module = test_util.HashBagEncoder(num_buckets=4096, dim=64)
    encoder = encoder_lib.FunctionEncoder(module.encode)
    results = sts.evaluate_pair_sets(encoder, pair_sets, missing)
    self.assertEqual(missing, ["STS2013.SMT"])
    self.assertLen(results.sets, 21)
    self.assertEqual(results.aggregates["STS.mean"].label,
                     "mean of the 19 STS 2012\u20132015 sets present "
                     "(STS2013.SMT missing)")
    self.assertEqual(results.aggregates["STS2014.mean"].label,
                     "STS 2014 mean (6 sets)")
    self.assertEqual(results.sets["SICK.test"].num_pairs, 4927)
    for r in results.sets.values():
      self.assertFalse(np.any(np.isnan(r.predicted)), r.name)
      self.assertBetween(r.pearson, -100.0, 100.0)
    table = sts.format_table(results, names=["hash"])
    self.assertIn("| STS2013.SMT |  | missing |", table)


if __name__ == "__main__":
  tf.test.main()
