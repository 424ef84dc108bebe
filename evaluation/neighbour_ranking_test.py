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

  def test_ragged_groups_are_padded_to_length(self):
    # The same groups without their padding: the encoder sees the same
    # [n, length] ids, so the result is the same.
    rng = np.random.default_rng(2)
    groups = rng.integers(1, 20, size=(30, 5, 6))
    groups[:, :, 4:] = 0
    groups[3, 1] = 0  # An empty sentence.
    dense_seen, ragged_seen = [], []
    encode = _one_hot_encoder(20)

    def recording(seen):
      def record(ids):
        seen.append(np.array(ids))
        return encode(ids)
      return record

    dense = neighbour_ranking.neighbour_ranking_accuracy(
        recording(dense_seen), groups, batch_size=7)
    ragged = tf.ragged.boolean_mask(groups, groups > 0)
    self.assertEqual(int(ragged.bounding_shape()[2]), 4)
    padded = neighbour_ranking.neighbour_ranking_accuracy(
        recording(ragged_seen), ragged, batch_size=7, length=6)
    self.assertEqual(padded, dense)
    self.assertLen(ragged_seen, len(dense_seen))
    for got, want in zip(ragged_seen, dense_seen):
      self.assertAllEqual(got, want)
    # Without `length`, to the longest sentence.
    self.assertEqual(neighbour_ranking.neighbour_ranking_accuracy(
        encode, ragged, batch_size=7), dense)


if __name__ == "__main__":
  tf.test.main()
