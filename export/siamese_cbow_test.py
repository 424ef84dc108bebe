"""Serving contract of a Siamese CBOW export, in every consumer."""

import os

import numpy as np
import tensorflow as tf

from sentzoo.export import export_model
from sentzoo.export import siamese_cbow as siamese_cbow_export
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import siamese_cbow
from sentzoo.tests import export_test_case
from sentzoo.tests import model_dir_fixtures


class SiameseCbowExportTest(export_test_case.ExportTestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), cls.__name__)
    cls.model_dir = os.path.join(root, "model")
    cls.table = model_dir_fixtures.make_siamese_cbow_model_dir(cls.model_dir)
    cls.path = export_model.export(cls.model_dir, os.path.join(root, "export"))

  def test_serving_contract(self):
    in_memory = export_model.build_module(self.model_dir)
    self.assertIsInstance(
        in_memory, siamese_cbow_export.averaging_encoder.AveragingSentenceEncoder)
    self.run_export_test(
        self.path, lambda sentences: {"embeddings": in_memory(sentences)},
        {"sentences": model_dir_fixtures.SENTENCES})

  def test_served_values_are_word_averages(self):
    served = tf.saved_model.load(self.path).signatures["serving_default"](
        sentences=tf.constant(model_dir_fixtures.SENTENCES))["embeddings"]
    expected = np.stack([
        model_dir_fixtures.siamese_cbow_reference(self.table, s)
        for s in model_dir_fixtures.SENTENCES])
    self.assertAllClose(served, expected, atol=1e-6)

  def test_live_encoder_shares_the_training_tables(self):
    # The trainer's evaluation encoder: the model's word vectors and the
    # training input's lookup table, not copies of them.
    vocabulary = vocabulary_lib.Vocabulary(["the", "cat", "sat"], [3, 2, 1])
    tokenizer = tokenizer_lib.Tokenizer()
    model = siamese_cbow.SiameseCBOW(vocabulary.size_with_padding, 4)
    model.build()
    training_ids = text_to_ids_lib.TextToIds(vocabulary, tokenizer,
                                             max_length=1)
    encoder = siamese_cbow_export.make_encoder(
        vocabulary, tokenizer, model, {}, live=True,
        lookup_table=training_ids.table)
    self.assertIs(encoder.text_to_ids.table, training_ids.table)
    table = model.embedding.embeddings.numpy()
    # Every word is averaged (no training truncation), and training's
    # updates show.
    self.assertAllClose(encoder(tf.constant(["the cat", "dog"])),
                        [(table[1] + table[2]) / 2, np.zeros(4)])
    model.embedding.embeddings.assign_add(tf.ones_like(table))
    self.assertAllClose(encoder(tf.constant(["sat"])), [table[3] + 1])

  def test_fine_tunes_in_tf_keras_and_keras3(self):
    self.run_finetune_test(self.path, ["the cat sat", "on the mat", "café 猫",
                                       "the mat"])

  def test_int8_export_serves_within_tolerance_and_is_inference_only(self):
    # The fixture's rows are N(0, 1) of dim 4: int8 errs by at most
    # max|row| / 254 (< 1.5e-2) per value.
    path = export_model.export(
        self.model_dir, os.path.join(self.get_temp_dir(), "int8"),
        evaluate=False, quantize="int8")
    in_memory = export_model.build_module(self.model_dir, quantize="int8")
    self.run_export_test(
        path, lambda sentences: {"embeddings": in_memory(sentences)},
        {"sentences": model_dir_fixtures.SENTENCES}, inference_only=True)
    served = tf.saved_model.load(path)(
        tf.constant(model_dir_fixtures.SENTENCES))
    float32 = tf.saved_model.load(self.path)(
        tf.constant(model_dir_fixtures.SENTENCES))
    self.assertAllClose(served, float32, atol=1.5e-2, rtol=0)
    loaded = tf.saved_model.load(path)
    self.assertFalse(hasattr(loaded, "embeddings"))
    self.assertEqual(loaded.embeddings_int8.dtype, tf.int8)
    self.assertEmpty(loaded.trainable_variables)


if __name__ == "__main__":
  tf.test.main()
