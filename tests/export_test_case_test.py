"""Tests for tests.export_test_case: the shared export checks can fail."""

import os

import numpy as np
import tensorflow as tf

from sentzoo.export import saved_model_writer
from sentzoo.tests import export_test_case


class _HashedPair(tf.Module):
  """A pair model in core ops: hashed bag-of-words, distance, probability."""

  def __init__(self, nan_on_empty=False):
    super().__init__()
    self.table = tf.Variable(
        np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32))
    self.nan_on_empty = nan_on_empty
    self.metadata = {"model_type": "test_pair"}

  def encode(self, sentences):
    tokens = tf.strings.split(tf.strings.lower(sentences))
    ids = tf.strings.to_hash_bucket_fast(tokens, 64)
    vectors = tf.gather(self.table, ids)
    total = tf.reduce_sum(vectors, axis=1)
    count = tf.cast(vectors.row_lengths(), tf.float32)[:, None]
    if self.nan_on_empty:
      return total / count  # 0/0 for a sentence with no token.
    return total / tf.maximum(count, 1.0)

  @tf.function(input_signature=[
      tf.TensorSpec([None], tf.string, name="sentences_a"),
      tf.TensorSpec([None], tf.string, name="sentences_b")])
  def serve(self, sentences_a, sentences_b):
    distance = tf.norm(self.encode(sentences_a) - self.encode(sentences_b)
                       + 1e-9, axis=1)
    return {"probability": tf.sigmoid(-distance), "distance": distance}


PAIRS = {"sentences_a": ["a cat sat", "two dogs", "", "猫"],
         "sentences_b": ["a cat sat down", "one bird", "x", "猫"]}


class ExportTestCaseTest(export_test_case.ExportTestCase):

  def _export(self, module):
    return saved_model_writer.write(
        module, os.path.join(self.get_temp_dir(), self.id()))

  def test_pair_model_passes_with_its_own_reference(self):
    module = _HashedPair()
    self.run_export_test(self._export(module), module.serve, PAIRS)

  def test_c_loader_feeds_two_inputs(self):
    if export_test_case.compiled_c_loader() is None:
      self.skipTest("no C compiler (gcc/cc) on PATH")
    module = _HashedPair()
    path = self._export(module)
    got = export_test_case.run_c_loader(path, PAIRS, ["distance",
                                                      "probability"])
    want = module.serve(**{k: tf.constant(v) for k, v in PAIRS.items()})
    self.assertAllClose(got["distance"], want["distance"], atol=1e-6)
    self.assertAllClose(got["probability"], want["probability"], atol=1e-6)
    self.assertEqual(got["distance"].shape, (4,))

  def test_wrong_reference_fails(self):
    module = _HashedPair()
    path = self._export(module)

    def shifted(**kwargs):
      out = module.serve(**kwargs)
      return {"probability": out["probability"],
              "distance": out["distance"] + 0.01}

    with self.assertRaises(AssertionError):
      self.run_export_test(path, shifted, PAIRS)

  def test_nan_on_empty_sentence_fails(self):
    module = _HashedPair(nan_on_empty=True)
    path = self._export(module)
    with self.assertRaisesRegex(AssertionError, "not finite|empty string"):
      self.run_export_test(path, module.serve, {
          k: v[:2] for k, v in PAIRS.items()})

  def test_op_outside_the_allowlist_fails_the_op_check(self):
    # A core op (ReadFile) that install's allowlist refuses: op_check's main
    # exits 1, in this process or a fresh one.
    module = tf.Module()
    module.serve = tf.function(
        lambda path: {"bytes": tf.strings.length(tf.io.read_file(path))},
        input_signature=[tf.TensorSpec([], tf.string)])
    path = os.path.join(self.get_temp_dir(), "reads_a_file")
    tf.saved_model.save(module, path)
    with self.assertRaisesRegex(AssertionError, "ReadFile"):
      self.check_core_ops_only(path)


if __name__ == "__main__":
  tf.test.main()
