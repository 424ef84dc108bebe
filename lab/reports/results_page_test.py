"""Tests for lab.reports.results_page on a tiny fake export and fixture data."""

import io
import json
import os

import numpy as np
import tensorflow as tf

from lab.reports import results_page
from sentzoo.common import errors
from sentzoo.export import averaging_encoder
from sentzoo.export import saved_model_writer
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.tests import senteval_fixtures
from sentzoo.tests import test_util

CARD = {"model_type": "siamese_cbow", "checkpoint": "ckpt-7",
        "embedding_dim": 8,
        "training": {"corpus_files": ["part01.txt.gz"], "num_epochs": 1,
                     "total_steps": 7}}
FAST_FLAGS = ["--outer_folds=2", "--inner_folds=2", "--l2_grid=0.1",
              "--tasks=CR,TREC,MSRP"]


def _fake_export(base, seed, card=None):
  """A small averaging encoder over the fixture words, saved as <base>/1."""
  words = list(senteval_fixtures.FIXTURE_VOCABULARY) + [
      "man", "guitar", "dog", "grass", "cat", "woman"]
  vocabulary = vocabulary_lib.Vocabulary(words, [1] * len(words))
  table = np.random.default_rng(seed).normal(
      size=(len(words) + 1, 8)).astype(np.float32)
  module = averaging_encoder.AveragingSentenceEncoder(
      text_to_ids_lib.TextToIds(vocabulary), table, card or CARD)
  saved_model_writer.write(module, base)
  return base


class ResultsPageTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    root = test_util.make_tempdir(self)
    self.data_dir = test_util.write_fixture_data_dir(
        os.path.join(root, "data"))
    senteval_fixtures.write_senteval_fixture(self.data_dir)
    self.export_a = _fake_export(os.path.join(root, "a", "export"), 0)
    self.export_b = _fake_export(
        os.path.join(root, "b", "export"), 1,
        dict(CARD, model_type="sent2vec", training={"corpus": "books"}))
    self.cache_dir = os.path.join(root, "cache")
    self.output = os.path.join(root, "docs", "records", "results",
                               "tables.md")

  def _run(self, *extra):
    out = io.StringIO()
    result = results_page.run(
        ["results_page", f"--model=Model A={self.export_a}",
         f"--model={self.export_b}", f"--data_dir={self.data_dir}",
         f"--cache_dir={self.cache_dir}", f"--record={self.output}",
         *FAST_FLAGS,
         *extra], out=out)
    return result, out.getvalue()

  def test_page_contents_and_cache(self):
    result, printed = self._run(
        "--compare=Model A,b (sent2vec)",
        "--train_command=Model A=python -m trainers.siamese_cbow --x=1")
    self.assertIn("Model A: evaluated", printed)
    with open(self.output, encoding="utf-8") as f:
      page = f.read()
    self.assertEqual(page, result["tables"])
    self.assertTrue(page.startswith("## Models evaluated\n"), page[:40])
    # Training data from the model cards, with the paper's for comparison.
    self.assertIn("corpus_files: part01.txt.gz; num_epochs: 1; "
                  "total_steps: 7", page)
    self.assertIn("corpus: books", page)
    self.assertIn(
        "Toronto Book Corpus (74M sentences)", page)
    # Commands per row, collapsed.
    self.assertIn("trained by: `python -m trainers.siamese_cbow --x=1`", page)
    self.assertRegex(page, r"<details><summary>Commands that produced each "
                     r"model's rows[^<]*</summary>\n\n- \*\*Model A\*\*"
                     r"(.|\n)*</details>\n\n## Transfer tasks")
    self.assertIn(f"python -m lab.reports.senteval_tables --model={self.export_a}",
                  page)
    self.assertIn(f"python -m lab.reports.sts_tables --model={self.export_b}", page)
    # Paper numbers side by side.
    self.assertIn("| Sent2Vec uni. (paper, Table 1) | 72.2 / 80.3 |", page)
    self.assertIn("43.79 (43.11)", page)  # Siamese CBOW, 2012 MSRpar
    # Our rows, timings, STS sets, significance.
    self.assertRegex(page, r"\| Model A \| (\*\*)?\d+\.\d(\*\*)? / "
                     r"\d+\.\d \|  \| (\*\*)?\d+\.\d(\*\*)? \|")
    self.assertIn("Seconds each evaluation took", page)
    for name in ("STS2012.MSRpar", "SICK.test", "STSB.dev"):
      self.assertIn(f"| {name} |", page)
    self.assertIn("Holm-corrected p of Williams' test", page)
    self.assertIn("b (sent2vec) vs Model A", page)
    # Cache: one JSON per export; a second run evaluates nothing.
    self.assertLen(os.listdir(self.cache_dir), 2)
    entry = result["entries"][0]
    self.assertFalse(entry["cached"])
    self.assertIn("predicted", entry["sts"]["sets"]["STS2012.MSRpar"])
    second, printed = self._run("--compare=Model A,b (sent2vec)")
    self.assertIn("Model A: cached", printed)
    self.assertTrue(all(e["cached"] for e in second["entries"]))
    self.assertEqual(second["entries"][0]["transfer"], entry["transfer"])
    # Other settings are another cache entry.
    self._run("--seed=3")
    self.assertLen(os.listdir(self.cache_dir), 4)

  def test_user_errors(self):
    with self.assertRaises(errors.UserError):
      results_page.run(["results_page", f"--data_dir={self.data_dir}"])
    with self.assertRaises(errors.UserError):
      self._run("--compare=Model A,nobody")
    with self.assertRaises(errors.UserError):
      self._run("--train_command=nobody=cmd")
    with self.assertRaises(errors.UserError):
      results_page.parse_model_spec("=path")
    self.assertEqual(results_page.parse_model_spec("x=y=z"), ("x", "y=z"))
    self.assertEqual(results_page.parse_model_spec("runs/a"),
                     (None, "runs/a"))

  def test_model_card_and_fingerprint(self):
    export_dir = os.path.join(self.export_a, "1")
    self.assertEqual(results_page.read_model_card(export_dir)["checkpoint"],
                     "ckpt-7")
    self.assertEqual(results_page.read_model_card(self.data_dir), {})
    other = os.path.join(self.export_b, "1")
    self.assertNotEqual(results_page.export_fingerprint(export_dir),
                        results_page.export_fingerprint(other))
    bad = os.path.join(test_util.make_tempdir(self), "assets.extra",
                       "model_card.json")
    test_util.write_file(bad, "{not json")
    with self.assertRaises(errors.DataFormatError):
      results_page.read_model_card(os.path.dirname(os.path.dirname(bad)))
    self.assertIn("no training record",
                  results_page.training_data({"model_type": "x"}))
    self.assertEqual(results_page.training_data({"training": {
        "learning_rate": 0.2, "corpus_files": ["a", "b"], "dropout_k": 7,
        "total_steps": 9}}), "corpus_files: a, b; total_steps: 9")
    self.assertEqual(json.loads(json.dumps(CARD)), CARD)


if __name__ == "__main__":
  tf.test.main()
