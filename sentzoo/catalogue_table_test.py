"""The "pick a model" table comes from the catalogue and the records."""

import json
import os

import tensorflow as tf

from sentzoo import catalogue
from sentzoo import catalogue_table
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
    rows = text.splitlines()[2:]
    self.assertLen(rows, len(catalogue.ENTRIES))
    demo = rows[0]
    self.assertStartsWith(demo, "| `siamese-cbow-demo` |")
    self.assertIn(f"{scores['encode_sentences_per_s']:,}", demo)
    if "stsb_dev" in scores:
      self.assertIn(f"| {scores['stsb_dev']:.2f} |", demo)
    self.assertIn("not trained yet (`sentzoo train sent2vec-books-uni`)",
                  text)

  def test_committed_records_are_catalogue_entries(self):
    records = catalogue_table.read_records()
    for name, found in records.items():
      self.assertEqual(found["name"], name)
      self.assertIn("stsb_dev", found["scores"])
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
                  "python -m sentzoo.catalogue_table --readme README.md")

  def test_fill_readme_replaces_only_the_section(self):
    path = os.path.join(self.get_temp_dir(), "README.md")
    with open(path, "w") as f:
      f.write("intro\n" + catalogue_table.README_START + "\nold\n"
              + catalogue_table.README_END + "\nrest\n")
    catalogue_table.fill_readme(path, "new table")
    with open(path) as f:
      self.assertEqual(f.read(), "intro\n" + catalogue_table.README_START
                       + "\nnew table\n" + catalogue_table.README_END
                       + "\nrest\n")


if __name__ == "__main__":
  tf.test.main()
