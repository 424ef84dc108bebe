"""Tests for `tests.layer_test_case.LayerTestCase.run_layer_test`."""

import keras
from keras import ops
import numpy as np

from sentzoo.tests import layer_test_case


@keras.saving.register_keras_serializable(package="sentzoo_test")
class ScaleForTest(keras.layers.Layer):
  """A well-behaved layer: multiplies by a trainable vector."""

  def __init__(self, units, **kwargs):
    super().__init__(**kwargs)
    self.units = units

  def build(self, input_shape):
    self.kernel = self.add_weight(
        name="kernel", shape=(self.units,), initializer="ones")

  def call(self, inputs):
    return inputs * self.kernel

  def get_config(self):
    config = super().get_config()
    config.update({"units": self.units})
    return config


@keras.saving.register_keras_serializable(package="sentzoo_test")
class NoConfigForTest(ScaleForTest):
  """Forgets its init argument in get_config."""

  def get_config(self):
    return keras.layers.Layer.get_config(self)

  @classmethod
  def from_config(cls, config):
    return cls(units=3, **config)


@keras.saving.register_keras_serializable(package="sentzoo_test")
class NaNOutputForTest(ScaleForTest):
  """Produces a non-finite output."""

  def call(self, inputs):
    return inputs * self.kernel / 0.0


@keras.saving.register_keras_serializable(package="sentzoo_test")
class DeadWeightForTest(ScaleForTest):
  """Has a trainable weight that the output does not depend on."""

  def build(self, input_shape):
    super().build(input_shape)
    self.unused = self.add_weight(
        name="unused", shape=(self.units,), initializer="ones")


@keras.saving.register_keras_serializable(package="sentzoo_test")
class NotXlaStableForTest(ScaleForTest):
  """Gives different results inside and outside tf.function."""

  def call(self, inputs):
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    return inputs * self.kernel + float(tf.executing_eagerly())


@keras.saving.register_keras_serializable(package="sentzoo_test")
class AddForTest(keras.layers.Layer):
  """A weightless two-input layer."""

  def call(self, inputs):
    return ops.add(inputs[0], inputs[1])


class LayerTestCaseTest(layer_test_case.LayerTestCase):

  def setUp(self):
    super().setUp()
    self.inputs = np.arange(6, dtype="float32").reshape(2, 3)

  def test_passes_for_good_layer(self):
    output = self.run_layer_test(
        ScaleForTest,
        init_kwargs={"units": 3},
        input_data=self.inputs,
        expected_output_shape=(2, 3),
        expected_num_trainable_weights=1,
    )
    self.assertAllClose(output, self.inputs)

  def test_list_inputs(self):
    self.run_layer_test(
        AddForTest,
        init_kwargs={},
        input_data=[self.inputs, self.inputs],
        expected_output_shape=(2, 3),
        expected_num_trainable_weights=0,
    )

  def test_fails_on_wrong_shape(self):
    with self.assertRaises(AssertionError):
      self.run_layer_test(
          ScaleForTest, {"units": 3}, self.inputs, expected_output_shape=(2, 4))

  def test_fails_on_wrong_weight_count(self):
    with self.assertRaises(AssertionError):
      self.run_layer_test(
          ScaleForTest, {"units": 3}, self.inputs, (2, 3),
          expected_num_trainable_weights=2)

  def test_fails_on_incomplete_config(self):
    with self.assertRaisesRegex(AssertionError, "units"):
      self.run_layer_test(NoConfigForTest, {"units": 3}, self.inputs, (2, 3))

  def test_fails_on_non_finite_output(self):
    with self.assertRaisesRegex(AssertionError, "Non-finite"):
      self.run_layer_test(NaNOutputForTest, {"units": 3}, self.inputs, (2, 3))

  def test_fails_on_missing_gradient(self):
    with self.assertRaisesRegex(AssertionError, "No gradient"):
      self.run_layer_test(
          DeadWeightForTest, {"units": 3}, self.inputs, (2, 3),
          run_xla_check=False)
    # Without the training check the dead weight goes unnoticed.
    self.run_layer_test(
        DeadWeightForTest, {"units": 3}, self.inputs, (2, 3),
        run_training_check=False, run_xla_check=False)

  def test_fails_when_xla_differs(self):
    with self.assertRaises(AssertionError):
      self.run_layer_test(
          NotXlaStableForTest, {"units": 3}, self.inputs, (2, 3),
          run_training_check=False)


if __name__ == "__main__":
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tf.test.main()
