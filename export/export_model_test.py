"""Tests for export.export_model: trained model directory -> SavedModel."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.common import non_finite
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts as evaluation_sts
from sentzoo.evaluation import sts_data
from sentzoo.export import export_model
from sentzoo.export import saved_model_writer
from sentzoo.tests import model_dir_fixtures

WORDS = model_dir_fixtures.WORDS
DIM = model_dir_fixtures.DIM
SENTENCES = model_dir_fixtures.SENTENCES


class ExportModelTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    root = os.path.join(self.get_temp_dir(), self.id())
    self.model_dir = os.path.join(root, "model")
    self.export_dir = os.path.join(root, "exports")
    self.table = model_dir_fixtures.make_siamese_cbow_model_dir(self.model_dir)
    self.expected = np.stack([
        model_dir_fixtures.siamese_cbow_reference(self.table, s)
        for s in SENTENCES])

  def test_build_module_uses_latest_checkpoint(self):
    encoder = export_model.build_module(self.model_dir)
    self.assertAllClose(encoder.embeddings, self.table)
    got = encoder(tf.constant(SENTENCES))
    self.assertAllClose(got, self.expected, atol=1e-6)
    self.assertAllEqual(got[1:4], np.zeros((3, DIM)))
    self.assertEqual(encoder.metadata["checkpoint"], "ckpt-2")

  def test_export_and_reload(self):
    path = export_model.export(self.model_dir, self.export_dir)
    self.assertEqual(path, os.path.join(self.export_dir, "1"))
    self.assertEqual(sorted(os.listdir(self.export_dir)), ["1"])
    sentences = tf.constant(SENTENCES)
    in_memory = export_model.build_module(self.model_dir)(sentences)

    loaded = tf.saved_model.load(path)
    served = loaded.signatures["serving_default"](
        sentences=sentences)["embeddings"]
    called = loaded(sentences)
    for got in (served, called):
      self.assertEqual(got.dtype, tf.float32)
      self.assertAllClose(got, in_memory, atol=1e-6)
      self.assertAllClose(got, self.expected, atol=1e-6)
    self.assertEqual(loaded(tf.constant([], tf.string)).shape, (0, DIM))

    self.assertLen(loaded.trainable_variables, 1)
    self.assertLen(loaded.variables, 1)
    self.assertTrue(loaded.trainable_variables[0].trainable)
    self.assertAllClose(loaded.trainable_variables[0], self.table)
    self.assertIs(loaded.variables[0], loaded.trainable_variables[0])
    self.assertEmpty(loaded.regularization_losses)
    # Fine-tunable: gradients reach the word vectors of the known words.
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(loaded(tf.constant(["the cat"])))
    gradient = tf.convert_to_tensor(
        tape.gradient(loss, loaded.trainable_variables[0]))
    self.assertAllClose(gradient[1:3], np.full((2, DIM), 0.5))
    self.assertAllEqual(gradient[3:], np.zeros((len(WORDS) - 2, DIM)))

    # The next export is a new version.
    self.assertEqual(export_model.export(self.model_dir, self.export_dir),
                     os.path.join(self.export_dir, "2"))
    self.assertEqual(sorted(os.listdir(self.export_dir)), ["1", "2"])

  def test_model_card(self):
    path = export_model.export(self.model_dir, self.export_dir, version=3)
    self.assertEqual(path, os.path.join(self.export_dir, "3"))
    with open(os.path.join(path, saved_model_writer.MODEL_CARD)) as f:
      card = json.load(f)
    self.assertEqual(card["model_type"], "siamese_cbow")
    self.assertEqual(card["embedding_dim"], DIM)
    self.assertEqual(card["vocabulary_size"], len(WORDS))
    self.assertEqual(card["checkpoint"], "ckpt-2")
    self.assertTrue(card["tokenization"]["keep_punctuation"])
    self.assertTrue(card["tokenization"]["lowercase"])
    self.assertEqual(card["training"]["corpus_files"], ["part01.txt.gz"])
    self.assertIn("Siamese CBOW", card["paper"])
    self.assertEqual(card["versions"]["tensorflow"], tf.__version__)

  def test_model_card_scores_measured_at_export_time(self):
    data_dir = os.path.join(self.get_temp_dir(), self.id(), "data")
    sick = os.path.join(data_dir, "sick2014")
    stsb = os.path.join(data_dir, "sts", "STSBenchmark")
    os.makedirs(sick)
    os.makedirs(stsb)
    with open(os.path.join(sick, "SICK_test_annotated.txt"), "w") as f:
      f.write("pair_ID\tsentence_A\tsentence_B\trelatedness_score\t"
              "entailment_judgment\n")
      for i, (a, b, score) in enumerate([
          ("the cat sat", "the cat sat", 5.0), ("the cat", "mat", 2.0),
          ("on the mat", "café 猫", 1.0), ("the mat", "the cat", 3.5)]):
        f.write(f"{i}\t{a}\t{b}\t{score}\tNEUTRAL\n")
    with open(os.path.join(stsb, "sts-dev.csv"), "w") as f:
      for i, (a, b, score) in enumerate([
          ("the cat sat", "the cat sat", 5.0), ("the cat", "on", 1.0),
          ("mat", "the mat", 4.0)]):
        f.write(f"main-captions\tMSRvid\t2012test\t{i}\t{score}\t{a}\t{b}\n")
    path = export_model.export(self.model_dir, self.export_dir,
                               data_dir=data_dir)
    with open(os.path.join(path, saved_model_writer.MODEL_CARD)) as f:
      evaluation = json.load(f)["evaluation"]
    self.assertEqual(sorted(evaluation["sets"]), ["SICK.test", "STSB.dev"])
    self.assertEqual(evaluation["sets"]["SICK.test"]["pairs"], 4)
    # The card's numbers are the evaluation of the exported encoder.
    reloaded = evaluation_sts.evaluate_pair_sets(
        encoder_lib.load_encoder(path),
        [sts_data.load_sick_split(data_dir, "test")]).sets["SICK.test"]
    self.assertAlmostEqual(evaluation["sets"]["SICK.test"]["pearson"],
                           reloaded.pearson, places=2)

  def test_model_card_without_data_says_so(self):
    path = export_model.export(self.model_dir, self.export_dir,
                               data_dir=os.path.join(self.get_temp_dir(),
                                                     "no_such_dir"))
    with open(os.path.join(path, saved_model_writer.MODEL_CARD)) as f:
      evaluation = json.load(f)["evaluation"]
    self.assertIn("not measured", evaluation["note"])
    # Issue 32: the command says so on the console.
    self.assertEqual(export_model.card_scores_note(path), evaluation["note"])

  def test_quantize_mode_is_checked_and_recorded(self):
    with self.assertRaisesRegex(errors.UserError, "quantize must be one of"):
      export_model.build_module(self.model_dir, quantize="int4")
    path = export_model.export(self.model_dir, self.export_dir,
                               evaluate=False, quantize="float16")
    with open(os.path.join(path, saved_model_writer.MODEL_CARD)) as f:
      card = json.load(f)
    self.assertEqual(card["quantization"]["mode"], "float16")
    self.assertEqual(card["quantization"]["table_shape"],
                     [len(WORDS) + 1, DIM])
    self.assertAllClose(tf.saved_model.load(path)(tf.constant(SENTENCES)),
                        self.expected, atol=2e-3, rtol=0)

  def test_missing_model_config_raises(self):
    os.remove(os.path.join(self.model_dir, model_dir_lib.MODEL_CONFIG_FILE))
    with self.assertRaisesRegex(errors.UserError, "model_config.json"):
      export_model.export(self.model_dir, self.export_dir)
    self.assertFalse(os.path.exists(os.path.join(self.export_dir, "1")))

  def test_missing_checkpoint_raises(self):
    model_dir = os.path.join(self.get_temp_dir(), self.id(), "untrained")
    model_dir_fixtures.make_siamese_cbow_model_dir(model_dir, checkpoints=0)
    with self.assertRaisesRegex(errors.UserError, "checkpoint"):
      export_model.export(model_dir, self.export_dir)
    self.assertFalse(os.path.exists(os.path.join(self.export_dir, "1")))

  def test_unknown_model_type_raises(self):
    path = os.path.join(self.model_dir, model_dir_lib.MODEL_CONFIG_FILE)
    with open(path) as f:
      config = json.load(f)
    config["model_type"] = "skip_thoughts"
    with open(path, "w") as f:
      json.dump(config, f)
    with self.assertRaisesRegex(errors.UserError, "skip_thoughts"):
      export_model.build_module(self.model_dir)

  def test_read_model_config(self):
    config = model_dir_lib.read_model_config(self.model_dir)
    self.assertEqual(config["model_type"], "siamese_cbow")
    self.assertEqual(config["model"]["vocab_size"], len(WORDS) + 1)
    self.assertEqual(config["tokenizer"],
                     {"lowercase": True, "keep_punctuation": True})

  def test_a_non_finite_model_is_not_exported(self):
    # Issue 33 row 3: a run trained to NaN exported all-NaN vectors.
    module = export_model.build_module(self.model_dir)
    table = module.embeddings.numpy()
    table[2, 1] = np.nan
    module.embeddings.assign(table)
    with self.assertRaisesRegex(
        non_finite.NonFiniteError,
        "the model to export from .* holds non-finite values \\(1 of "):
      export_model.export(self.model_dir, self.export_dir, module=module)
    self.assertFalse(os.path.exists(self.export_dir) and
                     os.listdir(self.export_dir))

  def test_export_command_refuses_a_model_dir_in_use(self):
    # Issue 33 row 1: an export while a trainer writes the directory.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import sys, time
            from sentzoo.common import run_lock
            with run_lock.hold(sys.argv[1], "training"):
              print("held", flush=True)
              time.sleep(600)
            """), self.model_dir],
        cwd=root, stdout=subprocess.PIPE, text=True)
    try:
      self.assertEqual(holder.stdout.readline().strip(), "held")
      done = subprocess.run(
          [sys.executable, "-m", "sentzoo.export.export_model",
           f"--model_dir={self.model_dir}", f"--export_dir={self.export_dir}",
           "--noevaluate"], cwd=root, capture_output=True, text=True,
          timeout=300)
    finally:
      holder.kill()
      holder.communicate()
    self.assertEqual(done.returncode, errors.EXIT_USER_ERROR, done.stderr)
    errors_printed = [line for line in done.stderr.splitlines()
                      if line.startswith("error:")]
    self.assertEqual(errors_printed, [
        f"error: {self.model_dir!r} is in use by another run (pid "
        f"{holder.pid} on host {os.uname().nodename}, since "
        + errors_printed[0].split(", since ")[1]])
    self.assertNotIn("Traceback", done.stderr)
    self.assertFalse(os.path.exists(self.export_dir))
    # Once it ended, the export runs.
    done = subprocess.run(
        [sys.executable, "-m", "sentzoo.export.export_model",
         f"--model_dir={self.model_dir}", f"--export_dir={self.export_dir}",
         "--noevaluate"], cwd=root, capture_output=True, text=True,
        timeout=300)
    self.assertEqual(done.returncode, 0, done.stderr)
    self.assertIn("exported to", done.stdout)


if __name__ == "__main__":
  tf.test.main()
