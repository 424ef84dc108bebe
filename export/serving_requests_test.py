"""Tests for export.serving_requests: PredictRequests and warm-up files."""

import os

import tensorflow as tf
from tensorflow_serving.apis import predict_pb2

from sentzoo.export import serving_requests
from sentzoo.export import signature_info
from sentzoo.tests import serving_fixtures


class ServingRequestsTest(tf.test.TestCase):

  def test_predict_request_round_trip_keeps_bytes(self):
    values = ["a cat", "", b"\xff\xfe not utf-8", "猫"]
    request = serving_requests.predict_request(
        {"sentences": values}, model_name="m", signature_name="sig")
    parsed = predict_pb2.PredictRequest.FromString(
        request.SerializeToString())
    self.assertEqual(parsed.model_spec.name, "m")
    self.assertEqual(parsed.model_spec.signature_name, "sig")
    feeds = serving_fixtures.request_feeds(parsed)
    self.assertEqual(feeds["sentences"].dtype, tf.string)
    self.assertAllEqual(
        feeds["sentences"],
        [v if isinstance(v, bytes) else v.encode() for v in values])

  def test_empty_batch_stays_a_string_tensor(self):
    feeds = serving_fixtures.request_feeds(
        serving_requests.predict_request({"sentences": []}))
    self.assertEqual(feeds["sentences"].dtype, tf.string)
    self.assertEqual(feeds["sentences"].shape, (0,))

  def test_pair_request_has_both_inputs(self):
    request = serving_requests.predict_request(
        {"sentences_a": ["x", "y"], "sentences_b": ["z", "w"]})
    feeds = serving_fixtures.request_feeds(request)
    self.assertCountEqual(feeds, ["sentences_a", "sentences_b"])
    self.assertAllEqual(feeds["sentences_b"], [b"z", b"w"])

  def test_wrong_rank_or_dtype_is_a_clear_error(self):
    # A bare string would otherwise be sent as a batch of its characters.
    with self.assertRaisesRegex(signature_info.InputError,
                                "got a single str 'A man'"):
      serving_requests.predict_request({"sentences": "A man"})
    with self.assertRaisesRegex(signature_info.InputError, "not nested"):
      serving_requests.predict_request({"sentences": [["a", "b"]]})
    with self.assertRaisesRegex(signature_info.InputError, "int"):
      serving_requests.predict_request({"sentences": [1, 2]})
    # A request built by another client with a wrong tensor.
    request = serving_requests.predict_request({"sentences": ["a"]})
    request.inputs["sentences"].CopyFrom(
        tf.make_tensor_proto([[1.0, 2.0]], dtype=tf.float32))
    with self.assertRaisesRegex(signature_info.InputError,
                                r"'sentences' is float32 with shape \[1, 2\]; "
                                "the signature takes a 1-D tf.string"):
      serving_fixtures.request_feeds(request)

  def test_warmup_inputs_from_input_signature(self):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="a"),
                                  tf.TensorSpec([None], tf.string, name="b")])
    def serve(a, b):
      return {"n": tf.size(a) + tf.size(b)}

    inputs = serving_requests.warmup_inputs(serve)
    self.assertEqual(list(inputs), ["a", "b"])
    self.assertEqual(inputs["a"], list(serving_requests.WARMUP_SENTENCES))

  def test_warmup_inputs_reject_non_strings(self):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32,
                                                name="x")])
    def serve(x):
      return {"y": x}

    with self.assertRaisesRegex(ValueError, "string"):
      serving_requests.warmup_inputs(serve)

  def test_write_and_read_warmup_file(self):
    folder = self.get_temp_dir()
    path = serving_requests.write_warmup_file(
        folder, {"sentences": ["one", ""]}, model_name="enc")
    self.assertEqual(path, os.path.join(folder, serving_requests.WARMUP_FILE))
    requests = serving_fixtures.read_warmup_requests(folder)
    self.assertLen(requests, 1)
    self.assertEqual(requests[0].model_spec.name, "enc")
    self.assertAllEqual(
        serving_fixtures.request_feeds(requests[0])["sentences"],
        [b"one", b""])


if __name__ == "__main__":
  tf.test.main()
