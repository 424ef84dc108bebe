"""Tests for tests.interruption_soak: its checks, and a short soak."""

import os
import re
import subprocess
import sys
import tempfile

import tensorflow as tf

from sentzoo.tests import interruption_soak
from sentzoo.tests import corpus_fixtures

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class InterruptionSoakTest(tf.test.TestCase):

  def _model_dir(self, versions, temporaries=()):
    model_dir = tempfile.mkdtemp(dir=self.get_temp_dir())
    os.makedirs(os.path.join(model_dir, "checkpoints"))
    for version in versions:
      os.makedirs(os.path.join(model_dir, "export", version))
    for name in temporaries:
      os.makedirs(os.path.join(model_dir, name))
    return model_dir

  def test_checks_find_temporaries_extra_versions_and_other_vectors(self):
    encode = lambda path: [[1.0, 2.0]] if path.endswith("1") else [[1.0, 3.0]]
    clean = self._model_dir(["1"])
    self.assertEqual(
        interruption_soak.check_model_dir(clean, [[1.0, 2.0]], encode), [])
    dirty = self._model_dir(
        ["1"], ["checkpoints/ckpt-5_temp", "export/.tmp-12-34-ab"])
    self.assertEqual(interruption_soak.temporaries(dirty), [
        os.path.join(dirty, "checkpoints", "ckpt-5_temp"),
        os.path.join(dirty, "export", ".tmp-12-34-ab")])
    problems = interruption_soak.check_model_dir(dirty, [[1.0, 2.0]], encode)
    self.assertLen(problems, 1)
    self.assertIn("leftover temporaries", problems[0])
    twice = self._model_dir(["1", "2"])
    problems = interruption_soak.check_model_dir(twice, [[1.0, 2.0]], encode)
    self.assertIn("2 export versions, not 1", problems[0])
    # The newest version (2) encodes otherwise.
    self.assertIn("differs", problems[1])

  def test_latest_checkpoint_step(self):
    model_dir = self._model_dir([])
    self.assertEqual(interruption_soak.latest_checkpoint_step(model_dir), 0)
    with open(os.path.join(model_dir, "checkpoints", "checkpoint"), "w") as f:
      f.write('model_checkpoint_path: "ckpt-65"\n'
              'all_model_checkpoint_paths: "ckpt-60"\n')
    self.assertEqual(interruption_soak.latest_checkpoint_step(model_dir), 65)

  def test_interruptions_are_reserved_up_to_the_target(self):
    tally = interruption_soak.Tally()
    self.assertTrue(tally.reserve(2))
    self.assertTrue(tally.reserve(2))
    self.assertFalse(tally.reserve(2))
    tally.release()  # Its run ended before the signal.
    self.assertTrue(tally.reserve(2))

  def test_a_short_soak_passes(self):
    # The reference run, 2 interruptions (a SIGTERM and a SIGKILL with this
    # seed) and the runs that finish, on half the fixture corpus (720 lines):
    # 49 CPU-s where 3 interruptions on 1,500 lines took 69. A second
    # signal during a save is trainers/trainer_test.py's CommandSignalTest.
    data_dir = os.path.join(self.get_temp_dir(), "soak_data")
    corpus_fixtures.write_book_corpus(data_dir, lines_per_book=120)
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "tests.interruption_soak",
         "--data_dir=" + data_dir, "--interruptions=2", "--seed=4",
         "--soak_dir=" + os.path.join(self.get_temp_dir(), "soak")],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    self.assertEqual(result.returncode, 0,
                     result.stdout[-3000:] + result.stderr[-3000:])
    self.assertRegex(
        result.stdout,
        r"soak: 2 interruptions \(SIGINT \d, SIGTERM \d, SIGKILL \d; \d "
        r"during a save or export\), 1 concurrent run refused, 0 runs lost, "
        r"0 differing exports, 0 leftover temporaries")
    self.assertNotIn("FAILED", result.stdout)
    self.assertLen(re.findall(r"^  \d: soak", result.stdout, re.M), 2)


if __name__ == "__main__":
  tf.test.main()
