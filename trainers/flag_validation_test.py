"""Out-of-range flag values stop the trainers at parse time.

Every case goes through `trainer.run` in this process: the trainer's own
flags are parsed by `common.cli.parse_argv`, the parser `python -m
trainers.<name>` uses too, and a bad value is an `errors.UserError`
`flag --<name>=<value>: ...` with nothing done yet (the --model_dir it is
given is not created). One case also runs as `python -m trainers.<name>`
in a subprocess, for what `common.cli.run` makes of it on the command line:
exit status 2, one line `error: flag ...` on stderr, no traceback, nothing
on stdout. One process, not one per case: each pays TensorFlow's import
(~5 s), and the command-line wrapper is the same for every flag.
"""

import os
import shutil
import subprocess
import sys
import tempfile

from absl.testing import absltest

from sentzoo.common import errors
from sentzoo.trainers import charagram
from sentzoo.trainers import hybrid_siamese
from sentzoo.trainers import sent2vec
from sentzoo.trainers import siamese_cbow
from sentzoo.trainers import trainer

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 300

TRAINERS = {
    "sent2vec": sent2vec.Sent2VecTrainer,
    "charagram": charagram.CharagramTrainer,
    "hybrid_siamese": hybrid_siamese.HybridSiameseTrainer,
    "siamese_cbow": siamese_cbow.SiameseCBOWTrainer,
}

# (trainer module under trainers/, one out-of-range flag).
CASES = [
    ("sent2vec", "--embedding_dim=0"),
    ("sent2vec", "--num_epochs=0"),
    ("sent2vec", "--learning_rate=-1"),
    ("sent2vec", "--sample=1.5"),  # A fraction: [0, 1].
    ("charagram", "--embedding_dim=0"),
    ("charagram", "--batch_size=1"),  # In-batch negatives need 2.
    ("charagram", "--learning_rate=0"),
    ("charagram", "--ngram_sizes=2,0"),
    ("hybrid_siamese", "--embedding_dim=0"),
    ("hybrid_siamese", "--batch_size=0"),
    ("hybrid_siamese", "--learning_rate=-1"),
    ("hybrid_siamese", "--num_cpu_devices=-1"),  # trainers.distribution.
    ("siamese_cbow", "--embedding_dim=0"),
    ("siamese_cbow", "--learning_rate=-1"),
    ("siamese_cbow", "--final_learning_rate_fraction=1.5"),
    ("siamese_cbow", "--num_negatives=0"),
]

# The case that also runs on the command line.
COMMAND_LINE_CASE = ("sent2vec", "--sample=1.5")


class FlagValidationTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    # absltest's create_tempdir fails under pytest.
    self.root = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)

  def test_out_of_range_flags_are_user_errors_at_parse_time(self):
    for i, (module, flag) in enumerate(CASES):
      with self.subTest(trainer=module, flag=flag):
        model_dir = os.path.join(self.root, f"case{i}")
        name = flag.split("=")[0]
        # A flag that parsed would fail on the missing data directory (a
        # message without "flag --"), not start a training run.
        with self.assertRaises(errors.UserError) as raised:
          trainer.run(TRAINERS[module](), [
              "--model_dir=" + model_dir,
              "--data_dir=" + os.path.join(self.root, "no_data"), flag])
        self.assertTrue(str(raised.exception).startswith(f"flag {name}="),
                        str(raised.exception))
        self.assertNotIn("\n", str(raised.exception))
        self.assertFalse(os.path.exists(model_dir))

  def test_on_the_command_line_one_error_line_and_exit_2(self):
    module, flag = COMMAND_LINE_CASE
    model_dir = os.path.join(self.root, "command_line")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("SENTZOO_DATA_DIR", None)
    env.pop("TF_CONFIG", None)
    result = subprocess.run(
        [sys.executable, "-m", f"trainers.{module}",
         "--model_dir=" + model_dir, flag],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True,
        timeout=TIMEOUT_S)
    name = flag.split("=")[0]
    errors_printed = [line for line in result.stderr.splitlines()
                      if line.startswith("error: ")]
    self.assertEqual(result.returncode, 2, result.stderr[-2000:])
    self.assertLen(errors_printed, 1, result.stderr[-2000:])
    self.assertTrue(errors_printed[0].startswith(f"error: flag {name}="),
                    errors_printed[0])
    self.assertNotIn("Traceback", result.stderr)
    self.assertEqual(result.stdout, "")
    self.assertFalse(os.path.exists(model_dir))


if __name__ == "__main__":
  absltest.main()
