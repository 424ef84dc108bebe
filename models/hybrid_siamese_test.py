"""Tests for the HybridSiamese model, its losses and decisions."""

import json

import keras
import numpy as np
import tensorflow as tf

from sentzoo.models import hybrid_siamese


def _ids():
  a = np.array([[3, 4, 5, 0, 0], [6, 0, 0, 0, 0], [0, 0, 0, 0, 0]], np.int32)
  b = np.array([[3, 4, 0, 0, 0], [7, 8, 9, 2, 0], [0, 0, 0, 0, 0]], np.int32)
  return a, b


class HybridSiameseTest(tf.test.TestCase):

  def _model(self, encoder, **kwargs):
    keras.utils.set_random_seed(0)
    return hybrid_siamese.HybridSiamese(12, 6, encoder, encoder_units=4,
                                        cnn_filters=3, mlp_units=(5, 5),
                                        **kwargs)

  def test_outputs_padding_and_empty_rows(self):
    a, b = _ids()
    for encoder, dim in (("lstm", 4), ("gru", 4), ("cnn", 9), ("bigru", 8)):
      model = self._model(encoder)
      out = model((a, b))
      self.assertEqual(out["encoding_a"].shape, (3, dim), encoder)
      for key in ("distance", "logits", "probability"):
        self.assertEqual(out[key].shape, (3,), (encoder, key))
      self.assertAllClose(
          out["distance"],
          np.linalg.norm(out["encoding_a"] - out["encoding_b"], axis=-1),
          atol=1e-5)
      self.assertAllClose(out["probability"], tf.sigmoid(out["logits"]))
      # Two empty sentences: zero encodings, distance exactly 0.
      self.assertAllEqual(out["encoding_a"][2], np.zeros(dim))
      self.assertEqual(float(out["distance"][2]), 0.0)
      # More padding (and a different padded length) changes nothing.
      wide = (np.pad(a, [[0, 0], [0, 4]]), np.pad(b, [[0, 0], [0, 7]]))
      out_wide = model(wide)
      for key in ("encoding_a", "distance", "probability"):
        self.assertAllClose(out_wide[key], out[key], atol=1e-5)
      # Gradients are finite with empty rows, in every mode.
      with tf.GradientTape() as tape:
        total, _, _ = hybrid_siamese.loss(model((a, b), training=True),
                                          tf.constant([1, 0, 1]), "joint")
      for grad in tape.gradient(total, model.trainable_variables):
        self.assertTrue(np.all(np.isfinite(tf.convert_to_tensor(grad))))

  def test_get_config_round_trip(self):
    a, b = _ids()
    model = self._model("cnn", mlp_activation="tanh")
    out = model((a, b))
    config = json.loads(json.dumps(model.get_config()))
    revived = hybrid_siamese.HybridSiamese.from_config(config)
    revived.build()
    revived.set_weights(model.get_weights())
    self.assertEqual(revived.get_config(), model.get_config())
    self.assertAllClose(revived((a, b))["probability"], out["probability"])
    restored = keras.saving.deserialize_keras_object(json.loads(json.dumps(
        keras.saving.serialize_keras_object(model))))
    self.assertIsInstance(restored, hybrid_siamese.HybridSiamese)
    self.assertEqual(restored.encoder_name, "cnn")

  def test_paper_sized_parameter_counts(self):
    mlp = lambda dim: (2 * dim + 1) * 200 + 200 + 200 * 200 + 200 + 201
    expected = {
        "lstm": 4 * (300 * 200 + 200 * 200 + 200) + mlp(200),
        "gru": 3 * (300 * 200 + 200 * 200 + 2 * 200) + mlp(200),
        "cnn": 100 * 300 * (1 + 3 + 5) + 300 + mlp(300),
        "bigru": 2 * 3 * (300 * 200 + 200 * 200 + 400)
                 + 2 * 3 * (400 * 200 + 200 * 200 + 400) + mlp(400),
    }
    for encoder, count in expected.items():
      model = hybrid_siamese.HybridSiamese(10, 300, encoder)
      model.build()
      self.assertEqual(model.count_params_without_embeddings(), count,
                       encoder)

  def test_losses_and_decisions(self):
    outputs = {"distance": tf.constant([0.2, 0.7, 1.5]),
               "logits": tf.constant([2.0, -1.0, 0.0]),
               "probability": tf.sigmoid(tf.constant([2.0, -1.0, 0.0]))}
    labels = tf.constant([1, 0, 0])
    lc = np.mean([0.2**2, 0.3**2, 0.0])
    ll = np.mean([np.log1p(np.exp(-2.0)), np.log1p(np.exp(-1.0)),
                  np.log(2.0)])
    total, c, l = hybrid_siamese.loss(outputs, labels, "joint", 1.0, 0.01)
    self.assertAllClose([c, l, total], [lc, ll, 0.01 * lc + ll], rtol=1e-5)
    self.assertAllClose(hybrid_siamese.loss(outputs, labels,
                                            "contrastive")[0], lc)
    self.assertAllClose(hybrid_siamese.loss(outputs, labels, "logistic")[0],
                        ll, rtol=1e-5)
    self.assertAllEqual(
        hybrid_siamese.predict_match(outputs, "contrastive", 0.5),
        [True, False, False])
    self.assertAllEqual(hybrid_siamese.predict_match(outputs, "joint"),
                        [True, False, False])
    with self.assertRaises(ValueError):
      hybrid_siamese.loss(outputs, labels, "both")

  def test_pad_ids(self):
    ids = tf.ragged.constant([[1, 2, 3], [4], []], tf.int32)
    self.assertAllEqual(hybrid_siamese.pad_ids(ids, 2, 1),
                        [[1, 2], [4, 0], [0, 0]])
    self.assertEqual(hybrid_siamese.pad_ids(ids, 50, 4).shape, (3, 4))
    empty = tf.ragged.constant([[], []], tf.int32)
    self.assertEqual(hybrid_siamese.pad_ids(empty, 50, 1).shape, (2, 1))


if __name__ == "__main__":
  tf.test.main()
