"""Tests for benchmarks.import_bin: its random file and its child runner."""

import os
import sys

import numpy as np
import tensorflow as tf

from sentzoo.benchmarks import import_bin
from sentzoo.inputs import fasttext_bin


class ImportBinTest(tf.test.TestCase):

  def test_random_file_is_a_sent2vec_bin(self):
    path = os.path.join(self.get_temp_dir(), "r.bin")
    import_bin.write_random_bin(path, 50, 4)
    source = fasttext_bin.Sent2VecFile(path)
    self.assertEqual((source.rows, source.dim), (50, 4))
    self.assertEqual(source.words[:3], [fasttext_bin.PLACEHOLDER, "w0", "w1"])
    table = np.concatenate([c.copy() for _, c in source.table_chunks(7)])
    self.assertEqual(table.shape, (50, 4))
    self.assertLess(abs(float(table.std()) - 0.1), 0.03)
    source.close()

  def test_run_child_measures_a_fresh_process(self):
    seconds, rss, cpu = import_bin.run_child(
        [sys.executable, "-c", "x = bytearray(50 << 20); x[::4096] = "
         "b'1' * len(x[::4096])"])
    self.assertGreater(seconds, 0)
    self.assertGreater(rss, 50 << 20)
    self.assertGreaterEqual(cpu, 0)
    with self.assertRaises(RuntimeError):
      import_bin.run_child([sys.executable, "-c", "raise SystemExit(3)"])


if __name__ == "__main__":
  tf.test.main()
