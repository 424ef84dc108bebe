"""One helper that checks every export against every consumer the same way.

`ExportTestCase.run_export_test(export_path, reference_fn, inputs)` checks a
SavedModel the way its users reach it:
- the `serving_default` SignatureDef: predict method, 1-D tf.string inputs,
  float32 outputs; served outputs `assertAllClose` to the in-memory model;
- `hub.load` (and the callable root, for sentence encoders);
- a `PredictRequest` (tensorflow-serving-api protos) serialised, parsed back
  and fed through the signature gives the same result;
- the TF Serving warm-up file parses and its requests run;
- bad input (empty batch, empty or whitespace strings, non-UTF-8 bytes, a
  10,000-token sentence, mixed scripts) gives finite outputs of the right
  shape;
- in a process that never imported tensorflow_text, every op of
  saved_model.pb is a core op (`python -m export.op_check`'s main: in this
  process when it imported no extension library, else in a fresh one);
- the C API loader TF Serving uses (`TF_LoadSessionFromSavedModel`), in a C
  program compiled here with gcc against the tensorflow wheel, runs the
  signature by the SignatureDef's tensor names and matches Python.
`run_finetune_test(export_path, sentences)` checks that a sentence encoder
fine-tunes inside tf_keras (`hub.KerasLayer(trainable=True)`) and Keras 3
(`keras.layers.TFSMLayer(trainable=True)`) models.
"""

import contextlib
import functools
import io
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf

from sentzoo.export import op_check
from sentzoo.export import serving_requests
from sentzoo.export import signature_info
from sentzoo.tests import serving_fixtures

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_C_SOURCE = os.path.join(_REPO_ROOT, "export", "c_loader", "run_signature.c")

BAD_INPUTS = {
    "empty batch": [],
    "empty string": [""],
    "whitespace": [" \t \n ", "\u3000\u00a0"],
    "non-UTF-8 bytes": [b"\xff\xfe caf\xe9 \x80", b"\xc3"],
    "10,000-token sentence": [" ".join(["the cat sat on the mat ."] * 1429)],
    "mixed scripts": ["The 猫 sat on the ковёр near القط , 🐈 !",
                      "ﬁ ﬂ Straße İstanbul ΣΊΣΥΦΟΣ"],
}


def _subprocess_env():
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(
      [_REPO_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                      if p])
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  return env


@functools.lru_cache(maxsize=None)
def compiled_c_loader():
  """Path of the C loader binary, built once per process; None if no gcc."""
  compiler = shutil.which("gcc") or shutil.which("cc")
  if compiler is None:
    return None
  tf_dir = os.path.dirname(tf.__file__)
  binary = os.path.join(tempfile.mkdtemp(prefix="c_loader_"), "run_signature")
  subprocess.run(
      [compiler, "-O1", "-o", binary, _C_SOURCE,
       f"-I{os.path.join(tf_dir, 'include')}", f"-L{tf_dir}",
       "-l:libtensorflow_cc.so.2", "-l:libtensorflow_framework.so.2",
       f"-Wl,-rpath,{tf_dir}"],
      check=True, capture_output=True, text=True)
  return binary


def run_c_loader(export_path, inputs, output_keys):
  """Runs serving_default through the C API; dict output key -> ndarray."""
  binary = compiled_c_loader()
  signature = signature_info.read_signature(export_path)
  work = tempfile.mkdtemp(prefix="c_loader_inputs_")
  args = [binary, export_path, str(len(inputs))]
  for key, values in inputs.items():
    path = os.path.join(work, key)
    with open(path, "wb") as f:
      for value in values:
        f.write((value if isinstance(value, bytes) else
                 value.encode("utf-8")) + b"\n")
    args += [signature.inputs[key].tensor_name, path]
  names = {signature.outputs[k].tensor_name: k for k in output_keys}
  args += list(names)
  done = subprocess.run(args, capture_output=True, text=True, timeout=300,
                        env=_subprocess_env())
  if done.returncode != 0:
    raise AssertionError(f"C loader failed:\n{done.stderr[-3000:]}")
  outputs, lines = {}, done.stdout.splitlines()
  i = 0
  while i < len(lines):
    header = lines[i].split()
    rank = int(header[1])
    shape = tuple(int(d) for d in header[2:2 + rank])
    size = int(np.prod(shape)) if shape else 1
    values = np.array([float(v) for v in lines[i + 1:i + 1 + size]],
                      np.float32)
    outputs[names[header[0]]] = values.reshape(shape)
    i += 1 + size
  return outputs


class ExportTestCase(tf.test.TestCase):
  """Base class for export tests; see the module docstring."""

  def run_export_test(self, export_path, reference_fn, inputs, atol=1e-5,
                      inference_only=False):
    """Checks `export_path` against `reference_fn` in every consumer.

    Args:
      export_path: a SavedModel version folder.
      reference_fn: callable(**inputs as tf.string tensors) -> dict output key
        -> tensor: the in-memory model the export came from.
      inputs: dict input key -> list of str (same length for every key):
        sentences to compare on.
      atol: tolerance of the comparisons.
      inference_only: the export has no trainable variables (a quantised
        table, `export.table_quantization`); otherwise a sentence encoder
        must have some.
    """
    feeds = {k: tf.constant(v, tf.string) for k, v in inputs.items()}
    # Bool outputs (a pair model's `match`) compare as 0/1.
    expected = {k: np.asarray(v, np.float32)
                for k, v in reference_fn(**feeds).items()}

    signature = signature_info.read_signature(export_path)
    self.assertEqual(signature.method_name, signature_info.PREDICT_METHOD)
    self.assertCountEqual(signature.inputs, inputs)
    for key, info in signature.inputs.items():
      self.assertEqual((info.dtype, info.shape), ("DT_STRING", (-1,)), key)
    self.assertCountEqual(signature.outputs, expected)
    for key, info in signature.outputs.items():
      self.assertIn(info.dtype, ("DT_FLOAT", "DT_BOOL"), key)

    loaded = tf.saved_model.load(export_path)
    signature_fn = loaded.signatures["serving_default"]

    def serve(**kwargs):
      return {k: tf.cast(v, tf.float32)
              for k, v in signature_fn(**kwargs).items()}

    served = serve(**feeds)
    for key in expected:
      self.assertAllClose(served[key], expected[key], atol=atol, msg=key)

    import tensorflow_hub as hub  # pylint: disable=g-import-not-at-top
    hub_loaded = hub.load(export_path)
    hub_served = hub_loaded.signatures["serving_default"](**feeds)
    for key in expected:
      self.assertAllClose(tf.cast(hub_served[key], tf.float32), expected[key],
                          atol=atol, msg=key)
    if list(inputs) == ["sentences"]:
      # A sentence encoder's root is callable (Reusable SavedModel API).
      self.assertAllClose(hub_loaded(feeds["sentences"]),
                          expected["embeddings"], atol=atol)
      if inference_only:
        self.assertEmpty(hub_loaded.trainable_variables)
      else:
        self.assertNotEmpty(hub_loaded.trainable_variables)

    request = serving_requests.predict_request(inputs)
    parsed = type(request).FromString(request.SerializeToString())
    from_request = serve(**serving_fixtures.request_feeds(parsed))
    for key in expected:
      self.assertAllClose(from_request[key], expected[key], atol=atol,
                          msg=key)

    warmup = serving_fixtures.read_warmup_requests(export_path)
    self.assertNotEmpty(warmup)
    for warmup_request in warmup:
      self.assertCountEqual(warmup_request.inputs, inputs)
      for key, value in serve(**serving_fixtures.request_feeds(
          warmup_request)).items():
        self.assertTrue(np.all(np.isfinite(value)),
                        f"warm-up request: {key} is not finite")

    for name, batch in BAD_INPUTS.items():
      bad = {k: tf.constant(batch, tf.string, shape=[len(batch)])
             for k in inputs}
      for key, value in serve(**bad).items():
        value = np.asarray(value)
        self.assertEqual(value.shape[:1], (len(batch),), f"{name}: {key}")
        self.assertEqual(value.shape[1:], expected[key].shape[1:],
                         f"{name}: {key}")
        self.assertTrue(np.all(np.isfinite(value)), f"{name}: {key}")

    self.check_core_ops_only(export_path)

    if compiled_c_loader() is None:
      print("C loader check skipped: no C compiler (gcc/cc) on PATH",
            file=sys.stderr)
    else:
      from_c = run_c_loader(export_path, inputs, list(expected))
      for key in expected:
        self.assertAllClose(from_c[key], served[key], atol=1e-5, msg=key)

  def check_core_ops_only(self, export_path):
    """`python -m export.op_check` passes.

    Its `main` runs here when this process has imported no extension
    library (`main` refuses to run otherwise): the op registry is then core
    TensorFlow's, as in a fresh process, and this saves a process and its
    TensorFlow import (~5 s) per export. Otherwise a fresh process runs it.
    """
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
      code = op_check.main(["op_check", export_path])
    if code != 2:  # main's exit when extension libraries are imported.
      self.assertEqual(code, 0, out.getvalue())
      return
    done = subprocess.run(
        [sys.executable, "-m", "export.op_check", export_path],
        capture_output=True, text=True, timeout=300, cwd=_REPO_ROOT,
        env=_subprocess_env())
    self.assertEqual(done.returncode, 0, done.stdout + done.stderr[-2000:])

  def run_finetune_test(self, export_path, sentences, steps=3):
    """The export fine-tunes in tf_keras and in Keras 3 models.

    A tiny regression head on the encoder is fit for a few steps with plain
    SGD; the encoder's weights must change (gradients reach them).
    """
    targets = np.linspace(-1.0, 1.0, len(sentences)).astype(np.float32)
    x = np.array(sentences, dtype=object)

    import tensorflow_hub as hub  # pylint: disable=g-import-not-at-top
    import tf_keras  # pylint: disable=g-import-not-at-top
    hub_layer = hub.KerasLayer(export_path, trainable=True)
    tk_model = tf_keras.Sequential([
        tf_keras.layers.InputLayer(input_shape=[], dtype=tf.string),
        hub_layer, tf_keras.layers.Dense(1)])
    tk_model.compile(tf_keras.optimizers.SGD(0.5), "mse")
    before = [v.numpy() for v in hub_layer.trainable_weights]
    self.assertNotEmpty(before)
    tk_model.fit(x, targets, batch_size=len(sentences), epochs=steps,
                 verbose=0)
    self.assertTrue(any(
        not np.allclose(b, v.numpy())
        for b, v in zip(before, hub_layer.trainable_weights)),
                    "hub.KerasLayer(trainable=True): weights did not change")

    import keras  # pylint: disable=g-import-not-at-top
    tfsm_layer = keras.layers.TFSMLayer(
        export_path, call_endpoint="serving_default", trainable=True)
    inputs = keras.Input(shape=[], dtype="string")
    encoded = tfsm_layer(inputs)
    if isinstance(encoded, dict):
      encoded = encoded["embeddings"]
    k3_model = keras.Model(inputs, keras.layers.Dense(1)(encoded))
    k3_model.compile(keras.optimizers.SGD(0.5), "mse")
    before = [np.array(v) for v in tfsm_layer.trainable_weights]
    self.assertNotEmpty(before)
    k3_model.fit(tf.constant(sentences), targets, batch_size=len(sentences),
                 epochs=steps, verbose=0)
    self.assertTrue(any(
        not np.allclose(b, np.array(v))
        for b, v in zip(before, tfsm_layer.trainable_weights)),
                    "TFSMLayer(trainable=True): weights did not change")
