"""What TF Serving does with a request, for the export tests: the warm-up
file's requests read back, and a PredictRequest turned into the feeds of a
loaded signature (so a test checks that a request reaches the model
intact)."""

import os

import tensorflow as tf
from tensorflow_serving.apis import prediction_log_pb2

from sentzoo.export import serving_requests
from sentzoo.export import signature_info


def request_feeds(request):
  """The signature keyword arguments a PredictRequest stands for.

  Raises:
    signature_info.InputError: an input that is not a 1-D tf.string tensor
      (what TF Serving would reject for this project's signatures).
  """
  feeds = {}
  for key, proto in request.inputs.items():
    if proto.dtype != tf.string.as_datatype_enum or len(
        proto.tensor_shape.dim) != 1:
      raise signature_info.InputError(
          f"request input {key!r} is {tf.dtypes.as_dtype(proto.dtype).name} "
          f"with shape {[d.size for d in proto.tensor_shape.dim]}; the "
          "signature takes a 1-D tf.string tensor [batch]")
    feeds[key] = tf.constant(tf.make_ndarray(proto))
  return feeds


def read_warmup_requests(saved_model_dir):
  """The PredictRequests of an export's warm-up file."""
  requests = []
  path = os.path.join(saved_model_dir, serving_requests.WARMUP_FILE)
  for record in tf.data.TFRecordDataset(path):
    log = prediction_log_pb2.PredictionLog()
    log.ParseFromString(record.numpy())
    requests.append(log.predict_log.request)
  return requests

