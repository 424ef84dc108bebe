"""Tests for models.paraphrase_margin_loss on a hand-computed batch."""

import math

import numpy as np
import tensorflow as tf

from sentzoo.models import paraphrase_margin_loss

# Columns of the candidate matrix: 0-2 are x1_0..x1_2, 3-5 are x2_0..x2_2.
X1 = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32)
X2 = np.array([[2, 1, 0], [0, 2, 1], [1, 0, 2]], np.float32)
# cos(x1_i, x2_i) = 2/sqrt(5) for every pair. Each phrase's own column
# (cosine 1) and its partner's (2/sqrt(5)) are the two most similar
# candidates, so a wrong exclusion changes the chosen negatives.
POSITIVE = 2 / math.sqrt(5)
# MAX negatives, worked out by hand (every one has cosine 1/sqrt(5)):
#   x1_0=(1,0,0): x2_2=(1,0,2) -> col 5;  x1_1: x2_0 -> 3;  x1_2: x2_1 -> 4
#   x2_0=(2,1,0): x1_1 -> col 1 (x2_1, x2_2 give only 2/5); x2_1: x1_2 -> 2;
#   x2_2: x1_0 -> 0.
MAX_NEGATIVES1 = [5, 3, 4]
MAX_NEGATIVES2 = [1, 2, 0]
MAX_NEGATIVE_COSINE = 1 / math.sqrt(5)


class ParaphraseMarginLossTest(tf.test.TestCase):

  def test_max_negatives_exclude_self_and_partner(self):
    loss_fn = paraphrase_margin_loss.ParaphraseMarginLoss(margin=1.0)
    loss, details = loss_fn(X1, X2)
    self.assertAllEqual(details["negatives1"], MAX_NEGATIVES1)
    self.assertAllEqual(details["negatives2"], MAX_NEGATIVES2)
    self.assertAllClose(details["positive_cosine"], [POSITIVE] * 3)
    self.assertAllClose(details["negative_cosine1"],
                        [MAX_NEGATIVE_COSINE] * 3)
    # Two hinges per pair: 2 * (1 - 2/sqrt(5) + 1/sqrt(5)).
    self.assertAllClose(loss, 2 * (1.0 - POSITIVE + MAX_NEGATIVE_COSINE))

  def test_per_pair_loss_sums_to_the_loss(self):
    loss_fn = paraphrase_margin_loss.ParaphraseMarginLoss(margin=1.0)
    loss, details = loss_fn(X1, X2)
    self.assertAllClose(details["per_pair_loss"],
                        [2 * (1.0 - POSITIVE + MAX_NEGATIVE_COSINE)] * 3)
    # What a replica of a 2-replica step contributes: its rows / global B.
    rng = np.random.default_rng(1)
    e1 = tf.constant(rng.normal(size=[6, 4]).astype(np.float32))
    e2 = tf.constant(rng.normal(size=[6, 4]).astype(np.float32))
    loss, details = loss_fn(e1, e2)
    per_pair = details["per_pair_loss"]
    shares = [tf.reduce_sum(per_pair[:3]) / 6, tf.reduce_sum(per_pair[3:]) / 6]
    self.assertAllClose(shares[0] + shares[1], loss)

  def test_paper_margin_gives_zero_loss_here(self):
    # 0.4 - 0.894 + 0.447 < 0: both hinges are inactive.
    loss, _ = paraphrase_margin_loss.ParaphraseMarginLoss(0.4)(X1, X2)
    self.assertAllClose(loss, 0.0)

  def test_mix_random_branch_skips_invalid_columns(self):
    loss_fn = paraphrase_margin_loss.ParaphraseMarginLoss(
        margin=1.0, sampling="mix")
    scores = np.zeros([2, 3, 6], np.float32)
    # Side 1, row 0: self (col 0) and partner (col 3) score highest but are
    # invalid; col 2 (x1_2, cosine 0) is chosen.
    scores[0, 0] = [0.99, 0.1, 0.5, 0.98, 0.2, 0.3]
    scores[0, 1] = [0.9, 0.0, 0.0, 0.0, 0.95, 0.0]  # Col 4 is x2_1: partner.
    scores[0, 2] = [0.0, 0.7, 0.99, 0.0, 0.0, 0.98]  # 2 self, 5 partner.
    scores[1, :, 4] = 1.0  # Side 2 rows: col 4 where valid.
    scores[1, 1, 0] = 0.5  # Row 1's col 4 is itself: next best, col 0.
    coin = np.array([[0.9, 0.9, 0.9], [0.9, 0.1, 0.9]], np.float32)
    loss, details = loss_fn(X1, X2, coin=coin, random_scores=scores)
    self.assertAllEqual(details["negatives1"], [2, 0, 1])
    # Side 2: row 1 took MAX (coin 0.1 < 0.5) -> col 2.
    self.assertAllEqual(details["negatives2"], [4, 2, 4])
    unit = lambda v: v / np.linalg.norm(v)
    cands = np.concatenate([X1, X2])
    expected = 0.0
    for i in range(3):
      for side, (x, chosen) in enumerate(
          ((X1[i], details["negatives1"][i]),
           (X2[i], details["negatives2"][i]))):
        neg = unit(x) @ unit(cands[int(chosen)])
        expected += max(0.0, 1.0 - POSITIVE + neg)
    self.assertAllClose(loss, expected / 3)

  def test_mix_draws_are_valid(self):
    loss_fn = paraphrase_margin_loss.ParaphraseMarginLoss(sampling="mix",
                                                          seed=3)
    rng = np.random.default_rng(0)
    e1 = rng.normal(size=[8, 5]).astype(np.float32)
    e2 = rng.normal(size=[8, 5]).astype(np.float32)
    for _ in range(20):
      _, details = loss_fn(e1, e2)
      for side in ("negatives1", "negatives2"):
        chosen = details[side].numpy()
        rows = np.arange(8)
        self.assertFalse(np.any(chosen == rows))
        self.assertFalse(np.any(chosen == rows + 8))

  def test_single_pair_and_zero_vectors_are_finite(self):
    loss_fn = paraphrase_margin_loss.ParaphraseMarginLoss()
    loss, _ = loss_fn(X1[:1], X2[:1])
    self.assertAllClose(loss, 0.0)  # No negative: nothing to compare.
    e1 = tf.Variable(np.zeros([3, 3], np.float32))  # Empty phrases.
    with tf.GradientTape() as tape:
      loss, _ = loss_fn(e1, X2)
    grad = tape.gradient(loss, e1)
    self.assertTrue(np.isfinite(loss.numpy()))
    self.assertTrue(np.all(np.isfinite(grad.numpy())))
    # cos = 0 with the zero vector: hinge 0.4 - 0 + 0 on side 1.
    self.assertGreater(float(loss), 0.0)

  def test_config_round_trip_and_bad_sampling(self):
    loss_fn = paraphrase_margin_loss.ParaphraseMarginLoss(0.3, "mix", 0.7, 5)
    again = paraphrase_margin_loss.ParaphraseMarginLoss.from_config(
        loss_fn.get_config())
    self.assertEqual(again.get_config(), loss_fn.get_config())
    with self.assertRaises(ValueError):
      paraphrase_margin_loss.ParaphraseMarginLoss(sampling="hard")


if __name__ == "__main__":
  tf.test.main()
