"""End-to-end tests of `python -m trainers.sent2vec` on a tiny corpus.

Besides training, export and resume: with --strategy=mirrored on 2 logical
CPUs, and with --strategy=multi_worker as 2 worker processes on 127.0.0.1,
the loss curve and tables equal one device's (independent negatives, no
multiplicity cap); a --block_lines the replicas do not divide is a user
error. Every subprocess is time-bounded. Runs and refusals that need no
second device or process boundary run in this process (`sent2vec.run`; it
raises the `errors.UserError` that the command prints as one line and exits
2 with, as the --block_lines case here shows end to end; the resume test
shows exit 75 end to end).
"""

import json
import os
import subprocess
import sys

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.tests import test_util
from sentzoo.models import model_specs
from sentzoo.tests import corpus_fixtures
from sentzoo.tests import local_cluster
from sentzoo.tests import trainer_fixtures
from sentzoo.trainers import sent2vec

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 300

# Runs the trainer and saves this process's final source table (every
# worker's own copy) to $TEST_DUMP_SOURCE.
_DUMP_WRAPPER = local_cluster.trainer_with_dump(
    "trainers.sent2vec",
    'np.save(os.environ["TEST_DUMP_SOURCE"], '
    'model.source_embeddings.numpy())')


def _train(args):
  return subprocess.run(
      [sys.executable, "-m", "trainers.sent2vec", *args],
      cwd=REPO_ROOT, env=trainer_fixtures.child_env(), capture_output=True,
      text=True, timeout=600)


def _train_here(args):
  """`sent2vec.run(args)` in this process (no TensorFlow import of its own;
  TensorFlow's thread pools are set already: --op_threads=0 leaves them);
  returns what it printed."""
  return trainer_fixtures.run_printed(sent2vec,
                                      list(args) + ["--op_threads=0"])


def _refusal(args):
  """The one-line `errors.UserError` of `sent2vec.run(args)`, run in this
  process."""
  try:
    _train_here(args)
  except errors.UserError as e:
    assert "\n" not in str(e), str(e)
    return str(e)
  raise AssertionError(f"no errors.UserError for {args}")


def _losses(model_dir):
  with open(os.path.join(model_dir, "train_log.jsonl")) as f:
    return np.array([json.loads(line)["loss"] for line in f])


def _source_table(model_dir):
  return trainer_fixtures.checkpoint_table(model_dir, "source_embeddings")


class Sent2VecTrainerTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.data_dir = os.path.join(tf.compat.v1.test.get_temp_dir(),
                                "sent2vec_trainer_data")
    corpus_fixtures.write_topic_corpus(cls.data_dir)
    test_util.write_fixture_data_dir(cls.data_dir)
    cls.common = ["--data_dir=" + cls.data_dir, "--embedding_dim=16",
                  "--word_ngrams=2", "--num_buckets=50", "--min_count=1",
                  "--min_count_label=1", "--sample=1e-2", "--num_epochs=3",
                  "--block_lines=50", "--dropout_k=1", "--negative_group=4",
                  "--checkpoint_every_steps=5", "--log_every_steps=5"]
    # Independent negatives and no multiplicity cap: the settings under
    # which a distributed step equals one device's (12 steps of 50 lines).
    cls.exact = cls.common + ["--negative_group=1", "--max_multiplicity=0",
                              "--learning_rate=0.05", "--num_epochs=1",
                              "--log_every_steps=1", "--noexport"]
    cls._runs = {}

  def _exact_run(self, name, extra_args=()):
    """A run of the `exact` settings, once per name (cached across tests)."""
    if name not in self._runs:
      model_dir = os.path.join(self.get_temp_dir(), name)
      result = _train(self.exact + list(extra_args)
                      + ["--model_dir=" + model_dir])
      self.assertEqual(result.returncode, 0, result.stderr[-3000:])
      self._runs[name] = model_dir
    return self._runs[name]

  def test_trains_exports_and_reloads(self):
    model_dir = os.path.join(self.get_temp_dir(), "full")
    stdout = _train_here(self.common + ["--model_dir=" + model_dir])
    with open(os.path.join(model_dir, "corpus_stats.json")) as f:
      stats = json.load(f)
    self.assertEqual(stats["lines"], 600)
    # --verify_data (on by default) read the part to its end first.
    self.assertIn("verified part01.txt.gz: 600 lines", stdout)
    self.assertIn("step 36/36", stdout)
    # Tokenised once (--token_cache, on by default), read every epoch.
    self.assertEqual(stdout.count("token cache: tokenising"), 1)
    self.assertTrue(os.path.exists(os.path.join(
        model_dir, "token_cache", "blocks_50.tfrecord")))
    export_path = os.path.join(model_dir, "export", "1")
    self.assertIn("export: " + os.path.abspath(export_path), stdout)
    loaded = tf.saved_model.load(export_path)
    out = loaded.signatures["serving_default"](sentences=tf.constant(
        ["t0w1 t0w2 .", "", "unknown words", "t1w1 t1w2 t1w3",
         "t0w3 t0w4 t0w5"]))["embeddings"].numpy()
    self.assertEqual(out.shape, (5, 16))
    self.assertAllEqual(out[1], np.zeros(16))
    self.assertAllEqual(out[2], np.zeros(16))
    self.assertTrue(np.isfinite(out).all())
    # Same-topic sentences end up closer than different-topic ones.
    cos = lambda a, b: a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    self.assertGreater(cos(out[0], out[4]), cos(out[0], out[3]))
    # The vectors moved away from uniform(+-1/16) initialisation.
    self.assertGreater(np.abs(_source_table(model_dir)[1:]).max(), 0.2)
    # The final table scored the in-memory module that was exported (no
    # second copy of the table): the export read back scores the same.
    with open(os.path.join(model_dir, "sts_results.json")) as f:
      written = json.load(f)["sets"]
    # STS-B dev is part of it (lab.reports.word_vector_choice reads it).
    self.assertIn("STSB.dev", written)
    pair_sets, _ = sts_data.load_eval_sets(
        self.data_dir, model_specs.SENT2VEC.eval_sets)
    again = sts.evaluate_pair_sets(encoder_lib.load_encoder(export_path),
                                   pair_sets)
    self.assertNotEmpty(again.sets)
    self.assertCountEqual(written, again.sets)
    scored = 0
    for name, result in again.sets.items():
      if np.isnan(result.pearson):  # Written as null (constant scores).
        self.assertIsNone(written[name]["pearson"], name)
        continue
      self.assertAllClose(written[name]["pearson"], result.pearson, atol=1e-4)
      scored += 1
    self.assertGreater(scored, 0)

  def test_resume_after_stop_matches_uninterrupted_run(self):
    # The uninterrupted run is the one the distributed tests compare with.
    straight = self._exact_run("exact_single")
    sliced = os.path.join(self.get_temp_dir(), "sliced")
    args = self.exact
    first = _train(args + ["--model_dir=" + sliced, "--max_steps_per_run=5"])
    # 75 (EX_TEMPFAIL): interrupted with a checkpoint, rerun to resume.
    self.assertEqual(first.returncode, 75, first.stderr[-3000:])
    self.assertIn("stopped at step 5; rerun the same command to resume",
                  first.stdout)
    second = _train(args + ["--model_dir=" + sliced])
    self.assertEqual(second.returncode, 0, second.stderr[-3000:])
    self.assertIn("resumed from", second.stdout + second.stderr)
    self.assertAllClose(_source_table(straight), _source_table(sliced),
                        atol=1e-5)

  def test_mirrored_on_two_cpus_matches_one_device(self):
    # One device reads the token cache; replicas tokenise the text.
    single = self._exact_run("exact_single")
    mirrored = self._exact_run("exact_mirrored", ["--strategy=mirrored",
                                                  "--num_cpu_devices=2"])
    with open(os.path.join(mirrored, "model_config.json")) as f:
      self.assertEqual(json.load(f)["training"]["replicas"], 2)
    losses = _losses(mirrored)
    self.assertLen(losses, 12)
    self.assertAllClose(_losses(single), losses, atol=1e-5)
    self.assertLess(losses[-3:].mean(), losses[:3].mean())
    self.assertAllClose(_source_table(single), _source_table(mirrored),
                        atol=1e-5)

  def test_multi_worker_two_processes_match_one_device(self):
    single = self._exact_run("exact_single")
    model_dir = os.path.join(self.get_temp_dir(), "multi_worker")
    cluster = {"worker": [f"127.0.0.1:{port}"
                          for port in local_cluster.free_ports(2)]}
    processes = []
    try:
      for index in range(2):
        config = {"cluster": cluster, "task": {"type": "worker",
                                               "index": index}}
        processes.append(subprocess.Popen(
            [sys.executable, "-c", _DUMP_WRAPPER, *self.exact,
             "--strategy=multi_worker", "--model_dir=" + model_dir],
            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=trainer_fixtures.child_env(
                TF_CONFIG=json.dumps(config),
                TEST_DUMP_SOURCE=os.path.join(
                    model_dir + f"_worker{index}.npy"))))
      results = [p.communicate(timeout=TIMEOUT_S) for p in processes]
    finally:
      for p in processes:
        if p.poll() is None:
          p.kill()
          p.communicate()
    for p, (_, err) in zip(processes, results):
      self.assertEqual(p.returncode, 0, err[-3000:])
    # One corpus file for 2 workers: both read the same global blocks and
    # keep their own half of each (no line twice), so the run is one
    # device's, and both workers end with the same table.
    chief, other = (np.load(model_dir + f"_worker{i}.npy") for i in range(2))
    self.assertAllEqual(chief, other)
    self.assertAllEqual(chief, _source_table(model_dir))
    self.assertAllClose(_source_table(single), chief, atol=1e-5)
    self.assertAllClose(_losses(single), _losses(model_dir), atol=1e-5)
    self.assertFalse(os.path.exists(os.path.join(model_dir, "export")))

  def test_block_lines_must_split_over_the_replicas(self):
    result = _train(["--model_dir=" + self.get_temp_dir(),
                     "--data_dir=" + self.data_dir, "--block_lines=51",
                     "--strategy=mirrored", "--num_cpu_devices=2"])
    self.assertEqual(result.returncode, 2)
    self.assertIn("error: --block_lines=51 (the global block) must be a "
                  "positive multiple of the 2 replicas", result.stderr)
    self.assertNotIn("Traceback", result.stderr)

  def test_truncated_corpus_part_is_an_error_naming_the_file(self):
    data_dir = os.path.join(self.get_temp_dir(), "truncated_data")
    corpus_fixtures.write_topic_corpus(data_dir)
    part = trainer_fixtures.truncate_corpus_part(data_dir, 1)
    args = [a for a in self.common if not a.startswith("--data_dir")]
    self.assertStartsWith(_refusal(args + [
        "--data_dir=" + data_dir,
        "--model_dir=" + os.path.join(self.get_temp_dir(), "truncated")]),
                          f"{part}: truncated or corrupt gzip")

  def test_step_threads_train_on_one_device(self):
    model_dir = os.path.join(self.get_temp_dir(), "step_threads")
    _train_here(self.common + ["--step_threads=2", "--num_epochs=1",
                               "--noexport", "--model_dir=" + model_dir])
    losses = _losses(model_dir)
    self.assertGreater(len(losses), 0)
    self.assertTrue(np.isfinite(losses).all())
    self.assertTrue(np.isfinite(_source_table(model_dir)).all())
    refused = ("--step_threads=2 runs on one device (no --strategy) and "
               "needs --steps_per_call >= --step_threads")
    self.assertEqual(_refusal(self.common + [
        "--step_threads=2", "--steps_per_call=1",
        "--model_dir=" + os.path.join(self.get_temp_dir(), "refused")]),
                     refused)
    # 2 logical CPUs: TensorFlow has started in this process.
    result = _train(self.common + [
        "--step_threads=2", "--model_dir=" + self.get_temp_dir(),
        "--strategy=mirrored", "--num_cpu_devices=2"])
    self.assertEqual(result.returncode, 2, result.stderr[-2000:])
    self.assertIn("error: " + refused, result.stderr)
    self.assertNotIn("Traceback", result.stderr)

  def test_word_ngrams_need_buckets(self):
    self.assertStartsWith(
        _refusal(["--model_dir=" + self.get_temp_dir(),
                  "--data_dir=" + self.data_dir, "--word_ngrams=2",
                  "--num_buckets=0"]),
        "--word_ngrams > 1 needs --num_buckets")


if __name__ == "__main__":
  tf.test.main()
