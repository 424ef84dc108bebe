"""Tests for export.signature_info."""

import os

import tensorflow as tf

from sentzoo.common import errors
from sentzoo.export import signature_info


class _Pair(tf.Module):

  @tf.function(input_signature=[
      tf.TensorSpec([None], tf.string, name="sentences_a"),
      tf.TensorSpec([None], tf.string, name="sentences_b")])
  def serve(self, sentences_a, sentences_b):
    same = tf.cast(tf.equal(sentences_a, sentences_b), tf.float32)
    return {"probability": same, "distance": tf.stack([same, same], 1)}


class SignatureInfoTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.path = os.path.join(self.get_temp_dir(), self.id())
    module = _Pair()
    tf.saved_model.save(module, self.path, signatures={
        "serving_default": module.serve.get_concrete_function()})

  def test_reads_inputs_outputs_and_method(self):
    info = signature_info.read_signature(self.path)
    self.assertEqual(info.method_name, signature_info.PREDICT_METHOD)
    self.assertEqual(sorted(info.inputs), ["sentences_a", "sentences_b"])
    self.assertEqual(info.inputs["sentences_a"].dtype, "DT_STRING")
    self.assertEqual(info.inputs["sentences_a"].shape, (-1,))
    self.assertEqual(info.inputs["sentences_a"].tensor_name,
                     "serving_default_sentences_a:0")
    self.assertEqual(info.outputs["distance"].dtype, "DT_FLOAT")
    self.assertEqual(info.outputs["distance"].shape, (-1, 2))
    self.assertRegex(info.outputs["probability"].tensor_name, r"^\w+:\d+$")

  def test_unknown_signature(self):
    with self.assertRaisesRegex(errors.UserError, "no signature 'predict'"):
      signature_info.read_signature(self.path, key="predict")

  def test_not_a_saved_model(self):
    with self.assertRaisesRegex(errors.UserError, "saved_model.pb"):
      signature_info.read_signature(self.get_temp_dir() + "/nothing")


if __name__ == "__main__":
  tf.test.main()
