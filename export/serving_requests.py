"""TF Serving requests: PredictRequest protos and the warm-up file.

TF Serving replays `assets.extra/tf_serving_warmup_requests` (a TFRecord file
of PredictionLog protos) when it loads a version, so the first real request
does not pay for graph initialisation. The same helpers build the
PredictRequest a gRPC client sends.
"""

import os

import tensorflow as tf
from tensorflow_serving.apis import predict_pb2
from tensorflow_serving.apis import prediction_log_pb2

from sentzoo.export import signature_info

WARMUP_FILE = os.path.join("assets.extra", "tf_serving_warmup_requests")
# One short batch and one empty string per warm-up request: the empty string
# exercises the zero-token path of the graph too.
WARMUP_SENTENCES = ("A warm-up request for the model server .", "")


def predict_request(inputs, model_name="model",
                    signature_name="serving_default"):
  """A PredictRequest with each input a 1-D tf.string tensor.

  Args:
    inputs: dict input key -> list of str (sent as UTF-8) or bytes (sent
      as they are, valid UTF-8 or not); any 1-D batch of strings that
      `signature_info.sentence_batch` takes.

  Raises:
    signature_info.InputError: an input that is not a 1-D batch of strings
      (a single string, a nested list, numbers, ...).
  """
  request = predict_pb2.PredictRequest()
  request.model_spec.name = model_name
  request.model_spec.signature_name = signature_name
  for key, values in inputs.items():
    values = [v.encode("utf-8") if isinstance(v, str) else v
              for v in signature_info.sentence_batch(values, key)]
    request.inputs[key].CopyFrom(
        tf.make_tensor_proto(values, dtype=tf.string, shape=[len(values)]))
  return request


def warmup_inputs(serve_function):
  """Example inputs for every string input of a `serve` tf.function."""
  inputs = {}
  for spec in serve_function.input_signature:
    if spec.dtype != tf.string:
      raise ValueError(f"warm-up requests only know string inputs, not {spec}")
    inputs[spec.name] = list(WARMUP_SENTENCES)
  return inputs


def write_warmup_file(saved_model_dir, inputs, model_name="model"):
  """Writes the warm-up file for `inputs` (dict key -> list of strings)."""
  path = os.path.join(saved_model_dir, WARMUP_FILE)
  os.makedirs(os.path.dirname(path), exist_ok=True)
  log = prediction_log_pb2.PredictionLog(
      predict_log=prediction_log_pb2.PredictLog(
          request=predict_request(inputs, model_name)))
  with tf.io.TFRecordWriter(path) as writer:
    writer.write(log.SerializeToString())
  return path
