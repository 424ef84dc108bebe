"""Tests for the hybrid siamese results table (the trainer is faked)."""

import json
import os
import subprocess
import sys
from unittest import mock

import tensorflow as tf

from sentzoo.reports import hybrid_table

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _write_result(runs_dir, task, encoder, mode, test, dev=0.8):
  folder = os.path.join(runs_dir, f"{task}_{encoder}_{mode}")
  os.makedirs(folder, exist_ok=True)
  with open(os.path.join(folder, "results.json"), "w") as f:
    json.dump({"test_accuracy": test, "dev_accuracy": dev, "best_epoch": 3,
               "parameters_without_embeddings": 1234,
               "seconds_this_run": 5.0, "word_vectors": "vectors/1",
               "word_vectors_scale_to_std": 0.1443, "lazy_adam": True,
               "learning_rate": 0.001, "batch_size": 128, "num_epochs": 20},
              f)


class HybridTableTest(tf.test.TestCase):

  def test_table_only_page(self):
    root = self.get_temp_dir()
    runs = os.path.join(root, "runs")
    for mode, test in (("contrastive", 0.70), ("logistic", 0.75),
                       ("joint", 0.76)):
      _write_result(runs, "msrp", "gru", mode, test)
    for mode, test in (("contrastive", 0.80), ("logistic", 0.9),
                       ("joint", 0.85)):
      _write_result(runs, "msrp", "cnn", mode, test)
    speed = os.path.join(root, "speed.json")
    with open(speed, "w") as f:
      json.dump({"batch_size": 128, "length": 50, "threads": 2,
                 "vocab_size": 20000,
                 "load_average": "1.00 before, 1.00 after",
                 "encoders": [{"encoder": "gru", "optimizer": "lazy",
                               "parameters_without_embeddings": 422001,
                               "seconds_per_100_steps": 12.5}]}, f)
    output = os.path.join(root, "page.md")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "reports.hybrid_table", "--table_only",
         f"--runs_dir={runs}", f"--output={output}", "--tasks=msrp",
         "--encoders=gru,cnn,lstm", f"--speed_results={speed}"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-2000:])
    with open(output) as f:
      page = f.read()
    self.assertIn("| GRU | 70.00 | 75.00 | 76.00 | yes (+6.00 vs "
                  "contrastive, +1.00 vs logistic) |", page)
    self.assertIn("| CNN | 80.00 | 90.00 | 85.00 | no (+5.00 vs "
                  "contrastive, -5.00 vs logistic) |", page)
    self.assertIn("| LSTM | not run | not run | not run | incomplete |", page)
    self.assertIn("`vectors/1`", page)
    self.assertIn("| GRU | lazy Adam | 422,001 | 12.5 |", page)
    self.assertIn("| Quora (paper, Table 1) | GRU | 86.72 | 83.00 | 86.82 |",
                  page)

  def test_unknown_encoder_is_a_user_error(self):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "reports.hybrid_table", "--table_only",
         "--encoders=rnn", f"--output={self.get_temp_dir()}/x.md"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(result.returncode, 2)
    self.assertIn("error: unknown encoder", result.stderr)


  def test_runs_are_trained_in_process_into_their_logs(self):
    root = self.get_temp_dir()
    runs = os.path.join(root, "in_process")
    _write_result(runs, "msrp", "gru", "contrastive", 0.7)  # Not rerun.
    calls = []

    def fake_run(argv):
      calls.append(argv)
      model_dir = next(a.split("=", 1)[1] for a in argv
                       if a.startswith("--model_dir="))
      print(f"training into {model_dir}", flush=True)
      mode = model_dir.rsplit("_", 1)[1]
      _write_result(os.path.dirname(model_dir), "msrp", "gru", mode,
                    {"logistic": 0.75, "joint": 0.8}[mode])

    output = os.path.join(root, "in_process.md")
    with mock.patch.object(hybrid_table.hybrid_siamese, "run", fake_run):
      page = hybrid_table.run(
          ["hybrid_table", f"--runs_dir={runs}", f"--output={output}",
           "--tasks=msrp", "--encoders=gru", "--data_dir=/data",
           "--num_epochs=2", "--extra_flags=--seed=3"])
    self.assertEqual(calls, [
        ["--flagfile=configs/hybrid_msrp_gru.flags", f"--mode={mode}",
         f"--model_dir={runs}/msrp_gru_{mode}", "--noexport",
         "--data_dir=/data", "--num_epochs=2", "--seed=3"]
        for mode in ("logistic", "joint")])
    with open(os.path.join(runs, "msrp_gru_joint", "train.log")) as f:
      self.assertEqual(f.read(), f"training into {runs}/msrp_gru_joint\n")
    self.assertFalse(os.path.exists(
        os.path.join(runs, "msrp_gru_contrastive", "train.log")))
    self.assertIn("| GRU | 70.00 | 75.00 | 80.00 | yes", page)
    with open(output) as f:
      self.assertEqual(f.read(), page)


if __name__ == "__main__":
  tf.test.main()
