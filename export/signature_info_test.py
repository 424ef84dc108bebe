"""Tests for export.signature_info."""

import os

import numpy as np
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

  def test_check_inputs_gives_one_clear_error_per_mistake(self):
    info = signature_info.read_signature(self.path)
    ok = signature_info.check_inputs(
        info, {"sentences_a": ["x", b"\xff"],
               "sentences_b": np.array(["y", "z"])})
    self.assertEqual(ok, {"sentences_a": ["x", b"\xff"],
                          "sentences_b": ["y", "z"]})
    cases = [
        ({"sentences_a": ["x"]}, r"missing \['sentences_b'\]"),
        ({"sentences_a": ["x"], "sentences_b": ["y"], "extra": []},
         r"unknown \['extra'\]"),
        ({"sentences_a": ["x", "y"], "sentences_b": ["y"]},
         "one batch size"),
        ({"sentences_a": "x", "sentences_b": ["y"]},
         "sentences_a must be a 1-D batch of strings, got a single str"),
        ({"sentences_a": [["x"]], "sentences_b": ["y"]},
         r"sentences_a\[0\] is a list .*not nested"),
        ({"sentences_a": tf.constant([["x"]]), "sentences_b": ["y"]},
         r"rank 2 \(shape \[1, 1\]\)"),
        ({"sentences_a": tf.constant([1.0]), "sentences_b": ["y"]},
         "must hold strings .* float32"),
        ({"sentences_a": [1], "sentences_b": ["y"]},
         r"sentences_a\[0\] is a int 1, not a str or bytes"),
        ({"sentences_a": None, "sentences_b": ["y"]}, "got NoneType"),
        (["x", "y"], "must be a dict"),
    ]
    for inputs, message in cases:
      with self.subTest(message=message):
        with self.assertRaisesRegex(signature_info.InputError, message):
          signature_info.check_inputs(info, inputs)
    # An InputError is a UserError (exit 2 through common.cli) and a
    # TypeError (for callers that catch that).
    self.assertTrue(issubclass(signature_info.InputError, errors.UserError))
    self.assertTrue(issubclass(signature_info.InputError, TypeError))

  def test_sentence_batch_accepts_every_1d_string_form(self):
    for values in (["a", b"b"], ("a", "b"), np.array(["a", "b"]),
                   np.array([b"a", b"b"]), np.array(["a", "b"], object),
                   tf.constant(["a", "b"]), iter(["a", "b"]), []):
      with self.subTest(values=type(values).__name__):
        got = signature_info.sentence_batch(values)
        self.assertIsInstance(got, list)
        self.assertLen(got, 0 if isinstance(values, list) and not values
                       else 2)
    with self.assertRaisesRegex(signature_info.InputError,
                                r"rank 0 \(shape \[\]\)"):
      signature_info.sentence_batch(np.array("one sentence"))
    with self.assertRaisesRegex(signature_info.InputError,
                                "got a single bytes"):
      signature_info.sentence_batch(b"one sentence")

  def test_not_a_saved_model(self):
    with self.assertRaisesRegex(errors.UserError, "saved_model.pb"):
      signature_info.read_signature(self.get_temp_dir() + "/nothing")


if __name__ == "__main__":
  tf.test.main()
