"""Hybrid siamese + MLP sentence matcher (Nicosia and Moschitti, CIKM 2017)."""

import keras
from keras import ops
import tensorflow as tf

from sentzoo.layers import cnn_encoder
from sentzoo.layers import contrastive_loss
from sentzoo.layers import euclidean_distance
from sentzoo.layers import gru_encoder
from sentzoo.layers import lstm_encoder
from sentzoo.layers import mlp_head
from sentzoo.layers import shared_embedding
from sentzoo.layers import stacked_bigru_encoder

ENCODERS = ("lstm", "gru", "cnn", "bigru")
MODES = ("contrastive", "logistic", "joint")


def make_encoder(encoder, units=200, cnn_filters=100,
                 cnn_kernel_sizes=(1, 3, 5), bigru_layers=2):
  """The sentence encoder layer named `encoder` (one of `ENCODERS`)."""
  if encoder == "lstm":
    return lstm_encoder.LSTMEncoder(units, name="encoder")
  if encoder == "gru":
    return gru_encoder.GRUEncoder(units, name="encoder")
  if encoder == "cnn":
    return cnn_encoder.CNNEncoder(cnn_filters, cnn_kernel_sizes,
                                  name="encoder")
  if encoder == "bigru":
    return stacked_bigru_encoder.StackedBiGRUEncoder(
        units, bigru_layers, name="encoder")
  raise ValueError(f"unknown encoder {encoder!r}; one of {ENCODERS}")


@keras.saving.register_keras_serializable(package="sentzoo")
class HybridSiamese(keras.Model):
  """Siamese encoder f, Euclidean distance d, and an MLP on [f1; f2; d].

  Nicosia and Moschitti, "Accurate Sentence Matching with Hybrid Siamese
  Networks", CIKM 2017: both sentences go through the same embedding table
  and encoder (shared weights); d(s1, s2) = ||f(s1) - f(s2)||_2 (eq. 1); the
  MLP (2 x 200, sigmoid) takes c = [f(s1); f(s2); d] and outputs the match
  probability. Training minimises the contrastive loss on d (eq. 3), the
  logistic loss on the MLP output (eq. 4), or λc·Lc + Ll (eq. 5); see
  `loss` and `predict_match`.

  Masking: id 0 is padding; padded positions never change an encoding, and
  a sentence with no known word encodes to the zero vector (its distance to
  another empty sentence is 0, with finite gradients).

  Args:
    vocab_size: rows of the embedding table, including padding row 0.
    embedding_dim: word vector size (the paper: 300, GloVe).
    encoder: one of "lstm", "gru", "cnn", "bigru".
    encoder_units: LSTM/GRU units, or BiGRU units per direction (200).
    cnn_filters, cnn_kernel_sizes: the CNN's groups (100 of widths 1, 3, 5).
    bigru_layers: stacked BiGRU layers (2).
    mlp_units: hidden layer sizes of the MLP (200, 200).
    mlp_activation: their activation (the paper does not say; "relu").
    embeddings_initializer: for the table before pretrained vectors are set.

  Call:
    inputs: a pair (ids_a, ids_b) of int [batch, length] (lengths may differ).
    Returns a dict: "encoding_a", "encoding_b" float32 [batch, dim];
    "distance" [batch]; "logits" and "probability" [batch].
  """

  def __init__(self, vocab_size, embedding_dim=300, encoder="gru",
               encoder_units=200, cnn_filters=100, cnn_kernel_sizes=(1, 3, 5),
               bigru_layers=2, mlp_units=(200, 200), mlp_activation="relu",
               embeddings_initializer=None, **kwargs):
    super().__init__(**kwargs)
    if encoder not in ENCODERS:
      raise ValueError(f"unknown encoder {encoder!r}; one of {ENCODERS}")
    self.vocab_size = int(vocab_size)
    self.embedding_dim = int(embedding_dim)
    self.encoder_name = encoder
    self.encoder_units = int(encoder_units)
    self.cnn_filters = int(cnn_filters)
    self.cnn_kernel_sizes = [int(k) for k in cnn_kernel_sizes]
    self.bigru_layers = int(bigru_layers)
    self.mlp_units = [int(u) for u in mlp_units]
    self.mlp_activation = mlp_activation
    self.embeddings_initializer = keras.initializers.get(
        embeddings_initializer
        or keras.initializers.RandomUniform(-0.25, 0.25))
    self.embedding = shared_embedding.SharedEmbedding(
        self.vocab_size, self.embedding_dim,
        embeddings_initializer=self.embeddings_initializer,
        name="word_embeddings")
    self.encoder = make_encoder(encoder, self.encoder_units, self.cnn_filters,
                                self.cnn_kernel_sizes, self.bigru_layers)
    self.distance = euclidean_distance.EuclideanDistance(name="distance")
    self.mlp = mlp_head.MLPHead(self.mlp_units, mlp_activation,
                                return_logits=True, name="mlp")

  @property
  def encoding_dim(self):
    return self.encoder.compute_output_shape((None, None,
                                              self.embedding_dim))[-1]

  def build(self, input_shape=None):
    self.embedding.build()
    self.encoder.build((None, None, self.embedding_dim))
    self.mlp.build((None, 2 * self.encoding_dim + 1))
    self.built = True

  def encode(self, ids, training=False):
    """int [batch, length] -> float32 [batch, encoding_dim]."""
    vectors = self.embedding(ids)
    return self.encoder(vectors, mask=self.embedding.compute_mask(ids),
                        training=training)

  def call(self, inputs, training=False):
    ids_a, ids_b = inputs
    a = self.encode(ids_a, training=training)
    b = self.encode(ids_b, training=training)
    distance = self.distance([a, b])
    logits = self.mlp(ops.concatenate([a, b, distance], axis=-1))[:, 0]
    return {"encoding_a": a, "encoding_b": b, "distance": distance[:, 0],
            "logits": logits, "probability": ops.sigmoid(logits)}

  def count_params_without_embeddings(self):
    """Trainable parameters of the encoder and MLP (the paper's ~300k)."""
    return sum(int(ops.size(w)) for w in self.trainable_weights
               if w is not self.embedding.embeddings)

  def get_config(self):
    config = super().get_config()
    config.update({
        "vocab_size": self.vocab_size,
        "embedding_dim": self.embedding_dim,
        "encoder": self.encoder_name,
        "encoder_units": self.encoder_units,
        "cnn_filters": self.cnn_filters,
        "cnn_kernel_sizes": list(self.cnn_kernel_sizes),
        "bigru_layers": self.bigru_layers,
        "mlp_units": list(self.mlp_units),
        "mlp_activation": self.mlp_activation,
        "embeddings_initializer": keras.initializers.serialize(
            self.embeddings_initializer),
    })
    return config


def loss(outputs, labels, mode, margin=1.0, contrastive_weight=1.0):
  """The training loss of `mode` (mean over the batch).

  contrastive: Lc (eq. 3); logistic: Ll (eq. 4, binary cross-entropy on the
  MLP's logits); joint: contrastive_weight · Lc + Ll (eq. 5).

  Returns:
    (total, contrastive, logistic) scalars.
  """
  if mode not in MODES:
    raise ValueError(f"unknown mode {mode!r}; one of {MODES}")
  labels = ops.cast(labels, "float32")
  lc = ops.mean(contrastive_loss.contrastive_loss(
      labels, outputs["distance"], margin))
  ll = ops.mean(ops.binary_crossentropy(labels, outputs["logits"],
                                        from_logits=True))
  if mode == "contrastive":
    total = lc
  elif mode == "logistic":
    total = ll
  else:
    total = contrastive_weight * lc + ll
  return total, lc, ll


def predict_match(outputs, mode, threshold=0.5):
  """bool [batch]: a match by distance < threshold (contrastive mode) or by
  probability > 0.5 (logistic and joint, the MLP's prediction)."""
  if mode == "contrastive":
    return outputs["distance"] < threshold
  return outputs["probability"] > 0.5


def pad_ids(ids, max_length, pad_multiple=10):
  """Ragged int [batch, (ids)] -> dense [batch, L], 0-padded (TensorFlow).

  L is the longest row rounded up to a multiple of `pad_multiple` (at least
  `pad_multiple`, at most `max_length`), so an XLA-compiled step sees few
  lengths; `pad_multiple=0` pads to `max_length` (the paper's fixed 50).
  Rows are truncated to `max_length`. Padding never changes an encoding.
  Core TensorFlow ops only: the exports run it too.
  """
  ids = ids[:, :max_length]
  if pad_multiple:
    longest = tf.cast(tf.reduce_max(ids.row_lengths()), tf.int32)
    steps = tf.maximum(1, (longest + pad_multiple - 1) // pad_multiple)
    length = tf.minimum(steps * pad_multiple, max_length)
  else:
    length = tf.constant(max_length, tf.int32)
  dense = ids.to_tensor(0)
  dense = dense[:, :length]
  return tf.pad(dense, [[0, 0], [0, length - tf.shape(dense)[1]]])
