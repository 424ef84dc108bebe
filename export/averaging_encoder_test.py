"""Tests for export.averaging_encoder."""

import numpy as np
import tensorflow as tf

from sentzoo.export import averaging_encoder
from sentzoo.export import input_limits
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.layers import masked_average
from sentzoo.layers import shared_embedding

WORDS = ["the", "cat", "sat", "on", "mat", "café", "猫", "кот"]
DIM = 5


def _encoder(rng, metadata=None):
  vocabulary = vocabulary_lib.Vocabulary(WORDS, list(range(len(WORDS), 0, -1)))
  table = rng.normal(size=(len(WORDS) + 1, DIM)).astype(np.float32)
  encoder = averaging_encoder.AveragingSentenceEncoder(
      text_to_ids_lib.TextToIds(vocabulary), table, metadata)
  return encoder, table


class RaggedAverageTest(tf.test.TestCase):

  def test_equals_masked_average_of_shared_embedding(self):
    rng = np.random.default_rng(0)
    rows = [rng.integers(1, 20, size=n).tolist() for n in (3, 0, 7, 1, 0, 5)]
    ids = tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1)
    embedding = shared_embedding.SharedEmbedding(20, 4)
    padded = ids.to_tensor()
    expected = masked_average.MaskedAverage()(
        embedding(padded), mask=embedding.compute_mask(padded))
    got = averaging_encoder.ragged_average(embedding.embeddings, ids)
    self.assertEqual(got.shape, (6, 4))
    self.assertAllClose(got, expected)
    self.assertAllEqual(got[1], np.zeros(4))
    table = embedding.embeddings.numpy()
    self.assertAllClose(got[0], table[rows[0]].mean(0))

  def test_all_rows_empty_and_no_rows(self):
    table = tf.ones([4, 3])
    empty_rows = tf.RaggedTensor.from_row_lengths(
        tf.zeros([0], tf.int32), [0, 0])
    self.assertAllEqual(averaging_encoder.ragged_average(table, empty_rows),
                        np.zeros((2, 3)))
    no_rows = tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int32),
                                               tf.zeros([0], tf.int64))
    self.assertEqual(
        averaging_encoder.ragged_average(table, no_rows).shape, (0, 3))


class AveragingSentenceEncoderTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.rng = np.random.default_rng(1)
    self.encoder, self.table = _encoder(self.rng, {"name": "test"})

  def test_known_sentences(self):
    got = self.encoder(tf.constant(["The cat sat.", "CAFÉ, dog mat!", "猫"]))
    t = self.table
    self.assertAllClose(got, [(t[1] + t[2] + t[3]) / 3, (t[6] + t[5]) / 2,
                              t[7]])
    self.assertEqual(got.dtype, tf.float32)
    self.assertEqual(self.encoder.dim, DIM)

  def test_serve_signature(self):
    sentences = tf.constant(["the cat", ""])
    served = self.encoder.serve(sentences=sentences)
    self.assertEqual(set(served), {"embeddings"})
    self.assertAllClose(served["embeddings"], self.encoder(sentences))

  def test_empty_batch(self):
    got = self.encoder(tf.constant([], tf.string))
    self.assertEqual(got.shape, (0, DIM))

  def test_empty_whitespace_and_unknown_are_zero(self):
    got = self.encoder(tf.constant(
        ["", "   ", "\t\n", "\u00a0", "dog bird fish", "?!", "the"]))
    self.assertAllEqual(got[:6], np.zeros((6, DIM)))
    self.assertAllClose(got[6], self.table[1])

  def test_robust_inputs(self):
    long_sentence = " ".join(WORDS[i % len(WORDS)] for i in range(10_000))
    sentences = tf.constant([b"\xff\xfe the \xc3", long_sentence.encode(),
                             "кот 猫 cat ok😀 mat".encode(), b"\x00cat"])
    got = self.encoder(sentences).numpy()
    self.assertEqual(got.shape, (4, DIM))
    self.assertTrue(np.all(np.isfinite(got)))
    self.assertAllClose(got[0], self.table[1])
    self.assertAllClose(got[1], self.table[1:].mean(0), atol=1e-5)
    self.assertAllClose(got[2], self.table[[8, 7, 2, 5]].mean(0))
    self.assertAllClose(got[3], self.table[2])

  def test_variables_and_metadata(self):
    self.assertLen(self.encoder.trainable_variables, 1)
    self.assertIs(self.encoder.trainable_variables[0], self.encoder.embeddings)
    self.assertAllClose(self.encoder.embeddings, self.table)
    self.assertEqual(dict(self.encoder.metadata), {
        "name": "test", "input_limits": input_limits.model_card_entry(
            input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE,
            input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE)})

  def test_embeddings_update_changes_output(self):
    before = self.encoder(tf.constant(["cat"])).numpy()
    self.encoder.embeddings.assign(self.encoder.embeddings * 2.0)
    self.assertAllClose(self.encoder(tf.constant(["cat"])), 2.0 * before)


if __name__ == "__main__":
  tf.test.main()
