"""The CHARAGRAM / PARAGRAM margin loss with in-batch MAX / MIX negatives.

Wieting, Bansal, Gimpel, Livescu (EMNLP 2016, supplement section 1; after
Wieting et al., TACL 2015 and ICLR 2016): for a batch of paraphrase pairs
<x1_i, x2_i>,

  loss_i = max(0, delta - cos(g(x1_i), g(x2_i)) + cos(g(x1_i), g(t1_i)))
         + max(0, delta - cos(g(x1_i), g(x2_i)) + cos(g(x2_i), g(t2_i)))

where the negatives t1_i, t2_i are phrases of the same batch (any of the 2B
phrases except x1_i and x2_i themselves): MAX takes the most similar one under
the current model, MIX takes the MAX one with probability 1/2 and a uniformly
random one otherwise (the random choice is drawn anew for each phrase). The
batch loss is the mean of loss_i; L2 regularisation is added by the trainer.

Exclusion is by position (the phrase's own column and its partner's column
get -inf before the argmax), not by setting a cosine distance to 1, which the
reference code does and which fails because cosine distance reaches 2.
"""

import tensorflow as tf

SAMPLINGS = ("max", "mix", "rand")


def unit_rows(x):
  """Rows scaled to norm 1; zero rows stay zero (no NaN value or gradient)."""
  return tf.math.l2_normalize(x, axis=-1, epsilon=1e-12)


class ParaphraseMarginLoss:
  """Callable (embeddings1 [B, d], embeddings2 [B, d]) -> (loss, details).

  Args:
    margin: delta (the paper: 0.4).
    sampling: "max", "mix" or "rand" (random only; not in the paper's table).
    mix_probability: probability of the MAX negative under "mix".
    seed: op seed of the random draws (None: global seed only).

  Call:
    embeddings1, embeddings2: float [B, d], row i of each is a pair.
    coin: optional float [2, B] in [0, 1): MAX is taken where
      coin < mix_probability (drawn if None; only read under "mix").
    random_scores: optional float [2, B, 2B]: the random negative of row i is
      the valid column with the highest score (drawn if None).
    Returns (scalar loss, dict with "negatives1", "negatives2" (int [B],
    indices into concat(embeddings1, embeddings2)), "positive_cosine",
    "negative_cosine1", "negative_cosine2", "per_pair_loss" ([B]: loss_i,
    whose mean is the loss)). With B = 1 there is no negative and the loss
    is 0.

  Several replicas (`tf.distribute`): call it on every replica with the
  all-gathered embeddings of the global batch and sum the replica's own rows
  of "per_pair_loss" / global batch (`trainers.charagram_step.
  make_train_step`): negatives then come from the whole global batch, as
  on one device.
  """

  def __init__(self, margin=0.4, sampling="max", mix_probability=0.5,
               seed=None):
    if sampling not in SAMPLINGS:
      raise ValueError(f"sampling must be one of {SAMPLINGS}, got "
                       f"{sampling!r}")
    self.margin = float(margin)
    self.sampling = sampling
    self.mix_probability = float(mix_probability)
    self.seed = seed

  def _negatives(self, similarities, valid, coin, random_scores):
    """Indices [B] of the chosen negatives of one side."""
    very_low = tf.constant(-1e9, similarities.dtype)
    hardest = tf.argmax(tf.where(valid, similarities, very_low), axis=1,
                        output_type=tf.int32)
    if self.sampling == "max":
      return hardest
    if random_scores is None:
      random_scores = tf.random.uniform(tf.shape(similarities), seed=self.seed)
    random_choice = tf.argmax(
        tf.where(valid, random_scores, tf.cast(-1.0, random_scores.dtype)),
        axis=1, output_type=tf.int32)
    if self.sampling == "rand":
      return random_choice
    if coin is None:
      coin = tf.random.uniform(tf.shape(hardest), seed=self.seed)
    return tf.where(coin < self.mix_probability, hardest, random_choice)

  def __call__(self, embeddings1, embeddings2, coin=None, random_scores=None):
    u1 = unit_rows(tf.convert_to_tensor(embeddings1))
    u2 = unit_rows(tf.convert_to_tensor(embeddings2))
    batch = tf.shape(u1)[0]
    candidates = tf.concat([u1, u2], axis=0)  # [2B, d]
    columns = tf.range(2 * batch)[None, :]
    rows = tf.range(batch)[:, None]
    # Row i may not pick itself (column i or B + i) nor its partner.
    valid = tf.logical_and(tf.not_equal(columns, rows),
                           tf.not_equal(columns, rows + batch))
    has_negative = tf.reduce_any(valid, axis=1)
    positive = tf.reduce_sum(u1 * u2, axis=1)
    losses, details = [], {"positive_cosine": positive}
    for side, u in enumerate((u1, u2)):
      similarities = tf.matmul(u, candidates, transpose_b=True)  # [B, 2B]
      chosen = self._negatives(
          similarities, valid, None if coin is None else coin[side],
          None if random_scores is None else random_scores[side])
      negative = tf.gather(similarities, chosen, axis=1, batch_dims=1)
      hinge = tf.nn.relu(self.margin - positive + negative)
      losses.append(tf.where(has_negative, hinge, tf.zeros_like(hinge)))
      details[f"negatives{side + 1}"] = chosen
      details[f"negative_cosine{side + 1}"] = negative
    per_pair = losses[0] + losses[1]
    details["per_pair_loss"] = per_pair
    return tf.reduce_mean(per_pair), details

  def get_config(self):
    return {"margin": self.margin, "sampling": self.sampling,
            "mix_probability": self.mix_probability, "seed": self.seed}

  @classmethod
  def from_config(cls, config):
    return cls(**config)
