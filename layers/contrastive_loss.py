"""The contrastive loss of siamese networks (Hadsell, Chopra, LeCun 2006)."""

from keras import ops


def contrastive_loss(labels, distances, margin=1.0):
  """Per-pair loss y·d² + (1 − y)·max(M − d, 0)².

  Nicosia and Moschitti, CIKM 2017, eq. 3: matching pairs are pulled
  together, non-matching pairs pushed apart until their distance reaches the
  margin M (the paper: 1).

  Args:
    labels: float or int `[...]` (or `[..., 1]`), 1 for a match, 0 otherwise.
    distances: float `[...]` (or `[..., 1]`), non-negative distances.
    margin: float M.

  Returns:
    float `[...]` per-pair losses (shape of `distances` with a trailing axis
    of size 1 dropped).
  """
  distances = ops.convert_to_tensor(distances)
  if len(distances.shape) and distances.shape[-1] == 1:
    distances = ops.squeeze(distances, axis=-1)
  labels = ops.cast(ops.reshape(labels, ops.shape(distances)),
                    distances.dtype)
  pushed = ops.square(ops.maximum(margin - distances, 0.0))
  return labels * ops.square(distances) + (1.0 - labels) * pushed

