"""Tests for lab.reports.word_norms."""

import io
import json
import os
import tempfile
from unittest import mock

import numpy as np
import tensorflow as tf

from lab.reports import word_norms
from sentzoo.common import errors


class _Table(tf.Module):

  def __init__(self, table):
    super().__init__()
    self.embeddings = tf.Variable(table, dtype=tf.float32)


class WordNormsTest(tf.test.TestCase):

  def _model(self, counts, table):
    folder = tempfile.mkdtemp(dir=self.get_temp_dir())
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
      for i, count in enumerate(counts):
        f.write(f"w{i}\t{count}\n")
    export = os.path.join(folder, "export")
    tf.saved_model.save(_Table(table), export)
    return folder, export

  def test_band_medians_follow_frequency_rank(self):
    counts = np.array([5, 500, 50, 5000])
    norms = np.array([4.0, 2.0, 3.0, 1.0])
    rows = word_norms.band_medians(norms, counts, bands=(2, 10))
    self.assertEqual(rows, [("ranks 1-2", 2, 1.5), ("ranks 3-4", 2, 3.5)])
    self.assertAllClose(word_norms.spearman_norm_frequency(norms, counts),
                        -1.0)

  def test_report_writes_record_and_png(self):
    rng = np.random.default_rng(0)
    counts = rng.integers(5, 10000, size=200)
    # Frequent words shorter: norm falls with log count.
    table = rng.normal(size=(201, 8))
    table /= np.linalg.norm(table, axis=1, keepdims=True)
    table[1:] *= (1.0 / np.log(counts))[:, None]
    table[0] = 0
    folder, export = self._model(counts, table)
    out = tempfile.mkdtemp(dir=self.get_temp_dir())
    with mock.patch("sys.stdout", new_callable=io.StringIO) as printed:
      result = word_norms.run(["word_norms", f"--model_dir={folder}",
                               f"--export={export}", "--names=toy",
                               f"--output_png={out}/norms.png",
                               f"--output_record={out}/record.json"])["toy"]
    self.assertAllClose(result["spearman_norm_count"], -1.0)
    self.assertIn("ranks 1-100      100 words", printed.getvalue())
    with open(f"{out}/norms.png", "rb") as f:
      self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
    with open(f"{out}/record.json") as f:
      curve = json.load(f)["toy"]["curve"]
    # Frequent words are shorter: the relative median falls bin by bin.
    medians = [b["median"] for b in curve]
    self.assertEqual(medians, sorted(medians, reverse=True))
    self.assertEqual(sum(b["words"] for b in curve), 200)
    self.assertTrue(all(b["q25"] <= b["median"] <= b["q75"] for b in curve))
    # The plot drawn again from the record alone.
    os.remove(f"{out}/norms.png")
    word_norms.run(["word_norms", f"--from_record={out}/record.json",
                    f"--output_png={out}/norms.png"])
    self.assertTrue(os.path.exists(f"{out}/norms.png"))
    text = word_norms.caption({"toy": {"spearman_norm_count": -1.0,
                                       "curve": curve}})
    self.assertIn("would fall to the right", text)
    self.assertIn(f"{medians[-1]:.2f} for the most frequent bin (", text)

  def test_mismatched_table_and_vocabulary(self):
    folder, export = self._model([5, 6, 7], np.zeros((3, 2)))
    with self.assertRaisesRegex(errors.UserError, "3 rows, but .* 3 words"):
      word_norms.run(["word_norms", f"--model_dir={folder}",
                      f"--export={export}"])
    with self.assertRaisesRegex(errors.UserError, "one --export per"):
      word_norms.run(["word_norms", f"--model_dir={folder}"])

  def test_export_without_a_float_table_is_a_user_error(self):
    folder, _ = self._model([5, 6], np.zeros((3, 2)))
    quantised = os.path.join(folder, "quantised")
    module = tf.Module()
    module.embeddings_int8 = tf.Variable(np.zeros((3, 2), np.int8))
    tf.saved_model.save(module, quantised)
    with self.assertRaisesRegex(errors.UserError, "no float `embeddings`"):
      word_norms.run(["word_norms", f"--model_dir={folder}",
                      f"--export={quantised}"])

  def test_extremes_among_frequent_words(self):
    words = ["a", "b", "c", "d"]
    norms = np.array([0.5, 0.1, 0.9, 0.05])
    counts = np.array([5000, 2000, 3000, 10])  # "d" is too rare to list.
    self.assertEqual(word_norms.extremes(words, norms, counts, size=2),
                     (["b", "a"], ["c", "a"]))

  def test_malformed_vocabulary_names_file_and_line(self):
    path = os.path.join(tempfile.mkdtemp(dir=self.get_temp_dir()), "vocab.txt")
    with open(path, "w") as f:
      f.write("a\t3\nb\tmany\n")
    with self.assertRaisesRegex(errors.DataFormatError, r"vocab.txt:2:"):
      word_norms.read_vocabulary(path)


if __name__ == "__main__":
  tf.test.main()
