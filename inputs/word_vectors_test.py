"""Tests for word_vectors, on small files and model directories written here."""

import os

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.inputs import text_to_ids
from sentzoo.inputs import vocabulary
from sentzoo.inputs import word_vectors
from sentzoo.tests import model_dir_fixtures


class TextVectorsTest(tf.test.TestCase):

  def _write(self, name, text):
    path = os.path.join(self.get_temp_dir(), name)
    with open(path, "w", encoding="utf-8") as f:
      f.write(text)
    return path

  def test_glove_format(self):
    path = self._write("glove.txt", "the 0.1 0.2 0.3\ncat 1 2 3\n. . 4 5 6\n")
    vectors = word_vectors.load(path)
    self.assertEqual(vectors.words, ["the", "cat", ". ."])
    self.assertAllClose(vectors.matrix[1], [1, 2, 3])
    self.assertEqual(vectors.dim, 3)

  def test_word2vec_header_and_wanted(self):
    path = self._write("w2v.txt", "3 2\nthe 0.1 0.2\ncat 1 2\ndog 3 4\n")
    vectors = word_vectors.load(path, wanted={"dog", "the", "zebra"})
    self.assertEqual(vectors.words, ["the", "dog"])
    self.assertAllClose(vectors.matrix, [[0.1, 0.2], [3, 4]])

  def test_malformed_lines(self):
    with self.assertRaisesRegex(errors.DataFormatError, r"bad.txt:2:"):
      word_vectors.load(self._write("bad.txt", "a 1 2\nb 1\n"))
    with self.assertRaisesRegex(errors.DataFormatError, r"nan.txt:1:"):
      word_vectors.load(self._write("nan.txt", "a x 2\n"))

  def test_embedding_matrix_oov_rows_and_scaling(self):
    vectors = word_vectors.WordVectors(["cat", "dog"],
                                       [[0.01, -0.01], [0.02, 0.0]])
    matrix, found = word_vectors.embedding_matrix(
        ["dog", "unicorn", "cat"], vectors, oov_range=0.25, seed=3)
    self.assertEqual(found, 2)
    self.assertAllEqual(matrix[0], [0, 0])
    self.assertAllClose(matrix[1], [0.02, 0.0])
    self.assertAllClose(matrix[3], [0.01, -0.01])
    self.assertTrue(np.all(np.abs(matrix[2]) <= 0.25))
    self.assertTrue(np.any(matrix[2] != 0))
    scaled, _ = word_vectors.embedding_matrix(
        ["dog", "cat"], vectors, scale_to_std=1.0)
    self.assertAllClose(np.std(scaled[1:]), 1.0, rtol=1e-5)
    self.assertAllClose(scaled[1:] * np.std(vectors.matrix),
                        vectors.matrix[::-1], rtol=1e-5)
    random_only, found = word_vectors.embedding_matrix(["a", "b"], None, dim=4)
    self.assertEqual((random_only.shape, found), ((3, 4), 0))


class ProjectVectorsTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.words = ["the", "cat", "sat"]
    self.table = np.arange(12, dtype=np.float32).reshape(4, 3)
    self.model_dir = os.path.join(self.get_temp_dir(), "model")
    os.makedirs(os.path.join(self.model_dir, "checkpoints"))
    vocab = vocabulary.Vocabulary(self.words, [5, 4, 3])
    vocab.save(os.path.join(self.model_dir, "vocab.txt"))
    with open(os.path.join(self.model_dir, "model_config.json"), "w") as f:
      f.write('{"model_type": "siamese_cbow"}')
    # A checkpoint shaped like Siamese CBOW's: model/embedding/embeddings.
    embedding = tf.Module()
    embedding.embeddings = tf.Variable(self.table)
    model = tf.Module()
    model.embedding = embedding
    tf.train.Checkpoint(model=model).save(
        os.path.join(self.model_dir, "checkpoints", "ckpt"))
    self.export_dir = model_dir_fixtures.write_averaging_export(
        text_to_ids.TextToIds(vocab), self.table,
        os.path.join(self.model_dir, "export"))

  def test_model_dir(self):
    vectors = word_vectors.load(self.model_dir)
    self.assertEqual(vectors.words, self.words)
    self.assertAllClose(vectors.matrix, self.table[1:])

  def test_sent2vec_like_model_dir_uses_source_word_rows(self):
    model_dir = os.path.join(self.get_temp_dir(), "s2v")
    os.makedirs(model_dir)
    vocabulary.Vocabulary(self.words, [5, 4, 3]).save(
        os.path.join(model_dir, "vocab.txt"))
    with open(os.path.join(model_dir, "model_config.json"), "w") as f:
      f.write('{"model_type": "sent2vec"}')
    model = tf.Module()
    source = np.arange(18, dtype=np.float32).reshape(6, 3)  # 4 + 2 buckets.
    model.source_embeddings = tf.Variable(source)
    model.target_embeddings = tf.Variable(np.ones((4, 3), np.float32))
    tf.train.Checkpoint(model=model).save(
        os.path.join(model_dir, "checkpoints", "ckpt"))
    vectors = word_vectors.load(model_dir)
    self.assertAllClose(vectors.matrix, source[1:4])

  def test_export_dir_finds_the_model_dirs_vocabulary(self):
    vectors = word_vectors.load(self.export_dir, wanted={"sat", "the"})
    self.assertEqual(vectors.words, ["the", "sat"])
    self.assertAllClose(vectors.matrix, self.table[[1, 3]])

  def test_export_with_wrong_vocabulary(self):
    path = os.path.join(self.get_temp_dir(), "v.txt")
    vocabulary.Vocabulary(["a"], [1]).save(path)
    with self.assertRaisesRegex(errors.UserError, "rows"):
      word_vectors.load(self.export_dir, vocab_path=path)

  def test_not_a_model(self):
    with self.assertRaises(errors.UserError):
      word_vectors.load(self.get_temp_dir() + "/nothing_here")


if __name__ == "__main__":
  tf.test.main()
