"""Tests for lab.senteval: CV logic, features and tasks."""

import json
import os

import numpy as np
import tensorflow as tf

from lab import senteval
from lab import senteval_data
from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.tests import senteval_fixtures
from sentzoo.tests import test_util

FAST = senteval.TransferConfig(outer_folds=3, inner_folds=3,
                               l2_grid=(1e-2, 1.0), seed=7)


def _blobs(n_per_class, k=2, d=6, separation=6.0, seed=0):
  """Gaussian blobs: class c centred at separation * e_c."""
  rng = np.random.default_rng(seed)
  x, y = [], []
  for c in range(k):
    centre = np.zeros(d)
    centre[c] = separation
    x.append(rng.normal(size=(n_per_class, d)) + centre)
    y.append(np.full(n_per_class, c))
  return np.concatenate(x), np.concatenate(y)


class FoldsTest(tf.test.TestCase):

  def test_partition_balance_and_determinism(self):
    labels = np.array([0] * 37 + [1] * 13 + [2] * 5)
    folds = senteval.stratified_folds(labels, 5, seed=3)
    self.assertLen(folds, 5)
    everything = np.sort(np.concatenate(folds))
    self.assertAllEqual(everything, np.arange(labels.size))
    sizes = [f.size for f in folds]
    self.assertLessEqual(max(sizes) - min(sizes), 1)
    for c, count in ((0, 37), (1, 13), (2, 5)):
      per_fold = [int(np.sum(labels[f] == c)) for f in folds]
      self.assertLessEqual(max(per_fold) - min(per_fold), 1, c)
      self.assertEqual(sum(per_fold), count)
    again = senteval.stratified_folds(labels, 5, seed=3)
    for a, b in zip(folds, again):
      self.assertAllEqual(a, b)
    other = senteval.stratified_folds(labels, 5, seed=4)
    self.assertFalse(all(np.array_equal(a, b) for a, b in zip(folds, other)))

  def test_bad_fold_counts(self):
    with self.assertRaises(ValueError):
      senteval.stratified_folds(np.zeros(3), 4, 0)
    with self.assertRaises(ValueError):
      senteval.stratified_folds(np.zeros(3), 1, 0)


class CrossValidationTest(tf.test.TestCase):

  def test_separable_data_gives_full_accuracy(self):
    x, y = _blobs(30, k=3, separation=12.0)
    cv = senteval.nested_cross_validation(x, y, FAST)
    self.assertEqual(cv["accuracy"], 100.0)
    self.assertLen(cv["fold_accuracies"], 3)
    self.assertLen(cv["l2"], 3)
    for l2 in cv["l2"]:
      self.assertIn(l2, FAST.l2_grid)

  def test_random_labels_give_chance_accuracy(self):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5))
    y = rng.integers(0, 2, 200)
    cv = senteval.nested_cross_validation(x, y, FAST)
    self.assertBetween(cv["accuracy"], 30.0, 70.0)

  def test_tuning_picks_the_penalty_that_generalises(self):
    # 40 noise dimensions, few examples: a weak penalty overfits.
    rng = np.random.default_rng(1)
    n, d = 60, 40
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, d))
    x[:, 0] += 1.5 * (2 * y - 1)
    config = senteval.TransferConfig(inner_folds=5, l2_grid=(1e-4, 1.0))
    best, accuracy = senteval.tune_l2(x, y, 2, config)
    self.assertEqual(set(accuracy), {1e-4, 1.0})
    self.assertEqual(best, max(accuracy, key=lambda l2: (accuracy[l2], l2)))
    self.assertEqual(best, 1.0)

  def test_ties_go_to_the_stronger_penalty(self):
    x, y = _blobs(20, separation=20.0)
    config = senteval.TransferConfig(inner_folds=4, l2_grid=(1e-3, 1e-1))
    best, accuracy = senteval.tune_l2(x, y, 2, config)
    self.assertEqual(accuracy[1e-3], accuracy[1e-1])
    self.assertEqual(best, 1e-1)


class FeaturesAndMetricsTest(tf.test.TestCase):

  def test_pair_features(self):
    u = np.array([[1.0, -2.0], [0.0, 3.0]])
    v = np.array([[3.0, 1.0], [0.0, -1.0]])
    self.assertAllClose(senteval.pair_features(u, v),
                        [[2.0, 3.0, 3.0, -2.0], [0.0, 4.0, 0.0, -3.0]])

  def test_f1(self):
    predicted = np.array([1, 1, 0, 0, 1])
    labels = np.array([1, 0, 1, 0, 1])
    # tp 2, fp 1, fn 1 -> 2 * 2 / (4 + 2) = 66.67
    self.assertAllClose(senteval.f1_score(predicted, labels), 400 / 6)
    self.assertEqual(senteval.f1_score(np.zeros(3), np.zeros(3)), 0.0)

  def test_average_needs_all_six_tasks(self):
    results = {t: {"accuracy": 50.0 + i} for i, t in enumerate(
        senteval_data.TASKS)}
    self.assertAllClose(senteval.average_accuracy(results), 52.5)
    del results["TREC"]
    self.assertIsNone(senteval.average_accuracy(results))
    results["Average"] = 81.4
    self.assertEqual(senteval.average_accuracy(results), 81.4)


def _vocabulary_encoder():
  """Bag of one-hot words over the fixture vocabulary (a FunctionEncoder).

  Dimension: one per vocabulary word plus one that is always zero.
  """
  words = senteval_fixtures.FIXTURE_VOCABULARY
  table = tf.constant(np.eye(len(words) + 1, dtype=np.float32)[1:])
  lookup = tf.lookup.StaticHashTable(
      tf.lookup.KeyValueTensorInitializer(
          tf.constant(words), tf.range(len(words), dtype=tf.int64)), -1)

  def encode(sentences):
    tokens = tf.strings.split(sentences)
    ids = tf.ragged.map_flat_values(lookup.lookup, tokens)
    ids = tf.ragged.boolean_mask(ids, ids >= 0)
    vectors = tf.gather(table, ids)
    return tf.reduce_sum(vectors, axis=1)  # [batch, vocabulary]

  return encoder_lib.FunctionEncoder(encode, dim=len(words) + 1)


class TasksOnFixturesTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.data_dir = test_util.make_tempdir(self)
    self.sizes = senteval_fixtures.write_senteval_fixture(self.data_dir)

  def test_every_task(self):
    encoder = _vocabulary_encoder()
    loaded, missing = senteval.load_tasks(self.data_dir, senteval_data.TASKS)
    self.assertEqual(missing, [])
    results = senteval.evaluate(encoder, loaded, FAST)
    self.assertEqual(list(results), list(senteval_data.TASKS))
    for task in ("MR", "SUBJ", "MPQA"):
      self.assertGreater(results[task].accuracy, 90.0, task)
      self.assertEqual(results[task].num_train, self.sizes[task])
      self.assertGreaterEqual(results[task].seconds, 0.0)
    self.assertGreater(results["TREC"].accuracy, 90.0)
    self.assertEqual(results["TREC"].num_test, 24)
    msrp = results["MSRP"]
    self.assertEqual((msrp.num_train, msrp.num_test), self.sizes["MSRP"])
    self.assertIsNotNone(msrp.f1)
    self.assertBetween(msrp.accuracy, 0.0, 100.0)
    self.assertEqual(json.loads(json.dumps(msrp.to_json()))["f1"], msrp.f1)

  def test_missing_task_is_reported(self):
    os.remove(os.path.join(self.data_dir, "senteval", "CR", "custrev.pos"))
    loaded, missing = senteval.load_tasks(self.data_dir, ["CR", "MR"])
    self.assertEqual(missing, ["CR"])
    self.assertEqual(list(loaded), ["MR"])
    with self.assertRaises(errors.UserError):
      senteval.load_tasks(self.data_dir, ["XYZ"])


if __name__ == "__main__":
  tf.test.main()
