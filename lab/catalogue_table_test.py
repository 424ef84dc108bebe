"""The "pick a model" table comes from the catalogue and the records."""

import json
import os

import tensorflow as tf

from sentzoo import catalogue
from lab import catalogue_table
from sentzoo import store as store_lib
from sentzoo.tests import zoo_test_util
from lab.reports import paper_numbers


class CatalogueTableTest(tf.test.TestCase):

  def test_paper_figures_are_the_papers_sts2014_means(self):
    self.assertEqual(catalogue_table.paper_sts2014_mean(
        catalogue.PaperFigure("charagram", "CHARAGRAM-PHRASE")), 74.7)
    cbow = paper_numbers.siamese_cbow_reference()
    expected = sum(cbow[n][0] for n in cbow if n.startswith("STS2014.")) / 6
    self.assertAlmostEqual(catalogue_table.paper_sts2014_mean(
        catalogue.PaperFigure("siamese_cbow", "Siamese CBOW")), expected)
    self.assertIsNone(catalogue_table.paper_sts2014_mean(None))

  def test_a_row_per_entry_from_records(self):
    root = self.get_temp_dir()
    home = os.path.join(root, "home")
    export_dir = zoo_test_util.make_export(os.path.join(root, "m"))
    zoo_test_util.install_tiny(home, "siamese-cbow-demo", export_dir)
    records = os.path.join(root, "records")
    path = catalogue_table.record("siamese-cbow-demo",
                                  store_lib.Store(home), records)
    with open(path) as f:
      recorded = json.load(f)
    self.assertNotIn(home, json.dumps(recorded))  # No machine paths.
    scores = recorded["scores"]
    text = catalogue_table.table(catalogue_table.read_records(records))
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    self.assertLen(rows, len(catalogue.ENTRIES))
    demo = rows[0]
    self.assertStartsWith(demo, "| `siamese-cbow-demo` |")
    self.assertIn(f"{scores['encode_sentences_per_s']:,}", demo)
    if "stsb_dev" in scores:
      self.assertIn(f"| {scores['stsb_dev']:.2f} |", demo)
    self.assertIn("not trained yet (`sentzoo train sent2vec-books-uni`)",
                  text)

  def test_encode_timed_again_into_the_records(self):
    data_dir = os.environ.get("SENTZOO_DATA_DIR", "")
    if not os.path.isdir(os.path.join(data_dir, "sts")):
      self.skipTest("no STS data ($SENTZOO_DATA_DIR)")
    root = self.get_temp_dir()
    home = os.path.join(root, "again_home")
    zoo_test_util.install_tiny(home, "siamese-cbow-demo",
                               zoo_test_util.make_export(
                                   os.path.join(root, "again")))
    records = os.path.join(root, "again_records")
    store = store_lib.Store(home)
    catalogue_table.record("siamese-cbow-demo", store, records)
    catalogue_table.measure_encode_again(["siamese-cbow-demo"], store,
                                         data_dir, records)
    scores = catalogue_table.read_records(records)["siamese-cbow-demo"][
        "scores"]
    self.assertGreater(scores["encode_sentences_per_s"], 0)
    self.assertRegex(scores["encode_measured_on"],
                     r"^\d+ sentences, batch 4096, fastest of 3 runs, ")
    self.assertEqual(scores["encode_sequence"], ["siamese-cbow-demo"])
    self.assertIn("The encode speeds of `siamese-cbow-demo` were measured "
                  "again in one sequence",
                  catalogue_table.notes(catalogue_table.read_records(records)))

  def test_marks_come_from_the_records(self):
    def record(**scores):
      return {"scores": {"sts_mean": 50.0, "stsb_dev": 60.0,
                         "encode_sentences_per_s": 1000,
                         "size_bytes": 100, **scores}}
    records = {
        "siamese-cbow-demo": record(encode_sentences_per_s=9000,
                                    size_bytes=10, sts_mean=40.0),
        "siamese-cbow-books": record(sts_mean=52.0, size_bytes=50),
        "sent2vec-books-uni": record(sts_mean=53.0, stsb_dev=64.0,
                                     size_bytes=200),
        # Pair classifiers are not ranked with the encoders.
        "hybrid-msrp-gru": record(sts_mean=99.0, stsb_dev=99.0),
    }
    self.assertEqual(catalogue_table.marks(records), {
        "siamese-cbow-demo": ["fastest encode"],
        "siamese-cbow-books": [catalogue_table.SMALLEST_LABEL],
        "sent2vec-books-uni": ["best STS-B dev", "best 19-set STS"]})
    records["siamese-cbow-books"]["scores"]["sts_mean"] = 51.9
    self.assertEqual(catalogue_table.marks(records)["sent2vec-books-uni"],
                     ["best STS-B dev", "best 19-set STS",
                      catalogue_table.SMALLEST_LABEL])
    self.assertEqual(catalogue_table.marks({}), {})

  def test_a_purpose_says_best_only_where_the_records_do(self):
    earned = catalogue_table.marks(catalogue_table.read_records())
    for entry in catalogue.ENTRIES:
      if "best" in entry.purpose.lower() or "fastest" in entry.purpose.lower():
        self.assertTrue(earned.get(entry.name), (
            f"{entry.name}'s purpose {entry.purpose!r} claims a best that "
            "its record does not earn"))

  def test_pair_rows_show_accuracy_f1_and_the_majority_class(self):
    records = {"hybrid-msrp-gru": {"scores": {"size_bytes": 2e6, "pair_test": {
        "task": "msrp", "pairs": 1725, "accuracy": 70.5, "f1": 80.25,
        "majority_accuracy": 66.49, "majority_f1": 79.87}}}}
    row = [line for line in catalogue_table.pair_table(records).splitlines()
           if line.startswith("| `hybrid-msrp-gru`")][0]
    self.assertIn("| msrp (1725 test pairs) | 70.50 | 80.25 | 66.49 / 79.87 "
                  "| 2.0 MB |", row)
    self.assertIn("not trained yet (`sentzoo train hybrid-sick-gru`)",
                  catalogue_table.pair_table(records))

  def test_training_cost_rows(self):
    records = {"siamese-cbow-demo": {"scores": {}, "training": {
        "wall_seconds": 35, "peak_rss_bytes": 3 * 2**29, "cpus": 2,
        "cpu": "Some CPU", "load_average_before": 0.5, "resumed": False}}}
    text = catalogue_table.training_cost_table(records)
    self.assertIn("| `siamese-cbow-demo` | 0.6 min | 1.5 GiB | Some CPU, 2 "
                  "cores | 0.5 | whole |", text)
    self.assertIn("| `sent2vec-books-uni` | not recorded |", text)

  def test_committed_records_are_catalogue_entries(self):
    records = catalogue_table.read_records()
    for name, found in records.items():
      self.assertEqual(found["name"], name)
      self.assertTrue("stsb_dev" in found["scores"]
                      or "pair_test" in found["scores"], name)
      self.assertNotIn("/root", json.dumps(found))
      self.assertNotIn("/home", json.dumps(found))

  def test_the_readme_holds_the_generated_table(self):
    readme = os.path.join(catalogue_table.REPO_ROOT, "README.md")
    with open(readme, encoding="utf-8") as f:
      text = f.read()
    expected = catalogue_table.section(catalogue_table.read_records())
    self.assertIn(catalogue_table.README_START + "\n" + expected + "\n"
                  + catalogue_table.README_END, text,
                  "README.md's pick-a-model table is not the generator's: "
                  "make docs")


if __name__ == "__main__":
  tf.test.main()
