"""The catalogue's entries name real models, flagfiles and entries."""

import json
import os
import re

import tensorflow as tf

from sentzoo import catalogue
from sentzoo.common import errors
from sentzoo.models import model_specs

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class CatalogueTest(tf.test.TestCase):

  def test_entries_name_models_flagfiles_and_earlier_entries(self):
    seen = set()
    for entry in catalogue.ENTRIES:
      self.assertRegex(entry.name, catalogue.NAME_PATTERN)
      self.assertNotIn(entry.name, seen)
      self.assertIn(entry.model_type, model_specs.SPECS)
      self.assertTrue(os.path.isfile(os.path.join(_REPO_ROOT,
                                                  entry.flagfile)),
                      entry.flagfile)
      self.assertTrue(entry.purpose and entry.data)
      for earlier in (entry.word_vectors_from, entry.export_of):
        # Trained before the entries that take its vectors or run.
        if earlier:
          self.assertIn(earlier, seen)
      if entry.export_of:
        base = catalogue.get(entry.export_of)
        self.assertEqual((entry.model_type, entry.flagfile),
                         (base.model_type, base.flagfile))
        self.assertNotEqual(entry.quantize, "none")
      seen.add(entry.name)
    self.assertEqual(catalogue.names(),
                     tuple(e.name for e in catalogue.ENTRIES))

  def test_the_issue_s_entries_and_a_matcher_per_task_with_data(self):
    for name in ("siamese-cbow-demo", "siamese-cbow-books",
                 "sent2vec-books-uni", "sent2vec-books-unibi",
                 "charagram-phrase-ppdb", "paragram-phrase-ppdb",
                 "hybrid-msrp-gru", "hybrid-sick-gru"):
      self.assertEqual(catalogue.get(name).name, name)

  def test_the_matchers_take_the_word_vectors_chosen_on_dev(self):
    with open(os.path.join(_REPO_ROOT, "docs", "records",
                           "catalogue_choices",
                           "hybrid_word_vectors.json")) as f:
      chosen = json.load(f)["chosen"]
    for entry in catalogue.ENTRIES:
      if entry.model_type != "hybrid_siamese":
        continue
      with open(os.path.join(_REPO_ROOT, entry.flagfile)) as f:
        task = re.search(r"^--task=(\w+)$", f.read(), re.M).group(1)
      self.assertEqual(entry.word_vectors_from, chosen[task], entry.name)

  def test_unknown_name_is_a_user_error_listing_the_names(self):
    with self.assertRaisesRegex(errors.UserError,
                                r"unknown model 'nope'.*siamese-cbow-demo"):
      catalogue.get("nope")
    self.assertIsNone(catalogue.find("nope"))


if __name__ == "__main__":
  tf.test.main()
