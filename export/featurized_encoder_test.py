"""Tests for export.featurized_encoder."""

import os

import numpy as np
import tensorflow as tf

from sentzoo.export import featurized_encoder
from sentzoo.inputs import char_ngrams
from sentzoo.models import charagram


class FeaturizedEncoderTest(tf.test.TestCase):

  def test_call_serve_save_and_reload(self):
    featurizer = char_ngrams.CharNgramFeaturizer((2, 3), num_buckets=31)
    model = charagram.Charagram(featurizer.num_ids, 5)
    with self.assertRaisesRegex(ValueError, "build the model"):
      featurized_encoder.FeaturizedEncoder(featurizer, model)
    model(featurizer(tf.constant(["x"])))
    encoder = featurized_encoder.FeaturizedEncoder(featurizer, model,
                                                   {"k": "v"})
    texts = tf.constant(["a cat", "", "dogs"])
    out = encoder(texts)
    self.assertEqual(out.shape, (3, 5))
    self.assertAllClose(out, model(featurizer(texts)))
    self.assertAllClose(encoder.serve(texts)["embeddings"], out)
    # The encoder wraps the live model: later weight changes are seen.
    model.ngram_embedding.bias.assign(np.ones(5, np.float32))
    self.assertAllClose(encoder(texts)[1], np.tanh(np.ones(5)))
    self.assertLen(encoder.trainable_variables, 2)
    path = os.path.join(self.get_temp_dir(), "enc")
    tf.saved_model.save(encoder, path, signatures={
        "serving_default": encoder.serve.get_concrete_function()})
    loaded = tf.saved_model.load(path)
    self.assertAllClose(loaded(texts), encoder(texts))
    self.assertLen(loaded.trainable_variables, 2)


if __name__ == "__main__":
  tf.test.main()
