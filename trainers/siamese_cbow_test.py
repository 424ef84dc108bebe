"""End-to-end tests of `python -m trainers.siamese_cbow` on a tiny corpus."""

import glob
import gzip
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import tensorflow as tf

from sentzoo.common import run_lock
from sentzoo.tests import corpus_fixtures
from sentzoo.tests import trainer_fixtures
from sentzoo.trainers import siamese_cbow

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _train(args, env_data_dir=None):
  env = trainer_fixtures.child_env(XDG_CACHE_HOME=os.path.join(
      tf.compat.v1.test.get_temp_dir(), "xdg_cache"))
  if env_data_dir:
    env["SENTZOO_DATA_DIR"] = env_data_dir
  return subprocess.run(
      [sys.executable, "-m", "trainers.siamese_cbow", *args],
      cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)


def _final_embeddings(model_dir):
  return trainer_fixtures.checkpoint_table(model_dir, "embeddings")


class SiameseCbowTrainerTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.data_dir = os.path.join(
        tf.compat.v1.test.get_temp_dir(), "trainer_test_data")
    corpus_fixtures.write_book_corpus(cls.data_dir)
    cls.common = ["--data_dir=" + cls.data_dir, "--embedding_dim=16",
                  "--batch_size=20", "--min_count=1", "--learning_rate=0.5",
                  "--num_epochs=2", "--checkpoint_every_steps=5",
                  "--log_every_steps=5", "--eval_every_steps=0",
                  "--heldout_books=1"]

  def test_trains_exports_and_reloads(self):
    model_dir = os.path.join(self.get_temp_dir(), "full")
    result = _train(self.common + ["--model_dir=" + model_dir])
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    # Resolved flags are written as a reusable flagfile.
    with open(os.path.join(model_dir, "flags.txt")) as f:
      self.assertIn("--embedding_dim=16", f.read())
    with open(os.path.join(model_dir, "corpus_stats.json")) as f:
      batches_per_epoch = json.load(f)["batches_per_epoch"]
    self.assertGreater(batches_per_epoch, 10)
    self.assertIn(f"step {2 * batches_per_epoch}/{2 * batches_per_epoch}",
                  result.stdout)
    self.assertTrue(tf.io.gfile.glob(
        os.path.join(model_dir, "tensorboard", "events.out.tfevents.*")))
    export_path = os.path.join(model_dir, "export", "1")
    self.assertTrue(os.path.exists(
        os.path.join(export_path, "saved_model.pb")))
    self.assertIn("export: " + os.path.abspath(export_path), result.stdout)
    # The export averages the trained word vectors.
    loaded = tf.saved_model.load(export_path)
    serve = loaded.signatures["serving_default"]
    out = serve(sentences=tf.constant(["w1 w2.", "", "unknown words",
                                       "W1 w1 w2"]))["embeddings"].numpy()
    table = _final_embeddings(model_dir)
    vocab = [l.split("\t")[0] for l in
             open(os.path.join(model_dir, "vocab.txt"), encoding="utf-8")]
    ids = {w: i + 1 for i, w in enumerate(vocab)}
    w1, w2 = table[ids["w1"]], table[ids["w2"]]
    self.assertAllClose(out[0], (w1 + w2) / 2, atol=1e-6)
    self.assertAllEqual(out[1], np.zeros(16))
    self.assertAllEqual(out[2], np.zeros(16))
    self.assertAllClose(out[3], (2 * w1 + w2) / 3, atol=1e-6)
    # Training moved the vectors away from N(0, 0.01) initialisation.
    self.assertGreater(np.abs(table[1:]).mean(), 0.02)
    # The untrained model was scored at the start, for the final table.
    self.assertTrue(os.path.exists(
        os.path.join(model_dir, "sts_results_untrained.json")))

  def test_optimizer_negatives_and_held_out_books(self):
    model_dir = os.path.join(self.get_temp_dir(), "variants")
    result = _train(self.common + [
        "--model_dir=" + model_dir, "--noexport", "--heldout_books=1",
        "--optimizer=adagrad", "--learning_rate=0.1", "--negatives=document",
        "--min_sentence_length=3", "--batch_layout=consecutive"])
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    # Book 3 of part 2 starts at line 503 (1-based): lines 1-501 are read.
    self.assertIn("held out: 1 books from line 503 of part02.txt.gz",
                  result.stdout)
    with open(os.path.join(model_dir, "model_config.json")) as f:
      training = json.load(f)["training"]
    self.assertEqual(training["optimizer"], "adagrad")
    self.assertEqual(training["negatives"], "document")
    self.assertEqual(training["batch_layout"], "consecutive")
    self.assertEqual(training["heldout_books"], 1)
    with open(os.path.join(model_dir, "eval_log.jsonl")) as f:
      evaluations = [json.loads(line) for line in f]
    self.assertBetween(evaluations[-1]["neighbour_ranking"], 0.0, 1.0)
    with open(os.path.join(model_dir, "corpus_stats.json")) as f:
      stats = json.load(f)
    self.assertEqual(stats["key"]["line_limits"], [-1, 501])
    self.assertEqual(stats["key"]["min_sentence_length"], 3)

  def test_truncated_corpus_part_is_an_error_naming_the_file(self):
    data_dir = os.path.join(self.get_temp_dir(), "truncated_data")
    corpus_fixtures.write_book_corpus(data_dir)
    part = trainer_fixtures.truncate_corpus_part(data_dir, 2)
    args = [a for a in self.common if not a.startswith("--data_dir")]
    model_dir = os.path.join(self.get_temp_dir(), "truncated")
    result = _train(args + ["--data_dir=" + data_dir,
                            "--model_dir=" + model_dir])
    self.assertEqual(result.returncode, 2, result.stderr[-2000:])
    self.assertIn(f"error: {part}: truncated or corrupt gzip", result.stderr)
    self.assertNotIn("Traceback", result.stderr)

  def test_holding_out_every_book_is_an_error(self):
    result = _train(self.common + [
        "--model_dir=" + os.path.join(self.get_temp_dir(), "all_out"),
        "--heldout_books=3"])
    self.assertEqual(result.returncode, 2)
    self.assertIn("--heldout_books=3", result.stderr)
    self.assertIn("cannot hold out 3", result.stderr)
    self.assertNotIn("Traceback", result.stderr)

  def test_resume_after_stop_matches_uninterrupted_run(self):
    straight = os.path.join(self.get_temp_dir(), "straight")
    sliced = os.path.join(self.get_temp_dir(), "sliced")
    args = self.common + ["--noexport"]
    result = _train(args + ["--model_dir=" + straight])
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    first = _train(args + ["--model_dir=" + sliced, "--max_steps_per_run=7"])
    # 75: interrupted with a checkpoint saved, rerun to resume.
    self.assertEqual(first.returncode, 75, first.stderr[-3000:])
    self.assertIn("stopped at step 7", first.stdout)
    second = _train(args + ["--model_dir=" + sliced])
    self.assertEqual(second.returncode, 0, second.stderr[-3000:])
    self.assertIn("resumed from", second.stdout + second.stderr)
    self.assertAllClose(_final_embeddings(straight),
                        _final_embeddings(sliced), atol=1e-5)

  def test_consecutive_batches_under_a_strategy_are_refused(self):
    result = _train(self.common + [
        "--model_dir=" + os.path.join(self.get_temp_dir(), "refused"),
        "--batch_layout=consecutive", "--strategy=mirrored",
        "--num_cpu_devices=2"])
    self.assertEqual(result.returncode, 2, result.stderr[-2000:])
    self.assertIn("--batch_layout=consecutive trains on one device",
                  result.stderr)
    self.assertNotIn("Traceback", result.stderr)

  def test_missing_data_dir_names_the_flag(self):
    # Neither flag nor variable names an existing folder (the checkout's
    # ../shared/data would be found otherwise).
    result = _train(["--model_dir=" + self.get_temp_dir()],
                    env_data_dir=os.path.join(self.get_temp_dir(), "nope"))
    self.assertEqual(result.returncode, 2)
    self.assertIn("--data_dir", result.stderr)
    self.assertIn("SENTZOO_DATA_DIR", result.stderr)
    self.assertNotIn("Traceback", result.stderr)
    result = _train(["--model_dir=" + self.get_temp_dir(),
                     "--data_dir=" + self.get_temp_dir() + "/nope"])
    self.assertEqual(result.returncode, 2, result.stderr[-3000:])
    self.assertIn("does not exist", result.stderr)
    self.assertNotIn("Traceback", result.stderr)


class SiameseCbowRunGuardsTest(tf.test.TestCase):
  """What the trainer refuses so that no work is lost (issue 33)."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.data_dir = os.path.join(
        tf.compat.v1.test.get_temp_dir(), "guards_test_data")
    corpus_fixtures.write_book_corpus(cls.data_dir)
    cls.common = ["--embedding_dim=8", "--batch_size=20", "--min_count=1",
                  "--num_epochs=1", "--checkpoint_every_steps=2",
                  "--log_every_steps=2", "--eval_every_steps=0",
                  "--heldout_books=1", "--noexport"]

  def _assert_one_error_line(self, result, text):
    self.assertEqual(result.returncode, 2, result.stderr[-3000:])
    self.assertIn(text, result.stderr)
    self.assertNotIn("Traceback", result.stderr)

  def test_a_second_run_on_a_held_model_dir_is_refused(self):
    model_dir = os.path.join(self.get_temp_dir(), "held")
    with run_lock.hold(model_dir, "training"):
      result = _train(self.common + ["--data_dir=" + self.data_dir,
                                     "--model_dir=" + model_dir])
    self._assert_one_error_line(result, "is in use by another run")
    self.assertIn(f"pid {os.getpid()}", result.stderr)
    self.assertFalse(os.path.exists(os.path.join(model_dir, "flags.txt")))

  def test_nan_flag_is_refused(self):
    result = _train(self.common + [
        "--data_dir=" + self.data_dir, "--final_learning_rate_fraction=nan",
        "--model_dir=" + os.path.join(self.get_temp_dir(), "nan_flag")])
    self._assert_one_error_line(result, "must be a finite number")

  def test_a_diverging_run_stops_before_it_saves_or_logs(self):
    model_dir = os.path.join(self.get_temp_dir(), "diverged")
    result = _train(self.common + ["--data_dir=" + self.data_dir,
                                   "--model_dir=" + model_dir,
                                   "--learning_rate=1e30"])
    self._assert_one_error_line(result, "Lower --learning_rate")
    self.assertRegex(result.stderr, "(?m)^error: training diverged at step "
                     "[0-9]+: its parameters' norm grew to ")
    self.assertNotRegex(result.stdout, "step [0-9]+/")
    self.assertEqual(glob.glob(os.path.join(model_dir, "checkpoints", "*")),
                     [])
    self.assertFalse(os.path.exists(os.path.join(model_dir, "export")))

  def test_the_count_cache_is_in_the_store(self):
    home = os.path.join(self.get_temp_dir(), "home")
    result = subprocess.run(
        [sys.executable, "-m", "trainers.siamese_cbow", "--helpfull"],
        cwd=REPO_ROOT, env=trainer_fixtures.child_env(SENTZOO_HOME=home),
        capture_output=True, text=True, timeout=600, check=True)
    self.assertIn(os.path.join(home, "cache", "siamese_cbow_counts"),
                  result.stdout)

  def test_a_typo_in_the_corpus_leaves_no_flags_behind(self):
    model_dir = os.path.join(self.get_temp_dir(), "typo")
    result = _train(self.common + [
        "--data_dir=" + self.data_dir, "--model_dir=" + model_dir,
        "--corpus_files=" + os.path.join(self.data_dir, "no_such_*.txt")])
    self.assertEqual(result.returncode, 2, result.stderr[-3000:])
    self.assertFalse(os.path.exists(os.path.join(model_dir, "flags.txt")))
    # The corrected command (other flags) is not refused as a rerun.
    result = _train(self.common + ["--data_dir=" + self.data_dir,
                                   "--model_dir=" + model_dir,
                                   "--train_steps=2"])
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])

  def test_counts_are_cached_for_a_new_model_dir_on_the_same_corpus(self):
    cache = os.path.join(self.get_temp_dir(), "count_cache")
    # The fixture corpus (without --data_dir, $SENTZOO_DATA_DIR: the whole
    # book corpus, counted twice: 2 minutes).
    args = self.common + ["--data_dir=" + self.data_dir, "--train_steps=1",
                          "--noexport", "--count_cache_dir=" + cache]
    runs = {}
    for name, extra in (("first", []), ("second", []),
                        ("other_vocabulary", ["--max_vocabulary=30"])):
      model_dir = os.path.join(self.get_temp_dir(), "cached_" + name)
      result = _train(args + extra + ["--model_dir=" + model_dir])
      self.assertEqual(result.returncode, 0, result.stderr[-3000:])
      with open(os.path.join(model_dir, "corpus_stats.json")) as f:
        batches = json.load(f)["batches_per_epoch"]
      with open(os.path.join(model_dir, "vocab.txt")) as f:
        runs[name] = (result.stdout, batches, f.read())
    self.assertIn("counting training groups", runs["first"][0])
    self.assertNotIn("counted before", runs["first"][0])
    # Same corpus and settings, new model dir: no pass over the corpus.
    self.assertNotIn("counting training groups", runs["second"][0])
    self.assertIn("vocabulary: counted before", runs["second"][0])
    self.assertIn("batches per epoch: counted before", runs["second"][0])
    self.assertEqual(runs["second"][1:], runs["first"][1:])
    # Another vocabulary setting counts again.
    self.assertIn("counting training groups", runs["other_vocabulary"][0])
    self.assertNotEqual(runs["other_vocabulary"][2], runs["first"][2])
    self.assertLen(glob.glob(os.path.join(cache, "vocabulary-*.txt")), 2)
    self.assertLen(glob.glob(os.path.join(cache, "batches-*.json")), 2)

  def test_a_corpus_changed_before_the_rerun_is_refused(self):
    data_dir = os.path.join(self.get_temp_dir(), "data")
    shutil.copytree(self.data_dir, data_dir)
    model_dir = os.path.join(self.get_temp_dir(), "changed")
    args = self.common + ["--data_dir=" + data_dir, "--noverify_data",
                          "--model_dir=" + model_dir]
    first = _train(args + ["--max_steps_per_run=2"])
    self.assertEqual(first.returncode, 75, first.stderr[-3000:])
    part = sorted(glob.glob(os.path.join(data_dir, "gutenberg", "part*")))[0]
    with gzip.open(part, "rt") as f:
      lines = f.readlines()
    with gzip.open(part, "wt") as f:
      f.writelines(lines[:len(lines) // 2])
    self._assert_one_error_line(_train(args), "the corpus changed since")


class SiameseCbowSubsampleTest(tf.test.TestCase):
  """--subsample, in-process (`siamese_cbow.run`)."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.data_dir = os.path.join(
        tf.compat.v1.test.get_temp_dir(), "subsample_test_data")
    corpus_fixtures.write_book_corpus(cls.data_dir, parts=(1,))
    cls.flags = ["--data_dir=" + cls.data_dir, "--embedding_dim=8",
                 "--batch_size=20", "--min_count=1", "--learning_rate=0.5",
                 "--train_steps=6", "--log_every_steps=6",
                 "--eval_every_steps=0", "--heldout_books=1",
                 "--nocompare_untrained",
                 "--count_cache_dir=" + os.path.join(
                     tf.compat.v1.test.get_temp_dir(), "subsample_cache")]

  def tearDown(self):
    siamese_cbow.FLAGS.unparse_flags()
    super().tearDown()

  def _moved(self, name, extra):
    model_dir = os.path.join(self.get_temp_dir(), name)
    siamese_cbow.run(self.flags + extra
                     + ["--train_steps=1", "--model_dir=" + model_dir])
    before = _final_embeddings(model_dir)
    siamese_cbow.FLAGS.unparse_flags()
    siamese_cbow.run(self.flags + extra + ["--model_dir=" + model_dir])
    with open(os.path.join(model_dir, "model_config.json")) as f:
      config = json.load(f)
    return np.abs(_final_embeddings(model_dir) - before).max(), config

  def test_subsampling_every_word_away_leaves_nothing_to_learn(self):
    moved, config = self._moved("plain", [])
    self.assertGreater(moved, 1e-3)
    self.assertEqual(config["training"]["subsample"], 0.0)
    # keep probability ~ sqrt(t/f) + t/f ~ 1e-5 for every fixture word: the
    # sentences are (almost surely) empty, their averages zero, no gradient.
    moved, config = self._moved("subsampled", ["--subsample=1e-12"])
    self.assertLess(moved, 1e-7)
    self.assertEqual(config["training"]["subsample"], 1e-12)


if __name__ == "__main__":
  tf.test.main()
