"""The catalogue's entries name real models, flagfiles and entries."""

import os

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
      if entry.word_vectors_from:
        # Trained before the entries that take its vectors (`make zoo`).
        self.assertIn(entry.word_vectors_from, seen)
      seen.add(entry.name)
    self.assertEqual(catalogue.names(),
                     tuple(e.name for e in catalogue.ENTRIES))

  def test_the_issue_s_entries_and_a_matcher_per_task_with_data(self):
    for name in ("siamese-cbow-demo", "siamese-cbow-books",
                 "sent2vec-books-uni", "sent2vec-books-unibi",
                 "charagram-phrase-ppdb", "paragram-phrase-ppdb",
                 "hybrid-msrp-gru", "hybrid-sick-gru"):
      self.assertEqual(catalogue.get(name).name, name)

  def test_unknown_name_is_a_user_error_listing_the_names(self):
    with self.assertRaisesRegex(errors.UserError,
                                r"unknown model 'nope'.*siamese-cbow-demo"):
      catalogue.get("nope")
    self.assertIsNone(catalogue.find("nope"))


if __name__ == "__main__":
  tf.test.main()
