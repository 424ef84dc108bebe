"""Tests for word_vectors, on small files and model directories written here."""

import gzip
import os

from gensim.models import keyedvectors
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


def _read_all(path, fmt, chunk_rows=2):
  words, rows = [], []
  for chunk_words, chunk in word_vectors.VectorFile(path, fmt).chunks(
      chunk_rows):
    words += chunk_words
    rows.append(chunk)
  return words, np.concatenate(rows).tolist()


class VectorFileTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.words = ["the", "cat", "café", "</s>", "x"]
    self.rows = np.random.default_rng(0).normal(size=(5, 4)).astype(
        np.float32)

  def _path(self, name, data):
    path = os.path.join(self.get_temp_dir(), name)
    with open(path, "wb") as f:
      f.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path

  def test_reads_gensims_word2vec_files(self):
    vectors = keyedvectors.KeyedVectors(vector_size=4)
    vectors.add_vectors(self.words, self.rows)
    for fmt, binary in (("word2vec-text", False), ("word2vec-binary", True)):
      path = os.path.join(self.get_temp_dir(), fmt)
      vectors.save_word2vec_format(path, binary=binary)
      words, rows = _read_all(path, fmt)
      self.assertEqual(words, self.words)
      self.assertAllClose(rows, self.rows, atol=0 if binary else 1e-6)

  def test_gensim_reads_the_word2vec_files_written_here(self):
    for fmt, binary in (("word2vec-text", False), ("word2vec-binary", True)):
      path = os.path.join(self.get_temp_dir(), fmt)
      word_vectors.write_word2vec(path, self.words,
                                  [self.rows[:2], self.rows[2:]], 4, binary)
      loaded = keyedvectors.KeyedVectors.load_word2vec_format(
          path, binary=binary)
      self.assertEqual(loaded.index_to_key, self.words)
      self.assertAllEqual(loaded.vectors, self.rows)  # %.9g: exact.
      self.assertAllEqual(_read_all(path, fmt)[1], self.rows)

  def test_glove_vec_gzip_and_the_c_tools_newlines(self):
    glove = self._path("g.txt", "the 1 2\n. . 3 4\n\ncat 5 6\n")
    self.assertEqual(_read_all(glove, "glove"),
                     (["the", ". .", "cat"], [[1, 2], [3, 4], [5, 6]]))
    vec = self._path("v.vec", "2 2\nthe 1 2 \ncat 5 6 \n")
    self.assertEqual(_read_all(vec, "fasttext-vec")[1], [[1, 2], [5, 6]])
    with gzip.open(vec + ".gz", "wb") as f:
      f.write(b"2 2\nthe 1 2\ncat 5 6\n")
    self.assertEqual(_read_all(vec + ".gz", "word2vec-text")[1],
                     [[1, 2], [5, 6]])
    c_tool = self._path("c.bin", b"2 1\na " + np.float32(1).tobytes() +
                        b"\nb " + np.float32(2).tobytes() + b"\n")
    self.assertEqual(_read_all(c_tool, "word2vec-binary", 1),
                     (["a", "b"], [[1], [2]]))

  def test_bad_files(self):
    one = np.float32(1).tobytes()
    cases = [
        ("glove", "", "no vector values"),
        ("word2vec-text", "", "header"),
        ("word2vec-text", "2 2\na 1 2\nb 1\n", ":3: expected a word and 2 "
         "values, got 1"),
        ("glove", "a 1 2\nb 1\n", ":2: expected a word and 2 values, got 1"),
        ("word2vec-text", "1 3\na 1 2\n", ":2: expected a word and 3"),
        ("word2vec-text", "2 2\na 1 2\nb 1 x\n", ":3: .* not a number"),
        ("glove", "a 1 2\nb 1 inf\n", ":2: NaN or infinite"),
        ("glove", "a 1 2\nb nan 2\n", ":2: NaN or infinite"),
        ("glove", "a 1 2\na 3 4\n", ":2: the word 'a' appears twice"),
        ("glove", b"a 1 2\n\xff 3 4\n", ":2: bytes that are not UTF-8"),
        ("word2vec-text", "3 2\na 1 2\nb 1 2\n", "2 rows where the header "
         "says 3"),
        ("word2vec-binary", b"2 1\na " + one, "word 1: the file ends"),
        ("word2vec-binary", b"2 1\na " + one + b"\xff " + one,
         "word 1: bytes that are not UTF-8"),
        ("word2vec-binary", b"2 1\na " + one + b"b\nc " + one,
         "word 1: its word holds a newline"),
        ("word2vec-binary", b"1 1\na " + np.float32(np.nan).tobytes(),
         "word 0: NaN"),
    ]
    for fmt, data, text in cases:
      path = self._path("bad", data)
      with self.assertRaisesRegex(errors.UserError, text, msg=repr(data)):
        _read_all(path, fmt)
    with self.assertRaisesRegex(errors.UserError, "unknown word-vector"):
      word_vectors.VectorFile(path, "glove2")


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
