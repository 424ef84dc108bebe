"""How well an encoder does Siamese CBOW's own task on held-out text.

The training objective asks that a sentence be closer (by cosine) to the
sentences next to it than to random ones. This measures exactly that on
groups the model never trained on: over every (neighbour, random sentence)
pair of every group, the fraction where the neighbour is ranked higher. 0.5 is
chance. A model that gains here but loses on STS has learned its objective,
just not sentence meaning; one that does not gain has not learned at all.
"""

import math

import numpy as np


def neighbour_ranking_accuracy(encode_fn, groups, num_positives=2,
                               batch_size=4096, length=None):
  """Fraction of (neighbour, random) pairs ranked correctly by cosine.

  Args:
    encode_fn: int32 ids [n, length] -> float [n, d] sentence vectors.
    groups: int ids [groups, 1 + num_positives + negatives, length]: the
      centre, its neighbours, then random sentences (the layout of
      `inputs.siamese_cbow_data`); or a `tf.RaggedTensor` [groups, members,
      (ids)], padded with 0 to `length` ids a chunk at a time.
    num_positives: neighbours per group.
    batch_size: sentences encoded per call.
    length: the padded length of a ragged `groups`' sentences (default: its
      longest).

  Returns:
    float in [0, 1]; a tie (e.g. a zero vector) counts one half. NaN if there
    are no groups.
  """
  ragged = hasattr(groups, "to_tensor")
  if ragged:
    num_groups, members, longest = (int(n) for n in groups.bounding_shape())
    length = length or longest
  else:
    groups = np.asarray(groups)
    num_groups, members, length = groups.shape if len(groups) else (0, 0, 0)
  if not num_groups:
    return float("nan")
  # A chunk of groups at a time (the float64 vectors of all of them, ~470 MB
  # with copies for the trainer's 5,000 groups, were its peak memory). A
  # chunk's sentences are whole encode batches, so each sentence is encoded
  # in the batch it would have in one pass over all of them.
  chunk = batch_size // math.gcd(batch_size, members)
  wins = 0.0
  for start in range(0, num_groups, chunk):
    part = groups[start:start + chunk]
    if ragged:
      part = part.to_tensor(shape=[None, members, length]).numpy()
    flat = part.reshape(-1, length)
    vectors = np.concatenate([
        np.asarray(encode_fn(flat[i:i + batch_size]), np.float64)
        for i in range(0, len(flat), batch_size)])
    vectors = vectors.reshape(len(part), members, -1)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    unit = np.divide(vectors, norms, out=np.zeros_like(vectors),
                     where=norms > 0)
    cosines = np.einsum("gd,gkd->gk", unit[:, 0], unit[:, 1:])
    positives = cosines[:, :num_positives, None]
    negatives = cosines[:, None, num_positives:]
    # Halves and ones: the sum is exact, and so the mean.
    wins += float(((positives > negatives)
                   + 0.5 * (positives == negatives)).sum())
  pairs = num_groups * num_positives * (members - 1 - num_positives)
  return wins / pairs if pairs else float("nan")
