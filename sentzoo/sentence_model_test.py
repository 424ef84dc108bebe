"""Tests for sentzoo.load / sentzoo.similarity on real exports of every model.

The exports are written once per class by `export.export_model` (and the
hybrid siamese encoder-only exporter) from the tiny model directories of the
export tests.
"""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np
import tensorflow as tf

import sentzoo
from sentzoo import sentence_model
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import charagram_test as charagram_export_test
from sentzoo.export import export_model
from sentzoo.export import hybrid_siamese as hybrid_siamese_export
from sentzoo.export import hybrid_siamese_test as hybrid_siamese_export_test
from sentzoo.export import saved_model_writer
from sentzoo.export import sent2vec_test as sent2vec_export_test
from sentzoo.tests import model_dir_fixtures

_README = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "README.md")
SENTENCES = model_dir_fixtures.SENTENCES + [
    "a man plays the guitar", "the dog runs", "someone plays music"]
PAIRS = list(zip(hybrid_siamese_export_test.SENTENCES_A,
                 hybrid_siamese_export_test.SENTENCES_B))
# The export tests' model-directory fixtures of the other model types.
# pylint: disable=protected-access
_make_sent2vec_model_dir = sent2vec_export_test._make_model_dir
_make_charagram_model_dir = charagram_export_test._write_model_dir
# pylint: enable=protected-access


def numpy_cosine(a, b):
  """[n, m] cosines, one pair at a time; 0 where a vector is zero."""
  out = np.zeros([len(a), len(b)])
  for i, x in enumerate(np.asarray(a, np.float64)):
    for j, y in enumerate(np.asarray(b, np.float64)):
      norms = np.linalg.norm(x) * np.linalg.norm(y)
      out[i, j] = x @ y / norms if norms else 0.0
  return out


def _export(root, make_model_dir):
  """Exports the model dir that `make_model_dir` writes.

  Returns:
    (export base folder, what `make_model_dir` returned).
  """
  model_dir = os.path.join(root, "model")
  made = make_model_dir(model_dir)
  export_dir = os.path.join(root, "export")
  export_model.export(model_dir, export_dir, evaluate=False)
  return export_dir, made


def _hybrid_encoder_export(root):
  """(export base folder, d) of a hybrid siamese `--encoder_only` export."""
  model_dir = os.path.join(root, "model")
  model = hybrid_siamese_export_test.make_model_dir(model_dir, "cnn")
  module = hybrid_siamese_export.build_module(
      model_dir, model_dir_lib.read_model_config(model_dir),
      encoder_only=True)
  export_dir = os.path.join(root, "export")
  saved_model_writer.write(module, export_dir)
  return export_dir, model.encoding_dim


class SentenceModelTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), cls.__name__)
    # Export base folder and embedding size d of every model type.
    path, table = _export(os.path.join(root, "siamese_cbow"),
                          model_dir_fixtures.make_siamese_cbow_model_dir)
    cls.encoders = {"siamese_cbow": (path, table.shape[1])}
    path, (_, table) = _export(
        os.path.join(root, "sent2vec"),
        lambda d: _make_sent2vec_model_dir(d, word_ngrams=2))
    cls.encoders["sent2vec"] = (path, table.shape[1])
    path, in_memory = _export(
        os.path.join(root, "charagram"),
        lambda d: _make_charagram_model_dir(d, "charagram"))
    cls.encoders["charagram"] = (path,
                                 int(in_memory(tf.constant([""])).shape[1]))
    cls.encoders["hybrid_siamese_encoder"] = _hybrid_encoder_export(
        os.path.join(root, "hybrid_encoder"))
    cls.pair_export, model = _export(
        os.path.join(root, "hybrid_pair"),
        hybrid_siamese_export_test.make_model_dir)
    cls.pair_dim = model.encoding_dim

  def _all_models(self):
    """(name, SentenceModel, d) of every export, the pair model last."""
    for name, (path, dim) in self.encoders.items():
      yield name, sentzoo.load(path), dim
    yield (
        "hybrid_siamese_pair", sentzoo.load(self.pair_export), self.pair_dim)

  def test_import_sentzoo_does_not_import_tensorflow(self):
    done = subprocess.run(
        [sys.executable, "-c",
         "import sys, sentzoo; assert 'load' in dir(sentzoo); "
         "print('tensorflow' in sys.modules)"],
        capture_output=True, text=True, timeout=120, check=True)
    self.assertEqual(done.stdout.strip(), "False")
    with self.assertRaisesRegex(AttributeError, "no attribute 'nope'"):
      sentzoo.nope  # pylint: disable=pointless-statement

  def test_encode_equals_the_served_embeddings(self):
    for name, model, dim in self._all_models():
      with self.subTest(name):
        self.assertEqual(model.dim, dim)
        vectors = model.encode(SENTENCES, batch_size=3)
        self.assertEqual(vectors.dtype, np.float32)
        self.assertEqual(vectors.shape, (len(SENTENCES), dim))
        loaded = tf.saved_model.load(model.export_dir)
        if model.is_pair_model:
          served = loaded.encode(tf.constant(SENTENCES))
        else:
          served = loaded.signatures["serving_default"](
              sentences=tf.constant(SENTENCES))
        self.assertAllClose(vectors, served["embeddings"], atol=1e-6)
        self.assertAllClose(model.encode(SENTENCES), vectors, atol=1e-6)
        if not model.is_pair_model:  # The loaded serving_default itself.
          self.assertAllClose(model.signature(sentences=tf.constant(
              SENTENCES))["embeddings"], vectors, atol=1e-6)

  def test_signature_of_the_pair_model_is_its_serving_default(self):
    model = sentzoo.load(self.pair_export)
    a, b = zip(*PAIRS)
    outputs = model.signature(sentences_a=tf.constant(a),
                              sentences_b=tf.constant(b))
    self.assertEqual(sorted(outputs), ["distance", "match", "probability"])
    self.assertAllClose(outputs["probability"], model.predict(PAIRS))

  def test_encode_edge_cases(self):
    for name, model, dim in self._all_models():
      with self.subTest(name):
        self.assertEqual(model.encode([]).shape, (0, dim))
        self.assertEqual(model.encode([]).dtype, np.float32)
        self.assertEqual(model.encode("the cat").shape, (1, dim))
        self.assertAllClose(model.encode("the cat"),
                            model.encode(["the cat"]))
        empty = model.encode(["", "   "])
        self.assertEqual(empty.shape, (2, dim))
        self.assertTrue(np.all(np.isfinite(empty)))
        self.assertEqual(model.encode(np.array(["a", "b"])).shape, (2, dim))
    model = sentzoo.load(self.encoders["siamese_cbow"][0])
    with self.assertRaisesRegex(TypeError, r"sentences\[1\] is int"):
      model.encode(["the cat", 3])
    with self.assertRaisesRegex(ValueError, "batch_size"):
      model.encode(["the cat"], batch_size=0)

  def test_encode_shows_progress_only_when_asked(self):
    model = sentzoo.load(self.encoders["siamese_cbow"][0])
    for show in (False, None, True):
      stderr = io.StringIO()
      with contextlib.redirect_stderr(stderr):
        vectors = model.encode(SENTENCES[:5], batch_size=2,
                               show_progress_bar=show)
      self.assertEqual(vectors.shape, (5, model_dir_fixtures.DIM))
      if not show:  # None: not a terminal.
        self.assertEqual(stderr.getvalue(), "")
        continue
      # The bar at the start and at the end (at most every 0.1 s between),
      # then a newline.
      self.assertRegex(stderr.getvalue(), r"^\rencoding: +0%\|")
      self.assertRegex(stderr.getvalue(),
                       r"\rencoding: 100%\|[^\r]*\| 5/5 \[[^\r]* "
                       r"sentences/s\]\n$")

  def test_encode_batches_equal_one_batch(self):
    self.assertEqual(sentence_model.DEFAULT_BATCH_SIZE, 4096)
    for name, model, _ in self._all_models():
      with self.subTest(name):
        whole = model.encode(SENTENCES)
        for batch_size in (1, 2, 3, 64):
          self.assertAllClose(model.encode(SENTENCES, batch_size=batch_size),
                              whole, atol=1e-6)

  def test_encode_normalize_and_precisions(self):
    model = sentzoo.load(self.encoders["sent2vec"][0])
    sentences = SENTENCES + [""]
    raw = model.encode(sentences)
    unit = model.encode(sentences, normalize_embeddings=True)
    known = np.linalg.norm(raw, axis=1) > 0
    self.assertGreaterEqual(known.sum(), 3)
    self.assertFalse(known[-1])
    # Unit length; a zero vector (the empty sentence) stays zero.
    self.assertAllClose(np.linalg.norm(unit, axis=1), known.astype(float),
                        atol=1e-6)
    self.assertAllClose(numpy_cosine(unit, unit), numpy_cosine(raw, raw),
                        atol=1e-6)
    int8 = model.encode(sentences, precision="int8")
    self.assertEqual(int8.dtype, np.int8)
    self.assertEqual(int8.shape, raw.shape)
    self.assertAllEqual(np.abs(int8).max(axis=1), np.where(known, 127, 0))
    # Rounding moves each cosine by about 1/127 at most.
    self.assertAllClose(numpy_cosine(int8, int8), numpy_cosine(raw, raw),
                        atol=0.02)
    binary = model.encode(sentences, precision="ubinary")
    self.assertEqual(binary.dtype, np.uint8)
    self.assertEqual(binary.shape, (len(sentences), (raw.shape[1] + 7) // 8))
    self.assertAllEqual(np.unpackbits(binary, axis=1)[:, :raw.shape[1]],
                        raw > 0)
    self.assertEqual(model.encode([], precision="ubinary").shape,
                     (0, (raw.shape[1] + 7) // 8))
    with self.assertRaisesRegex(ValueError, "precision must be one of"):
      model.encode(["a"], precision="float16")

  def test_encode_none_is_one_user_error_line(self):
    model = sentzoo.load(self.encoders["siamese_cbow"][0])
    for bad in (None, 3):
      with self.assertRaisesRegex(
          errors.UserError,
          r"^sentences must be a str or a list of str, got \w+$"):
        model.encode(bad)
      with self.assertRaises(TypeError):  # What Python code expects too.
        model.encode(bad)

  def test_card_is_the_exports_model_card(self):
    path, _ = self.encoders["sent2vec"]
    model = sentzoo.load(path)
    with open(os.path.join(path, "1", "assets.extra", "model_card.json"),
              encoding="utf-8") as f:
      self.assertEqual(model.card, json.load(f))
    self.assertEqual(model.card["model_type"], "sent2vec")
    self.assertTrue(os.path.isfile(os.path.join(path, "1", "README.md")))

  def test_int8_export_warns_that_it_is_inference_only(self):
    model_dir = os.path.join(self.get_temp_dir(), "int8_model")
    model_dir_fixtures.make_siamese_cbow_model_dir(model_dir)
    export_dir = os.path.join(self.get_temp_dir(), "int8_export")
    export_model.export(model_dir, export_dir, evaluate=False,
                        quantize="int8")
    with self.assertWarnsRegex(UserWarning, "inference only"):
      model = sentzoo.load(export_dir)
    self.assertTrue(model.card["quantization"]["inference_only"])
    with warnings.catch_warnings():
      warnings.simplefilter("error")
      sentzoo.load(self.encoders["siamese_cbow"][0])  # float32: no warning.

  def test_damaged_exports_and_plain_files_are_one_line(self):
    source = os.path.join(self.encoders["siamese_cbow"][0], "1")
    root = self.get_temp_dir()
    truncated = os.path.join(root, "truncated")
    shutil.copytree(source, truncated)
    data = [os.path.join(truncated, "variables", n)
            for n in os.listdir(os.path.join(truncated, "variables"))
            if n.startswith("variables.data")][0]
    with open(data, "r+b") as f:
      f.truncate(os.path.getsize(data) // 3)
    corrupt = os.path.join(root, "corrupt")
    shutil.copytree(source, corrupt)
    with open(os.path.join(corrupt, "saved_model.pb"), "r+b") as f:
      f.seek(10)
      f.write(b"\xff" * 64)
    for path, pattern in ((truncated, "damaged"), (corrupt, "damaged"),
                          (_README, "is a file, not a model")):
      with self.subTest(os.path.basename(path)):
        with self.assertRaises(errors.UserError) as context:
          sentzoo.load(path).encode(["the cat"])
        self.assertIn(pattern, str(context.exception))
        self.assertNotIn("\n", str(context.exception))

  def test_semantic_search_is_brute_force_cosine_top_k(self):
    rng = np.random.default_rng(0)
    corpus = rng.normal(size=(50, 6)).astype(np.float32)
    corpus[7] = 0.0
    queries = np.concatenate([corpus[[3, 7]], rng.normal(size=(3, 6))])
    expected = numpy_cosine(queries, corpus)
    for top_k, chunks in ((5, {}), (50, {}), (80, {}),
                          (4, {"query_chunk_size": 2,
                               "corpus_chunk_size": 7})):
      hits = sentzoo.semantic_search(queries, corpus, top_k=top_k, **chunks)
      self.assertLen(hits, len(queries))
      for row, query_hits in zip(expected, hits):
        self.assertLen(query_hits, min(top_k, len(corpus)))
        self.assertEqual(set(query_hits[0]), {"corpus_id", "score"})
        want = sorted(range(len(corpus)), key=lambda i: (-row[i], i))
        self.assertEqual([h["corpus_id"] for h in query_hits],
                         want[:len(query_hits)])
        self.assertAllClose([h["score"] for h in query_hits],
                            row[want[:len(query_hits)]], atol=1e-6)
    self.assertEqual(hits[0][0], {"corpus_id": 3, "score": hits[0][0]["score"]})
    self.assertAllClose(hits[0][0]["score"], 1.0)
    self.assertEqual(sentzoo.semantic_search(queries[0], corpus, 1)[0][0][
        "corpus_id"], 3)
    self.assertEqual(sentzoo.semantic_search(queries, corpus[:0]),
                     [[]] * len(queries))
    with self.assertRaisesRegex(errors.UserError, "top_k"):
      sentzoo.semantic_search(queries, corpus, top_k=0)
    with self.assertRaisesRegex(errors.UserError, "ubinary"):
      sentzoo.semantic_search(np.packbits(queries > 0, axis=1),
                              np.packbits(corpus > 0, axis=1))
    with self.assertRaisesRegex(errors.UserError, "d=6"):
      sentzoo.semantic_search(queries, corpus[:, :4])

  def test_semantic_search_on_encoded_sentences(self):
    model = sentzoo.load(self.encoders["sent2vec"][0])
    raw = model.encode(SENTENCES)
    corpus = model.encode(SENTENCES, precision="int8")
    known = [i for i in range(len(SENTENCES)) if np.any(raw[i])]
    self.assertGreaterEqual(len(known), 3)
    hits = sentzoo.semantic_search(raw[known], corpus, 3)
    cosines = numpy_cosine(raw, raw)
    for i, query_hits in zip(known, hits):
      # The best hit is the query's own sentence or one with its vector.
      self.assertAllClose(cosines[i, query_hits[0]["corpus_id"]], 1.0,
                          atol=1e-5)
      self.assertAllClose(query_hits[0]["score"], 1.0, atol=0.01)

  def test_similarity_is_numpy_cosine(self):
    for name, model, dim in self._all_models():
      with self.subTest(name):
        vectors = model.encode(SENTENCES)
        expected = numpy_cosine(vectors, vectors[:4])
        scores = model.similarity(vectors, vectors[:4])
        self.assertEqual(scores.dtype, np.float32)
        self.assertAllClose(scores, expected, atol=1e-6)
        # Sentences are encoded first; one str is one row.
        self.assertAllClose(model.similarity(SENTENCES, SENTENCES[:4]),
                            expected, atol=1e-6)
        self.assertAllClose(model.similarity(SENTENCES[0], vectors),
                            expected[:, :1].T, atol=1e-6)
        self.assertEqual(model.similarity([], SENTENCES).shape,
                         (0, len(SENTENCES)))
        self.assertFalse(np.any(np.isnan(scores)))
        del dim

  def test_module_similarity(self):
    a = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [3.0, 4.0, 0.0]],
                 np.float32)
    b = np.array([[0.0, 2.0, 0.0], [-1.0, 0.0, 0.0]])
    scores = sentzoo.similarity(a, b)
    self.assertEqual(scores.dtype, np.float32)
    self.assertAllClose(scores, numpy_cosine(a, b))
    self.assertAllClose(scores, [[0.0, -1.0], [0.0, 0.0], [0.8, -0.6]])
    # Zero vectors give 0, not NaN, on both sides.
    self.assertAllEqual(sentzoo.similarity(np.zeros([2, 3]), np.zeros([1, 3])),
                        np.zeros([2, 1]))
    self.assertAllClose(sentzoo.similarity(a[2], a[2]), [[1.0]])
    self.assertEqual(sentzoo.similarity(np.zeros([0, 3]), a).shape, (0, 3))
    self.assertIs(sentzoo.similarity, sentence_model.similarity)
    with self.assertRaisesRegex(TypeError, "model.similarity"):
      sentzoo.similarity(["a man"], a)
    with self.assertRaisesRegex(ValueError, "different sizes"):
      sentzoo.similarity(a, np.ones([2, 4]))
    with self.assertRaisesRegex(ValueError, r"\[n, d\]"):
      sentzoo.similarity(np.ones([2, 2, 3]), a)

  def test_predict_pair_model(self):
    model = sentzoo.load(self.pair_export)
    self.assertTrue(model.is_pair_model)
    probabilities = model.predict(PAIRS, batch_size=3)
    served = tf.saved_model.load(model.export_dir).signatures[
        "serving_default"](
            sentences_a=tf.constant(hybrid_siamese_export_test.SENTENCES_A),
            sentences_b=tf.constant(hybrid_siamese_export_test.SENTENCES_B))
    self.assertEqual(probabilities.dtype, np.float32)
    self.assertEqual(probabilities.shape, (len(PAIRS),))
    self.assertAllClose(probabilities, served["probability"], atol=1e-6)
    self.assertTrue(np.all((probabilities >= 0) & (probabilities <= 1)))
    self.assertEqual(model.predict([]).shape, (0,))
    self.assertEqual(model.predict([["", ""]]).shape, (1,))
    with self.assertRaisesRegex(ValueError, r"pairs\[1\] is not a"):
      model.predict([("a", "b"), ("a", "b", "c")])
    with self.assertRaisesRegex(TypeError, r"pairs\[0\]\[1\] is int"):
      model.predict([("a", 1)])
    with self.assertRaisesRegex(TypeError, "list of"):
      model.predict("a man")

  def test_predict_on_a_sentence_encoder_is_a_user_error(self):
    for name, (path, _) in self.encoders.items():
      with self.subTest(name):
        model = sentzoo.load(path)
        self.assertFalse(model.is_pair_model)
        with self.assertRaisesRegex(errors.UserError,
                                    "is a sentence encoder"):
          model.predict([("a man", "a man")])

  def test_load_takes_the_newest_version(self):
    path, _ = self.encoders["siamese_cbow"]
    self.assertEqual(sentzoo.load(path).export_dir, os.path.join(path, "1"))
    self.assertEqual(sentzoo.load(os.path.join(path, "1")).export_dir,
                     os.path.join(path, "1"))
    self.assertIn("sentence encoder", repr(sentzoo.load(path)))

  def test_load_errors(self):
    root = self.get_temp_dir()
    with self.assertRaisesRegex(errors.UserError, "does not exist"):
      sentzoo.load(os.path.join(root, "missing"))
    empty = os.path.join(root, "empty")
    os.makedirs(empty)
    with self.assertRaisesRegex(errors.UserError, "no SavedModel"):
      sentzoo.load(empty)
    # A model directory: the message names its export folder.
    model_dir = os.path.dirname(self.encoders["siamese_cbow"][0])
    with self.assertRaisesRegex(errors.UserError, "load '.*export'"):
      sentzoo.load(model_dir)

    class Other(tf.Module):

      @tf.function(input_signature=[tf.TensorSpec([None], tf.float32,
                                                  name="x")])
      def serve(self, x):
        return {"y": x}

    other = Other()
    tf.saved_model.save(other, os.path.join(root, "other"),
                        signatures={"serving_default": other.serve})
    with self.assertRaisesRegex(errors.UserError,
                                r"takes \['x'\]; expected \['sentences'\]"):
      sentzoo.load(os.path.join(root, "other"))

  def test_pair_model_without_encoder(self):

    class PairOnly(tf.Module):

      @tf.function(input_signature=[
          tf.TensorSpec([None], tf.string, name="sentences_a"),
          tf.TensorSpec([None], tf.string, name="sentences_b")])
      def serve(self, sentences_a, sentences_b):
        same = tf.cast(tf.equal(sentences_a, sentences_b), tf.float32)
        return {"probability": same}

    module = PairOnly()
    path = os.path.join(self.get_temp_dir(), "pair_only")
    tf.saved_model.save(module, path,
                        signatures={"serving_default": module.serve})
    model = sentzoo.load(path)
    self.assertAllEqual(model.predict([("a", "a"), ("a", "b")]), [1.0, 0.0])
    with self.assertRaisesRegex(errors.UserError, "--encoder_only"):
      model.encode(["a"])


class ReadmeExampleTest(tf.test.TestCase):
  """The README's "Use a trained model" example runs and prints its shape."""

  def test_readme_example_runs(self):
    with open(_README, encoding="utf-8") as f:
      match = re.search(r"^## Use a trained model\n.*?```python\n(.*?)```",
                        f.read(), re.S | re.M)
    self.assertIsNotNone(match, "README has no 'Use a trained model' code")
    code = match.group(1)
    demo_export = '"runs/siamese_cbow_demo/export"'
    self.assertIn(demo_export, code)
    root = self.get_temp_dir()
    model_dir = os.path.join(root, "model")
    model_dir_fixtures.make_siamese_cbow_model_dir(model_dir)
    export_dir = os.path.join(root, "export")
    export_model.export(model_dir, export_dir, evaluate=False)
    code = code.replace(demo_export, repr(export_dir))
    namespace = {}
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
      exec(compile(code, "README.md", "exec"), namespace)  # pylint: disable=exec-used
    vectors, scores = namespace["vectors"], namespace["scores"]
    self.assertEqual(vectors.shape, (3, model_dir_fixtures.DIM))
    self.assertEqual(vectors.dtype, np.float32)
    self.assertAllClose(scores, numpy_cosine(vectors, vectors), atol=1e-6)
    self.assertEqual(stdout.getvalue(),
                     f"(3, {model_dir_fixtures.DIM}) {scores[0].round(2)}\n")


if __name__ == "__main__":
  tf.test.main()
