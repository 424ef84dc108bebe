"""Tests for evaluation.encoder."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.tests import test_util

SENTENCES = ["a man is walking .", "a dog runs", "", "the cat sleeps on the mat"]


class FunctionEncoderTest(tf.test.TestCase):

  def test_batches_and_concatenates(self):
    calls = []

    @tf.function
    def fn(sentences):
      calls.append(None)  # Traced once per distinct shape.
      lengths = tf.cast(tf.strings.length(sentences), tf.float32)
      return tf.stack([lengths, 2.0 * lengths, tf.ones_like(lengths)], axis=1)

    encoder = encoder_lib.FunctionEncoder(fn)
    self.assertIsNone(encoder.dim)
    out = encoder.encode(SENTENCES, batch_size=3)
    self.assertEqual(out.dtype, np.float32)
    self.assertEqual(out.shape, (4, 3))
    lengths = np.array([len(s) for s in SENTENCES], np.float32)
    self.assertAllClose(out[:, 0], lengths)
    self.assertAllClose(out[:, 1], 2 * lengths)
    self.assertEqual(encoder.dim, 3)

  def test_module_function(self):
    module = test_util.HashBagEncoder(dim=5)
    encoder = encoder_lib.FunctionEncoder(module.encode)
    out = encoder.encode(SENTENCES, batch_size=2)
    self.assertAllClose(out, module.encode(tf.constant(SENTENCES)).numpy())
    self.assertAllClose(out[2], np.zeros(5))  # No words -> zero vector.

  def test_empty_input_does_not_call(self):

    def fn(sentences):
      raise AssertionError("called")

    self.assertEqual(encoder_lib.FunctionEncoder(fn).encode([]).shape, (0, 0))
    self.assertEqual(
        encoder_lib.FunctionEncoder(fn, dim=7).encode([]).shape, (0, 7))

  def test_bad_output_shape(self):
    encoder = encoder_lib.FunctionEncoder(lambda s: tf.zeros([5, 2]))
    with self.assertRaisesRegex(ValueError, "expected \\[batch, dim\\]"):
      encoder.encode(["a", "b"])


class SavedModelEncoderTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.root = tempfile.mkdtemp()
    cls.module1 = test_util.HashBagEncoder(dim=6, seed=1)
    cls.module2 = test_util.HashBagEncoder(dim=6, seed=2)
    cls.base = os.path.join(cls.root, "exp")
    test_util.save_hash_bag_encoder(cls.module1, os.path.join(cls.base, "1"))
    test_util.save_hash_bag_encoder(cls.module2, os.path.join(cls.base, "2"))
    # Not versions: names that are not integers (an export in progress).
    os.makedirs(os.path.join(cls.base, "temp-12345"))
    os.makedirs(os.path.join(cls.base, "10abc"))

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.root, ignore_errors=True)
    super().tearDownClass()

  def test_picks_highest_version(self):
    encoder = encoder_lib.load_encoder(self.base)
    self.assertEqual(encoder.export_dir, os.path.join(self.base, "2"))
    self.assertEqual(encoder.dim, 6)
    out = encoder.encode(SENTENCES, batch_size=3)
    self.assertEqual(out.dtype, np.float32)
    self.assertAllClose(out,
                        self.module2.encode(tf.constant(SENTENCES)).numpy())
    self.assertNotAllClose(
        out, self.module1.encode(tf.constant(SENTENCES)).numpy())

  def test_version_dir(self):
    encoder = encoder_lib.SavedModelEncoder(os.path.join(self.base, "1"))
    self.assertAllClose(encoder.encode(SENTENCES),
                        self.module1.encode(tf.constant(SENTENCES)).numpy())

  def test_empty_input(self):
    encoder = encoder_lib.load_encoder(self.base)
    out = encoder.encode([])
    self.assertEqual(out.shape, (0, 6))
    self.assertEqual(out.dtype, np.float32)

  def test_a_truncated_variables_file_is_one_error_line(self):
    damaged = os.path.join(self.root, "damaged")
    shutil.copytree(os.path.join(self.base, "1"), damaged)
    data = os.path.join(damaged, "variables",
                        "variables.data-00000-of-00001")
    with open(data, "r+b") as f:
      f.truncate(os.path.getsize(data) // 2)
    # As a command that loads it (reports.sts_tables) runs it.
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from sentzoo.common import cli; "
         "from sentzoo.evaluation import encoder; "
         "cli.run(lambda _: encoder.load_encoder(sys.argv[1]))", damaged],
        capture_output=True, text=True, timeout=300, check=False)
    self.assertEqual(done.returncode, 2, done.stderr[-3000:])
    lines = done.stderr.strip().splitlines()
    self.assertLen(lines, 1, done.stderr)
    self.assertRegex(lines[0], "^error: cannot load the SavedModel at .*, it "
                     "looks damaged \\(IndexError: .*\\); export it again$")

  def test_no_saved_model(self):
    empty = os.path.join(self.root, "empty")
    os.makedirs(os.path.join(empty, "temp-1"))
    with self.assertRaisesRegex(errors.DataDirError, "no SavedModel"):
      encoder_lib.load_encoder(empty)
    with self.assertRaisesRegex(errors.DataDirError, "does not exist"):
      encoder_lib.load_encoder(os.path.join(self.root, "nope"))

  def test_a_plain_file_is_not_said_to_be_missing(self):
    # Issue 33 row 10: `lab.reports.sts_tables --model=<a plain file>` and
    # `sentzoo.load("README.md")` said the file "does not exist".
    plain = os.path.join(self.root, "README.md")
    with open(plain, "w") as f:
      f.write("# not a model\n")
    with self.assertRaisesRegex(
        errors.DataDirError,
        f"^model path {re.escape(repr(plain))} is a file, not a model: pass "
        "an export's folder \\(it holds saved_model.pb, or integer version "
        "folders 1/, 2/, ... that do\\)$"):
      encoder_lib.resolve_export_dir(plain)
    # saved_model.pb itself names its folder.
    pb = os.path.join(self.base, "1", "saved_model.pb")
    self.assertEqual(encoder_lib.resolve_export_dir(pb),
                     os.path.join(self.base, "1"))


if __name__ == "__main__":
  tf.test.main()
