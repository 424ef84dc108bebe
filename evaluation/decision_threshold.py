"""The distance threshold that maximises accuracy on a labelled split.

Nicosia and Moschitti (CIKM 2017, section 4.2) predict a match in their
contrastive-only setting when the Euclidean distance of the two sentence
vectors is below 0.5 ("value selected from the dev. set" on their data). On
other data and encoders the distances live on another scale, so the results
page also reports the threshold tuned on the dev split: the one with the
highest dev accuracy.
"""

import numpy as np


def accuracy_at(distances, labels, threshold):
  """Accuracy of predicting a match (label 1) where distance < threshold."""
  d = np.asarray(distances, np.float64).reshape([-1])
  y = np.asarray(labels).reshape([-1]) == 1
  if not d.size:
    return float("nan")
  return float(np.mean((d < threshold) == y))


def tune_threshold(distances, labels, prefer=0.5):
  """(threshold, accuracy): the threshold t maximising accuracy of d < t.

  Candidates are every value between two consecutive distinct distances
  (their midpoint), and one below the smallest and one above the largest
  distance (all non-matches, all matches). Among equally accurate
  candidates the one closest to `prefer` (the paper's 0.5) is taken.

  Args:
    distances: float [n].
    labels: [n], 1 = match.
    prefer: tie-break target.

  Returns:
    (threshold, accuracy) as floats; (prefer, nan) for n == 0.
  """
  d = np.asarray(distances, np.float64).reshape([-1])
  y = np.asarray(labels).reshape([-1]) == 1
  if d.shape != y.shape:
    raise ValueError(f"{d.size} distances vs {y.size} labels")
  if not d.size:
    return float(prefer), float("nan")
  order = np.argsort(d, kind="stable")
  d, y = d[order], y[order]
  values, first = np.unique(d, return_index=True)
  # Threshold just above values[k] makes the first `count[k]` pairs
  # matches: right = matches among them + non-matches after them.
  count = np.append(first[1:], d.size)  # pairs with distance <= values[k]
  cum_match = np.concatenate([[0], np.cumsum(y)])
  total_non_match = int(np.sum(~y))
  def right(k):  # k pairs predicted as matches
    return cum_match[k] + (total_non_match - (k - cum_match[k]))
  candidates = [values[0] - 1.0]
  correct = [right(0)]
  mids = np.append((values[:-1] + values[1:]) / 2, values[-1] + 1.0)
  for k, t in zip(count, mids):
    candidates.append(t)
    correct.append(right(int(k)))
  candidates = np.asarray(candidates)
  correct = np.asarray(correct)
  best = np.flatnonzero(correct == correct.max())
  pick = best[np.argmin(np.abs(candidates[best] - prefer))]
  return float(candidates[pick]), float(correct[pick] / d.size)
