"""The contrastive loss of siamese networks (Hadsell, Chopra, LeCun 2006)."""

import keras
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


@keras.saving.register_keras_serializable(package="sentzoo")
class ContrastiveLoss(keras.losses.Loss):
  """`contrastive_loss` as a Keras loss: `loss(y_true, distance)`.

  Args:
    margin: float M (the paper: 1.0).
    **kwargs: passed to `keras.losses.Loss` (`reduction`, `name`).
  """

  def __init__(self, margin=1.0, name="contrastive_loss", **kwargs):
    super().__init__(name=name, **kwargs)
    self.margin = float(margin)

  def call(self, y_true, y_pred):
    return contrastive_loss(y_true, y_pred, self.margin)

  def get_config(self):
    config = super().get_config()
    config.update({"margin": self.margin})
    return config
