"""Runs the quantised-export benchmark on a tiny Siamese CBOW model."""

import json
import os
import subprocess
import sys

import tensorflow as tf

from sentzoo.tests import model_dir_fixtures

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAIRS = [("the cat sat", "the cat sat on the mat", 4.0),
         ("the cat", "café 猫", 1.0), ("on the mat", "the mat", 3.5),
         ("猫 .", "the cat .", 2.0), ("", "cat", 0.0)]


def _write_data_dir(data_dir):
  """One STS 2012 set (MSRpar) and STS-B dev, from PAIRS."""
  sts2012 = os.path.join(data_dir, "sts", "STS2012-test")
  stsb = os.path.join(data_dir, "sts", "STSBenchmark")
  os.makedirs(sts2012)
  os.makedirs(stsb)
  with open(os.path.join(sts2012, "STS.input.MSRpar.txt"), "w") as f:
    f.writelines(f"{a}\t{b}\n" for a, b, _ in PAIRS)
  with open(os.path.join(sts2012, "STS.gs.MSRpar.txt"), "w") as f:
    f.writelines(f"{score}\n" for _, _, score in PAIRS)
  with open(os.path.join(stsb, "sts-dev.csv"), "w") as f:
    f.writelines(f"main-captions\tMSRvid\t2012test\t{i}\t{score}\t{a}\t{b}\n"
                 for i, (a, b, score) in enumerate(PAIRS))


class QuantizedExportBenchmarkTest(tf.test.TestCase):

  def test_prints_the_table_of_every_mode(self):
    root = self.get_temp_dir()
    model_dir = os.path.join(root, "model")
    model_dir_fixtures.make_siamese_cbow_model_dir(model_dir)
    data_dir = os.path.join(root, "data")
    _write_data_dir(data_dir)
    output_dir = os.path.join(root, "exports")
    output_json = os.path.join(root, "results.json")
    output_markdown = os.path.join(root, "results.md")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    done = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.quantized_export",
         f"--model_dir={model_dir}", f"--data_dir={data_dir}",
         f"--output_dir={output_dir}", "--repeats=1", "--batch_size=2",
         f"--output_json={output_json}",
         f"--output_markdown={output_markdown}",
         f"--output_png={os.path.join(root, 'size.png')}"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    self.assertIn("| export | size (MB) |", done.stdout)
    self.assertIn("STS 1-set mean", done.stdout)
    self.assertIn("Each point is one export of the same checkpoint",
                  done.stdout.splitlines()[-1])
    with open(os.path.join(root, "size.png"), "rb") as f:
      self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
    with open(output_json) as f:
      results = json.load(f)["results"]
    self.assertEqual(list(results), ["none", "float16", "int8"])
    for mode, result in results.items():
      self.assertTrue(os.path.isdir(result["path"]), mode)
      self.assertGreater(result["sentences_per_second"], 0)
      self.assertEqual(result["sentences"], 10)  # Distinct, "" included.
      self.assertEqual(result["sts_sets"], 1)
      self.assertIsNotNone(result["stsb_dev_pearson"])
      # A 10 x 4 table: the graph, not the table, sets the size here (the
      # size ratio is tested in export/averaging_encoder_test.py).
      self.assertGreater(result["bytes"], 0)
      self.assertGreater(result["load_seconds"], 0)
    with open(output_markdown) as f:
      rows = f.read().splitlines()
    self.assertLen(rows, 5)
    self.assertTrue(rows[2].startswith("| float32 |"), rows[2])
    self.assertIn("| 1.00x |", rows[2])
    self.assertTrue(rows[4].startswith("| int8 |"), rows[4])

  def test_unknown_mode_is_one_error_line(self):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    done = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.quantized_export",
         f"--model_dir={self.get_temp_dir()}", "--modes=int4",
         f"--data_dir={self.get_temp_dir()}"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(done.returncode, 2, done.stderr[-3000:])
    self.assertIn("error: quantize must be one of none, float16, int8",
                  done.stderr)


if __name__ == "__main__":
  tf.test.main()
