"""Tests for evaluation.neighbour_ranking."""

import math

import numpy as np
import tensorflow as tf

from sentzoo.evaluation import neighbour_ranking


def _one_hot_encoder(dim):
  """ids [n, length] -> the count of each id: a bag-of-words vector."""

  def encode(ids):
    out = np.zeros((len(ids), dim))
    for row, sentence in enumerate(ids):
      for i in sentence[sentence != 0]:
        out[row, i] += 1
    return out

  return encode


class NeighbourRankingTest(tf.test.TestCase):

  def test_counts_pairs_ranked_correctly(self):
    # Group 0: neighbours share the centre's word, negatives do not -> 4/4.
    # Group 1: one neighbour shares it, the other does not; one negative
    # shares it -> (tie, win) + (loss, tie) = 0.5 + 1 + 0 + 0.5 = 2/4.
    groups = np.array([
        [[1, 0], [1, 0], [1, 2], [3, 0], [4, 0]],
        [[5, 0], [5, 0], [6, 0], [5, 0], [7, 0]],
    ])
    accuracy = neighbour_ranking.neighbour_ranking_accuracy(
        _one_hot_encoder(8), groups)
    self.assertAllClose(accuracy, (4 + 2) / 8)

  def test_zero_vectors_tie(self):
    groups = np.zeros((3, 4, 5), np.int32)  # Every sentence is empty.
    accuracy = neighbour_ranking.neighbour_ranking_accuracy(
        _one_hot_encoder(4), groups)
    self.assertAllClose(accuracy, 0.5)

  def test_no_groups_is_nan(self):
    self.assertTrue(math.isnan(neighbour_ranking.neighbour_ranking_accuracy(
        _one_hot_encoder(4), np.zeros((0, 4, 5), np.int32))))

  def test_batches_do_not_change_the_result(self):
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 20, size=(30, 5, 6))
    one = neighbour_ranking.neighbour_ranking_accuracy(
        _one_hot_encoder(20), groups, batch_size=7)
    whole = neighbour_ranking.neighbour_ranking_accuracy(
        _one_hot_encoder(20), groups, batch_size=1000)
    self.assertAllClose(one, whole)

  def test_sentences_are_encoded_in_the_batches_of_one_pass(self):
    # Groups are scored a chunk at a time; the encoder still sees the
    # batches of one pass over the flat sentences.
    rng = np.random.default_rng(1)
    groups = rng.integers(0, 20, size=(30, 5, 6))
    seen = []
    encode = _one_hot_encoder(20)

    def recording_encode(ids):
      seen.append(np.array(ids))
      return encode(ids)

    neighbour_ranking.neighbour_ranking_accuracy(recording_encode, groups,
                                                 batch_size=7)
    flat = groups.reshape(-1, 6)
    expected = [flat[i:i + 7] for i in range(0, len(flat), 7)]
    self.assertLen(seen, len(expected))
    for got, want in zip(seen, expected):
      self.assertAllEqual(got, want)


if __name__ == "__main__":
  tf.test.main()
