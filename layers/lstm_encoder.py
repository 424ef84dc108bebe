"""Keras layer: the last state of a left-to-right LSTM over the real tokens."""

import keras

from sentzoo.layers import last_state_rnn_encoder


@keras.saving.register_keras_serializable(package="sentzoo")
class LSTMEncoder(last_state_rnn_encoder.LastStateRNNEncoder):
  """Sentence encoder: an LSTM read left to right; its last state encodes it.

  The LSTM encoder of the hybrid siamese network (Nicosia and Moschitti,
  "Accurate Sentence Matching with Hybrid Siamese Networks", CIKM 2017,
  §4.1): 200 units, "the last state is used to encode the sentence".

  Masking: with a mask, masked steps leave the state unchanged (Keras RNN
  masking), so the encoding is the state after the last real token, whatever
  the amount of padding after it. A row with no real token encodes to the
  zero vector (the initial state). Masked positions' values are never read.

  Args:
    units: int. State size (the paper: 200).
    **kwargs: passed to `keras.layers.Layer` (`name`, `dtype`, ...).

  Input shape:
    Float tensor `[batch, length, dim]` and optionally a boolean mask
    `[batch, length]` (True = real token).

  Output shape:
    Float tensor `[batch, units]`; no mask.
  """

  rnn_class = keras.layers.LSTM
  rnn_name = "lstm"
