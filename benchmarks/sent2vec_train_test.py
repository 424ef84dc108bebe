"""Smoke test of the Sent2Vec training-speed benchmark on a tiny corpus."""

import gzip
import json
import os
import subprocess
import sys

import tensorflow as tf

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_LINES = ["the cat sat on the mat .", "a dog ran in the park !",
          "the sun is warm today", "we read a long book at night",
          "cats and dogs play in the sun"]


class Sent2VecTrainBenchmarkTest(tf.test.TestCase):

  def _run(self, name, *flags):
    data_dir = os.path.join(self.get_temp_dir(), "data")
    os.makedirs(os.path.join(data_dir, "gutenberg"), exist_ok=True)
    with gzip.open(os.path.join(data_dir, "gutenberg", "part01.txt.gz"),
                   "wt") as f:
      f.write("\n".join(_LINES * 40) + "\n")
    output = os.path.join(self.get_temp_dir(), name + ".json")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.sent2vec_train",
         f"--data_dir={data_dir}", "--embedding_dim=8", "--block_lines=8",
         "--steps=6", "--warmup_steps=2", "--repeats=2",
         "--steps_per_call=4", f"--output_json={output}", *flags],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    self.assertIn("words/s (tokens + end-of-lines", result.stdout)
    with open(output) as f:
      return json.load(f)

  def test_uni_settings_with_the_trainers_threads(self):
    speed = self._run("uni")
    self.assertEqual((speed["op_threads"], speed["input_threads"]), (1, 1))
    self.assertEqual(speed["word_ngrams"], 1)
    self.assertLen(speed["repeat_words_per_second"], 2)
    self.assertGreater(speed["cxx_words_per_second"], 0)
    # 6 measured steps of 8 lines: 48 lines of 5 to 7 tokens each.
    self.assertBetween(speed["tokens"], 48 * 5, 48 * 7)
    self.assertGreater(speed["peak_rss_mb"], 0)

  def test_unibi_settings_from_the_token_cache_with_tf_threads(self):
    cache = os.path.join(self.get_temp_dir(), "cache", "blocks_8.tfrecord")
    speed = self._run("unibi", "--word_ngrams=2", "--num_buckets=100",
                      "--sample=5e-6", "--min_count_label=5",
                      "--dropout_k=7", f"--token_cache={cache}",
                      "--op_threads=0", "--input_threads=0")
    self.assertTrue(os.path.exists(cache))
    self.assertTrue(speed["token_cache"])
    self.assertEqual((speed["op_threads"], speed["input_threads"]), (0, 0))
    self.assertEqual((speed["word_ngrams"], speed["num_buckets"],
                      speed["dropout_k"]), (2, 100, 7))
    self.assertGreater(speed["cxx_words_per_second"], 0)

  def test_negative_threads_are_a_flag_error(self):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.sent2vec_train",
         "--op_threads=-1"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertNotEqual(result.returncode, 0)
    self.assertIn("op_threads", result.stderr)
    self.assertNotIn("Traceback", result.stderr)


if __name__ == "__main__":
  tf.test.main()
