"""Tests for common.data_dir."""

import os
from unittest import mock

import tensorflow as tf

from sentzoo.common import data_dir
from sentzoo.common import errors


class DataDirTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.flag_dir = os.path.join(self.get_temp_dir(), "from_flag")
    self.env_dir = os.path.join(self.get_temp_dir(), "from_env")
    os.makedirs(os.path.join(self.flag_dir, "gutenberg"), exist_ok=True)
    os.makedirs(self.env_dir, exist_ok=True)

  def _env(self, value, checkout=None):
    """$SENTZOO_DATA_DIR set to `value` (None: unset) and the checkout's
    ../shared/data at `checkout` (None: none)."""
    env = {k: v for k, v in os.environ.items() if k != data_dir.ENV_VAR}
    if value is not None:
      env[data_dir.ENV_VAR] = value
    self.enter_context(mock.patch.object(data_dir, "checkout_data_dir",
                                         return_value=checkout))
    return mock.patch.dict(os.environ, env, clear=True)

  def test_env_var_name(self):
    self.assertEqual(data_dir.ENV_VAR, "SENTZOO_DATA_DIR")

  def test_flag_beats_env_var(self):
    with self._env(self.env_dir):
      self.assertEqual(data_dir.resolve_data_dir(self.flag_dir), self.flag_dir)

  def test_env_var_used_when_flag_empty(self):
    with self._env(self.env_dir):
      self.assertEqual(data_dir.resolve_data_dir(""), self.env_dir)
      self.assertEqual(data_dir.resolve_data_dir(None), self.env_dir)

  def test_missing_raises_naming_flag_and_env_var(self):
    for env in (None, ""):
      with self._env(env):
        with self.assertRaises(errors.DataDirError) as context:
          data_dir.resolve_data_dir("")
        self.assertIn("--data_dir", str(context.exception))
        self.assertIn("SENTZOO_DATA_DIR", str(context.exception))
        self.assertIsInstance(context.exception, errors.UserError)

  def test_checkout_data_dir_comes_after_flag_and_env_var(self):
    # Issue 32: the README's `python -c '...run([...])'` raised DataDirError
    # unless $SENTZOO_DATA_DIR was set; ../shared/data applied to `make
    # demo` only.
    checkout = os.path.join(self.get_temp_dir(), "shared_data")
    os.makedirs(checkout, exist_ok=True)
    with self._env(None, checkout=checkout):
      self.assertEqual(data_dir.resolve_data_dir(None), checkout)
      self.assertEqual(data_dir.resolve_data_dir(""), checkout)
      self.assertEqual(data_dir.resolve_data_dir(self.flag_dir), self.flag_dir)
    with self._env(self.env_dir, checkout=checkout):
      self.assertEqual(data_dir.resolve_data_dir(None), self.env_dir)
    with self._env(None, checkout=None):
      with self.assertRaisesRegex(
          errors.DataDirError,
          "^no data directory given: pass --data_dir=PATH or set "
          "SENTZOO_DATA_DIR=PATH \\(none was found at ../shared/data beside "
          "the checkout either\\)$"):
        data_dir.resolve_data_dir(None)

  def test_checkout_data_dir_is_beside_this_checkout(self):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    self.assertEqual(data_dir.checkout_root(), root)
    beside = os.path.normpath(os.path.join(root, "..", "shared", "data"))
    self.assertEqual(data_dir.checkout_data_dir(),
                     beside if os.path.isdir(beside) else None)
    # An installed package has no checkout: no rule 3.
    with mock.patch.object(data_dir, "checkout_root", return_value=None):
      self.assertIsNone(data_dir.checkout_data_dir())

  def test_nonexistent_directory_raises(self):
    missing = os.path.join(self.get_temp_dir(), "nope")
    with self._env(None):
      with self.assertRaisesRegex(errors.DataDirError, "nope"):
        data_dir.resolve_data_dir(missing)
    with self._env(missing):
      with self.assertRaisesRegex(errors.DataDirError, "SENTZOO_DATA_DIR"):
        data_dir.resolve_data_dir(None)

  def test_required_subdir(self):
    with self._env(None):
      self.assertEqual(
          data_dir.resolve_data_dir(self.flag_dir, required_subdir="gutenberg"),
          self.flag_dir)
      with self.assertRaisesRegex(errors.DataDirError, "sts"):
        data_dir.resolve_data_dir(self.flag_dir, required_subdir="sts")
    with self._env(self.env_dir):
      with self.assertRaisesRegex(errors.DataDirError, "gutenberg"):
        data_dir.resolve_data_dir("", required_subdir="gutenberg")

  def test_required_subdir_must_be_a_folder(self):
    with open(os.path.join(self.env_dir, "sts"), "w") as f:
      f.write("a file, not a folder")
    with self._env(None):
      with self.assertRaises(errors.DataDirError):
        data_dir.resolve_data_dir(self.env_dir, required_subdir="sts")


if __name__ == "__main__":
  tf.test.main()
