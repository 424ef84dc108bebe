"""Tests for lab.benchmarks.import_bin: its random file, its sides and its
page section."""

import os
import sys

import numpy as np
import tensorflow as tf

from lab.benchmarks import import_bin
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

  def test_sides_alternate_into_the_section(self):
    sides = import_bin.commands("f.bin", "py", ["int8"], "out")
    self.assertEqual(list(sides), [import_bin.BINDING,
                                   "sentzoo import (int8)"])
    self.assertEqual(sides["sentzoo import (int8)"][-4:],
                     ["--output", "out", "--precision", "int8"])
    path = os.path.join(self.get_temp_dir(), "f.bin")
    with open(path, "wb") as f:
      f.write(b"x" * 1000)
    quick = [sys.executable, "-c", "x = bytearray(50 << 20)"]
    lines = import_bin.benchmark(
        path, 10, 5, {import_bin.BINDING: quick, "ours": quick}, 2,
        os.path.join(self.get_temp_dir(), "out"))
    runs = [line for line in lines if line.startswith(("| 1 |", "| 2 |"))]
    self.assertLen(runs, 4)
    summary = [line for line in lines if line.startswith("| ours |")]
    self.assertLen(summary, 1)
    rss_gb = float(summary[0].split("|")[4].split()[0])
    self.assertGreater(rss_gb, 0.05)  # The child's own 50 MB at least.


if __name__ == "__main__":
  tf.test.main()
