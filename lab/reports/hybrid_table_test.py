"""Tests for the hybrid siamese results table (the trainer is faked)."""

import json
import os
import subprocess
import sys
from unittest import mock

import numpy as np
import tensorflow as tf

from lab.reports import hybrid_sweep
from lab.reports import hybrid_table

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _write_result(runs_dir, task, encoder, mode, test, dev=0.8, seed=0,
                  correct=None, tuned=None):
  folder = os.path.join(runs_dir, f"{task}_{encoder}_{mode}", f"seed{seed}")
  os.makedirs(folder, exist_ok=True)
  with open(os.path.join(folder, "results.json"), "w") as f:
    json.dump({"test_accuracy": test, "dev_accuracy": dev, "best_epoch": 3,
               "parameters_without_embeddings": 1234,
               "seconds_this_run": 5.0, "word_vectors": "vectors/1",
               "word_vectors_scale_to_std": 0.1443, "lazy_adam": True,
               "learning_rate": 0.001, "batch_size": 128, "num_epochs": 20,
               "tuned_threshold": tuned}, f)
  if correct is not None:
    np.savez(os.path.join(folder, "test_predictions.npz"), **correct)


def _write_msrp_test(data_dir, labels):
  """An MSRP test file of len(labels) pairs under data_dir/msrp/."""
  os.makedirs(os.path.join(data_dir, "msrp"), exist_ok=True)
  with open(os.path.join(data_dir, "msrp", "msr-para-test.tsv"), "w") as f:
    f.write("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n")
    for i, label in enumerate(labels):
      f.write(f"{label}\t{i}\t{i + 100}\tA {i}.\tB {i}.\n")


def _decisions(accuracy, n=200, offset=0):
  """bool [n] with round(accuracy * n) right, starting at `offset`."""
  right = np.zeros([n], bool)
  right[(np.arange(int(round(accuracy * n))) + offset) % n] = True
  return right


class HybridTableTest(tf.test.TestCase):

  def test_table_only_page(self):
    root = self.get_temp_dir()
    runs = os.path.join(root, "runs")
    # GRU: joint is better than both single losses on every seed and on
    # the pooled test decisions: the claim holds.
    for seed in range(3):
      for mode, test in (("contrastive", 0.70), ("logistic", 0.75),
                         ("joint", 0.80)):
        test += 0.01 * seed
        correct = {"correct": _decisions(test)}
        tuned = None
        if mode == "contrastive":
          tuned = {"threshold": 1.25, "epoch": 4, "dev_accuracy": 0.9,
                   "test_accuracy": test + 0.02}
          correct["correct_tuned"] = _decisions(test + 0.02)
        _write_result(runs, "msrp", "gru", mode, test, seed=seed,
                      correct=correct, tuned=tuned)
    # CNN, two seeds: joint is above contrastive and below logistic by
    # amounts the tests cannot separate from noise.
    for seed, values in enumerate(((0.80, 0.86, 0.84), (0.82, 0.84, 0.83))):
      for mode, test in zip(("contrastive", "logistic", "joint"), values):
        _write_result(runs, "msrp", "cnn", mode, test, seed=seed,
                      correct={"correct": _decisions(test, offset=7 * seed)})
    data_dir = os.path.join(root, "data")
    _write_msrp_test(data_dir, [1, 0, 1])
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "lab.reports.hybrid_table",
         f"--data_dir={data_dir}",
         f"--runs_dir={runs}", "--tasks=msrp",
         f"--records_dir={root}/no_records",
         "--encoders=gru,cnn,lstm"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-2000:])
    page = result.stdout
    # Joint - contrastive is 10.00 on every seed (t-test p = 0: no
    # variance); McNemar on 3 x 20 discordant decisions, all for joint.
    self.assertIn("| GRU | 71.00 ± 1.00 (n=3) | 73.00 ± 1.00 (n=3) | "
                  "76.00 ± 1.00 (n=3) | 81.00 ± 1.00 (n=3) | holds | "
                  "+10.00 vs contrastive, p <0.001 / <0.001; +5.00 vs "
                  "logistic, p <0.001 / <0.001 |", page)
    self.assertIn("| CNN | 81.00 ± 1.41 (n=2) | not run | 85.00 ± 1.41 "
                  "(n=2) | 83.50 ± 0.71 (n=2) | not distinguishable at "
                  "p<0.05 |", page)
    self.assertIn("| LSTM | not run | not run | not run | not run | not run",
                  page)
    # Only GRU has a dev-tuned contrastive cell, 73.00 > 66.67.
    self.assertIn("Always answering \"match\", the test set's majority class, "
                  "scores 66.67%. Contrastive cells (dev-tuned threshold, "
                  "mean over seeds) below it: none (of GRU).", page)
    # Per-run rows: the tuned threshold of contrastive runs.
    self.assertIn("| GRU | Contrastive | 1 | 3 | 80.00 | 71.00 | 1.250 "
                  "(epoch 4) | 90.00 | 73.00 | 1,234 | 5 |", page)
    self.assertIn("| GRU | +8.00 | 0.000 |", page.replace("<0.001", "0.000"))
    # 9 GRU and 6 CNN runs of 5 s each.
    self.assertIn("**Wall time.** The 15 runs on this page took 1.2 min in "
                  "all", page)
    self.assertIn("`vectors/1`", page)
    self.assertIn("| Quora (paper, Table 1) | GRU | 86.72 | 83.00 | 86.82 |",
                  page)

  def test_majority_line_names_the_cells_below_it(self):
    root = os.path.join(self.get_temp_dir(), "majority")
    runs = os.path.join(root, "runs")
    for seed, tuned_test in enumerate((0.60, 0.62)):
      _write_result(runs, "msrp", "cnn", "contrastive", 0.4, seed=seed,
                    tuned={"threshold": 1.9, "epoch": 1, "dev_accuracy": 0.7,
                           "test_accuracy": tuned_test})
    _write_msrp_test(os.path.join(root, "data"), [0, 0, 0, 1])
    fv = hybrid_table.cli.parse_own_flags(
        hybrid_table.define_flags,
        ["x", f"--runs_dir={runs}", f"--data_dir={root}/data",
         "--records_dir=", "--tasks=msrp", "--encoders=cnn,gru"])
    self.assertEqual(
        hybrid_table.majority_line(fv, "msrp", [0, 1, 2]),
        "Always answering \"no match\", the test set's majority class, "
        "scores 75.00%. Contrastive cells (dev-tuned threshold, mean over "
        "seeds) below it: CNN (61.00) (of CNN).")
    fv = hybrid_table.cli.parse_own_flags(
        hybrid_table.define_flags,
        ["x", f"--runs_dir={runs}", f"--data_dir={root}/no_data",
         "--records_dir=", "--tasks=msrp"])
    self.assertIn("unknown (its file is not in the data directory, or has "
                  "no pairs)", hybrid_table.majority_line(fv, "msrp", [0]))
    # An empty test file: no majority (and no NaN).
    _write_msrp_test(os.path.join(root, "empty"), [])
    fv = hybrid_table.cli.parse_own_flags(
        hybrid_table.define_flags,
        ["x", f"--runs_dir={runs}", f"--data_dir={root}/empty",
         "--records_dir=", "--tasks=msrp"])
    self.assertIsNone(hybrid_table.majority_accuracy(fv, "msrp"))
    self.assertNotIn("nan", hybrid_table.majority_line(fv, "msrp", [0]))

  def test_significant_loss_is_does_not_hold(self):
    root = self.get_temp_dir()
    runs = os.path.join(root, "worse")
    for seed in range(3):
      for mode, test in (("contrastive", 0.90), ("logistic", 0.70),
                         ("joint", 0.75)):
        test += 0.01 * seed * (mode == "joint")
        _write_result(runs, "sick", "lstm", mode, test, seed=seed,
                      correct={"correct": _decisions(test)})
    fv = hybrid_table.cli.parse_own_flags(
        hybrid_table.define_flags,
        ["x", f"--runs_dir={runs}", "--tasks=sick", "--encoders=lstm"])
    verdict, detail = hybrid_table.joint_claim(fv, "sick", "lstm", [0, 1, 2])
    self.assertEqual(verdict, "does not hold")
    self.assertIn("-14.00 vs contrastive", detail)

  def test_unknown_encoder_is_a_user_error(self):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "lab.reports.hybrid_table",
         "--encoders=rnn",
         "--records_dir="],
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
      seed = int(model_dir.rsplit("seed", 1)[1])
      mode = os.path.dirname(model_dir).rsplit("_", 1)[1]
      _write_result(runs, "msrp", "gru", mode,
                    {"contrastive": 0.7, "logistic": 0.75,
                     "joint": 0.8}[mode] + 0.01 * seed, seed=seed)

    with mock.patch.object(hybrid_sweep.hybrid_siamese, "run", fake_run):
      page = hybrid_sweep.run(
          ["hybrid_sweep", f"--runs_dir={runs}",
           f"--records_dir={root}/in_process_records",
           "--tasks=msrp", "--encoders=gru", "--data_dir=/data",
           "--num_epochs=2", "--extra_flags=--max_steps_per_run=9",
           "--seeds=0,1"])
    expected = [(0, "logistic"), (0, "joint"), (1, "contrastive"),
                (1, "logistic"), (1, "joint")]
    self.assertEqual(calls, [
        ["--flagfile=configs/hybrid_msrp_gru.flags", f"--mode={mode}",
         f"--seed={seed}", f"--model_dir={runs}/msrp_gru_{mode}/seed{seed}",
         "--noexport", "--data_dir=/data", "--num_epochs=2",
         "--max_steps_per_run=9"]
        for seed, mode in expected])
    with open(os.path.join(runs, "msrp_gru_joint", "seed1",
                           "train.log")) as f:
      self.assertEqual(f.read(),
                       f"training into {runs}/msrp_gru_joint/seed1\n")
    self.assertFalse(os.path.exists(
        os.path.join(runs, "msrp_gru_contrastive", "seed0", "train.log")))
    # No test decisions saved by the fake: the t-test alone cannot decide.
    self.assertIn("| GRU | 70.50 ± 0.71 (n=2) | not run | 75.50 ± 0.71 "
                  "(n=2) | 80.50 ± 0.71 (n=2) | not distinguishable at "
                  "p<0.05 | +10.00 vs contrastive, p 0.000", page.replace(
                      "<0.001", "0.000"))

  def _fake_trainer(self, runs, calls):
    def fake_run(argv):
      calls.append(argv)
      model_dir = next(a.split("=", 1)[1] for a in argv
                       if a.startswith("--model_dir="))
      seed = int(model_dir.rsplit("seed", 1)[1])
      mode = os.path.dirname(model_dir).rsplit("_", 1)[1]
      test = {"contrastive": 0.7, "logistic": 0.75, "joint": 0.8}[mode]
      test += 0.01 * seed
      correct = {"correct": _decisions(test, offset=seed)}
      tuned = None
      if mode == "contrastive":
        tuned = {"threshold": 1.1, "epoch": 2, "dev_accuracy": 0.85,
                 "test_accuracy": test + 0.01}
        correct["correct_tuned"] = _decisions(test + 0.01, offset=seed)
      _write_result(runs, "msrp", "gru", mode, test, seed=seed,
                    correct=correct, tuned=tuned)
    return fake_run

  def test_records_give_the_same_page_and_are_not_retrained(self):
    root = self.get_temp_dir()
    runs = os.path.join(root, "recorded_runs")
    records = os.path.join(root, "records")
    flags = [f"--runs_dir={runs}", f"--records_dir={records}", "--tasks=msrp",
             "--encoders=gru", "--seeds=0,1"]
    calls = []
    with mock.patch.object(hybrid_sweep.hybrid_siamese, "run",
                           self._fake_trainer(runs, calls)):
      from_runs = hybrid_sweep.run(["hybrid_sweep"] + flags)
    self.assertLen(calls, 6)
    record = os.path.join(records, "msrp_gru_contrastive", "seed1")
    self.assertCountEqual(os.listdir(record),
                          ["results.json", "test_predictions.npz"])
    with np.load(os.path.join(record, "test_predictions.npz")) as saved:
      self.assertAllEqual(saved["correct_tuned"], _decisions(0.72, offset=1))
    # On a fresh machine (no run folders) the page comes from the records.
    os.rename(runs, runs + ".gone")
    from_records = hybrid_table.run(["hybrid_table"] + flags)
    self.assertEqual(from_records, from_runs)
    self.assertIn("| GRU | 70.50 ± 0.71 (n=2) | 71.50 ± 0.71 (n=2) |",
                  from_records)
    # A recorded run is not trained again, unless named.
    calls.clear()
    with mock.patch.object(hybrid_sweep.hybrid_siamese, "run",
                           self._fake_trainer(runs, calls)):
      self.assertEqual(hybrid_sweep.run(["hybrid_sweep"] + flags),
                       from_runs)
      self.assertEqual(calls, [])
      hybrid_sweep.run(["hybrid_sweep", "--retrain=msrp_gru_joint/seed1,"
                        "msrp_gru_logistic"] + flags)
    self.assertEqual(
        [a[1:3] for a in calls],
        [["--mode=logistic", "--seed=0"], ["--mode=logistic", "--seed=1"],
         ["--mode=joint", "--seed=1"]])

  def test_finished_run_without_record_is_recorded_not_trained(self):
    root = self.get_temp_dir()
    runs = os.path.join(root, "unrecorded")
    records = os.path.join(root, "unrecorded_records")
    _write_result(runs, "sick", "cnn", "joint", 0.8,
                  correct={"correct": _decisions(0.8)})
    with mock.patch.object(hybrid_sweep.hybrid_siamese, "run") as trainer:
      hybrid_sweep.run(["hybrid_sweep", f"--runs_dir={runs}",
                        f"--records_dir={records}", "--tasks=sick",
                        "--encoders=cnn", "--modes=joint", "--seeds=0",])
    trainer.assert_not_called()
    self.assertTrue(os.path.exists(os.path.join(
        records, "sick_cnn_joint", "seed0", "results.json")))

  def test_word_vector_choice_names_the_vectors_of_every_run(self):
    root = self.get_temp_dir()
    runs = os.path.join(root, "choice_runs")
    choice = os.path.join(root, "zoo_word_vectors.json")
    with open(choice, "w") as f:
      json.dump({"selected": "Sent2Vec uni", "model_dir": "runs/uni",
                 "candidates": [
                     {"name": "Siamese CBOW", "dev_pearson": 57.38},
                     {"name": "Sent2Vec uni", "dev_pearson": 64.04}]}, f)
    calls = []
    flags = [f"--runs_dir={runs}", f"--records_dir={root}/choice_records", "--tasks=msrp", "--encoders=gru",
             "--seeds=0", f"--word_vector_choice={choice}"]
    with mock.patch.object(hybrid_sweep.hybrid_siamese, "run",
                           self._fake_trainer(runs, calls)):
      page = hybrid_sweep.run(["hybrid_sweep"] + flags)
    self.assertLen(calls, 3)
    for argv in calls:
      self.assertIn("--word_vectors=runs/uni", argv)
    text = " ".join(page.split())  # the page's prose is wrapped
    self.assertIn("Sent2Vec uni, the zoo's word vectors with the highest "
                  "STS-B dev Pearson", text)
    self.assertIn("Siamese CBOW 57.38; Sent2Vec uni 64.04", text)
    with self.assertRaisesRegex(hybrid_table.errors.UserError, "not both"):
      hybrid_sweep.run(["hybrid_sweep", "--word_vectors=x"]
                       + flags)
    with self.assertRaisesRegex(hybrid_table.errors.UserError,
                                "train_zoo_word_vectors"):
      hybrid_table.run(["hybrid_table",
                        f"--word_vector_choice={root}/missing.json"])

  def test_bad_retrain_is_a_user_error(self):
    with self.assertRaisesRegex(hybrid_table.errors.UserError, "--retrain"):
      hybrid_sweep.run(["hybrid_sweep", "--retrain=msrp_gru_joint/seedx",
                        "--records_dir=", f"--runs_dir={self.get_temp_dir()}"
                        "/none",])

  def test_bad_seeds_are_a_user_error(self):
    with self.assertRaisesRegex(hybrid_table.errors.UserError, "--seeds"):
      hybrid_table.run(["hybrid_table", "--seeds=a",])


if __name__ == "__main__":
  tf.test.main()
