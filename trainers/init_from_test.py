"""Tests of --init_from (trainers/init_from.py and its use by the Sent2Vec
and Siamese CBOW trainers): the vocabulary merge, the rows copied and the
rows initialised as from scratch, the refusals (a one-line `errors.UserError`),
resume over --init_from, and continued runs that train and export.

The runs go through the trainers' Python entry point (`<trainer>.run`) in
this process: each `python -m` would pay TensorFlow's import (~5 s), and
what a `errors.UserError` or `errors.Interrupted` becomes on the command line
(one `error:` line and exit 2, exit 75) is the same for every error and is
tested in common/cli_test.py, trainers/flag_validation_test.py and
trainers/sent2vec_test.py."""

import json
import os
import shutil

import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.tests import test_util
from sentzoo.export import export_model
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import sent2vec as sent2vec_model
from sentzoo.models import siamese_cbow as siamese_cbow_model
from sentzoo.tests import corpus_fixtures
from sentzoo.tests import trainer_fixtures
from sentzoo.trainers import init_from
from sentzoo.trainers import sent2vec
from sentzoo.trainers import siamese_cbow

try:  # 2 logical CPUs for the mirrored test (before TensorFlow starts).
  tf.config.set_logical_device_configuration(
      tf.config.list_physical_devices("CPU")[0],
      [tf.config.LogicalDeviceConfiguration()] * 2)
except RuntimeError:
  pass


def _write_sent2vec_dir(model_dir, words, dim=8, num_buckets=0,
                        word_ngrams=1, seed=1):
  """A Sent2Vec model directory as the trainer leaves it (vocab.txt,
  model_config.json, one checkpoint) with random tables; returns the
  model."""
  os.makedirs(model_dir, exist_ok=True)
  vocabulary_lib.Vocabulary(words, [10] * len(words)).save(
      os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE))
  keras.utils.set_random_seed(seed)
  model = sent2vec_model.Sent2Vec(len(words) + 1, num_buckets, dim)
  model.target_embeddings.assign(
      np.random.default_rng(seed).normal(size=(len(words) + 1, dim)))
  model_dir_lib.write_model_config(model_dir, "sent2vec", {
      "model": model.get_config(),
      "tokenizer": {"lowercase": True, "keep_punctuation": True},
      "featurizer": {"word_ngrams": word_ngrams},
      "training": {"corpus_files": ["fixture"]}})
  tf.train.CheckpointManager(
      tf.train.Checkpoint(model=model),
      os.path.join(model_dir, model_dir_lib.CHECKPOINT_SUBDIR),
      max_to_keep=1).save(checkpoint_number=3)
  return model


class MergedVocabularyTest(tf.test.TestCase):

  def test_keeps_known_words_with_their_new_counts_sorted_as_fresh(self):
    counts = {b"the": 50, b"cat": 7, b"new": 6, b"rare": 2}
    vocabulary = init_from.merged_vocabulary(counts, 5, ["cat", "rare",
                                                         "gone"])
    # "rare" is below min_count but known; "gone" is known and absent (0).
    self.assertEqual(vocabulary.words, ["the", "cat", "new", "rare", "gone"])
    self.assertAllEqual(vocabulary.counts, [50, 7, 6, 2, 0])

  def test_max_size_caps_only_the_new_corpus_words(self):
    counts = {b"a": 9, b"b": 8, b"c": 7}
    vocabulary = init_from.merged_vocabulary(counts, 1, ["c"], max_size=1)
    self.assertEqual(vocabulary.words, ["a", "c"])

  def test_without_known_words_equals_a_fresh_vocabulary(self):
    counts = {b"x": 3, b"y": 5, b"z": 1, b"w": 5}
    vocabulary = init_from.merged_vocabulary(counts, 2, [])
    self.assertEqual(vocabulary.words, ["w", "y", "x"])
    self.assertAllEqual(vocabulary.counts, [5, 5, 3])


class CopyRowsTest(tf.test.TestCase):

  def test_row_map_pairs_the_rows_of_shared_words(self):
    new_rows, old_rows = init_from.row_map(["a", "b", "c"], ["c", "x", "a"])
    self.assertAllEqual(new_rows, [1, 3])
    self.assertAllEqual(old_rows, [3, 1])

  def test_known_rows_and_buckets_copied_the_rest_untouched(self):
    old_words, new_words = ["a", "b", "c"], ["x", "c", "a", "y"]
    old = np.random.default_rng(0).normal(size=(3 + 1 + 5, 4)).astype(
        np.float32)
    fresh = np.random.default_rng(1).normal(size=(4 + 1 + 5, 4)).astype(
        np.float32)
    variable = tf.Variable(fresh)
    copied = init_from.copy_known_rows(variable, old, old_words, new_words,
                                       num_buckets=5)
    self.assertEqual(copied, 2)
    table = variable.numpy()
    self.assertAllClose(table[2], old[3])  # c
    self.assertAllClose(table[3], old[1])  # a
    self.assertAllClose(table[5:], old[4:])  # the 5 bucket rows
    for row in (0, 1, 4):  # padding, x, y
      self.assertAllClose(table[row], fresh[row])

  def test_copies_every_replica_of_a_mirrored_table(self):
    if len(tf.config.list_logical_devices("CPU")) < 2:
      self.skipTest("TensorFlow started before 2 logical CPUs were set")
    strategy = tf.distribute.MirroredStrategy(
        [d.name for d in tf.config.list_logical_devices("CPU")])
    with strategy.scope():
      variable = tf.Variable(tf.zeros([3, 2]))
    old = np.arange(6, dtype=np.float32).reshape(3, 2)
    init_from.copy_known_rows(variable, old, ["a", "b"], ["b", "q"])
    for copy in variable.values:
      self.assertAllClose(copy.numpy(), [[0, 0], [4, 5], [0, 0]])


class OpenSourceTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = tf.compat.v1.test.get_temp_dir()
    cls.model_dir = os.path.join(root, "init_source_s2v")
    cls.words = ["the", "cat", "sat", "."]
    cls.model = _write_sent2vec_dir(cls.model_dir, cls.words)
    cls.export = export_model.export(
        cls.model_dir, os.path.join(cls.model_dir, "export"), evaluate=False)
    cls.int8_export = export_model.export(
        cls.model_dir, os.path.join(cls.model_dir, "export_int8"),
        evaluate=False, quantize="int8")

  def test_model_directory_gives_both_tables(self):
    source = init_from.open_source(self.model_dir, "sent2vec", "")
    self.assertEqual((source.kind, source.words, source.embedding_dim),
                     ("model directory", self.words, 8))
    self.assertAllClose(source.read_table("source"),
                        self.model.source_embeddings.numpy())
    self.assertAllClose(source.read_table("target"),
                        self.model.target_embeddings.numpy())

  def test_export_gives_the_source_table_and_no_targets(self):
    source = init_from.open_source(self.export, "sent2vec", "")
    self.assertEqual((source.kind, source.words), ("export", self.words))
    self.assertAllClose(source.read_table("source"),
                        self.model.source_embeddings.numpy())
    self.assertIsNone(source.read_table("target"))

  def test_refusals_are_user_errors(self):
    cases = [
        (os.path.join(self.model_dir, "missing"), "is not a folder"),
        (os.path.join(self.model_dir, "checkpoints"), "neither an export"),
        (self.int8_export, "is a int8 export"),
    ]
    for path, message in cases:
      with self.subTest(path=path):
        with self.assertRaisesRegex(errors.UserError, message):
          init_from.open_source(path, "sent2vec", "")
    with self.assertRaisesRegex(errors.UserError, "holds a sent2vec model"):
      init_from.open_source(self.model_dir, "siamese_cbow", "")
    with self.assertRaisesRegex(errors.UserError, "--model_dir itself"):
      init_from.open_source(self.model_dir, "sent2vec", self.model_dir)

  def test_check_refuses_another_dimension_tokenisation_or_buckets(self):
    source = init_from.open_source(self.model_dir, "sent2vec", "")
    punctuation = {"keep_punctuation": True}
    source.check(embedding_dim=8, tokenizer=punctuation)
    with self.assertRaisesRegex(errors.UserError,
                                "8-d vectors but --embedding_dim=16"):
      source.check(embedding_dim=16, tokenizer=punctuation)
    with self.assertRaisesRegex(errors.UserError, "use --keep_punctuation"):
      source.check(embedding_dim=8, tokenizer={"keep_punctuation": False})
    with self.assertRaisesRegex(errors.UserError, "--word_ngrams=1 with 0"):
      source.check(embedding_dim=8, tokenizer=punctuation, word_ngrams=2,
                   num_buckets=10)


class TrainerStartTest(tf.test.TestCase):
  """The trainers' start from a source, in process: known rows are the
  source's exactly, the other rows those of a run from scratch."""

  def test_sent2vec_known_rows_copied_new_rows_as_from_scratch(self):
    root = self.get_temp_dir()
    old_words = ["the", "cat", "sat", "."]
    old = _write_sent2vec_dir(os.path.join(root, "old"), old_words,
                              num_buckets=6, word_ngrams=2)
    source = init_from.open_source(os.path.join(root, "old"), "sent2vec", "")
    merged = init_from.merged_vocabulary(
        {b"dog": 9, b"cat": 8, b"ran": 7}, 5, old_words)
    self.assertEqual(merged.words, ["dog", "cat", "ran", ".", "sat", "the"])

    keras.utils.set_random_seed(0)
    scratch = sent2vec_model.Sent2Vec(len(merged) + 1, 6, 8)
    keras.utils.set_random_seed(0)
    model = sent2vec_model.Sent2Vec(len(merged) + 1, 6, 8)
    sent2vec._start_from(source, model, merged, num_buckets=6)

    table, targets = (model.source_embeddings.numpy(),
                      model.target_embeddings.numpy())
    old_table, old_targets = (old.source_embeddings.numpy(),
                              old.target_embeddings.numpy())
    for new_id, word in enumerate(merged.words, start=1):
      if word in old_words:
        old_id = old_words.index(word) + 1
        self.assertAllClose(table[new_id], old_table[old_id])
        self.assertAllClose(targets[new_id], old_targets[old_id])
      else:  # dog, ran: as from scratch (source random, target zero).
        self.assertAllClose(table[new_id],
                            scratch.source_embeddings.numpy()[new_id])
        self.assertAllClose(targets[new_id], np.zeros(8))
    self.assertAllClose(table[0], np.zeros(8))
    self.assertAllClose(table[len(merged) + 1:], old_table[len(old_words) + 1:])

  def test_siamese_cbow_merged_table_from_a_source(self):
    old_words = ["a", "b"]
    old_table = np.random.default_rng(3).normal(size=(3, 4)).astype(
        np.float32)
    keras.utils.set_random_seed(0)
    scratch = siamese_cbow_model.SiameseCBOW(4, 4)
    scratch(tf.zeros([1, 3, 1], tf.int32))
    keras.utils.set_random_seed(0)
    model = siamese_cbow_model.SiameseCBOW(4, 4)
    model(tf.zeros([1, 3, 1], tf.int32))
    init_from.copy_known_rows(model.embedding.embeddings, old_table,
                              old_words, ["b", "new", "a"])
    table = model.embedding.embeddings.numpy()
    self.assertAllClose(table[1], old_table[2])
    self.assertAllClose(table[3], old_table[1])
    self.assertAllClose(table[2], scratch.embedding.embeddings.numpy()[2])


class ContinuedTrainingTest(tf.test.TestCase):
  """End to end: a small source model, then runs that continue from it."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = tf.compat.v1.test.get_temp_dir()
    cls.data_dir = os.path.join(root, "init_from_data")
    corpus_fixtures.write_topic_corpus(cls.data_dir)
    test_util.write_fixture_data_dir(cls.data_dir)
    # The new corpus: the topic words plus words the source never saw.
    cls.new_corpus = os.path.join(root, "new_corpus.txt")
    with open(cls.new_corpus, "w") as f:
      for i in range(200):
        f.write(f"t{i % 4}w{i % 10} t{i % 4}w{(i + 3) % 10} "
                f"fresh{i % 5} novel{i % 3} .\n")
    cls.s2v = ["--data_dir=" + cls.data_dir, "--embedding_dim=16",
               "--min_count=1", "--min_count_label=1", "--sample=1e-2",
               "--block_lines=50", "--num_epochs=1",
               "--log_every_steps=1",
               # In this process TensorFlow has started: its thread pools
               # are as they are (the default 1 would be refused).
               "--op_threads=0"]
    cls.source = os.path.join(root, "s2v_source")
    trainer_fixtures.run_printed(
        sent2vec, cls.s2v + ["--model_dir=" + cls.source, "--noexport"])

  def test_continued_run_trains_and_its_export_reloads(self):
    model_dir = os.path.join(self.get_temp_dir(), "s2v_continued")
    stdout = trainer_fixtures.run_printed(sent2vec, self.s2v + [
        "--corpus_files=" + self.new_corpus, "--model_dir=" + model_dir,
        "--init_from=" + self.source])
    source_words = vocabulary_lib.Vocabulary.load(
        os.path.join(self.source, "vocab.txt")).words
    merged = vocabulary_lib.Vocabulary.load(
        os.path.join(model_dir, "vocab.txt")).words
    self.assertEqual(set(merged), set(source_words) | {
        f"fresh{i}" for i in range(5)} | {f"novel{i}" for i in range(3)})
    self.assertIn(f"--init_from: {len(source_words)} of {len(merged)} words "
                  "start from the model directory", stdout)
    self.assertIn("step 4/4", stdout)
    with open(os.path.join(model_dir, "model_config.json")) as f:
      self.assertEqual(json.load(f)["training"]["init_from"],
                       os.path.abspath(self.source))
    export = os.path.join(model_dir, "export", "1")
    loaded = tf.saved_model.load(export)
    sentences = tf.constant(["t0w1 fresh1 .", "", "t2w3 t2w4"])
    out = loaded.signatures["serving_default"](
        sentences=sentences)["embeddings"].numpy()
    reader = tf.train.load_checkpoint(os.path.join(model_dir, "checkpoints"))
    table = reader.get_tensor(
        "model/source_embeddings/.ATTRIBUTES/VARIABLE_VALUE")
    index = {w: i for i, w in enumerate(merged, start=1)}
    expected = np.stack([
        table[[index["t0w1"], index["fresh1"], index["."]]].mean(0),
        np.zeros(16), table[[index["t2w3"], index["t2w4"]]].mean(0)])
    self.assertAllClose(out, expected, atol=1e-6)

  def test_resume_wins_over_init_from(self):
    model_dir = os.path.join(self.get_temp_dir(), "s2v_resume")
    source = os.path.join(self.get_temp_dir(), "s2v_source_copy")
    shutil.copytree(self.source, source)
    args = self.s2v + ["--corpus_files=" + self.new_corpus,
                       "--model_dir=" + model_dir, "--init_from=" + source,
                       "--noexport", "--checkpoint_every_steps=1"]
    with self.assertRaisesRegex(errors.Interrupted, "stopped at step 2"):
      trainer_fixtures.run_printed(sent2vec, args + ["--max_steps_per_run=2"])
    # The rerun restores its checkpoint and never reads the source.
    shutil.rmtree(source)
    second = trainer_fixtures.run_printed(sent2vec, args)
    self.assertNotIn("--init_from:", second)
    self.assertIn("step 4/4", second)

  def test_user_errors_are_one_line(self):
    root = self.get_temp_dir()
    cases = [
        (["--init_from=" + os.path.join(root, "nowhere")], "is not a folder"),
        (["--init_from=" + self.source, "--embedding_dim=32"],
         "16-d vectors but --embedding_dim=32"),
        (["--init_from=" + self.source, "--word_ngrams=2"],
         "n-gram rows cannot be mapped"),
    ]
    for i, (extra, message) in enumerate(cases):
      with self.subTest(message=message):
        model_dir = os.path.join(root, f"refused_{i}")
        with self.assertRaises(errors.UserError) as raised:
          trainer_fixtures.run_printed(sent2vec, self.s2v + [
              "--corpus_files=" + self.new_corpus,
              "--model_dir=" + model_dir, *extra])
        self.assertIn(message, str(raised.exception))
        self.assertNotIn("\n", str(raised.exception))
        self.assertFalse(os.path.exists(model_dir))

  def test_siamese_cbow_continues_from_an_export(self):
    data_dir = os.path.join(self.get_temp_dir(), "books")
    corpus_fixtures.write_book_corpus(data_dir, parts=(1, 2),
                                      vocabulary_size=40)
    test_util.write_fixture_data_dir(data_dir)
    args = ["--data_dir=" + data_dir, "--embedding_dim=8", "--min_count=1",
            "--batch_size=20", "--heldout_books=0", "--eval_every_steps=0",
            "--log_every_steps=10", "--learning_rate=0.1"]
    source = os.path.join(self.get_temp_dir(), "scbow_source")
    trainer_fixtures.run_printed(siamese_cbow, args + [
        "--corpus_parts=1", "--model_dir=" + source, "--train_steps=5",
        "--nocompare_untrained"])
    model_dir = os.path.join(self.get_temp_dir(), "scbow_continued")
    stdout = trainer_fixtures.run_printed(siamese_cbow, args + [
        "--corpus_parts=2", "--model_dir=" + model_dir, "--train_steps=5",
        "--init_from=" + os.path.join(source, "export", "1")])
    self.assertIn("start from the export", stdout)
    # The first vectors scored are the ones the run started from.
    self.assertIn("(start, --init_from)", stdout)
    loaded = tf.saved_model.load(os.path.join(model_dir, "export", "1"))
    out = loaded.signatures["serving_default"](
        sentences=tf.constant(["w1 w2.", ""]))["embeddings"].numpy()
    self.assertEqual(out.shape, (2, 8))
    self.assertAllClose(out[1], np.zeros(8))
    self.assertTrue(np.isfinite(out).all())
    with self.assertRaisesRegex(errors.UserError,
                                "holds a sent2vec model, not siamese_cbow"):
      trainer_fixtures.run_printed(siamese_cbow, args + [
          "--corpus_parts=2", "--model_dir=" + model_dir + "_x",
          "--init_from=" + self.source])


if __name__ == "__main__":
  tf.test.main()
