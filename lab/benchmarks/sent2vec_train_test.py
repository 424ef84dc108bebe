"""Tests of the Sent2Vec training-speed benchmark on a tiny corpus.

The side-by-side run is tested with a fake reference binary (a script that
prints what the C++ `fasttext sent2vec` prints), never the real one.
"""

import gzip
import json
import os
import stat
import subprocess
import sys
import textwrap

import tensorflow as tf

from lab.benchmarks import sent2vec_train

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_LINES = ["the cat sat on the mat .", "a dog ran in the park !",
          "the sun is warm today", "we read a long book at night",
          "cats and dogs play in the sun"]

# Mimics `fasttext sent2vec`: the dictionary lines, then "\rProgress: x%"
# lines for ~2 s, the 100% line, then "saving the model" for 1 s (the speed
# runs stop it first; the small job waits). It records its argv, and
# "saved" when it got there, and holds ~40 MB.
_FAKE_FASTTEXT = textwrap.dedent("""\
    #!{python}
    import json, os, sys, time
    args = sys.argv[1:]
    flags = dict(zip(args[1::2], args[2::2]))
    with open(os.environ["FAKE_FASTTEXT_LOG"], "a") as f:
      f.write(json.dumps(args) + "\\n")
    words = sum(len(line.split()) + 1 for line in open(flags["-input"]))
    ballast = b"x" * (40 << 20)
    sys.stderr.write("Read 0M words\\nNumber of words:  %d\\n"
                     "Number of labels: 0\\n" % words)
    for i in range(1, 1000):
      sys.stderr.write("\\rProgress: %.1f%%  words/sec/thread: 1234  "
                       "lr: 0.1  loss: 2.0  eta: 0h0m " % (i / 10.0))
      sys.stderr.flush()
      time.sleep(0.002)
    sys.stderr.write("\\rProgress: 100.0%  words/sec/thread: 1234  lr: 0.0  "
                     "loss: 2.0  eta: 0h0m \\n")
    sys.stderr.flush()
    time.sleep(1)
    open(flags["-output"] + ".bin", "w").close()
    with open(os.environ["FAKE_FASTTEXT_LOG"], "a") as f:
      f.write('"saved"\\n')
    """)


def _write_corpus(data_dir):
  os.makedirs(os.path.join(data_dir, "gutenberg"), exist_ok=True)
  with gzip.open(os.path.join(data_dir, "gutenberg", "part01.txt.gz"),
                 "wt") as f:
    f.write("\n".join(_LINES * 40) + "\n")


class Sent2VecTrainBenchmarkTest(tf.test.TestCase):

  def _run(self, name, *flags, env=None):
    data_dir = os.path.join(self.get_temp_dir(), "data")
    _write_corpus(data_dir)
    output = os.path.join(self.get_temp_dir(), name + ".json")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2",
               **(env or {}))
    result = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.sent2vec_train",
         f"--data_dir={data_dir}", "--embedding_dim=8", "--block_lines=8",
         "--steps=6", "--warmup_steps=2", "--repeats=2",
         "--steps_per_call=4", f"--output_json={output}", *flags],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=1500)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    with open(output) as f:
      return json.load(f), result.stdout

  def test_uni_settings_with_the_trainers_plan(self):
    speed, stdout = self._run("uni")
    self.assertIn("| tokens/s | words/s (tokens + end-of-lines)", stdout)
    self.assertIn("word ids from the token cache", stdout)
    settings = speed["settings"]
    self.assertEqual((settings["op_threads"], settings["input_threads"],
                      settings["word_ngrams"], settings["embedding_dim"]),
                     (1, 1, 1, 8))
    self.assertLen(speed["repeat_words_per_second"], 2)
    self.assertGreater(speed["words_per_second"], 0)
    # 6 measured steps of 8 lines: 48 lines of 5 to 7 tokens each.
    self.assertBetween(speed["tokens"], 48 * 5, 48 * 7)
    self.assertEqual(speed["lines"], 48)
    self.assertGreater(speed["peak_rss_mb"], 0)

  def test_step_threads_run_the_same_measured_steps(self):
    speed, stdout = self._run("threads", "--step_threads=2")
    self.assertIn("2 step loop(s) at once", stdout)
    self.assertEqual(speed["settings"]["step_threads"], 2)
    # Two loops share the 6 measured steps of 8 lines: 48 lines in all.
    self.assertEqual(speed["lines"], 48)
    self.assertGreater(speed["words_per_second"], 0)

  def test_unibi_settings_from_text_with_tf_threads(self):
    speed, stdout = self._run("unibi", "--word_ngrams=2", "--num_buckets=100",
                              "--sample=5e-6", "--min_count_label=5",
                              "--dropout_k=7", "--notoken_cache",
                              "--op_threads=0", "--input_threads=0")
    self.assertIn("tokenising text", stdout)
    settings = speed["settings"]
    self.assertEqual((settings["op_threads"], settings["input_threads"],
                      settings["word_ngrams"], settings["num_buckets"],
                      settings["dropout_k"]), (0, 0, 2, 100, 7))
    self.assertEqual(speed["lines"], 48)
    self.assertGreater(speed["words_per_second"], 0)

  def test_side_by_side_with_a_fake_reference_binary(self):
    fake = os.path.join(self.get_temp_dir(), "fasttext")
    with open(fake, "w") as f:
      f.write(_FAKE_FASTTEXT.format(python=sys.executable))
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
    argv_log = os.path.join(self.get_temp_dir(), "fake_argv.jsonl")
    work_dir = os.path.join(self.get_temp_dir(), "work")
    markdown = os.path.join(self.get_temp_dir(), "side_by_side.md")
    speed, stdout = self._run(
        "side_by_side", f"--reference_binary={fake}", "--word_ngrams=2",
        "--num_buckets=100", "--sample=5e-6", "--min_count_label=5",
        "--dropout_k=7", "--max_lines=150", f"--work_dir={work_dir}",
        f"--output_markdown={markdown}", "--noexport", "--repeats=1",
        env={"FAKE_FASTTEXT_LOG": argv_log})
    # The same tokenised lines for both: the first 150 non-empty ones.
    with open(os.path.join(work_dir, "lines.txt")) as f:
      lines = f.read().splitlines()
    self.assertEqual(lines, (_LINES * 40)[:150])
    self.assertEqual(speed["corpus"]["lines"], 150)
    self.assertEqual(speed["corpus"]["words"],
                     sum(len(line.split()) + 1 for line in lines))
    # Our flags, mapped to the C++ ones, on every run of the fake.
    with open(argv_log) as f:
      runs = [json.loads(line) for line in f]
    # The speed run, stopped at 100% before its model was written, then the
    # small job's run, which ran to its end.
    self.assertEqual([r == "saved" for r in runs], [False, False, True])
    runs = [r for r in runs if r != "saved"]
    self.assertLen(runs, 2)
    flags = dict(zip(runs[0][1::2], runs[0][2::2]))
    self.assertEqual(runs[0][0], "sent2vec")
    self.assertEqual(flags["-input"], os.path.join(work_dir, "lines.txt"))
    self.assertEqual(
        {k: flags[k] for k in ("-dim", "-minCount", "-wordNgrams", "-bucket",
                               "-epoch", "-lr", "-neg", "-thread", "-t",
                               "-dropoutK", "-minCountLabel", "-maxn",
                               "-loss")},
        {"-dim": "8", "-minCount": "5", "-wordNgrams": "2", "-bucket": "100",
         "-epoch": "1", "-lr": "0.2", "-neg": "10", "-thread": "2",
         "-t": "5e-06", "-dropoutK": "7", "-minCountLabel": "5",
         "-maxn": "0", "-loss": "ns"})
    # The small job: whole processes, ours timed by phase.
    job = speed["small_job"]
    self.assertLen(job["repeats"], 1)
    for r in job["repeats"]:
      self.assertGreater(r["reference"]["seconds"], 1.0)
      self.assertAllClose(r["speed_ratio"],
                          r["reference"]["seconds"] / r["ours"]["seconds"])
      phases = r["ours"]["phases"]
      self.assertContainsSubset(
          ["start-up (Python, TensorFlow, flags)",
           "data check and vocabulary (counting pass)", "token cache",
           "training (model, graph, steps)", "exit"], phases)
      self.assertNotIn("export", phases)  # --noexport.
      self.assertNotIn("final evaluation", phases)
      self.assertAllClose(sum(phases.values()), r["ours"]["seconds"])
      self.assertGreater(phases["training (model, graph, steps)"], 0)
      self.assertAllClose(sum(r["reference"]["phases"].values()),
                          r["reference"]["seconds"])
    self.assertIn("--num_epochs=1", job["ours_command_display"])
    self.assertLen(speed["repeats"], 1)
    for r in speed["repeats"]:
      ours, ref = r["ours"], r["reference"]
      self.assertGreater(ours["words_per_second"], 0)
      self.assertGreater(ref["words_per_second"], 0)
      self.assertGreater(ref["peak_rss_mb"], 40)
      self.assertAllClose(r["words_per_second_ratio"],
                          ours["words_per_second"] / ref["words_per_second"])
      self.assertAllClose(r["peak_rss_ratio"],
                          ours["peak_rss_mb"] / ref["peak_rss_mb"])
    ratio = speed["repeats"][0]["words_per_second_ratio"]
    self.assertAllClose(
        [speed["words_per_second_ratio"][k] for k in ("median", "min", "max")],
        [ratio] * 3)
    with open(markdown) as f:
      table = f.read()
    self.assertIn(table, stdout)
    self.assertIn("-dropoutK 7 -minCountLabel 5 -bucket 100 -maxn 0", table)
    self.assertIn("| median (range) |", table)
    # One row of each table.
    self.assertLen([l for l in table.splitlines() if l.startswith("| 1 |")],
                   2)
    self.assertIn("| ours | token cache |", table)
    self.assertIn("| C++ | dictionary pass |", table)

  def test_a_missing_reference_binary_is_a_user_error(self):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.sent2vec_train",
         "--reference_binary=" + os.path.join(self.get_temp_dir(), "none")],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertEqual(result.returncode, 2, result.stderr[-2000:])
    self.assertIn("not an executable file", result.stderr)
    self.assertNotIn("Traceback", result.stderr)

  def test_negative_threads_are_a_flag_error(self):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.sent2vec_train",
         "--op_threads=-1"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    self.assertNotEqual(result.returncode, 0)
    self.assertIn("op_threads", result.stderr)
    self.assertNotIn("Traceback", result.stderr)


class ProgressAndRatioTest(tf.test.TestCase):

  def test_progress_lines_cut_between_reads(self):
    reader = sent2vec_train.ProgressReader()
    reader.feed(b"Read 1M words\nNumber of words:  5\n\rProgress: 1.", 1.0)
    self.assertEqual(reader.samples, [])
    reader.feed(b"5%  words/sec/thread: 9\rProgress: 2.0%  words", 2.0, 0.5)
    self.assertEqual(reader.samples, [(2.0, 0.02, 0.5)])
    reader.feed(b"/sec/thread: 9  lr: 0.1", 3.0)  # No new progress.
    self.assertLen(reader.samples, 1)
    self.assertFalse(reader.finished)
    reader.feed(b"\rProgress: 100.0%  words/sec/thread: 9\n", 4.0)
    self.assertEqual(reader.samples[-1][:2], (4.0, 1.0))
    self.assertTrue(reader.finished)

  def test_reference_rate_over_the_window_in_words(self):
    # (wall s, progress, CPU s): the window runs from the first sample at
    # or past 5% to the last before 100%: 10 s, 80% of the epoch, 19 CPU s.
    samples = [(0.0, 0.01, 0.0), (1.0, 0.05, 2.0), (6.0, 0.5, 12.0),
               (11.0, 0.85, 21.0), (12.0, 1.0, 22.0)]
    rate, cores, seconds = sent2vec_train.reference_words_per_second(
        samples, 0.05, words=1000, known=800)
    # 0.8 x 1,000 known tokens read = 1.0 pass = 1,000 words, in 10 s.
    self.assertAllClose([rate, cores, seconds], [100.0, 1.9, 10.0])

  def test_phases_of_a_whole_run_from_its_model_directory(self):
    model_dir = os.path.join(self.get_temp_dir(), "phases")
    os.makedirs(os.path.join(model_dir, "token_cache"))
    start = 1000.0
    for name, at in (("flags.txt", 4.2), ("vocab.txt", 7.8),
                     ("token_cache", 18.8), ("train_log.jsonl", 66.7),
                     ("export", 70.1), ("finished.json", 72.0)):
      path = os.path.join(model_dir, name)
      if not os.path.exists(path):
        open(path, "w").close()
      os.utime(path, (start + at, start + at))
    self.assertAllClose(
        list(sent2vec_train.our_phases(model_dir, start, start + 74.0)
             .values()), [4.2, 3.6, 11.0, 47.9, 3.4, 1.9, 2.0])
    # Without the token cache (--notoken_cache): its phase is left out.
    os.rmdir(os.path.join(model_dir, "token_cache"))
    self.assertEqual(
        list(sent2vec_train.our_phases(model_dir, start, start + 74.0)),
        ["start-up (Python, TensorFlow, flags)",
         "data check and vocabulary (counting pass)",
         "training (model, graph, steps)", "export", "final evaluation",
         "exit"])
    self.assertAllClose(sent2vec_train.reference_phases(
        [(2.0, 0.01, None), (9.0, 0.5, None), (20.0, 1.0, None)], 23.0),
                        {"dictionary pass": 2.0, "training": 18.0,
                         "model written, exit": 3.0})

  def test_too_few_progress_lines_is_a_user_error(self):
    with self.assertRaisesRegex(Exception, "too few to time"):
      sent2vec_train.reference_words_per_second(
          [(1.0, 0.5, None), (2.0, 1.0, None)], 0.05, 100, 80)

  def test_summary_ratios_and_table(self):
    # (child_process_test tests the summaries themselves.)
    rows = []
    for ours, ref, cores in ((300.0, 200.0, 1.0), (330.0, 300.0, None)):
      rows.append({
          "ours": {"words_per_second": ours, "peak_rss_mb": 900.0,
                   "cores_in_use": 1.5, "load_average_1min": 1.0},
          "reference": {"words_per_second": ref, "peak_rss_mb": 600.0,
                        "cores_in_use": cores, "load_average_1min": 2.0}})
    result = sent2vec_train.add_ratios({
        "corpus": {"lines": 10, "tokens": 90, "words": 100,
                   "known_tokens": 80, "vocabulary": 7, "source": "test"},
        "settings": {"min_count": 5}, "cpus": 2,
        "load_average_before": [1.0, 1.0, 1.0],
        "load_average_after": [2.0, 2.0, 2.0],
        "reference_command_display": "fasttext sent2vec -dim 8",
        "ours_command_display": "python -m lab.benchmarks.sent2vec_train",
        "repeats": rows})
    first = result["repeats"][0]
    self.assertAllClose(
        [first["words_per_second_ratio"], first["peak_rss_ratio"],
         first["ours"]["words_per_cpu_second"],
         first["reference"]["words_per_cpu_second"],
         first["words_per_cpu_second_ratio"]],
        [1.5, 1.5, 200.0, 200.0, 1.0])
    self.assertIsNone(result["repeats"][1]["words_per_cpu_second_ratio"])
    self.assertEqual(result["words_per_second_ratio"],
                     {"median": 1.3, "min": 1.1, "max": 1.5})
    self.assertIsNone(result["words_per_cpu_second_ratio"])
    table = sent2vec_train.side_by_side_markdown(result)
    self.assertIn("- C++: `fasttext sent2vec -dim 8`", table)
    self.assertIn("| 1 | 300 | 200 | 1.50x | 1.50 / 1.00 | 200 | 200 | 1.00x "
                  "| 900 MB | 600 MB | 1.50x | 1.00 / 2.00 |", table)
    self.assertIn("| 2 | 330 | 300 | 1.10x | 1.50 /  | 220 |  |  |", table)
    self.assertIn("| median (range) | 315 (300-330) | 250 (200-300) | "
                  "**1.30x (1.10-1.50)** | | 210 (200-220) |  |  | "
                  "900 MB (900-900) | 600 MB (600-600) | **1.50x (1.50-1.50)** "
                  "| |", table)


if __name__ == "__main__":
  tf.test.main()
