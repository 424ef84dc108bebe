"""Tests for lab.benchmarks.charagram_collapse (a few steps on a tiny fixture)."""

import os
import random
import subprocess
import sys

import numpy as np
import tensorflow as tf

from lab.benchmarks import charagram_collapse
from sentzoo.models import paraphrase_margin_loss

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Identity:
  def __call__(self, x):
    return tf.constant(x, tf.float32)


class CharagramCollapseTest(tf.test.TestCase):

  def test_collapsed_embeddings_sit_at_twice_the_margin(self):
    direction = np.ones([4, 3], np.float32)
    scale = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
    numbers = charagram_collapse.diagnose(
        Identity(), paraphrase_margin_loss.ParaphraseMarginLoss(0.4, "max"),
        direction * scale, direction * scale[::-1])
    self.assertAllClose(numbers["probe loss"], 0.8)
    self.assertAllClose(numbers["positive"], 1.0)
    self.assertAllClose(numbers["hardest negative"], 1.0)
    self.assertAllClose(numbers["off-diagonal"], 1.0)
    self.assertEqual(numbers["ties"], 1.0)
    self.assertEqual(numbers["neg > pos"], 0.0)
    self.assertAllClose(numbers["norm"], np.sqrt(3) * 2.5)
    self.assertEqual(numbers["saturated"], 1.0)

  def test_table_on_a_tiny_fixture(self):
    data_dir = os.path.join(self.get_temp_dir(), "data")
    os.makedirs(data_dir, exist_ok=True)
    rng = random.Random(0)
    with open(os.path.join(data_dir, "pairs.tsv"), "w") as f:
      for i in range(60):
        word = "".join(rng.choice("abcdefghij") for _ in range(5))
        f.write(f"the {word} {i % 7}\ta {word} thing\n")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.charagram_collapse",
         f"--data_dir={data_dir}", "--train_files=pairs.tsv",
         "--train_format=tsv", "--model=char_lstm", "--char_dim=6",
         "--embedding_dim=8", "--batch_size=20", "--num_epochs=3",
         "--sampling=mix", "--steps=5", "--report_every=2"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    rows = [line for line in result.stdout.splitlines()
            if line.startswith("| ") and not line.startswith("| step")]
    self.assertEqual([r.split(" | ")[0] for r in rows],
                     ["| 0", "| 2", "| 4", "| 5"])
    self.assertTrue(rows[0].startswith("| 0 | – | "), rows[0])
    self.assertLen(rows[1].split(" | "), len(charagram_collapse.COLUMNS))
    self.assertIn("char_lstm, MIX negatives, margin 0.4", result.stdout)
    # 60 pairs in batches of 20 for 3 epochs: 9 batches, the first held out.
    too_long = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.charagram_collapse",
         f"--data_dir={data_dir}", "--train_files=pairs.tsv",
         "--train_format=tsv", "--model=char_lstm", "--char_dim=6",
         "--embedding_dim=8", "--batch_size=20", "--num_epochs=3",
         "--steps=9"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(too_long.returncode, 2, too_long.stderr[-3000:])
    self.assertIn("ran out after 8 steps", too_long.stderr)


if __name__ == "__main__":
  tf.test.main()
