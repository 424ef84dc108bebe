"""Tests of the Siamese CBOW training-speed benchmark on a tiny corpus.

The side-by-side run is tested with a fake gensim Python (a script that
prints what the gensim child prints), never gensim itself.
"""

import gzip
import json
import os
import stat
import subprocess
import sys
import textwrap

import tensorflow as tf

from lab.benchmarks import siamese_cbow_train

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_LINES = ["The cat sat on the mat.", "A dog ran in the park!",
          "the sun is warm today", "we read a long book at night",
          "cats and dogs play in the sun", ""]

# Stands in for a Python with gensim: records its argv (-c CODE corpus
# settings) and prints the gensim child's JSON line.
_FAKE_GENSIM_PYTHON = textwrap.dedent("""\
    #!{python}
    import json, os, sys
    with open(os.environ["FAKE_GENSIM_LOG"], "a") as f:
      f.write(json.dumps(sys.argv[1:]) + "\\n")
    print("gensim says hello")
    print(json.dumps({{"seconds": 2.0, "epoch_seconds": 1.5,
                      "vocabulary": 10, "words": 100}}))
    """)


def _write_corpus(data_dir):
  os.makedirs(os.path.join(data_dir, "gutenberg"), exist_ok=True)
  with gzip.open(os.path.join(data_dir, "gutenberg", "part01.txt.gz"),
                 "wt") as f:
    f.write("\n".join(_LINES * 60) + "\n")


class SiameseCbowTrainBenchmarkTest(tf.test.TestCase):

  def test_profile_summary_splits_kernels_ops_and_pipeline_per_step(self):
    events = [
        ("tf_Compute/1", "CpuExecutable::ExecuteAsyncOnStream", 9000.0),
        ("tf_Compute/1", "bitcast_gather_fusion", 4000.0),
        ("tf_numa_-1_Eigen/2", "wrapped_scatter.2", 2000.0),
        ("tf_Compute/1", "GatherV2", 600.0),
        ("tf_Compute/1", "ExecutorState::Process", 50000.0),  # A wrapper.
        ("tf_data_private_threadpool", "StringSplitV2", 1200.0),
        ("tf_data_private_threadpool", "Iterator::Shuffle", 99999.0)]
    lines = siamese_cbow_train.summarise_events(events, steps=2,
                                                wall_seconds=0.01)
    text = "\n".join(lines)
    self.assertIn("Traced: 2 steps, 5.00 ms wall per step.", text)
    self.assertIn("| compiled step: XLA kernels | 3.00 |", text)
    self.assertIn("| step: TF ops outside XLA | 0.30 |", text)
    self.assertIn("| input pipeline (tf.data threads) | 0.60 |", text)
    self.assertIn("| (the XLA executable's runs, kernels included) | 4.50 |",
                  text)
    self.assertIn("| `bitcast_gather_fusion` | compiled step | 2.000 |", text)
    self.assertNotIn("ExecutorState", text)
    self.assertNotIn("Iterator::", text)

  def test_gensim_corpus_is_tokenised_lowercase_without_empty_lines(self):
    data_dir = os.path.join(self.get_temp_dir(), "data_corpus")
    _write_corpus(data_dir)
    path = os.path.join(self.get_temp_dir(), "tokens.txt")
    lines, tokens = siamese_cbow_train.write_gensim_corpus(
        [os.path.join(data_dir, "gutenberg", "part01.txt.gz")], path)
    with open(path) as f:
      written = f.read().splitlines()
    self.assertEqual(lines, 5 * 60)
    self.assertEqual(written[:2], ["the cat sat on the mat .",
                                   "a dog ran in the park !"])
    self.assertEqual(tokens, sum(len(line.split()) for line in written))

  def test_side_by_side_with_a_fake_gensim_writes_the_page(self):
    data_dir = os.path.join(self.get_temp_dir(), "data")
    _write_corpus(data_dir)
    fake = os.path.join(self.get_temp_dir(), "python_with_gensim")
    with open(fake, "w") as f:
      f.write(_FAKE_GENSIM_PYTHON.format(python=sys.executable))
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
    log = os.path.join(self.get_temp_dir(), "gensim_argv.jsonl")
    record = os.path.join(self.get_temp_dir(), "record")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2",
               XDG_CACHE_HOME=os.path.join(self.get_temp_dir(), "cache"),
               FAKE_GENSIM_LOG=log)
    result = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.siamese_cbow_train",
         f"--data_dir={data_dir}", "--corpus_parts=1", "--embedding_dim=8",
         "--batch_size=4", "--min_count=1", "--heldout_books=0",
         "--steps=5", "--warmup_steps=2", "--repeats=1",
         f"--gensim_python={fake}", f"--record_dir={record}",
         f"--work_dir={os.path.join(self.get_temp_dir(), 'work')}"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    stdout = result.stdout
    self.assertIn("| 1 | ours, train step |", stdout)
    self.assertIn("| gensim, vocabulary + 1 epoch (s) | 2.0 |", stdout)
    self.assertIn("speed ratio, ours train step / gensim vocabulary + epoch",
                  stdout)
    with open(log) as f:
      argv = json.loads(f.readline())
    # -c CODE corpus settings: the tokenised corpus and the paper's settings.
    self.assertEqual(argv[0], "-c")
    self.assertEqual(json.loads(argv[3]), siamese_cbow_train.GENSIM_SETTINGS)
    with open(argv[2]) as f:
      self.assertEqual(f.readline().strip(), "the cat sat on the mat .")
    with open(os.path.join(record, "measured.md")) as f:
      text = f.read()
    self.assertIn("## Measured", text)
    self.assertIn("| 1 | ours, train step |", text)

  def test_without_gensim_prints_ours_only(self):
    data_dir = os.path.join(self.get_temp_dir(), "data_ours")
    _write_corpus(data_dir)
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2",
               XDG_CACHE_HOME=os.path.join(self.get_temp_dir(), "cache"))
    result = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.siamese_cbow_train",
         f"--data_dir={data_dir}", "--corpus_parts=1", "--embedding_dim=8",
         "--batch_size=4", "--min_count=1", "--heldout_books=0",
         "--steps=3", "--warmup_steps=0", "--repeats=1",
         "--profile_steps=2", "--batch_layout=consecutive",
         "--earlier_steps",
         f"--work_dir={os.path.join(self.get_temp_dir(), 'work_ours')}"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    self.assertIn("| gensim | not run (no --gensim_python) |", result.stdout)
    self.assertNotIn("speed ratio, ours train step / gensim", result.stdout)
    # The steps issue 34 replaced, on by-length batches, beside the
    # consecutive layout's.
    for row in siamese_cbow_train.CHILDREN.values():
      self.assertIn(f"| 1 | {row} |", result.stdout)
    self.assertIn("| speed ratio, train step / ours, by-length batches, the "
                  "padded step |", result.stdout)
    # The fixed costs, the memory and the profile of the traced steps.
    self.assertRegex(result.stdout, r"\| 1 \| [0-9.]+ \| [0-9.]+ \| [0-9,]+ / ")
    self.assertIn("Traced: 2 steps", result.stdout)
    self.assertIn("| compiled step: XLA kernels |", result.stdout)

  def test_data_that_runs_out_in_the_warm_up_is_a_user_error(self):
    data_dir = os.path.join(self.get_temp_dir(), "data_short")
    _write_corpus(data_dir)
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.siamese_cbow_train",
         f"--data_dir={data_dir}", "--corpus_parts=1", "--embedding_dim=8",
         "--batch_size=4", "--min_count=1", "--heldout_books=0",
         "--num_epochs=1", "--steps=3", "--warmup_steps=100000",
         "--repeats=1",
         f"--work_dir={os.path.join(self.get_temp_dir(), 'work_short')}"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(result.returncode, 2, result.stderr[-3000:])
    self.assertIn("error: the training data ran out within the 100000 "
                  "warm-up steps", result.stderr)
    self.assertNotIn("Traceback", result.stderr)


if __name__ == "__main__":
  tf.test.main()
