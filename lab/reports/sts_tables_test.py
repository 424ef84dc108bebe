"""Tests for lab.reports.sts_tables: reference comparisons and the command."""

import io
import json
import math
import os
import shutil
import tempfile

from absl.testing import absltest
import numpy as np
import tensorflow as tf

from lab.reports import sts_tables
from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.tests import test_util


def fake_results(pearsons, name="ours"):
  """EvalResults with the given Pearson per set (Spearman = Pearson - 1)."""
  sets = {n: sts.SetResult(n, p, p - 1, np.zeros([0]), np.zeros([0]))
          for n, p in pearsons.items()}
  return sts.EvalResults(sets, [], sts.compute_aggregates(sets), name)



class ReferencesTest(absltest.TestCase):

  def test_compare_and_format(self):
    results = fake_results({"STS2012.MSRpar": 30.0, "STS2014.images": 60.0,
                            "STS2014.OnWN": math.nan, "SICK.test": 50.0,
                            "STSB.dev": 70.0})
    references = {
        "w2v CBOW": {"STS2012.MSRpar": (24.2, 27.36),
                     "STS2014.images": (54.3, 53.69), "SICK.test": (59.18, 1),
                     "STS2014.OnWN": (50.93, 58.04),
                     "STS.mean": (41.56, 44.78),
                     "STS2014.mean": (44.65, 45.87)},
        "s2v 1 epoch": {"STS2012.MSRpar": (13.3, None),
                        "STS2014.images": (60.0, None),
                        "STS.mean": (33.84, None)},
    }
    comparison = sts_tables.compare_to_references(results, references)
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

    text = sts_tables.format_comparison(comparison)
    self.assertIn("- STS 2014 mean (2 sets): ours nan vs w2v CBOW "
                  "44.65 (45.87)\n", text)
    self.assertIn(
        "- Sets where ours's Pearson beats the best reference column: 1 of 4. "
        "Not beaten: STS2014.images (60.00 vs 60.00, s2v 1 epoch); "
        "STS2014.OnWN (nan vs 50.93, w2v CBOW); SICK.test (50.00 vs 59.18, "
        "w2v CBOW).\n", text)

    clean = fake_results({"STS2014.images": 60.5, "STSB.dev": 1.0})
    text = sts_tables.format_comparison(
        sts_tables.compare_to_references(clean, references))
    self.assertIn("- STS 2014 mean (1 sets): ours 60.50 (59.50) vs w2v CBOW "
                  "44.65 (45.87) [+15.85]\n", text)
    self.assertIn("- mean of the 1 STS 2012\u20132015 sets present: ours "
                  "60.50 (59.50) vs w2v CBOW 41.56 (44.78) [+18.94]; "
                  "s2v 1 epoch 33.84 [+26.66]\n", text)
    self.assertIn("column: 1 of 1.\n", text)
    none = sts_tables.compare_to_references(fake_results({"STSB.dev": 1.0}),
                                            references)
    self.assertEqual((none["aggregates"], none["sets"]), ([], []))
    self.assertIn("No set in common", sts_tables.format_comparison(none))



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
    md_path = os.path.join(test_util.make_tempdir(self), "out.md")
    out = io.StringIO()
    output = sts_tables.run(["sts", f"--model={self.model_a}",
                             f"--model={self.model_b}", "--names=first,second",
                             f"--data_dir={self.data_dir}", "--sets=sts,sick",
                             f"--output_markdown={md_path}", "--batch_size=3"],
                            out=out)
    printed = out.getvalue()
    self.assertIn("| set | pairs | first | second |", printed)
    self.assertIn("| SICK.test | 4 |", printed)
    self.assertNotIn("STSB.dev", printed)
    self.assertIn("Holm-corrected p of Williams' test", printed)
    self.assertIn("| set | second vs first |", printed)
    # 3-4 pairs per set: nothing is significant, so nothing is bold.
    table = printed.split("\n\n")[1]
    self.assertNotIn("| **", table.replace("| **20", "").replace(
        "| **other", "").replace("| **STS", "").replace("| **mean", ""))
    self.assertNotIn("Wilcoxon", printed)  # the paper's test: --wilcoxon
    with_paper_test = sts_tables.run(
        ["sts", f"--model={self.model_a}", f"--model={self.model_b}",
         f"--data_dir={self.data_dir}", "--sets=sick", "--wilcoxon"],
        out=io.StringIO())["markdown"]
    self.assertIn("Kenter et al.'s test (Wilcoxon signed-rank", with_paper_test)
    self.assertIn("Missing sets (not in the data): STS2012.MSRvid", printed)
    with open(md_path, encoding="utf-8") as f:
      self.assertEqual(f.read(), output["markdown"])

    # Model "first" through the CLI equals the in-memory module.
    pair_sets, missing = sts_data.load_eval_sets(self.data_dir,
                                                 ["sts", "sick"])
    direct = sts.evaluate_pair_sets(
        encoder_lib.FunctionEncoder(self.module_a.encode), pair_sets, missing)
    first, second = output["results"]
    self.assertEqual((first.model_name, second.model_name),
                     ("first", "second"))
    for name, r in direct.sets.items():
      self.assertAlmostEqual(first.sets[name].pearson, r.pearson, places=4)
      np.testing.assert_allclose(first.sets[name].predicted, r.predicted,
                                 atol=1e-5)
    tests = output["significance"]["second"]
    self.assertEqual(set(tests), set(direct.sets))
    self.assertEqual(tests["SICK.test"].num_pairs, 4)
    self.assertEqual(tests["SICK.test"].direction(), 0)
    self.assertAlmostEqual(
        tests["SICK.test"].difference,
        second.sets["SICK.test"].pearson - first.sets["SICK.test"].pearson,
        places=4)
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
    note = "python -m lab.reports.sts_tables --reference=w2v=w2v.md"
    out = io.StringIO()
    output = sts_tables.run(["sts", f"--model={self.model_a}",
                             f"--model={self.model_b}", "--names=first,second",
                             f"--data_dir={self.data_dir}", "--sets=sts,sick",
                             f"--reference=w2v={page}",
                             f"--command_note={note}",
                             f"--output_markdown={md_path}"], out=out)
    printed = out.getvalue()
    self.assertIn("| set | pairs | w2v CBOW | w2v sg | first | second |",
                  printed)
    self.assertIn("| 24.20 (27.36) | 99.00 |", printed)
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
    self.assertEqual(output["references"]["w2v sg"]["SICK.test"],
                     (65.09, None))

    with self.assertRaisesRegex(errors.UserError, "PREFIX=PATH"):
      sts_tables.run(["sts", f"--model={self.model_a}", f"--reference={page}",
                      f"--data_dir={self.data_dir}"])
    bad = test_util.write_file(os.path.join(tmp, "bad.md"), "no table\n")
    with self.assertRaisesRegex(errors.DataFormatError, "bad.md:1:"):
      sts_tables.run(["sts", f"--model={self.model_a}", f"--reference=x={bad}",
                      f"--data_dir={self.data_dir}"])

  def test_single_model_default_name(self):
    out = io.StringIO()
    sts_tables.run(["sts", f"--model={os.path.join(self.model_b, '7')}",
                    f"--data_dir={self.data_dir}", "--sets=stsb"], out=out)
    printed = out.getvalue()
    self.assertIn("| set | pairs | b/7 |", printed)
    self.assertIn("| STSB.dev | 3 |", printed)
    self.assertNotIn("Wilcoxon", printed)

  def test_user_errors(self):
    with self.assertRaisesRegex(errors.UserError, "no model given"):
      sts_tables.run(["sts", f"--data_dir={self.data_dir}"])
    with self.assertRaisesRegex(errors.DataDirError, "no SavedModel"):
      sts_tables.run(["sts", f"--model={self.root}",
                      f"--data_dir={self.data_dir}"])
    with self.assertRaisesRegex(errors.UserError, "--names has 2 names"):
      sts_tables.run(["sts", f"--model={self.model_a}", "--names=x,y",
                      f"--data_dir={self.data_dir}"])
    with self.assertRaisesRegex(errors.UserError, "unknown groups"):
      sts_tables.run(["sts", f"--model={self.model_a}", "--sets=sts,msrp",
                      f"--data_dir={self.data_dir}"])
    with self.assertRaisesRegex(errors.DataDirError, "no evaluation sets"):
      sts_tables.run(["sts", f"--model={self.model_a}",
                      f"--data_dir={os.path.join(self.root, 'exports')}"])
    with self.assertRaisesRegex(errors.UserError, "nope"):
      sts_tables.run(["sts", "--nope=1"])



class QuantizedCopiesTest(tf.test.TestCase):
  """A model's float16 and int8 exports are not marked different from it."""

  def test_float16_and_int8_exports_are_not_different(self):
    from sentzoo.export import export_model  # Only this test exports.
    from sentzoo.tests import model_dir_fixtures
    root = self.get_temp_dir()
    model_dir = os.path.join(root, "model")
    model_dir_fixtures.make_siamese_cbow_model_dir(model_dir)
    exports = {}
    for mode in ("none", "float16", "int8"):
      exports[mode] = export_model.export(
          model_dir, os.path.join(root, f"export_{mode}"), evaluate=False,
          quantize=mode)
    # SICK test: 600 pairs of the fixture's words, gold from word overlap.
    rng = np.random.default_rng(0)
    words = model_dir_fixtures.WORDS
    rows = ["pair_ID\tsentence_A\tsentence_B\trelatedness_score\t"
            "entailment_judgment\tSemEval_set"]
    for i in range(600):
      a, b = (list(rng.choice(words, size=rng.integers(2, 7)))
              for _ in range(2))
      overlap = len(set(a) & set(b)) / len(set(a) | set(b))
      gold = min(5.0, 1 + 4 * overlap + rng.normal(0, 0.5))
      rows.append(f"{i}\t{' '.join(a)}\t{' '.join(b)}\t{gold:.2f}\t"
                  "NEUTRAL\tTEST")
    data_dir = os.path.join(root, "data")
    os.makedirs(os.path.join(data_dir, "sick2014"))
    with open(os.path.join(data_dir, "sick2014", "SICK_test_annotated.txt"),
              "w", encoding="utf-8") as f:
      f.write("\n".join(rows) + "\n")
    output = sts_tables.run(
        ["sts", f"--model={exports['none']}", f"--model={exports['none']}",
         f"--model={exports['float16']}", f"--model={exports['int8']}",
         "--names=float32,itself,float16,int8", f"--data_dir={data_dir}",
         "--sets=sick"], out=io.StringIO())
    self.assertLen(output["results"][0].sets["SICK.test"].gold, 600)
    for name in ("itself", "float16", "int8"):
      test = output["significance"][name]["SICK.test"]
      self.assertEqual(test.direction(), 0, (name, test))
      self.assertLess(abs(test.difference), 0.1, (name, test))
    self.assertEqual(output["significance"]["itself"]["SICK.test"].pvalue,
                     1.0)
    row = next(l for l in output["markdown"].splitlines()
               if l.startswith("| SICK.test |"))
    self.assertNotIn("**", row)
    self.assertNotIn(sts_tables.sts.WORSE, row)


if __name__ == "__main__":
  tf.test.main()
