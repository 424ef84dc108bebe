"""Tests for lab.reports.word_vector_choice."""

import json
import os
import tempfile

from absl.testing import absltest

from lab.reports import word_vector_choice
from sentzoo.common import errors


def _write_export_card(model_dir, version, sets):
  """An export version folder with a model card's export-time scores."""
  export_dir = os.path.join(model_dir, "export", str(version))
  os.makedirs(os.path.join(export_dir, "assets.extra"))
  open(os.path.join(export_dir, "saved_model.pb"), "wb").close()
  with open(os.path.join(export_dir, "assets.extra", "model_card.json"),
            "w") as f:
    json.dump({"evaluation": {"sets": sets}}, f)


def _write_run(folder, model_type, dev, word_ngrams=None, results=True):
  os.makedirs(folder)
  config = {"model_type": model_type}
  if word_ngrams is not None:
    config["featurizer"] = {"word_ngrams": word_ngrams}
  with open(os.path.join(folder, "model_config.json"), "w") as f:
    json.dump(config, f)
  if results:
    with open(os.path.join(folder, "sts_results.json"), "w") as f:
      json.dump({"sets": {"STSB.dev": {"pearson": dev, "spearman": dev},
                          "STS2014.images": {"pearson": 99.0}}}, f)
  return folder


class WordVectorChoiceTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.dir = tempfile.mkdtemp()

  def _run(self, name, model_type, dev, **kwargs):
    return _write_run(os.path.join(self.dir, name), model_type, dev, **kwargs)

  def test_highest_dev_pearson_is_chosen_and_written(self):
    cbow = self._run("cbow", "siamese_cbow", 57.4)
    uni = self._run("uni", "sent2vec", 64.0, word_ngrams=1)
    output = os.path.join(self.dir, "choice.json")
    selected = word_vector_choice.run([
        "prog", f"--candidate=Siamese CBOW={cbow}",
        f"--candidate=Sent2Vec uni={uni}", f"--output_json={output}"])
    self.assertEqual(selected.name, "Sent2Vec uni")
    with open(output) as f:
      written = json.load(f)
    self.assertEqual(written["selected"], "Sent2Vec uni")
    self.assertEqual(written["model_dir"], uni)
    self.assertEqual([c["dev_pearson"] for c in written["candidates"]],
                     [57.4, 64.0])
    self.assertEqual(word_vector_choice.read_choice(output), written)
    with open(output, "w") as f:
      f.write("[]")
    with self.assertRaisesRegex(errors.UserError, "not a word-vector choice"):
      word_vector_choice.read_choice(output)
    # The choice follows the dev score, not the order or a test set.
    self.assertEqual(
        word_vector_choice.choose([
            word_vector_choice.read_candidate("a", uni),
            word_vector_choice.read_candidate("b", self._run(
                "better", "siamese_cbow", 64.5))]).name, "b")

  def test_dev_score_of_an_older_final_evaluation_comes_from_the_export(self):
    # A run whose final evaluation had no STS-B dev (Sent2Vec's, before it
    # was added) is read from its newest export's model card.
    uni = self._run("uni_old", "sent2vec", None, word_ngrams=1)
    with open(os.path.join(uni, "sts_results.json"), "w") as f:
      json.dump({"sets": {"SICK.test": {"pearson": 65.4}}}, f)
    with self.assertRaisesRegex(errors.UserError, "--reexport"):
      word_vector_choice.read_candidate("uni", uni)
    _write_export_card(uni, 1, {"STSB.dev": {"pearson": 50.0}})
    _write_export_card(uni, 2, {"STSB.dev": {"pearson": 64.04},
                                "SICK.test": {"pearson": 65.4}})
    self.assertEqual(
        word_vector_choice.read_candidate("uni", uni).dev_pearson, 64.04)
    # The final evaluation's own result comes first.
    cbow = self._run("cbow_card", "siamese_cbow", 57.38)
    _write_export_card(cbow, 1, {"STSB.dev": {"pearson": 10.0}})
    self.assertEqual(
        word_vector_choice.read_candidate("cbow", cbow).dev_pearson, 57.38)

  def test_bigram_sent2vec_run_is_refused(self):
    unibi = self._run("unibi", "sent2vec", 70.0, word_ngrams=2)
    with self.assertRaisesRegex(errors.UserError, "2-grams"):
      word_vector_choice.read_candidate("uni+bi", unibi)

  def test_other_model_types_and_unfinished_runs_are_refused(self):
    with self.assertRaisesRegex(errors.UserError, "charagram model"):
      word_vector_choice.read_candidate(
          "c", self._run("charagram", "charagram", 60.0))
    with self.assertRaisesRegex(errors.UserError, "train it to its end"):
      word_vector_choice.read_candidate(
          "u", self._run("unfinished", "siamese_cbow", 0.0, results=False))
    with self.assertRaisesRegex(errors.UserError, "not a trained model"):
      word_vector_choice.read_candidate("m", os.path.join(self.dir, "none"))

  def test_bad_candidate_flags_are_user_errors(self):
    with self.assertRaisesRegex(errors.UserError, "names no model"):
      word_vector_choice.run(["prog"])
    with self.assertRaisesRegex(errors.UserError, "NAME=MODEL_DIR"):
      word_vector_choice.run(["prog", "--candidate=only-a-path"])


if __name__ == "__main__":
  absltest.main()
