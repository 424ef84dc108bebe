"""Tests of `python -m trainers.hybrid_siamese` on tiny pair files it writes (one device and MirroredStrategy on 2 logical CPUs).

One-device runs go through `hybrid_siamese.run` in this process (a
`python -m` run would pay TensorFlow's import, ~5 s); the mirrored ones,
which need 2 logical CPUs set before TensorFlow starts, are subprocesses.
What an `errors.UserError` or `errors.Interrupted` becomes on the command
line (one `error:` line and exit 2, exit 75) is common/cli.py's, tested in
common/cli_test.py and trainers/flag_validation_test.py.
"""

import json
import os
import random
import subprocess
import sys

import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.inputs import pair_datasets
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.models import hybrid_siamese
from sentzoo.tests import trainer_fixtures
from sentzoo.trainers import hybrid_siamese as trainer
from sentzoo.trainers import hybrid_siamese_step
from sentzoo.trainers import lazy_optimizers
from sentzoo.trainers import training_loop

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = [f"w{i}" for i in range(30)]


def _write_msrp_files(folder, seed=0):
  """MSRP-format train/dev/test: a match iff both share their first word."""
  rng = random.Random(seed)
  os.makedirs(folder, exist_ok=True)
  paths = {}
  for split, n in (("train", 48), ("dev", 12), ("test", 12)):
    lines = ["\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String"]
    for i in range(n):
      a = [rng.choice(WORDS) for _ in range(rng.randint(1, 7))]
      label = i % 2
      b = [a[0] if label else rng.choice(WORDS)] + [
          rng.choice(WORDS) for _ in range(rng.randint(0, 5))]
      lines.append(f"{label}\t{i}\t{i + 1000}\t{' '.join(a)}.\t"
                   f"{' '.join(b)}!")
    paths[split] = os.path.join(folder, f"{split}.tsv")
    with open(paths[split], "w", encoding="utf-8") as f:
      f.write("\r\n".join(lines) + "\r\n")
  vectors = os.path.join(folder, "vectors.txt")
  with open(vectors, "w") as f:
    for w in WORDS[:20]:
      f.write(w + " " + " ".join(f"{rng.uniform(-1, 1):.3f}"
                                 for _ in range(6)) + "\n")
  return paths, vectors


def _train(args):
  env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.run(
      [sys.executable, "-m", "trainers.hybrid_siamese", *args],
      cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)


def _train_here(args):
  return trainer_fixtures.run_printed(trainer, args)


class HybridSiameseTrainerTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), "hybrid_trainer")
    cls.paths, cls.vectors = _write_msrp_files(os.path.join(root, "data"))
    cls.root = root
    cls.common = [
        "--task=msrp", f"--train_file={cls.paths['train']}",
        f"--dev_file={cls.paths['dev']}", f"--test_file={cls.paths['test']}",
        f"--word_vectors={cls.vectors}", "--encoder=cnn",
        "--cnn_filters=3", "--mlp_units=5,5", "--batch_size=16",
        "--num_epochs=3", "--log_every_steps=2"]

  def test_a_run_shorter_than_one_epoch_exports_its_final_model(self):
    model_dir = os.path.join(self.root, "short")
    stdout = _train_here(self.common + [f"--model_dir={model_dir}",
                                        "--train_steps=2"])
    # Was a TypeError (no epoch's end, so no best model) and no export.
    with open(os.path.join(model_dir, "results.json")) as f:
      results = json.load(f)
    self.assertEqual((results["final_step"], results["best_epoch"]), (2, 0))
    self.assertIn("best dev epoch 0", stdout)
    self.assertTrue(os.path.isdir(os.path.join(model_dir, "export")))

  def test_train_resume_best_epoch_and_export(self):
    model_dir = os.path.join(self.root, "resume")
    # Interrupted with a checkpoint (exit 75 on the command line).
    with self.assertRaisesRegex(
        errors.Interrupted,
        "stopped at step 4; rerun the same command to resume"):
      _train_here(self.common + [f"--model_dir={model_dir}",
                                 "--max_steps_per_run=4"])
    self.assertFalse(os.path.exists(os.path.join(model_dir, "results.json")))
    second = _train_here(self.common + [f"--model_dir={model_dir}"])
    self.assertIn("resumed from", second)
    with open(os.path.join(model_dir, "results.json")) as f:
      results = json.load(f)
    self.assertEqual(results["steps_per_epoch"], 3)
    self.assertEqual(results["final_step"], 9)
    self.assertEqual(results["pretrained_words"], 20)
    with open(os.path.join(model_dir, "epochs.jsonl")) as f:
      epochs = [json.loads(line) for line in f]
    per_epoch = {e["epoch"]: e for e in epochs}
    self.assertEqual([e["epoch"] for e in epochs], [1, 2, 3])
    best = max(per_epoch.values(), key=lambda e: e["dev_accuracy"])
    self.assertEqual(results["dev_accuracy"], best["dev_accuracy"])
    self.assertEqual(results["test_accuracy"],
                     per_epoch[results["best_epoch"]]["test_accuracy"])
    self.assertTrue(os.path.exists(os.path.join(model_dir, "best",
                                                "ckpt.index")))
    # The best epoch's test decisions survive the resume; joint mode has no
    # tuned threshold.
    with np.load(os.path.join(model_dir, "test_predictions.npz")) as saved:
      self.assertEqual(sorted(saved), ["correct"])
      self.assertLen(saved["correct"], 12)
      self.assertAlmostEqual(float(np.mean(saved["correct"])),
                             results["test_accuracy"])
    self.assertIsNone(results["tuned_threshold"])
    self.assertTrue(os.path.exists(os.path.join(model_dir, "export", "1",
                                                "saved_model.pb")))
    with open(os.path.join(model_dir, "model_config.json")) as f:
      config = json.load(f)
    self.assertEqual(config["model_type"], "hybrid_siamese")
    self.assertEqual(config["model"]["encoder"], "cnn")
    # Every model weight is in the checkpoints: table 1, CNN 6, MLP 6 (the
    # resume checkpoint names the non-table ones through the optimizer).
    best = [n for n, _ in tf.train.list_variables(
        os.path.join(model_dir, "best", "ckpt")) if n.startswith("model/")]
    self.assertLen(best, 13, best)
    latest = [n for n, _ in tf.train.list_variables(
        tf.train.latest_checkpoint(os.path.join(model_dir, "checkpoints")))
              if n.startswith(("model/", "optimizer/_trainable_variables/"))]
    self.assertLen(latest, 13, latest)

  def test_contrastive_mode_reports_a_dev_tuned_threshold(self):
    model_dir = os.path.join(self.root, "contrastive")
    _train_here(self.common + [f"--model_dir={model_dir}",
                               "--mode=contrastive", "--num_epochs=2",
                               "--noexport"])
    with open(os.path.join(model_dir, "results.json")) as f:
      results = json.load(f)
    with open(os.path.join(model_dir, "epochs.jsonl")) as f:
      epochs = [json.loads(line) for line in f]
    tuned = results["tuned_threshold"]
    best = max(epochs, key=lambda e: e["tuned_threshold"]["dev_accuracy"])
    self.assertEqual(tuned, best["tuned_threshold"])
    # Tuned on dev, so at least as good on dev as the fixed 0.5 that epoch.
    self.assertGreaterEqual(tuned["dev_accuracy"],
                            next(e["dev_accuracy"] for e in epochs
                                 if e["epoch"] == tuned["epoch"]))
    with np.load(os.path.join(model_dir, "test_predictions.npz")) as saved:
      self.assertAlmostEqual(float(np.mean(saved["correct"])),
                             results["test_accuracy"])
      self.assertAlmostEqual(float(np.mean(saved["correct_tuned"])),
                             tuned["test_accuracy"])

  def test_a_missing_train_file_is_a_user_error(self):
    with self.assertRaisesRegex(errors.UserError, "/nonexistent/train.tsv"):
      _train_here(self.common[:1] + [
          "--train_file=/nonexistent/train.tsv",
          f"--dev_file={self.paths['dev']}",
          f"--test_file={self.paths['test']}",
          f"--model_dir={os.path.join(self.root, 'bad')}"])

  def test_missing_model_dir_is_a_user_error(self):
    # --model_dir is checked when the run starts, not by absl at import:
    # this test module imports the trainer and parses its own flags.
    with self.assertRaisesRegex(errors.UserError,
                                "^missing required flag: --model_dir$"):
      _train_here(self.common)


def _checkpointed(model_dir):
  """{name: value} of the model and optimizer in the latest checkpoint."""
  reader = tf.train.load_checkpoint(os.path.join(model_dir, "checkpoints"))
  return {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map()
          if n.startswith(("model/", "optimizer/"))}


class DistributedTrainingTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(),
                        "hybrid_distributed")
    paths, vectors = _write_msrp_files(os.path.join(root, "data"))
    # 47 training pairs in global batches of 10: every epoch ends with a
    # batch of 7, cut 3 + 4 over 2 replicas.
    with open(paths["train"], encoding="utf-8") as f:
      lines = f.read().splitlines()
    odd_train = os.path.join(root, "data", "train47.tsv")
    with open(odd_train, "w", encoding="utf-8") as f:
      f.write("\r\n".join(lines[:48]) + "\r\n")
    cls.root = root
    cls.common = [
        "--task=msrp", f"--train_file={odd_train}",
        f"--dev_file={paths['dev']}", f"--test_file={paths['test']}",
        f"--word_vectors={vectors}", "--encoder=cnn", "--cnn_filters=3",
        "--mlp_units=5,5", "--batch_size=10", "--num_epochs=2",
        "--learning_rate=0.01", "--log_every_steps=1", "--noexport"]

  def _run(self, name, extra_args=()):
    model_dir = os.path.join(self.root, name)
    result = _train(self.common + list(extra_args)
                    + [f"--model_dir={model_dir}"])
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    return model_dir

  def test_mirrored_on_two_cpus_matches_one_device(self):
    single = self._run("single")
    mirrored = self._run("mirrored", ["--strategy=mirrored",
                                      "--num_cpu_devices=2"])
    with open(os.path.join(mirrored, "results.json")) as f:
      results = json.load(f)
    self.assertEqual(results["replicas"], 2)
    self.assertEqual(results["train_pairs"], 47)
    self.assertEqual(results["final_step"], 10)
    logs = [training_loop.read_train_log(d) for d in (single, mirrored)]
    self.assertEqual([r["step"] for r in logs[1]], list(range(1, 11)))
    # Steps 5 and 10 are the 7-pair batches: replica shares weighted 3/7
    # and 4/7 (not 1/2) give the one-device mean.
    for name in ("loss", "contrastive_loss", "logistic_loss"):
      self.assertAllClose([r[name] for r in logs[0]],
                          [r[name] for r in logs[1]], atol=1e-5)
    losses = np.array([r["loss"] for r in logs[1]])
    self.assertLess(losses[-3:].mean(), losses[:3].mean())
    # Weights and LazyAdam's moments (IndexedSlices summed over replicas).
    expected, actual = _checkpointed(single), _checkpointed(mirrored)
    self.assertEqual(sorted(expected), sorted(actual))
    self.assertGreater(len(actual), 13)
    for name, value in expected.items():
      self.assertAllClose(value, actual[name], atol=1e-5, msg=name)

  def test_strategy_user_errors_have_no_traceback(self):
    bad = os.path.join(self.root, "bad")
    mirrored = ["--strategy=mirrored", "--num_cpu_devices=2",
                f"--model_dir={bad}"]
    for batch_size, message in (
        (15, "error: --batch_size=15 (the global batch) must be a multiple "
         "of the 2 replicas"),
        # 47 = 46 + 1: one pair cannot be split over 2 replicas.
        (46, "error: the last batch of each epoch has 1 pairs")):
      result = _train(self.common + [f"--batch_size={batch_size}"]
                      + mirrored)
      self.assertEqual(result.returncode, 2, result.stderr[-3000:])
      self.assertIn(message, result.stderr)
      self.assertNotIn("Traceback", result.stderr)


class TrainStepTest(tf.test.TestCase):

  def test_every_mode_learns_a_batch(self):
    rng = np.random.default_rng(0)
    ids_a = rng.integers(1, 40, size=(16, 6)).astype("int32")
    ids_a[0] = 0  # An empty sentence: no NaN.
    ids_b = ids_a.copy()
    labels = np.arange(16) % 2
    ids_b[labels == 0] = rng.integers(1, 40, size=(8, 6))
    batch = ((tf.constant(ids_a), tf.constant(ids_b)), tf.constant(labels))
    # Every mode with the CNN; the recurrent encoders' gradients are tested
    # with their layers (tracing them is slow).
    for encoder, modes in (("cnn", hybrid_siamese.MODES), ("gru", ["joint"])):
      for mode in modes:
        keras.utils.set_random_seed(0)
        model = hybrid_siamese.HybridSiamese(40, 8, encoder, encoder_units=6,
                                             cnn_filters=4, mlp_units=(8,))
        model.build()
        optimizer = lazy_optimizers.LazyAdam(0.01)
        step = hybrid_siamese_step.make_train_step(
            model, optimizer, mode, contrastive_weight=0.5)
        losses = [float(step(batch)["loss"]) for _ in range(6)]
        self.assertTrue(np.all(np.isfinite(losses)), (encoder, mode))
        self.assertLess(losses[-1], losses[0], (encoder, mode))

  def test_frozen_embeddings_stay_fixed(self):
    model = hybrid_siamese.HybridSiamese(20, 4, "cnn", cnn_filters=2,
                                         mlp_units=(3,))
    model.build()
    before = model.embedding.embeddings.numpy()
    step = hybrid_siamese_step.make_train_step(
        model, keras.optimizers.Adam(0.1), "joint", train_embeddings=False)
    ids = tf.constant([[1, 2, 3], [4, 5, 0]])
    step(((ids, ids[::-1]), tf.constant([1, 0])))
    self.assertAllEqual(model.embedding.embeddings, before)

  def test_replica_pieces_cut_batches_without_duplicates(self):
    # Batches of 4 and 3 rows (the last batch of an epoch), ((a, b), y).
    rows = tf.range(7)
    dataset = tf.data.Dataset.from_tensor_slices(
        ((rows * 10, rows * 100), rows)).batch(4)
    def pieces(num, first, count):
      return [(a.numpy().tolist(), b.numpy().tolist(), y.numpy().tolist())
              for (a, b), y in hybrid_siamese_step.replica_pieces(
                  dataset, num, first, count)]
    everything = pieces(2, 0, 2)
    self.assertEqual([y for _, _, y in everything],
                     [[0, 1], [2, 3], [4], [5, 6]])
    self.assertEqual(everything[3], ([50, 60], [500, 600], [5, 6]))
    # Two pipelines of one replica each: disjoint, together everything.
    self.assertEqual(pieces(2, 0, 1), everything[0::2])
    self.assertEqual(pieces(2, 1, 1), everything[1::2])
    self.assertEqual(pieces(1, 0, 1),
                     [([0, 10, 20, 30], [0, 100, 200, 300], [0, 1, 2, 3]),
                      ([40, 50, 60], [400, 500, 600], [4, 5, 6])])

  def test_pad_ids_rounds_up_and_truncates(self):
    ids = tf.ragged.constant([[1, 2, 3], [4], []], tf.int32)
    self.assertEqual(hybrid_siamese.pad_ids(ids, 50, 10).shape, (3, 10))
    self.assertEqual(hybrid_siamese.pad_ids(ids, 2, 10).shape, (3, 2))
    self.assertEqual(hybrid_siamese.pad_ids(ids, 50, 0).shape, (3, 50))
    self.assertAllEqual(hybrid_siamese.pad_ids(ids, 50, 1),
                        [[1, 2, 3], [4, 0, 0], [0, 0, 0]])

  def test_vocabulary_keeps_train_words_and_pretrained_test_words(self):
    sets = {"train": pair_datasets.PairSet("t", ["a b", "b c"], ["c"],
                                           np.array([1, 0])),
            "test": pair_datasets.PairSet("e", ["d e"], ["f"], np.array([1]))}
    vocabulary = trainer.build_vocabulary(sets, tokenizer_lib.Tokenizer(),
                                          {"e", "a"})
    self.assertEqual(vocabulary.words, ["b", "c", "a", "e"])


if __name__ == "__main__":
  tf.test.main()
