"""Tests for evaluation.sts."""

import io
import json
import math
import os
import shutil
import tempfile

from absl.testing import absltest
import numpy as np
from scipy import stats
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import significance
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.evaluation import test_util


def letter_counts(sentence):
  """The toy encoder's vector: counts of a-z, float32 [26]."""
  v = np.zeros([26], np.float32)
  for ch in sentence.lower():
    if "a" <= ch <= "z":
      v[ord(ch) - ord("a")] += 1
  return v


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


TOY = sts_data.PairSet(
    "toy", ["abc", "aaa", "", "xyz zz", "hello", "b"],
    ["abd", "bbb", "abc", "zzz", "hello world", "!!!"],
    [4.0, 1.0, 0.5, 3.0, 3.5, 2.0])


class CosineTest(absltest.TestCase):

  def test_zero_vector_gives_zero(self):
    a = np.array([[0, 0, 0], [1, 2, 3], [1, 0, 0], [0, 0, 0]], np.float32)
    b = np.array([[1, 1, 1], [0, 0, 0], [2, 0, 0], [0, 0, 0]], np.float32)
    out = sts.cosine_similarities(a, b)
    self.assertFalse(np.any(np.isnan(out)))
    np.testing.assert_allclose(out, [0.0, 0.0, 1.0, 0.0])

  def test_values(self):
    a = np.array([[1.0, 0.0], [1.0, 1.0]])
    b = np.array([[0.0, 3.0], [-2.0, -2.0]])
    np.testing.assert_allclose(sts.cosine_similarities(a, b), [0.0, -1.0])


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
    tests = {"B": significance.wilcoxon_per_set(results_a, results_b)}
    table = sts.format_table([results_a, results_b],
                             references={"w2v": reference},
                             significance=tests)
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
    # The best Pearson (here A's) is bold.
    self.assertIn(f"| **{msrpar.pearson:.2f}** ({msrpar.spearman:.2f}) |",
                  row)
    forums = next(l for l in lines
                  if l.startswith("| STS2015.answers-forums |"))
    self.assertIn("| 3 |", forums)  # Scored pairs only.

    two_columns = sts.format_table([results_a, results_b], names=["a", "b"],
                                   style="columns", bold_best=False,
                                   caption=False)
    lines = two_columns.splitlines()
    self.assertEqual(lines[0], "| set | pairs | a Pearson | a Spearman | "
                     "b Pearson | b Spearman |")
    row = next(l for l in lines if l.startswith("| STS2012.MSRpar |"))
    self.assertIn(f"| {msrpar.pearson:.2f} | {msrpar.spearman:.2f} |", row)
    self.assertIn("| STS2013.SMT |  | missing | missing | missing | "
                  "missing |", two_columns)

  def test_dagger(self):
    results = sts.evaluate_pair_sets(LetterEncoder(), [TOY], model_name="A")
    fake = {"toy": significance.WilcoxonResult("toy", 6, 0.0, 1e-6)}
    table = sts.format_table([results, results], names=["A", "B"],
                             significance={"B": fake}, bold_best=False)
    row = next(l for l in table.splitlines() if l.startswith("| toy |"))
    cells = row.split(" | ")
    self.assertNotIn(significance.DAGGER, cells[2])
    self.assertIn(significance.DAGGER, cells[3])

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


def fake_results(pearsons, name="ours"):
  """EvalResults with the given Pearson per set (Spearman = Pearson - 1)."""
  sets = {n: sts.SetResult(n, p, p - 1, np.zeros([0]), np.zeros([0]))
          for n, p in pearsons.items()}
  return sts.EvalResults(sets, [], sts.compute_aggregates(sets), name)


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
    calls = []

    def encode(sentences):
      letters = tf.strings.unicode_decode(sentences, "UTF-8")
      one_hot = tf.one_hot(letters - ord("a"), 4)
      return tf.reduce_sum(one_hot, axis=1)

    evaluate = sts.stsb_dev_evaluator(self._data_dir(True), encode,
                                      before=lambda: calls.append(1))
    scores = evaluate()
    self.assertEqual(sorted(scores), ["stsb_dev_pearson",
                                      "stsb_dev_spearman"])
    gold = [5.0, 0.5, 3.0, 1.0]
    predicted = [1.0, 0.0, 2 / np.sqrt(6), 0.0]
    self.assertAlmostEqual(scores["stsb_dev_pearson"],
                           100 * stats.pearsonr(predicted, gold).statistic,
                           places=4)
    self.assertEqual(calls, [1])

  def test_without_stsb_returns_nothing(self):
    evaluate = sts.stsb_dev_evaluator(self._data_dir(False), None,
                                      before=lambda: self.fail("called"))
    self.assertEqual(evaluate(), {})


class ReferencesTest(absltest.TestCase):

  def test_compare_and_format(self):
    results = fake_results({"STS2012.MSRpar": 30.0, "STS2014.images": 60.0,
                            "STS2014.OnWN": math.nan, "SICK.test": 50.0,
                            "STSB.dev": 70.0})
    references = {
        "w2v CBOW": {"STS2012.MSRpar": (24.2, 27.36),
                     "STS2014.images": (54.3, 53.69), "SICK.test": (59.18, 1),
                     "STS2014.OnWN": (50.93, 58.04),
                     "STS.mean": (41.56, 44.78), "STS2014.mean": (44.65, 45.87)},
        "s2v 1 epoch": {"STS2012.MSRpar": (13.3, None),
                        "STS2014.images": (60.0, None),
                        "STS.mean": (33.84, None)},
    }
    comparison = sts.compare_to_references(results, references)
    self.assertEqual(comparison["model"], "ours")
    self.assertEqual([a["key"] for a in comparison["aggregates"]],
                     ["STS.mean", "STS2014.mean"])
    overall = comparison["aggregates"][0]
    self.assertTrue(math.isnan(results.aggregates["STS.mean"].pearson))
    self.assertEqual(overall["model"], [None, None])
    self.assertEqual(overall["references"], {"w2v CBOW": [41.56, 44.78],
                                             "s2v 1 epoch": [33.84, None]})
    self.assertEqual(comparison["aggregates"][1]["references"],
                     {"w2v CBOW": [44.65, 45.87]})
    # STSB.dev has no reference; a tie (images) and nan (OnWN) do not beat.
    self.assertEqual(comparison["sets"], ["STS2012.MSRpar", "STS2014.images",
                                          "STS2014.OnWN", "SICK.test"])
    self.assertEqual(comparison["wins"], ["STS2012.MSRpar"])
    self.assertEqual(comparison["losses"], [
        {"set": "STS2014.images", "model": 60.0, "reference": "s2v 1 epoch",
         "reference_pearson": 60.0},
        {"set": "STS2014.OnWN", "model": None, "reference": "w2v CBOW",
         "reference_pearson": 50.93},
        {"set": "SICK.test", "model": 50.0, "reference": "w2v CBOW",
         "reference_pearson": 59.18}])
    json.dumps(comparison)  # Serialisable.

    text = sts.format_comparison(comparison)
    self.assertIn("- STS 2014 mean (2 sets): ours nan vs w2v CBOW "
                  "44.65 (45.87)\n", text)
    self.assertIn(
        "- Sets where ours's Pearson beats the best reference column: 1 of 4. "
        "Not beaten: STS2014.images (60.00 vs 60.00, s2v 1 epoch); "
        "STS2014.OnWN (nan vs 50.93, w2v CBOW); SICK.test (50.00 vs 59.18, "
        "w2v CBOW).\n", text)

    clean = fake_results({"STS2014.images": 60.5, "STSB.dev": 1.0})
    text = sts.format_comparison(sts.compare_to_references(clean, references))
    self.assertIn("- STS 2014 mean (1 sets): ours 60.50 (59.50) vs w2v CBOW "
                  "44.65 (45.87) [+15.85]\n", text)
    self.assertIn("- mean of the 1 STS 2012\u20132015 sets present: ours "
                  "60.50 (59.50) vs w2v CBOW 41.56 (44.78) [+18.94]; "
                  "s2v 1 epoch 33.84 [+26.66]\n", text)
    self.assertIn("column: 1 of 1.\n", text)
    none = sts.compare_to_references(fake_results({"STSB.dev": 1.0}),
                                     references)
    self.assertEqual((none["aggregates"], none["sets"]), ([], []))
    self.assertIn("No set in common", sts.format_comparison(none))

  def test_command_note_line(self):
    self.assertEqual(sts.command_note_line("python -m evaluation.sts --x=1"),
                     "Produced by: `python -m evaluation.sts --x=1`")
    self.assertEqual(sts.command_note_line("echo `date`"),
                     "Produced by: `` echo `date` ``")


class CliTest(absltest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.root = tempfile.mkdtemp(prefix="sentzoo_eval_")
    cls.data_dir = test_util.write_fixture_data_dir(
        os.path.join(cls.root, "data"))
    cls.module_a = test_util.HashBagEncoder(seed=3)
    cls.model_a = os.path.join(cls.root, "exports", "a")
    test_util.save_hash_bag_encoder(cls.module_a,
                                    os.path.join(cls.model_a, "1"))
    cls.model_b = os.path.join(cls.root, "exports", "b")
    test_util.save_hash_bag_encoder(test_util.HashBagEncoder(seed=4),
                                    os.path.join(cls.model_b, "7"))

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.root, ignore_errors=True)
    super().tearDownClass()

  def test_end_to_end(self):
    json_path = os.path.join(test_util.make_tempdir(self), "out.json")
    md_path = os.path.join(test_util.make_tempdir(self), "out.md")
    out = io.StringIO()
    output = sts.run(["sts", f"--model={self.model_a}",
                      f"--model={self.model_b}", "--names=first,second",
                      f"--data_dir={self.data_dir}", "--sets=sts,sick",
                      f"--output_json={json_path}",
                      f"--output_markdown={md_path}", "--batch_size=3"],
                     out=out)
    printed = out.getvalue()
    self.assertIn("| set | pairs | first | second |", printed)
    self.assertIn("| SICK.test | 4 |", printed)
    self.assertNotIn("STSB.dev", printed)
    self.assertIn("Wilcoxon signed-rank test p-values", printed)
    self.assertIn("| set | second vs first |", printed)
    self.assertIn("Missing sets (not in the data): STS2012.MSRvid", printed)
    with open(md_path, encoding="utf-8") as f:
      self.assertEqual(f.read(), output["markdown"])

    # Model "first" through the CLI equals the in-memory module.
    pair_sets, missing = sts_data.load_eval_sets(self.data_dir,
                                                 ["sts", "sick"])
    direct = sts.evaluate_pair_sets(
        encoder_lib.FunctionEncoder(self.module_a.encode), pair_sets, missing)
    with open(json_path, encoding="utf-8") as f:
      data = json.load(f)
    self.assertEqual([m["model"] for m in data["models"]],
                     ["first", "second"])
    self.assertEqual(data["models"][0]["path"], self.model_a)
    for name, r in direct.sets.items():
      self.assertAlmostEqual(data["models"][0]["sets"][name]["pearson"],
                             r.pearson, places=4)
      np.testing.assert_allclose(data["models"][0]["sets"][name]["predicted"],
                                 r.predicted, atol=1e-5)
    tests = data["significance"]["second vs first"]
    self.assertEqual(set(tests), set(direct.sets))
    self.assertEqual(tests["SICK.test"]["num_pairs"], 4)
    self.assertLen(output["results"], 2)

  def test_references_and_command_note(self):
    tmp = test_util.make_tempdir(self)
    page = test_util.write_file(os.path.join(tmp, "w2v.md"), (
        "| set | pairs | CBOW Pearson | CBOW Spearman | sg Pearson |\n"
        "|---|---:|---:|---:|---:|\n"
        "| STS2012.MSRpar | 750 | 24.20 | 27.36 | 99.00 |\n"
        "| STS2014.images | 750 | -99.00 | 53.69 | -99.00 |\n"
        "| SICK.test | 4927 | 59.18 | 53.41 | 65.09 |\n"
        "| **mean of the 19 STS 2012\u20132015 sets** | | 41.56 | 44.78 | "
        "49.11 |\n"))
    md_path = os.path.join(tmp, "out.md")
    json_path = os.path.join(tmp, "out.json")
    note = "python -m evaluation.sts --reference=w2v=w2v.md"
    out = io.StringIO()
    output = sts.run(["sts", f"--model={self.model_a}",
                      f"--model={self.model_b}", "--names=first,second",
                      f"--data_dir={self.data_dir}", "--sets=sts,sick",
                      f"--reference=w2v={page}", f"--command_note={note}",
                      f"--output_markdown={md_path}",
                      f"--output_json={json_path}"], out=out)
    printed = out.getvalue()
    self.assertIn("| set | pairs | w2v CBOW | w2v sg | first | second |",
                  printed)
    self.assertIn("| 24.20 (27.36) | **99.00** |", printed)
    self.assertNotIn("Produced by", printed)
    comparison = output["comparison"]
    self.assertEqual(comparison["model"], "first")
    self.assertEqual(comparison["sets"],
                     ["STS2012.MSRpar", "STS2014.images", "SICK.test"])
    self.assertEqual(comparison["wins"], ["STS2014.images"])  # Beats -99.
    self.assertEqual([l["set"] for l in comparison["losses"]],
                     ["STS2012.MSRpar", "SICK.test"])
    self.assertEqual(comparison["losses"][0]["reference"], "w2v sg")
    self.assertIn("Comparison of first with the reference columns", printed)
    self.assertIn("first's Pearson beats the best reference column: 1 of 3. "
                  "Not beaten: STS2012.MSRpar (", printed)
    self.assertLess(printed.index("| set | pairs |"),
                    printed.index("Comparison of first"))
    with open(md_path, encoding="utf-8") as f:
      self.assertEqual(f.read(), f"Produced by: `{note}`\n\n" +
                       output["markdown"])
    with open(json_path, encoding="utf-8") as f:
      data = json.load(f)
    self.assertEqual(data["reference_comparison"]["wins"], ["STS2014.images"])
    self.assertEqual(data["references"]["w2v sg"]["SICK.test"],
                     [65.09, None])

    with self.assertRaisesRegex(errors.UserError, "PREFIX=PATH"):
      sts.run(["sts", f"--model={self.model_a}", f"--reference={page}",
               f"--data_dir={self.data_dir}"])
    bad = test_util.write_file(os.path.join(tmp, "bad.md"), "no table\n")
    with self.assertRaisesRegex(errors.DataFormatError, "bad.md:1:"):
      sts.run(["sts", f"--model={self.model_a}", f"--reference=x={bad}",
               f"--data_dir={self.data_dir}"])

  def test_single_model_default_name(self):
    out = io.StringIO()
    sts.run(["sts", f"--model={os.path.join(self.model_b, '7')}",
             f"--data_dir={self.data_dir}", "--sets=stsb"], out=out)
    printed = out.getvalue()
    self.assertIn("| set | pairs | b/7 |", printed)
    self.assertIn("| STSB.dev | 3 |", printed)
    self.assertNotIn("Wilcoxon", printed)

  def test_user_errors(self):
    with self.assertRaisesRegex(errors.UserError, "no model given"):
      sts.run(["sts", f"--data_dir={self.data_dir}"])
    with self.assertRaisesRegex(errors.DataDirError, "no SavedModel"):
      sts.run(["sts", f"--model={self.root}", f"--data_dir={self.data_dir}"])
    with self.assertRaisesRegex(errors.UserError, "--names has 2 names"):
      sts.run(["sts", f"--model={self.model_a}", "--names=x,y",
               f"--data_dir={self.data_dir}"])
    with self.assertRaisesRegex(errors.UserError, "unknown groups"):
      sts.run(["sts", f"--model={self.model_a}", "--sets=sts,msrp",
               f"--data_dir={self.data_dir}"])
    with self.assertRaisesRegex(errors.DataDirError, "no evaluation sets"):
      sts.run(["sts", f"--model={self.model_a}",
               f"--data_dir={os.path.join(self.root, 'exports')}"])
    with self.assertRaisesRegex(errors.UserError, "nope"):
      sts.run(["sts", "--nope=1"])


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
