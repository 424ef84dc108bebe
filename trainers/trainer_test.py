"""Tests of the shared trainer skeleton, through Siamese CBOW's trainer."""

import contextlib
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from unittest import mock

from absl import flags
import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import sts
from sentzoo.export import export_model
from sentzoo.tests import corpus_fixtures
from sentzoo.trainers import config
from sentzoo.trainers import sent2vec
from sentzoo.trainers import siamese_cbow
from sentzoo.trainers import trainer

FLAGS = siamese_cbow.FLAGS

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SENTENCES = ["w1 w2 w3.", "w4 w5.", "", "w59 w0 w7 w7."]


class TrainerTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.data_dir = os.path.join(tf.compat.v1.test.get_temp_dir(),
                                "skeleton_data")
    corpus_fixtures.write_book_corpus(cls.data_dir, parts=(1,))
    cls.flags = ["--data_dir=" + cls.data_dir, "--embedding_dim=8",
                 "--batch_size=20", "--min_count=1", "--learning_rate=0.5",
                 "--train_steps=12", "--checkpoint_every_steps=5",
                 "--log_every_steps=5", "--heldout_books=1",
                 "--nocompare_untrained"]

  def tearDown(self):
    FLAGS.unparse_flags()
    super().tearDown()

  def test_run_from_python_exports_what_a_reexport_gives(self):
    model_dir = os.path.join(self.get_temp_dir(), "python_run")
    summary = siamese_cbow.run(self.flags + ["--model_dir=" + model_dir])
    self.assertEqual(summary.step, 12)
    self.assertEqual(summary.model_dir, model_dir)
    self.assertStartsWith(summary.export_path,
                          os.path.join(model_dir, "export"))
    # The final evaluation's results (the data dir has no STS sets: all
    # missing, none scored) are returned and written.
    self.assertIn("missing", summary.results)
    self.assertTrue(os.path.exists(
        os.path.join(model_dir, model_dir_lib.STS_RESULTS_FILE)))
    # Re-exporting the trained checkpoint gives the same embeddings.
    again = export_model.export(model_dir, os.path.join(
        self.get_temp_dir(), "reexport"), evaluate=False)
    sentences = tf.constant(SENTENCES)
    trained = tf.saved_model.load(summary.export_path).signatures[
        "serving_default"](sentences=sentences)["embeddings"]
    reexported = tf.saved_model.load(again).signatures["serving_default"](
        sentences=sentences)["embeddings"]
    self.assertAllClose(trained, reexported)
    self.assertTrue(np.all(np.isfinite(trained.numpy())))

  def test_flags_of_an_earlier_call_do_not_carry_over(self):
    model_dir = os.path.join(self.get_temp_dir(), "no_export")
    summary = siamese_cbow.run(self.flags + ["--model_dir=" + model_dir,
                                             "--noexport"])
    self.assertIsNone(summary.export_path)
    FLAGS.unparse_flags()
    with self.assertRaisesRegex(errors.UserError, "--model_dir"):
      siamese_cbow.run(["--data_dir=" + self.data_dir])
    self.assertTrue(FLAGS.export)  # The default again, not --noexport.

  def test_bad_flag_from_python_is_a_user_error(self):
    with self.assertRaisesRegex(errors.UserError, "embedding_dim"):
      siamese_cbow.run(["--model_dir=" + self.get_temp_dir(),
                        "--embedding_dim=0"])
    with self.assertRaisesRegex(errors.UserError, "unexpected arguments"):
      siamese_cbow.run(["--model_dir=" + self.get_temp_dir(), "stray"])

  def test_interrupted_run_raises_and_resumes(self):
    model_dir = os.path.join(self.get_temp_dir(), "interrupted")
    with self.assertRaises(errors.Interrupted):
      siamese_cbow.run(self.flags + ["--model_dir=" + model_dir,
                                     "--max_steps_per_run=5", "--noexport"])
    summary = siamese_cbow.run(self.flags + ["--model_dir=" + model_dir,
                                             "--noexport"])
    self.assertEqual(summary.step, 12)

  def test_a_second_signal_is_exit_75_naming_the_last_checkpoint(self):
    model_dir = os.path.join(self.get_temp_dir(), "stopped_at_once")
    with self.assertRaises(errors.Interrupted):
      siamese_cbow.run(self.flags + ["--model_dir=" + model_dir,
                                     "--max_steps_per_run=5", "--noexport"])
    # The second signal of training_loop's handler, as it lands in a save.
    with mock.patch.object(trainer.training_loop, "run",
                           side_effect=KeyboardInterrupt):
      with self.assertRaises(errors.StoppedAtOnce) as raised:
        siamese_cbow.run(self.flags + ["--model_dir=" + model_dir,
                                       "--noexport"])
    last = os.path.join(model_dir, "checkpoints", "ckpt-5")
    self.assertEqual(raised.exception.last_checkpoint, last)
    self.assertIn(f"the last complete checkpoint, {last}, is kept",
                  str(raised.exception))
    # It is an Interrupted: the command exits 75 (common/cli.run).
    self.assertIsInstance(raised.exception, errors.Interrupted)
    # The lock went with the run: the rerun resumes and finishes.
    self.assertEqual(siamese_cbow.run(self.flags + [
        "--model_dir=" + model_dir, "--noexport"]).step, 12)

  def test_finished_run_rerun_does_nothing_unless_reexport(self):
    model_dir = os.path.join(self.get_temp_dir(), "finished")
    argv = self.flags + ["--model_dir=" + model_dir]
    first = siamese_cbow.run(argv)
    export_base = os.path.join(model_dir, "export")
    self.assertEqual(os.listdir(export_base), ["1"])
    again = siamese_cbow.run(argv + ["--log_every_steps=3"])  # How, not what.
    self.assertEqual(again.export_path, first.export_path)
    self.assertEqual(again.step, 12)
    self.assertEqual(os.listdir(export_base), ["1"])
    reexported = siamese_cbow.run(argv + ["--reexport"])
    self.assertEqual(sorted(os.listdir(export_base)), ["1", "2"])
    self.assertEqual(reexported.export_path, os.path.join(export_base, "2"))
    # More epochs make it another run: it trains on from the checkpoint.
    longer = siamese_cbow.run(argv[:-1] + ["--model_dir=" + model_dir,
                                           "--train_steps=15", "--noexport"])
    self.assertEqual(longer.step, 15)

  def test_rerun_after_a_stop_between_export_and_finish_exports_no_more(self):
    model_dir = os.path.join(self.get_temp_dir(), "stopped_after_export")
    argv = self.flags + ["--model_dir=" + model_dir]
    first = siamese_cbow.run(argv)
    # As a run killed after its export was published, before it wrote
    # finished.json.
    os.remove(os.path.join(model_dir, model_dir_lib.FINISHED_FILE))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
      again = siamese_cbow.run(argv)
    self.assertIn("not exported again", out.getvalue())
    self.assertEqual(again.export_path, first.export_path)
    self.assertEqual(os.listdir(os.path.join(model_dir, "export")), ["1"])
    self.assertTrue(os.path.exists(
        os.path.join(model_dir, model_dir_lib.FINISHED_FILE)))
    # Another quantisation is another export.
    FLAGS.unparse_flags()
    os.remove(os.path.join(model_dir, model_dir_lib.FINISHED_FILE))
    siamese_cbow.run(argv + ["--quantize=float16"])
    self.assertEqual(sorted(os.listdir(os.path.join(model_dir, "export"))),
                     ["1", "2"])

  def test_sigterm_during_a_run_is_an_interrupt(self):
    with self.assertRaises(KeyboardInterrupt):
      with trainer._sigterm_as_interrupt():  # pylint: disable=protected-access
        signal.raise_signal(signal.SIGTERM)
    self.assertIs(signal.getsignal(signal.SIGTERM), signal.SIG_DFL)

  def test_quantize_reaches_the_export_and_a_reexport(self):
    model_dir = os.path.join(self.get_temp_dir(), "quantized")
    argv = self.flags + ["--model_dir=" + model_dir]
    first = siamese_cbow.run(argv + ["--quantize=int8"])
    loaded = tf.saved_model.load(first.export_path)
    self.assertEqual(loaded.embeddings_int8.dtype, tf.int8)
    self.assertEmpty(loaded.trainable_variables)
    # How the export is stored is not what is trained: a --reexport of the
    # finished run, now as float16.
    again = siamese_cbow.run(argv + ["--reexport", "--quantize=float16"])
    self.assertEqual(again.step, 12)
    self.assertEqual(
        tf.saved_model.load(again.export_path).embeddings_float16.dtype,
        tf.float16)
    with self.assertRaisesRegex(errors.UserError, "--quantize"):
      siamese_cbow.run(argv + ["--reexport", "--quantize=int4"])

  def test_incompatible_rerun_is_refused_before_anything_is_written(self):
    model_dir = os.path.join(self.get_temp_dir(), "incompatible")
    with self.assertRaises(errors.Interrupted):
      siamese_cbow.run(self.flags + ["--model_dir=" + model_dir,
                                     "--max_steps_per_run=5", "--noexport"])
    before = {name: open(os.path.join(model_dir, name), "rb").read()
              for name in ("flags.txt", "model_config.json", "vocab.txt")}
    with self.assertRaisesRegex(
        errors.UserError, r"--embedding_dim=16 \(the directory has "
        r"--embedding_dim=8\)"):
      siamese_cbow.run(self.flags + ["--model_dir=" + model_dir,
                                     "--embedding_dim=16"])
    for name, content in before.items():
      with open(os.path.join(model_dir, name), "rb") as f:
        self.assertEqual(f.read(), content, name)

  def test_changed_vocabulary_is_an_error_naming_both_fingerprints(self):
    model_dir = os.path.join(self.get_temp_dir(), "vocabulary")
    siamese_cbow.run(self.flags + ["--model_dir=" + model_dir, "--noexport"])
    path = os.path.join(model_dir, "vocab.txt")
    with open(path) as f:
      lines = f.readlines()
    with open(path, "w") as f:
      f.writelines(lines[1:2] + lines[:1] + lines[2:])  # Two words swapped.
    with self.assertRaisesRegex(errors.UserError,
                                r"vocab.txt is not the vocabulary .*\(sha256"):
      export_model.export(model_dir, os.path.join(model_dir, "export"))
    with self.assertRaisesRegex(errors.UserError, "vocab.txt is not"):
      siamese_cbow.run(self.flags + ["--model_dir=" + model_dir,
                                     "--train_steps=20"])

  def test_stale_checkpoint_temporaries_are_removed_at_start(self):
    model_dir = os.path.join(self.get_temp_dir(), "stale")
    with self.assertRaises(errors.Interrupted):
      siamese_cbow.run(self.flags + ["--model_dir=" + model_dir,
                                     "--max_steps_per_run=5", "--noexport"])
    stale = os.path.join(model_dir, "checkpoints", "ckpt-9_temp")
    os.makedirs(stale)
    siamese_cbow.run(self.flags + ["--model_dir=" + model_dir, "--noexport"])
    self.assertFalse(os.path.exists(stale))

  def test_model_dir_that_is_a_file_and_corrupt_json_are_user_errors(self):
    path = os.path.join(self.get_temp_dir(), "a_file")
    with open(path, "w") as f:
      f.write("x")
    with self.assertRaisesRegex(errors.UserError, "is a file"):
      siamese_cbow.run(self.flags + ["--model_dir=" + path])
    model_dir = os.path.join(self.get_temp_dir(), "corrupt")
    with self.assertRaises(errors.Interrupted):
      siamese_cbow.run(self.flags + ["--model_dir=" + model_dir,
                                     "--max_steps_per_run=2", "--noexport"])
    with open(os.path.join(model_dir, "corpus_stats.json"), "w") as f:
      f.write('{"key": ')
    with self.assertRaisesRegex(errors.UserError,
                                r"corpus_stats.json: not valid JSON"):
      siamese_cbow.run(self.flags + ["--model_dir=" + model_dir])

  def test_damaged_newest_checkpoint_falls_back_to_the_one_before(self):
    model_dir = os.path.join(self.get_temp_dir(), "damaged")
    siamese_cbow.run(self.flags + ["--model_dir=" + model_dir, "--noexport"])
    newest = model_dir_lib.checkpoints_newest_first(model_dir)[0]
    self.assertEndsWith(newest, "ckpt-12")
    with open(newest + ".data-00000-of-00001", "r+b") as f:
      f.truncate(10)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
      summary = siamese_cbow.run(self.flags + ["--model_dir=" + model_dir,
                                               "--train_steps=15"])
    self.assertIn(f"warning: cannot restore {newest}", out.getvalue())
    self.assertIn("resumed from", out.getvalue())
    self.assertIn("ckpt-10 at step 10", out.getvalue())
    self.assertEqual(summary.step, 15)
    self.assertIsNotNone(summary.export_path)

  def test_headline_comparison_says_level_when_the_printed_gain_is_zero(self):
    def results(mean, dev):
      aggregate = sts.Aggregate("STS.mean", "mean", [], mean, mean)
      dev_set = sts.SetResult("STSB.dev", dev, dev, np.zeros(2), np.zeros(2))
      return sts.EvalResults(sets={"STSB.dev": dev_set}, missing=[],
                             aggregates={"STS.mean": aggregate})

    lines = trainer.compare_headline_scores(
        results(49.091, 54.80), "untrained", results(49.088, 54.83))
    self.assertEqual(lines.splitlines(), [
        "mean of the STS 2012-2015 sets: trained 49.09, untrained 49.09 "
        "(level with the untrained model, +0.00)",
        "STS-B dev: trained 54.80, untrained 54.83 "
        "(NOT above the untrained model, -0.03)"])
    self.assertIn("(above the untrained model, +1.00)",
                  trainer.compare_headline_scores(
                      results(50.09, 55.0), "untrained",
                      results(49.09, 54.0)))

  def test_plan_to_measure_creates_a_new_model_dir(self):
    # A benchmark's --model_dir=NEW once ended in a FileNotFoundError
    # traceback while the plan cached the vocabulary.
    model_dir = os.path.join(self.get_temp_dir(), "new", "plan_dir")
    # Another test in this process may have left flags set (a run that
    # raised before its end): a benchmark process parses them fresh.
    FLAGS.unparse_flags()
    FLAGS(["prog"] + self.flags + ["--model_dir=" + model_dir])
    with trainer.plan_to_measure(siamese_cbow.SiameseCBOWTrainer()) as plan:
      loss = plan.train_step(next(iter(plan.dataset)))["loss"].numpy()
    self.assertTrue(np.isfinite(loss))
    self.assertTrue(os.path.exists(os.path.join(model_dir, "vocab.txt")))

  def test_total_steps(self):
    flag_values = trainer.make_flags(config.TrainingConfig)
    flag_values(["prog", "--num_epochs=3", "--train_steps=0"])
    self.assertEqual(trainer.total_steps(flag_values, 10), 30)
    flag_values.unparse_flags()
    flag_values(["prog", "--num_epochs=3", "--train_steps=7"])
    self.assertEqual(trainer.total_steps(flag_values, 10), 7)

  def test_parameter_server_chief_exits_at_once_on_a_bug(self):
    # An exception left to the interpreter's exit hangs a chief whose
    # worker died (TensorFlow's coordinator destructor): the chief prints
    # the traceback and ends with exit code 1 at once instead.
    model_trainer = sent2vec.Sent2VecTrainer()

    def failing_run(main, flag_values):
      flag_values(["prog", "--strategy=parameter_server"])
      raise RuntimeError("a bug in the training loop")

    exits = []
    stderr = io.StringIO()
    with mock.patch.object(trainer.cli, "run", failing_run), \
         mock.patch.object(trainer.distribution, "exit_process",
                           exits.append), \
         contextlib.redirect_stderr(stderr):
      # (The real exit_process does not return; the fake one does.)
      with self.assertRaises(RuntimeError):
        try:
          trainer.main(model_trainer)
        finally:
          model_trainer.flag_values.unparse_flags()
    self.assertEqual(exits, [errors.EXIT_FAILED])
    self.assertIn("RuntimeError: a bug in the training loop",
                  stderr.getvalue())
    # Other strategies leave the exception to the interpreter.
    with mock.patch.object(trainer.cli, "run", lambda main, flag_values: (
        flag_values(["prog"]), 1 / 0)):
      with self.assertRaises(ZeroDivisionError):
        try:
          trainer.main(model_trainer)
        finally:
          model_trainer.flag_values.unparse_flags()

  def test_trainers_keep_their_flags_apart(self):
    # Each trainer parses into its own flags, so two live in one process
    # (absl's global flags would refuse the second --embedding_dim).
    self.assertIsNot(sent2vec.FLAGS, siamese_cbow.FLAGS)
    self.assertEqual(sent2vec.FLAGS["embedding_dim"].default, 700)
    self.assertEqual(siamese_cbow.FLAGS["embedding_dim"].default, 300)


def _default_sigint():
  # A child of a background shell job may inherit SIGINT ignored.
  signal.signal(signal.SIGINT, signal.SIG_DFL)


class CommandSignalTest(tf.test.TestCase):
  """SIGINT/SIGTERM sent to `python -m trainers.siamese_cbow` processes."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.data_dir = os.path.join(tf.compat.v1.test.get_temp_dir(),
                                "signal_data")
    corpus_fixtures.write_book_corpus(cls.data_dir, parts=(1,))
    cls.flags = ["--data_dir=" + cls.data_dir, "--embedding_dim=8",
                 "--batch_size=20", "--min_count=1", "--learning_rate=0.5",
                 "--train_steps=12", "--checkpoint_every_steps=5",
                 "--log_every_steps=5", "--heldout_books=1",
                 "--nocompare_untrained", "--noexport"]

  def _env(self):
    return dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")

  def test_a_signal_while_tensorflow_is_imported_is_one_line(self):
    # Was a KeyboardInterrupt traceback through the imports and exit 130
    # (SIGTERM: death by the signal).
    for signum in (signal.SIGINT, signal.SIGTERM):
      model_dir = os.path.join(self.get_temp_dir(), f"importing_{signum}")
      process = subprocess.Popen(
          [sys.executable, "-m", "trainers.siamese_cbow",
           "--model_dir=" + model_dir, *self.flags], cwd=REPO_ROOT,
          env=self._env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
          text=True, preexec_fn=_default_sigint)
      # Once TensorFlow's library is loaded: its import takes seconds more.
      maps = f"/proc/{process.pid}/maps"
      deadline = time.monotonic() + 120
      while process.poll() is None and time.monotonic() < deadline:
        with open(maps) as f:
          if "tensorflow" in f.read():
            break
        time.sleep(0.01)
      process.send_signal(signum)
      out, err = process.communicate(timeout=300)
      self.assertEqual(process.returncode, errors.EXIT_INTERRUPTED, err)
      self.assertEqual(out, "")
      self.assertEqual(err.strip(), errors.INTERRUPTED_BEFORE_TRAINING)
      # Before the trainer's code ran: nothing was written.
      self.assertFalse(os.path.exists(model_dir))

  def _run_signalled_in_save(self, model_dir, save, signals):
    """Runs the trainer command, sending itself `signals` SIGINTs while it
    writes its `save`-th checkpoint: after the variables were written to
    ckpt-N_temp, before they are merged into ckpt-N."""
    code = textwrap.dedent(f"""
        import os, runpy, signal, sys
        from sentzoo.common import interrupts
        interrupts.install_for_command()  # As `python -m` does.
        from tensorflow.python.ops import gen_io_ops
        merge = gen_io_ops.merge_v2_checkpoints
        saves = []

        def merge_after_signals(*args, **kwargs):
          saves.append(1)
          if len(saves) == {save}:
            for _ in range({signals}):
              os.kill(os.getpid(), signal.SIGINT)
              for _ in range(1000):  # Its handler runs in here.
                pass
          return merge(*args, **kwargs)

        gen_io_ops.merge_v2_checkpoints = merge_after_signals
        sys.argv = ["siamese_cbow"] + {self.flags + ["--model_dir=" + model_dir]!r}
        runpy.run_module("trainers.siamese_cbow", run_name="__main__")
        """)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=self._env(),
        capture_output=True, text=True, timeout=300,
        preexec_fn=_default_sigint)

  def _resume(self, model_dir):
    done = subprocess.run(
        [sys.executable, "-m", "trainers.siamese_cbow",
         "--model_dir=" + model_dir, *self.flags], cwd=REPO_ROOT,
        env=self._env(), capture_output=True, text=True, timeout=300,
        preexec_fn=_default_sigint)
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    self.assertNotIn("Traceback", done.stderr)
    self.assertEqual(
        tf.train.latest_checkpoint(os.path.join(model_dir, "checkpoints")),
        os.path.join(model_dir, "checkpoints", "ckpt-12"))
    self.assertEmpty([name for name in os.listdir(
        os.path.join(model_dir, "checkpoints")) if "_temp" in name])
    return done.stdout

  def test_a_second_sigint_in_a_checkpoint_save_keeps_the_last_one(self):
    # The second Ctrl-C lands in the save of ckpt-10 (the first asked for
    # it): was exit 130, a KeyboardInterrupt traceback and a lost run.
    model_dir = os.path.join(self.get_temp_dir(), "second_in_save")
    done = self._run_signalled_in_save(model_dir, save=2, signals=2)
    self.assertEqual(done.returncode, errors.EXIT_INTERRUPTED,
                     done.stderr[-3000:])
    self.assertNotIn("Traceback", done.stderr)
    self.assertIn("stop requested", done.stderr)
    last = os.path.join(model_dir, "checkpoints", "ckpt-5")
    self.assertEqual(done.stdout.strip().splitlines()[-1],
                     f"stopped at once; the last complete checkpoint, {last}, "
                     "is kept: rerun the same command to resume from it")
    # The save it stopped is a temporary, not a checkpoint.
    self.assertTrue(os.path.isdir(os.path.join(model_dir, "checkpoints",
                                               "ckpt-10_temp")))
    self.assertEqual(
        tf.train.latest_checkpoint(os.path.join(model_dir, "checkpoints")),
        last)
    self.assertIn(f"resumed from {last} at step 5", self._resume(model_dir))

  def test_a_sigint_in_the_last_save_lets_it_finish(self):
    # The first Ctrl-C while the last steps are saved: was a
    # KeyboardInterrupt in the save (outside the loop's handler), which left
    # ckpt-12_temp and went back to ckpt-10.
    model_dir = os.path.join(self.get_temp_dir(), "first_in_last_save")
    done = self._run_signalled_in_save(model_dir, save=3, signals=1)
    self.assertEqual(done.returncode, errors.EXIT_INTERRUPTED,
                     done.stderr[-3000:])
    self.assertNotIn("Traceback", done.stderr)
    self.assertEqual(done.stdout.strip().splitlines()[-1],
                     "stopped at step 12; rerun the same command to resume")
    last = os.path.join(model_dir, "checkpoints", "ckpt-12")
    self.assertEqual(
        tf.train.latest_checkpoint(os.path.join(model_dir, "checkpoints")),
        last)
    self.assertIn(f"resumed from {last} at step 12", self._resume(model_dir))


if __name__ == "__main__":
  tf.test.main()
