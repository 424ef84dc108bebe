"""Tests for export.saved_model_writer."""

import json
import os
from unittest import mock

import numpy as np
import tensorflow as tf

from sentzoo.export import averaging_encoder
from sentzoo.export import input_limits
from sentzoo.export import saved_model_writer
from sentzoo.export import serving_requests
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import vocabulary as vocabulary_lib

METADATA = {"model_type": "test", "embedding_dim": 3,
            "training": {"corpus_files": ["a.txt.gz", "b.txt.gz"]},
            "paper": "Kenter et al."}


def _module(metadata=None):
  vocabulary = vocabulary_lib.Vocabulary(["a", "b"], [2, 1])
  table = np.arange(9, dtype=np.float32).reshape(3, 3)
  return averaging_encoder.AveragingSentenceEncoder(
      text_to_ids_lib.TextToIds(vocabulary), table,
      METADATA if metadata is None else metadata)


class SavedModelWriterTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.export_dir = os.path.join(self.get_temp_dir(), self.id(), "exports")

  def _entries(self):
    return sorted(os.listdir(self.export_dir))

  def test_versions_increase_and_no_temp_left(self):
    module = _module()
    first = saved_model_writer.write(module, self.export_dir)
    self.assertEqual(first, os.path.join(self.export_dir, "1"))
    self.assertEqual(self._entries(), ["1"])
    second = saved_model_writer.write(module, self.export_dir)
    self.assertEqual(second, os.path.join(self.export_dir, "2"))
    self.assertEqual(self._entries(), ["1", "2"])
    self.assertEqual(saved_model_writer.existing_versions(self.export_dir),
                     [1, 2])
    self.assertTrue(tf.saved_model.contains_saved_model(second))

  def test_explicit_version_and_existing_version(self):
    module = _module()
    path = saved_model_writer.write(module, self.export_dir, version=7)
    self.assertEqual(path, os.path.join(self.export_dir, "7"))
    self.assertEqual(
        saved_model_writer.write(module, self.export_dir),
        os.path.join(self.export_dir, "8"))
    with self.assertRaises(FileExistsError):
      saved_model_writer.write(module, self.export_dir, version=7)
    self.assertEqual(self._entries(), ["7", "8"])

  def test_existing_versions_ignores_other_names(self):
    self.assertEqual(saved_model_writer.existing_versions(
        os.path.join(self.get_temp_dir(), "absent")), [])
    for name in ("3", "10", ".tmp-4-1", "notes", "2a"):
      os.makedirs(os.path.join(self.export_dir, name))
    self.assertEqual(saved_model_writer.existing_versions(self.export_dir),
                     [3, 10])
    self.assertEqual(saved_model_writer.write(_module(), self.export_dir),
                     os.path.join(self.export_dir, "11"))

  def test_failed_save_leaves_nothing(self):
    with mock.patch.object(tf.saved_model, "save",
                           side_effect=RuntimeError("disk full")):
      with self.assertRaisesRegex(RuntimeError, "disk full"):
        saved_model_writer.write(_module(), self.export_dir)
    self.assertEqual(self._entries(), [])

  def test_failed_model_card_leaves_nothing(self):
    # Written after the SavedModel itself: a set is not JSON.
    with self.assertRaises(TypeError):
      saved_model_writer.write(_module({"bad": {1, 2}}), self.export_dir)
    self.assertEqual(self._entries(), [])
    # The next export still gets version 1.
    self.assertEqual(saved_model_writer.write(_module(), self.export_dir),
                     os.path.join(self.export_dir, "1"))

  def test_warmup_file_runs_through_the_signature(self):
    path = saved_model_writer.write(_module(), self.export_dir)
    requests = serving_requests.read_warmup_requests(path)
    self.assertLen(requests, 1)
    self.assertEqual(requests[0].model_spec.name, "exports")
    feeds = serving_requests.request_feeds(requests[0])
    self.assertEqual(list(feeds), ["sentences"])
    out = tf.saved_model.load(path).signatures["serving_default"](**feeds)
    self.assertEqual(out["embeddings"].shape, (2, 3))

  def test_model_card(self):
    path = saved_model_writer.write(_module(), self.export_dir)
    card_path = os.path.join(path, "assets.extra", "model_card.json")
    self.assertEqual(saved_model_writer.MODEL_CARD,
                     os.path.join("assets.extra", "model_card.json"))
    with open(card_path, encoding="utf-8") as f:
      card = json.load(f)
    self.assertEqual(card.pop("input_limits"), input_limits.model_card_entry(
        input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE,
        input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE))
    self.assertEqual(card, METADATA)

  def test_reload_serving_default(self):
    path = saved_model_writer.write(_module(), self.export_dir)
    loaded = tf.saved_model.load(path)
    serve = loaded.signatures["serving_default"]
    out = serve(sentences=tf.constant(["a b", "b", "zzz"]))["embeddings"]
    self.assertAllClose(out, [[4.5, 5.5, 6.5], [6, 7, 8], [0, 0, 0]])
    self.assertAllClose(loaded(tf.constant(["a"])), [[3, 4, 5]])


if __name__ == "__main__":
  tf.test.main()
