"""Smoke test of the hybrid siamese speed benchmark on a tiny setting."""

import json
import os
import subprocess
import sys

import tensorflow as tf

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class HybridSiameseSpeedTest(tf.test.TestCase):

  def test_prints_and_writes_every_encoder(self):
    output = os.path.join(self.get_temp_dir(), "speed.json")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.hybrid_siamese_speed",
         "--encoders=cnn,gru", "--optimizers=lazy,dense", "--batch_size=4",
         "--length=5", "--vocab_size=50", "--embedding_dim=8",
         "--warmup_steps=1", "--measure_steps=2", f"--output={output}"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    self.assertIn("s / 100 steps", result.stdout)
    with open(output) as f:
      speed = json.load(f)
    self.assertEqual([(r["encoder"], r["optimizer"]) for r in speed["encoders"]],
                     [("cnn", "lazy"), ("cnn", "dense"), ("gru", "lazy"),
                      ("gru", "dense")])
    for row in speed["encoders"]:
      self.assertGreater(row["seconds_per_100_steps"], 0)
      self.assertLen(row["step_seconds"], 2)
    # GRU(200) on 8-d inputs + MLP on [f1; f2; d] (401 -> 200 -> 200 -> 1).
    gru = speed["encoders"][2]["parameters_without_embeddings"]
    self.assertEqual(gru, 3 * (8 * 200 + 200 * 200 + 2 * 200)
                     + 401 * 200 + 200 + 200 * 200 + 200 + 201)


if __name__ == "__main__":
  tf.test.main()
