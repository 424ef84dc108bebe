"""Keras layer: a multilayer perceptron with one sigmoid output."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="sentzoo")
class MLPHead(keras.layers.Layer):
  """Hidden dense layers, then one unit: a match probability (or its logit).

  The MLP of the hybrid siamese network (Nicosia and Moschitti, CIKM 2017,
  §3.1, §4.1): two hidden layers of 200 on c = [f(s1); f(s2); d(s1, s2)],
  and an output "probability of a match". The paper does not name the
  hidden activation; ReLU is the default here.

  Args:
    hidden_units: sequence of int. Sizes of the hidden layers (the paper:
      200, 200).
    activation: activation of the hidden layers (default "relu").
    return_logits: bool. Return the pre-sigmoid logit instead of the
      probability (for a numerically stable logistic loss).
    **kwargs: passed to `keras.layers.Layer`.

  Input shape:
    Float tensor `[..., features]`.

  Output shape:
    Float tensor `[..., 1]`: sigmoid probability, or logit.
  """

  def __init__(self, hidden_units=(200, 200), activation="relu",
               return_logits=False, **kwargs):
    super().__init__(**kwargs)
    self.hidden_units = [int(u) for u in hidden_units]
    self.activation = keras.activations.get(activation)
    self.return_logits = bool(return_logits)
    # One attribute per layer: TensorFlow checkpoints do not follow lists
    # of Keras 3 layers.
    for i, u in enumerate(self.hidden_units):
      setattr(self, f"hidden_{i}", keras.layers.Dense(
          u, activation=self.activation, name=f"hidden_{i}"))
    self.output_layer = keras.layers.Dense(1, name="logit")

  @property
  def hidden(self):
    return [getattr(self, f"hidden_{i}")
            for i in range(len(self.hidden_units))]

  def build(self, input_shape):
    shape = tuple(input_shape)
    for layer in self.hidden:
      layer.build(shape)
      shape = (*shape[:-1], layer.units)
    self.output_layer.build(shape)
    self.built = True

  def call(self, inputs):
    x = inputs
    for layer in self.hidden:
      x = layer(x)
    logits = self.output_layer(x)
    return logits if self.return_logits else ops.sigmoid(logits)

  def compute_output_shape(self, input_shape):
    return (*tuple(input_shape)[:-1], 1)

  def get_config(self):
    config = super().get_config()
    config.update({
        "hidden_units": list(self.hidden_units),
        "activation": keras.activations.serialize(self.activation),
        "return_logits": self.return_logits,
    })
    return config
