"""Tests for export.averaging_encoder."""

import os
import tempfile

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.export import averaging_encoder
from sentzoo.export import input_limits
from sentzoo.export import saved_model_writer
from sentzoo.export import table_quantization
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.tests import tokenizer_fixtures
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.layers import masked_average
from sentzoo.layers import shared_embedding

WORDS = ["the", "cat", "sat", "on", "mat", "café", "猫", "кот"]
DIM = 5


def _encoder(rng, metadata=None, quantize="none", table=None):
  vocabulary = vocabulary_lib.Vocabulary(WORDS, list(range(len(WORDS), 0, -1)))
  if table is None:
    table = rng.normal(size=(len(WORDS) + 1, DIM)).astype(np.float32)
  encoder = averaging_encoder.AveragingSentenceEncoder(
      text_to_ids_lib.TextToIds(vocabulary), table, metadata,
      quantize=quantize)
  return encoder, table


def _export_bytes(path):
  return sum(os.path.getsize(os.path.join(folder, name))
             for folder, _, names in os.walk(path) for name in names)


def _ragged_average(table, ids):
  """Mean of the rows of `table` named by each row of `ids`."""
  return averaging_encoder.ragged_mean_of_rows(
      tf.gather(table, ids.flat_values), ids)


class RaggedAverageTest(tf.test.TestCase):

  def test_equals_masked_average_of_shared_embedding(self):
    rng = np.random.default_rng(0)
    rows = [rng.integers(1, 20, size=n).tolist() for n in (3, 0, 7, 1, 0, 5)]
    ids = tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1)
    embedding = shared_embedding.SharedEmbedding(20, 4)
    padded = ids.to_tensor()
    expected = masked_average.MaskedAverage()(
        embedding(padded), mask=embedding.compute_mask(padded))
    got = _ragged_average(embedding.embeddings, ids)
    self.assertEqual(got.shape, (6, 4))
    self.assertAllClose(got, expected)
    self.assertAllEqual(got[1], np.zeros(4))
    table = embedding.embeddings.numpy()
    self.assertAllClose(got[0], table[rows[0]].mean(0))

  def test_all_rows_empty_and_no_rows(self):
    table = tf.ones([4, 3])
    empty_rows = tf.RaggedTensor.from_row_lengths(
        tf.zeros([0], tf.int32), [0, 0])
    self.assertAllEqual(_ragged_average(table, empty_rows),
                        np.zeros((2, 3)))
    no_rows = tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int32),
                                               tf.zeros([0], tf.int64))
    self.assertEqual(
        _ragged_average(table, no_rows).shape, (0, 3))


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
            input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE),
        "quantization": table_quantization.model_card_entry(
            "none", len(WORDS) + 1, DIM)})

  def test_a_followed_table_is_read_sparsely_with_the_same_bits(self):
    table = tf.Variable(
        np.random.default_rng(0).normal(size=self.table.shape), dtype=tf.float32)
    # A sparse update: a trained table is in copy-on-read mode.
    table.scatter_add(tf.IndexedSlices(tf.ones([1, DIM]), tf.constant([2])))
    vocabulary = vocabulary_lib.Vocabulary(WORDS, [1] * len(WORDS))
    text_to_ids = text_to_ids_lib.TextToIds(vocabulary)
    followed = averaging_encoder.AveragingSentenceEncoder(
        text_to_ids, table, follow=True)
    copied = averaging_encoder.AveragingSentenceEncoder(
        text_to_ids, table.numpy())
    sentences = tf.constant([" ".join(WORDS), "", WORDS[1] + " " + WORDS[0]])
    self.assertAllEqual(followed(sentences), copied(sentences))
    graph = followed.__call__.get_concrete_function().graph.as_graph_def()
    ops = {node.op for node in graph.node}
    for function in graph.library.function:
      ops.update(node.op for node in function.node_def)
    self.assertIn("ResourceGather", ops)
    self.assertNotIn("ReadVariableOp", ops)

  def test_embeddings_update_changes_output(self):
    before = self.encoder(tf.constant(["cat"])).numpy()
    self.encoder.embeddings.assign(self.encoder.embeddings * 2.0)
    self.assertAllClose(self.encoder(tf.constant(["cat"])), 2.0 * before)

  def test_a_variable_table_is_followed_not_copied(self):
    table = tf.Variable(self.table)
    copied, _ = _encoder(None, table=table)
    self.assertIsNot(copied.embeddings, table)
    vocabulary = vocabulary_lib.Vocabulary(WORDS, [1] * len(WORDS))
    encoder = averaging_encoder.AveragingSentenceEncoder(
        text_to_ids_lib.TextToIds(vocabulary), table, follow=True)
    self.assertIs(encoder.embeddings, table)
    self.assertEqual(encoder.trainable_variables, [table])
    before = encoder(tf.constant(["cat", ""])).numpy()
    self.assertAllClose(copied(tf.constant(["cat", ""])), before)
    table.assign(table * 3.0)
    after = encoder(tf.constant(["cat", ""])).numpy()
    self.assertAllClose(after[0], 3.0 * before[0])
    self.assertAllEqual(after[1], np.zeros(DIM))
    # The copy keeps the values it was made from.
    self.assertAllClose(copied(tf.constant(["cat", ""])), before)
    with self.assertRaisesRegex(ValueError, "follow=True"):
      averaging_encoder.AveragingSentenceEncoder(
          text_to_ids_lib.TextToIds(vocabulary), table, quantize="int8",
          follow=True)


# Sentences with known, unknown, repeated and no words; row 4 ("on") of the
# quantised tests' table is all zeros.
QUANTIZE_SENTENCES = ["The cat sat.", "", "dog bird", "on", "on the mat",
                      "café 猫 кот cat cat", "   "]


class QuantizedAveragingSentenceEncoderTest(tf.test.TestCase):
  """quantize="float16" / "int8": smaller tables, the same sentences."""

  # Tolerances against the float32 encoder, for N(0, 1) vectors of dim 5
  # (max |value| about 3): float16 keeps 11 significant bits (error per
  # value <= 2^-11 x 3 ~ 1.5e-3); int8 errs by at most half a step, max|row|
  # / 254 ~ 0.012 per value, and a mean of rows by no more.
  TOLERANCES = {"float16": 2e-3, "int8": 1.5e-2}

  def setUp(self):
    super().setUp()
    self.table = np.random.default_rng(2).normal(
        size=(len(WORDS) + 1, DIM)).astype(np.float32)
    self.table[4] = 0.0
    self.float32_encoder, _ = _encoder(None, {}, table=self.table)
    self.sentences = tf.constant(QUANTIZE_SENTENCES)
    self.expected = self.float32_encoder(self.sentences).numpy()

  def test_matches_float32_and_the_dequantised_table(self):
    values, scales = table_quantization.quantize_int8_rows(self.table)
    exact = {"float16": self.table.astype(np.float16).astype(np.float32),
             "int8": table_quantization.dequantize_int8_rows(values, scales)}
    for mode, tolerance in self.TOLERANCES.items():
      with self.subTest(mode):
        encoder, _ = _encoder(None, {}, quantize=mode, table=self.table)
        got = encoder(self.sentences)
        self.assertEqual(got.dtype, tf.float32)
        self.assertEqual(got.shape, (len(QUANTIZE_SENTENCES), DIM))
        self.assertEqual(encoder.dim, DIM)
        self.assertAllClose(got, self.expected, atol=tolerance, rtol=0)
        # The float32 encoder over the dequantised table, to float32 rounding.
        reference, _ = _encoder(None, {}, table=exact[mode])
        self.assertAllClose(got, reference(self.sentences), atol=1e-6)

  def test_empty_unknown_and_zero_row_sentences_give_zeros_not_nan(self):
    for mode in self.TOLERANCES:
      with self.subTest(mode):
        encoder, _ = _encoder(None, {}, quantize=mode, table=self.table)
        got = encoder(self.sentences).numpy()
        self.assertTrue(np.all(np.isfinite(got)))
        for row in (1, 2, 3, 6):  # "", unknown words, the zero row, spaces.
          self.assertAllEqual(got[row], np.zeros(DIM))
        self.assertEqual(encoder(tf.constant([], tf.string)).shape, (0, DIM))

  def test_variables_are_inference_only_and_recorded(self):
    float16, _ = _encoder(None, {}, quantize="float16", table=self.table)
    self.assertEqual([v.dtype for v in float16.variables], [tf.float16])
    int8, _ = _encoder(None, {}, quantize="int8", table=self.table)
    self.assertEqual([v.dtype for v in int8.variables],
                     [tf.int8, tf.float32])
    self.assertEqual(int8.embedding_row_scales.shape, (len(WORDS) + 1,))
    for encoder, mode in ((float16, "float16"), (int8, "int8")):
      self.assertEmpty(encoder.trainable_variables)
      self.assertFalse(any(v.trainable for v in encoder.variables))
      # No float `embeddings`: readers of an export's table refuse it.
      self.assertFalse(hasattr(encoder, "embeddings"))
      self.assertEqual(encoder.quantization_mode, mode)
      self.assertEqual(encoder.metadata["quantization"],
                       table_quantization.model_card_entry(
                           mode, len(WORDS) + 1, DIM))
      self.assertTrue(encoder.metadata["quantization"]["inference_only"])

  def test_filled_variables_are_used_as_they_are(self):
    for mode, tolerance in self.TOLERANCES.items():
      variables = table_quantization.table_variables(len(WORDS) + 1, DIM,
                                                     mode)
      table_quantization.assign_rows(variables, 0, self.table, mode)
      encoder, _ = _encoder(None, {}, quantize=mode, table=variables)
      self.assertEqual([id(v) for v in encoder.variables],
                       [id(v) for v in variables])
      self.assertAllClose(encoder(self.sentences), self.expected,
                          atol=tolerance, rtol=0)

  def test_unknown_mode_is_a_user_error(self):
    with self.assertRaisesRegex(errors.UserError, "quantize must be one of"):
      _encoder(None, {}, quantize="int4", table=self.table)

  def test_saved_reloaded_and_hub_keras_layer_for_inference(self):
    import tensorflow_hub as hub  # pylint: disable=g-import-not-at-top
    import tf_keras  # pylint: disable=g-import-not-at-top
    for mode, tolerance in self.TOLERANCES.items():
      with self.subTest(mode):
        encoder, _ = _encoder(None, {}, quantize=mode, table=self.table)
        in_memory = encoder(self.sentences).numpy()
        path = saved_model_writer.write(
            encoder, os.path.join(self.get_temp_dir(), mode))
        loaded = tf.saved_model.load(path)
        self.assertAllClose(loaded(self.sentences), in_memory, atol=1e-7)
        self.assertAllClose(
            loaded.signatures["serving_default"](
                sentences=self.sentences)["embeddings"], self.expected,
            atol=tolerance, rtol=0)
        self.assertEmpty(loaded.trainable_variables)
        self.assertLen(loaded.variables, 2 if mode == "int8" else 1)
        layer = hub.KerasLayer(path)
        model = tf_keras.Sequential([
            tf_keras.layers.InputLayer(input_shape=[], dtype=tf.string),
            layer])
        self.assertAllClose(model.predict(self.sentences, verbose=0),
                            in_memory, atol=1e-7)
        self.assertEmpty(layer.trainable_weights)

  def test_int8_export_size_is_under_0_3x_of_float32(self):
    # 10k words: the vocabulary, the same in every mode, takes about 0.3 MB
    # of saved_model.pb (about 30 bytes a word). At dim 100 the table files
    # shrink to 0.26x and the whole export to 0.31x; at dim 300 the whole
    # export is under 0.3x.
    words = [f"w{i}" for i in range(10_000)]
    vocabulary = vocabulary_lib.Vocabulary(words, [1] * len(words))
    for dim, limits in ((100, {"variables": (0.3, 0.55)}),
                        (300, {"whole": (0.3, 0.55),
                               "variables": (0.3, 0.55)})):
      table = np.random.default_rng(3).normal(
          size=(len(words) + 1, dim)).astype(np.float32)
      sizes = {}
      for mode in ("none", "float16", "int8"):
        encoder = averaging_encoder.AveragingSentenceEncoder(
            text_to_ids_lib.TextToIds(vocabulary), table, {}, quantize=mode)
        path = saved_model_writer.write(
            encoder, os.path.join(self.get_temp_dir(), f"size{dim}", mode))
        sizes[mode] = {"whole": _export_bytes(path),
                       "variables": _export_bytes(
                           os.path.join(path, "variables"))}
      for part, (int8_limit, float16_limit) in limits.items():
        with self.subTest(dim=dim, part=part):
          self.assertLessEqual(sizes["int8"][part],
                               int8_limit * sizes["none"][part], sizes)
          self.assertLessEqual(sizes["float16"][part],
                               float16_limit * sizes["none"][part], sizes)

def _previous_encode(table, vocabulary, sentences, keep_punctuation,
                     quantize="none"):
  """The averaging graph before issue 34: the previous tokeniser, a lookup,
  a gather of every row and an unsorted segment sum (the reference for the
  fused mean and the new tokeniser)."""
  tokens = tokenizer_fixtures.previous_tokenize(
      sentences, keep_punctuation,
      input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE,
      input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE)
  ids = tokens.with_flat_values(
      vocabulary.lookup_table().lookup(tokens.flat_values))
  ids = tf.ragged.boolean_mask(ids, ids > 0)
  if quantize == "int8":
    values, scales = table_quantization.quantize_int8_rows(table)
    table = table_quantization.dequantize_int8_rows(values, scales)
  elif quantize == "float16":
    table = table.astype(np.float16).astype(np.float32)
  return _ragged_average(tf.constant(table), ids)


class PreviousComputationTest(tf.test.TestCase):
  """The faster graph (issue 34) encodes exactly as the previous one."""

  def _check(self, sentences, words, dim):
    vocabulary = vocabulary_lib.Vocabulary(words, [1] * len(words))
    table = np.random.default_rng(5).normal(
        size=(len(words) + 1, dim)).astype(np.float32)
    for keep in (False, True):
      for mode in table_quantization.MODES:
        with self.subTest(keep_punctuation=keep, quantize=mode):
          encoder = averaging_encoder.AveragingSentenceEncoder(
              text_to_ids_lib.TextToIds(
                  vocabulary, tokenizer_lib.Tokenizer(keep_punctuation=keep)),
              table, {}, quantize=mode)
          got = np.concatenate([
              encoder(tf.constant(sentences[i:i + 4096])).numpy()
              for i in range(0, len(sentences), 4096)])
          want = _previous_encode(table, vocabulary, tf.constant(sentences),
                                  keep, mode)
          self.assertAllClose(got, want, atol=1e-5, rtol=1e-5)

  def test_fixture_sentences(self):
    sentences = (tokenizer_fixtures.TRICKY + QUANTIZE_SENTENCES +
                 tokenizer_fixtures.random_byte_strings(3, 200))
    words = sorted({t for s in tokenizer_fixtures.TRICKY + QUANTIZE_SENTENCES
                    for t in tokenizer_fixtures.python_reference(s, True)})
    self._check(sentences, words, 7)

  def _sts_sentences(self):
    """The real STS and SICK sentences; skips without the data."""
    data_dir = os.environ.get("SENTZOO_DATA_DIR")
    if not data_dir or not os.path.isdir(os.path.join(data_dir, "sts")):
      self.skipTest("no real data: set SENTZOO_DATA_DIR")
    from sentzoo.evaluation import sts_data  # pylint: disable=g-import-not-at-top
    pair_sets, _ = sts_data.load_eval_sets(data_dir, ("sts", "sick"))
    return sorted({s for p in pair_sets
                   for s in p.sentences1 + p.sentences2})

  def test_sts_sentences(self):
    sentences = self._sts_sentences()
    counts = {}
    for sentence in sentences:
      for token in tokenizer_fixtures.python_reference(sentence, True):
        counts[token] = counts.get(token, 0) + 1
    words = sorted(w for w, c in counts.items() if c >= 2)
    self._check(sentences, words, 16)

  def test_same_tokens_as_the_previous_tokenizer_on_sts(self):
    # Here, not in inputs/tokenizer_test.py: the STS reader is evaluation's,
    # which inputs/ may not import (tools/import_graph_test.py).
    sentences = self._sts_sentences()
    self.assertGreater(len(sentences), 20_000)
    for keep in (False, True):
      got = tokenizer_lib.Tokenizer(keep_punctuation=keep).tokenize(
          tf.constant(sentences), 65536, 1024)
      want = tokenizer_fixtures.previous_tokenize(tf.constant(sentences), keep, 65536, 1024)
      self.assertAllEqual(got.row_splits, want.row_splits)
      self.assertAllEqual(got.flat_values, want.flat_values)

class BatchOfOneTest(tf.test.TestCase):
  """A batch of one with a static [1] shape (issue 32: Substr refused it)."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.table = np.random.default_rng(6).normal(
        size=(len(WORDS) + 1, DIM)).astype(np.float32)
    cls.paths = {}
    for mode in ("none", "int8"):
      encoder, _ = _encoder(None, {}, quantize=mode, table=cls.table)
      cls.paths[mode] = saved_model_writer.write(
          encoder, os.path.join(tempfile.mkdtemp(), mode))
    cls.expected = encoder(tf.constant(["the cat"])).numpy()

  def test_tf_function_with_a_static_batch_of_one(self):
    for mode, path in self.paths.items():
      with self.subTest(mode):
        loaded = tf.saved_model.load(path)
        encode = tf.function(loaded.__call__,
                             input_signature=[tf.TensorSpec([1], tf.string)])
        self.assertAllClose(encode(tf.constant(["the cat"])), self.expected,
                            atol=2e-2)

  def test_keras_3_predict_through_tfsm_layer(self):
    import keras  # pylint: disable=g-import-not-at-top
    for mode, path in self.paths.items():
      with self.subTest(mode):
        layer = keras.layers.TFSMLayer(path, call_endpoint="serving_default")
        inputs = keras.Input(shape=[], dtype="string", batch_size=1)
        model = keras.Model(inputs, layer(inputs)["embeddings"])
        self.assertAllClose(model.predict(tf.constant(["the cat"]),
                                          verbose=0), self.expected,
                            atol=2e-2)

  def test_hub_keras_layer(self):
    import tensorflow_hub as hub  # pylint: disable=g-import-not-at-top
    import tf_keras  # pylint: disable=g-import-not-at-top
    for mode, path in self.paths.items():
      with self.subTest(mode):
        model = tf_keras.Sequential([
            tf_keras.layers.InputLayer(input_shape=[], dtype=tf.string,
                                       batch_size=1),
            hub.KerasLayer(path)])
        self.assertAllClose(model.predict(tf.constant(["the cat"]),
                                          verbose=0), self.expected,
                            atol=2e-2)

  def test_serving_default_refuses_a_scalar_or_2d_batch_clearly(self):
    serve = tf.saved_model.load(self.paths["none"]).signatures[
        "serving_default"]
    for sentences in (tf.constant("the cat"), tf.constant([["the", "cat"]])):
      with self.assertRaisesRegex(tf.errors.InvalidArgumentError,
                                  r"sentences must be a 1-D tf.string"):
        serve(sentences=sentences)


if __name__ == "__main__":
  tf.test.main()
