"""Out-of-range flag values stop the trainers at parse time.

Each case runs `python -m trainers.<name> <flag>` in a subprocess and checks
what `common.cli.run` promises for a bad flag: exit status 2, one line
`error: flag --<name>=<value>: ...` on stderr, no traceback, and nothing
done yet (the --model_dir it is given is not created). absl stops at the
first bad flag, so every case is its own process (TensorFlow's import,
~5 s); they run a few at a time.
"""

import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile

from absl.testing import absltest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 300
PARALLEL = 3

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
]

SIAMESE_CBOW_CASES = [
    ("siamese_cbow", "--embedding_dim=0"),
    ("siamese_cbow", "--learning_rate=-1"),
    ("siamese_cbow", "--final_learning_rate_fraction=1.5"),
    ("siamese_cbow", "--num_negatives=0"),
]


def _run(module, flag, model_dir):
  env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
  env.pop("SENTZOO_DATA_DIR", None)
  env.pop("TF_CONFIG", None)
  return subprocess.run(
      [sys.executable, "-m", f"trainers.{module}", "--model_dir=" + model_dir,
       flag],
      cwd=REPO_ROOT, env=env, capture_output=True, text=True,
      timeout=TIMEOUT_S)


class FlagValidationTest(absltest.TestCase):

  def test_out_of_range_flags_are_user_errors_at_parse_time(self):
    cases = CASES + SIAMESE_CBOW_CASES
    # absltest's create_tempdir fails under pytest; no TensorFlow here.
    root = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, root, ignore_errors=True)
    model_dirs = [os.path.join(root, f"case{i}")
                  for i in range(len(cases))]
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
      results = list(pool.map(lambda args: _run(*args),
                              [(m, f, d) for (m, f), d in zip(cases,
                                                              model_dirs)]))
    for (module, flag), model_dir, result in zip(cases, model_dirs, results):
      with self.subTest(trainer=module, flag=flag):
        name = flag.split("=")[0]
        errors = [line for line in result.stderr.splitlines()
                  if line.startswith("error: ")]
        self.assertEqual(result.returncode, 2, result.stderr[-2000:])
        self.assertLen(errors, 1, result.stderr[-2000:])
        self.assertTrue(errors[0].startswith(f"error: flag {name}="),
                        errors[0])
        self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertFalse(os.path.exists(model_dir))


if __name__ == "__main__":
  absltest.main()
