"""A pair model's install scores: accuracy and F1 beside the majority's."""

import json
import os

import numpy as np
import tensorflow as tf

from sentzoo import install_scores
from sentzoo import sentence_model
from sentzoo.export import export_model
from sentzoo.export import hybrid_siamese_test as hybrid_siamese_export_test


class _PairModel:
  """Stands in for a pair `SentenceModel`: predicts "a" == "b"."""

  card = {"training": {"task": "msrp"}}
  is_pair_model = True

  def predict(self, pairs):
    return np.array([float(a == b) for a, b in pairs], np.float32)


class InstallScoresTest(tf.test.TestCase):

  def _write_msrp_test(self, data_dir, rows):
    os.makedirs(os.path.join(data_dir, "msrp"), exist_ok=True)
    with open(os.path.join(data_dir, "msrp", "msr-para-test.tsv"), "w",
              encoding="utf-8") as f:
      f.write("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n")
      for label, a, b in rows:
        f.write(f"{label}\t1\t2\t{a}\t{b}\n")

  def test_f1_of_the_positive_class(self):
    labels = np.array([1, 1, 0, 0])
    self.assertAllClose(install_scores.f1(labels, np.array([1, 0, 1, 0])),
                        50.0)
    self.assertAllClose(install_scores.f1(labels, np.array([0, 0, 0, 0])), 0)
    self.assertAllClose(install_scores.f1(np.zeros(3), np.zeros(3)), 0)

  def test_pairs_measured_on_the_task_s_test_split(self):
    data_dir = self.get_temp_dir()
    self._write_msrp_test(data_dir, [("1", "a", "a"), ("1", "b", "b"),
                                     ("1", "c", "x"), ("0", "d", "y")])
    scores = install_scores.measure_pairs(_PairModel(), data_dir)
    self.assertEqual(scores, {
        "task": "msrp", "pairs": 4, "accuracy": 75.0, "f1": 80.0,
        "majority_accuracy": 75.0, "majority_f1": 85.71})

  def test_a_pair_export_records_its_test_accuracy(self):
    root = self.get_temp_dir()
    model_dir = os.path.join(root, "pair_model")
    hybrid_siamese_export_test.make_model_dir(model_dir, "cnn")
    export_dir = export_model.export(model_dir, os.path.join(root, "pair"),
                                     evaluate=False)
    card_path = os.path.join(export_dir, "assets.extra", "model_card.json")
    with open(card_path) as f:
      card = json.load(f)
    card["training"]["task"] = "msrp"
    with open(card_path, "w") as f:
      json.dump(card, f)
    data_dir = os.path.join(root, "data")
    self._write_msrp_test(data_dir, [("1", "a b", "a b"), ("0", "c", "d")])
    scores = install_scores.measure(sentence_model.load(export_dir),
                                    export_dir, data_dir)
    self.assertEqual(scores["pair_test"]["pairs"], 2)
    self.assertEqual(scores["precision"], "float32")

  def test_no_task_in_the_card_measures_nothing(self):
    model = _PairModel()
    model.card = {}
    self.assertEqual(install_scores.measure_pairs(model, "/nonexistent"), {})


if __name__ == "__main__":
  tf.test.main()
