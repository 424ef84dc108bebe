"""Keras layer: the last state of a left-to-right GRU over the real tokens."""

import keras

from sentzoo.layers import last_state_rnn_encoder


@keras.saving.register_keras_serializable(package="sentzoo")
class GRUEncoder(last_state_rnn_encoder.LastStateRNNEncoder):
  """Sentence encoder: a GRU read left to right; its last state encodes it.

  The GRU encoder of the hybrid siamese network (Nicosia and Moschitti,
  "Accurate Sentence Matching with Hybrid Siamese Networks", CIKM 2017,
  §4.1): 200 units, "the last state is used to encode the sentence".

  Masking, arguments and shapes: `LastStateRNNEncoder`.
  """

  rnn_class = keras.layers.GRU
  rnn_name = "gru"
