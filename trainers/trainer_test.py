"""Tests of the shared trainer skeleton, through Siamese CBOW's trainer."""

import os

from absl import flags
import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import export_model
from sentzoo.tests import corpus_fixtures
from sentzoo.trainers import sent2vec
from sentzoo.trainers import siamese_cbow
from sentzoo.trainers import trainer

FLAGS = siamese_cbow.FLAGS

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

  def test_set_defaults_only_for_common_flags(self):
    with self.assertRaisesRegex(ValueError, "not a common flag"):
      trainer.set_defaults(FLAGS, embedding_dim=3)

  def test_total_steps(self):
    flag_values = flags.FlagValues()
    trainer.define_common_flags(flag_values)
    flag_values(["prog", "--num_epochs=3", "--train_steps=0"])
    self.assertEqual(trainer.total_steps(flag_values, 10), 30)
    flag_values.unparse_flags()
    flag_values(["prog", "--num_epochs=3", "--train_steps=7"])
    self.assertEqual(trainer.total_steps(flag_values, 10), 7)

  def test_trainers_keep_their_flags_apart(self):
    # Each trainer parses into its own flags, so two live in one process
    # (absl's global flags would refuse the second --embedding_dim).
    self.assertIsNot(sent2vec.FLAGS, siamese_cbow.FLAGS)
    self.assertEqual(sent2vec.FLAGS["embedding_dim"].default, 700)
    self.assertEqual(siamese_cbow.FLAGS["embedding_dim"].default, 300)


if __name__ == "__main__":
  tf.test.main()
