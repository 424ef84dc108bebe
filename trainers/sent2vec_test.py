"""End-to-end tests of `python -m trainers.sent2vec` on a tiny corpus."""

import gzip
import json
import os
import random
import subprocess
import sys

import numpy as np
import tensorflow as tf

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _write_corpus(data_dir, seed=0):
  """One part of short 'books' over a 40-word vocabulary with structure:
  words wA_i and wB_i always co-occur, so training has something to learn."""
  rng = random.Random(seed)
  folder = os.path.join(data_dir, "gutenberg")
  os.makedirs(folder, exist_ok=True)
  lines = []
  for _ in range(600):
    topic = rng.randrange(4)
    words = [f"t{topic}w{rng.randrange(10)}" for _ in range(rng.randint(3, 8))]
    lines.append(" ".join(words) + " .")
  with gzip.open(os.path.join(folder, "part01.txt.gz"), "wt") as f:
    f.write("\n".join(lines) + "\n")


def _train(args):
  env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
  env.pop("SENTZOO_DATA_DIR", None)
  return subprocess.run(
      [sys.executable, "-m", "trainers.sent2vec", *args],
      cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)


def _source_table(model_dir):
  reader = tf.train.load_checkpoint(os.path.join(model_dir, "checkpoints"))
  names = [n for n in reader.get_variable_to_shape_map()
           if "source_embeddings" in n]
  assert len(names) == 1, names
  return reader.get_tensor(names[0])


class Sent2VecTrainerTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.data_dir = os.path.join(tf.compat.v1.test.get_temp_dir(),
                                "sent2vec_trainer_data")
    _write_corpus(cls.data_dir)
    cls.common = ["--data_dir=" + cls.data_dir, "--embedding_dim=16",
                  "--word_ngrams=2", "--num_buckets=50", "--min_count=1",
                  "--min_count_label=1", "--sample=1e-2", "--num_epochs=3",
                  "--block_lines=50", "--dropout_k=1", "--negative_group=4",
                  "--checkpoint_every_steps=5", "--log_every_steps=5"]

  def test_trains_exports_and_reloads(self):
    model_dir = os.path.join(self.get_temp_dir(), "full")
    result = _train(self.common + ["--model_dir=" + model_dir])
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    with open(os.path.join(model_dir, "corpus_stats.json")) as f:
      stats = json.load(f)
    self.assertEqual(stats["lines"], 600)
    self.assertIn("step 36/36", result.stdout)
    export_path = os.path.join(model_dir, "export", "1")
    self.assertIn("export: " + os.path.abspath(export_path), result.stdout)
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

  def test_resume_after_stop_matches_uninterrupted_run(self):
    straight = os.path.join(self.get_temp_dir(), "straight")
    sliced = os.path.join(self.get_temp_dir(), "sliced")
    args = self.common + ["--noexport", "--num_epochs=1"]
    result = _train(args + ["--model_dir=" + straight])
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    first = _train(args + ["--model_dir=" + sliced, "--max_steps_per_run=5"])
    self.assertEqual(first.returncode, 0, first.stderr[-3000:])
    self.assertIn("stopped at step 5", first.stdout)
    second = _train(args + ["--model_dir=" + sliced])
    self.assertEqual(second.returncode, 0, second.stderr[-3000:])
    self.assertIn("resumed from", second.stdout + second.stderr)
    self.assertAllClose(_source_table(straight), _source_table(sliced),
                        atol=1e-5)

  def test_user_errors_print_one_line(self):
    result = _train(["--model_dir=" + self.get_temp_dir(),
                     "--data_dir=" + self.data_dir, "--word_ngrams=2",
                     "--num_buckets=0"])
    self.assertEqual(result.returncode, 2)
    self.assertIn("error: --word_ngrams > 1 needs --num_buckets", result.stderr)
    self.assertNotIn("Traceback", result.stderr)


if __name__ == "__main__":
  tf.test.main()
