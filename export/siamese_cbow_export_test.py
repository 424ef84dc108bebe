"""Serving contract of a Siamese CBOW export, in every consumer."""

import os

import numpy as np
import tensorflow as tf

from sentzoo.export import export_model
from sentzoo.export import siamese_cbow_export
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

  def test_fine_tunes_in_tf_keras_and_keras3(self):
    self.run_finetune_test(self.path, ["the cat sat", "on the mat", "café 猫",
                                       "the mat"])


if __name__ == "__main__":
  tf.test.main()
