"""Shared test helper for the layers of the model zoo.

Modelled on keras-hub's `keras_hub/src/tests/test_case.py` `run_layer_test`.
Import the module (not the class) so pytest does not collect the base class
itself in every test module:

  from sentzoo.tests import layer_test_case

  class MyLayerTest(layer_test_case.LayerTestCase):

    def test_layer_basics(self):
      self.run_layer_test(...)
"""

import json

import keras
import numpy as np
import tensorflow as tf


def _to_tensor(x):
  if x is None or isinstance(x, tf.Tensor):
    return x
  return tf.convert_to_tensor(x)


def _map(fn, structure):
  if isinstance(structure, (list, tuple)):
    return [fn(x) for x in structure]
  return fn(structure)


def _flatten(structure):
  if isinstance(structure, (list, tuple)):
    return list(structure)
  return [structure]


def _dense(x):
  if isinstance(x, tf.IndexedSlices):
    return tf.convert_to_tensor(x)
  return x


class LayerTestCase(tf.test.TestCase):
  """`tf.test.TestCase` with a standard battery of checks for one layer."""

  def setUp(self):
    super().setUp()
    keras.utils.set_random_seed(1234)

  def _call(self, layer, inputs, mask):
    if mask is None:
      return layer(inputs)
    return layer(inputs, mask=mask)

  def assertAllFinite(self, x, msg=None):
    x = np.asarray(_dense(x))
    self.assertTrue(np.all(np.isfinite(x)), msg or f"Non-finite values: {x}")

  def run_layer_test(
      self,
      layer_cls,
      init_kwargs,
      input_data,
      expected_output_shape,
      expected_num_trainable_weights=None,
      input_mask=None,
      run_training_check=True,
      run_xla_check=True,
  ):
    """Runs the standard checks on `layer_cls(**init_kwargs)`.

    Checks the output shape and finiteness; that every init argument is an
    attribute and a `get_config()` key; the `get_config`/`from_config` round
    trip (same config, same outputs with the weights copied); the
    `keras.saving` serialize/deserialize round trip (JSON-serialisable);
    gradient flow (every trainable weight, and every floating input, gets a
    non-None finite gradient of `sum(output)`); and that a
    `tf.function(jit_compile=True)` call (forward, and backward when
    `run_training_check`) matches eager execution.

    Args:
      layer_cls: the layer class.
      init_kwargs: dict of keyword arguments for the constructor.
      input_data: a tensor/array, or a list of them for multi-input layers.
      expected_output_shape: tuple, the expected output shape.
      expected_num_trainable_weights: int or None (not checked).
      input_mask: optional mask (or list of masks) passed as `mask=`.
      run_training_check: whether to check gradients.
      run_xla_check: whether to compare an XLA-compiled call with eager.

    Returns:
      The eager output of the layer built by the test.
    """
    inputs = _map(_to_tensor, input_data)
    mask = None if input_mask is None else _map(_to_tensor, input_mask)

    # Output shape and values.
    layer = layer_cls(**init_kwargs)
    output = self._call(layer, inputs, mask)
    self.assertEqual(tuple(output.shape), tuple(expected_output_shape))
    self.assertAllFinite(output)
    if expected_num_trainable_weights is not None:
      self.assertLen(layer.trainable_weights, expected_num_trainable_weights)

    # One attribute and one config entry per init argument.
    config = layer.get_config()
    for key in init_kwargs:
      self.assertIn(key, config, f"get_config() lacks init argument {key!r}")
      self.assertTrue(
          hasattr(layer, key), f"{layer_cls.__name__} lacks attribute {key!r}")

    # get_config / from_config round trip.
    revived = layer_cls.from_config(config)
    self._call(revived, inputs, mask)  # Builds the weights.
    self.assertEqual(revived.get_config(), config)
    revived.set_weights(layer.get_weights())
    self.assertAllClose(self._call(revived, inputs, mask), output)

    # keras.saving serialize / deserialize round trip.
    serialized = keras.saving.serialize_keras_object(layer)
    serialized = json.loads(json.dumps(serialized))
    restored = keras.saving.deserialize_keras_object(serialized)
    self.assertIsInstance(restored, layer_cls)
    self._call(restored, inputs, mask)
    self.assertEqual(restored.get_config(), config)
    restored.set_weights(layer.get_weights())
    self.assertAllClose(self._call(restored, inputs, mask), output)

    float_inputs = [
        x for x in _flatten(inputs) if x.dtype.is_floating]

    def forward_and_gradients(inputs, mask):
      with tf.GradientTape() as tape:
        tape.watch([x for x in _flatten(inputs) if x.dtype.is_floating])
        out = self._call(layer, inputs, mask)
        loss = tf.reduce_sum(tf.cast(out, tf.float32))
      sources = list(layer.trainable_weights) + [
          x for x in _flatten(inputs) if x.dtype.is_floating]
      return out, tape.gradient(loss, sources)

    # Gradient flow.
    if run_training_check:
      _, grads = forward_and_gradients(inputs, mask)
      names = [w.path for w in layer.trainable_weights] + [
          f"input {i}" for i in range(len(float_inputs))]
      for name, grad in zip(names, grads):
        self.assertIsNotNone(grad, f"No gradient for {name}")
        self.assertAllFinite(grad, f"Non-finite gradient for {name}")

    # XLA matches eager.
    if run_xla_check:
      xla_forward = tf.function(
          lambda inputs, mask: self._call(layer, inputs, mask),
          jit_compile=True)
      self.assertAllClose(
          xla_forward(inputs, mask), output, rtol=1e-5, atol=1e-5)
      if run_training_check:
        xla_grads = tf.function(
            forward_and_gradients, jit_compile=True)(inputs, mask)[1]
        for xla_grad, grad in zip(xla_grads, grads):
          self.assertAllClose(
              _dense(xla_grad), _dense(grad), rtol=1e-5, atol=1e-5)

    return output
