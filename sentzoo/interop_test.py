"""Tests for sentzoo.interop: imports against the C++ sent2vec binding's own
vectors (tests/testdata/sent2vec, README there), export-as read back by our
reader, gensim and a second import, and every bad input refused by the
command with one `error:` line and the store left as it was."""

import hashlib
import json
import os
import struct

from gensim.models import keyedvectors
import numpy as np
import tensorflow as tf

import sentzoo
from sentzoo import archive
from sentzoo import interop
from sentzoo import store as store_lib
from sentzoo.common import errors
from sentzoo.export import export_model
from sentzoo.export import sent2vec_test
from sentzoo.inputs import fasttext_bin
from sentzoo.tests import zoo_test_util

TESTDATA = os.path.join(zoo_test_util.REPO_ROOT, "tests", "testdata",
                        "sent2vec")
with open(os.path.join(TESTDATA, "sentences.json"), encoding="utf-8") as f:
  SENTENCES = json.load(f)
# The target's bound on |ours - the binding's|.
ATOL = 1e-5


def fixture(name):
  return os.path.join(TESTDATA, name + ".bin")


def binding_vectors(name):
  return np.load(os.path.join(TESTDATA, name + "_vectors.npy"))


def sha256(path):
  with open(path, "rb") as f:
    return hashlib.sha256(f.read()).hexdigest()


class _BuildTestCase(tf.test.TestCase):

  def _build(self, path, **kwargs):
    """interop.build_module of a sent2vec file, its words in self.vocab."""
    self.vocab = os.path.join(self.get_temp_dir(), "vocab.txt")
    return interop.build_module("sent2vec", path, self.vocab, **kwargs)


class ImportSent2VecTest(_BuildTestCase):

  def test_serving_and_load_give_the_bindings_vectors(self):
    for name in ("uni", "bi"):
      path = interop.import_file("sent2vec", fixture(name),
                                 output_dir=os.path.join(self.get_temp_dir(),
                                                         name))
      served = tf.saved_model.load(path).signatures["serving_default"](
          sentences=tf.constant(SENTENCES))["embeddings"]
      self.assertAllClose(served, binding_vectors(name), atol=ATOL, rtol=0)
      model = sentzoo.load(path)
      self.assertAllClose(model.encode(SENTENCES), binding_vectors(name),
                          atol=ATOL, rtol=0)
      self.assertEqual(model.card["imported"]["sha256"],
                       sha256(fixture(name)))
      self.assertEqual(model.card["tokenization"]["name"], "whitespace")
      self.assertEqual(model.card["word_ngrams"], {"uni": 1, "bi": 2}[name])
      self.assertTrue(os.path.isfile(os.path.join(
          path, store_lib.VOCABULARY_IN_EXPORT)))

  def test_trigrams_and_quantised_tables(self):
    # tri.bin's ids pass 1368, where the trigram hash wraps around 2^64.
    module, imported = self._build(fixture("tri"))
    self.assertAllClose(module(tf.constant(SENTENCES)),
                        binding_vectors("tri"), atol=ATOL, rtol=0)
    self.assertEqual(module.metadata["vocabulary_size"], 3429)
    with open(self.vocab, encoding="utf-8") as f:
      self.assertLen(f.readlines(), 3429)
    self.assertEqual(imported["size_bytes"], os.path.getsize(fixture("tri")))
    self.assertEqual(imported["sha256"].result(), sha256(fixture("tri")))
    for precision, atol in (("float16", 1e-3), ("int8", 0.05)):
      module, _ = self._build(fixture("bi"), precision=precision)
      self.assertEqual(module.metadata["quantization"]["mode"], precision)
      self.assertAllClose(module(tf.constant(SENTENCES)),
                          binding_vectors("bi"), atol=atol, rtol=0)

  def test_zoo_tokenizer_reads_raw_text(self):
    module, _ = self._build(fixture("bi"), tokenizer="zoo")
    self.assertEqual(module.metadata["tokenization"]["name"], "zoo")
    raw = ["The white breakers were rushing to the shore; THE END."]
    tokenised = ["the white breakers were rushing to the shore ; the end ."]
    exact, _ = self._build(fixture("bi"))
    self.assertAllClose(module(tf.constant(raw)),
                        exact(tf.constant(tokenised)), atol=ATOL, rtol=0)


class WordVectorsTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.words = ["the", "cat", "café"]
    self.rows = np.array([[1, 2], [3, 4], [5, 7]], np.float32)
    vectors = keyedvectors.KeyedVectors(vector_size=2)
    vectors.add_vectors(self.words, self.rows)
    self.path = os.path.join(self.get_temp_dir(), "w2v.bin")
    vectors.save_word2vec_format(self.path, binary=True)

  def test_import_averages_the_files_rows(self):
    path = interop.import_file("word2vec-binary", self.path,
                               output_dir=self.get_temp_dir(),
                               precision="float16")
    model = sentzoo.load(path)
    self.assertAllClose(
        model.encode(["the cat", "café zebra the", "", "CAT"]),
        [[2, 3], [3, 4.5], [0, 0], [0, 0]])
    self.assertEqual(model.card["model_type"], "word_averaging")

  def test_export_as_word2vec_is_read_by_gensim(self):
    path = interop.import_file("word2vec-binary", self.path,
                               output_dir=self.get_temp_dir())
    for fmt, binary in (("word2vec-text", False), ("word2vec-binary", True)):
      out = os.path.join(self.get_temp_dir(), fmt)
      interop.export_as(fmt, path, out)
      loaded = keyedvectors.KeyedVectors.load_word2vec_format(out,
                                                              binary=binary)
      self.assertEqual(loaded.index_to_key, self.words)
      self.assertAllEqual(loaded.vectors, self.rows)


class ExportAsSent2VecTest(_BuildTestCase):

  def test_an_imported_file_written_back(self):
    path = interop.import_file("sent2vec", fixture("bi"),
                               output_dir=self.get_temp_dir())
    out = os.path.join(self.get_temp_dir(), "back.bin")
    interop.export_as("sent2vec", path, out)
    original, written = (fasttext_bin.Sent2VecFile(p) for p in (fixture("bi"),
                                                               out))
    self.assertEqual(written.words, original.words)
    self.assertEqual(written.args["bucket"], 1000)
    table = [np.concatenate([c.copy() for _, c in f.table_chunks(500)])
             for f in (original, written)]
    self.assertAllEqual(table[1], table[0])
    module, _ = self._build(out)
    self.assertAllClose(module(tf.constant(SENTENCES)),
                        binding_vectors("bi"), atol=ATOL, rtol=0)

  def test_a_sent2vec_trained_here(self):
    model_dir = os.path.join(self.get_temp_dir(), "model")
    sent2vec_test._make_model_dir(model_dir, word_ngrams=2)  # pylint: disable=protected-access
    path = export_model.export(model_dir, os.path.join(model_dir, "export"),
                               evaluate=False)
    out = os.path.join(self.get_temp_dir(), "ours.bin")
    interop.export_as("sent2vec", path, out)  # Words from ../../vocab.txt.
    module, _ = self._build(out, tokenizer="zoo")
    sentences = ["The cat sat on the mat.", "", "zebra", "the mat , the cat"]
    self.assertAllClose(module(tf.constant(sentences)),
                        sentzoo.load(path).encode(sentences), atol=ATOL,
                        rtol=0)

  def test_refusals(self):
    quantised = interop.import_file("sent2vec", fixture("uni"),
                                    output_dir=self.get_temp_dir(),
                                    precision="int8")
    out = os.path.join(self.get_temp_dir(), "x")
    with self.assertRaisesRegex(errors.UserError, "not a quantised one"):
      interop.export_as("sent2vec", quantised, out)
    with self.assertRaisesRegex(errors.UserError, "unknown format"):
      interop.export_as("glove", quantised, out)
    self.assertFalse(os.path.exists(out))


class ImportCommandTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.home = os.path.join(self.get_temp_dir(), "home")

  def assertOneErrorLine(self, done, text):
    self.assertEqual(done.returncode, 2, done.stderr[-3000:])
    lines = done.stderr.strip().splitlines()
    self.assertLen(lines, 1, done.stderr)
    self.assertStartsWith(lines[0], "error: ")
    self.assertIn(text, lines[0])

  def test_store_entry_lists_packs_and_installs(self):
    interop.import_file("sent2vec", fixture("bi"), name="bi-fixture",
                        store=store_lib.Store(self.home))
    done = zoo_test_util.run(self.home, "models")
    row = [l for l in done.stdout.splitlines() if l.startswith("bi-fixture ")]
    self.assertIn("imported", row[0])
    self.assertIn(f"sha256 {sha256(fixture('bi'))}", done.stdout)
    store = store_lib.Store(self.home)
    self.assertEqual(store.manifest("bi-fixture")["imported"]["sha256"],
                     sha256(fixture("bi")))
    packed = archive.pack(store, "bi-fixture", os.path.join(
        self.get_temp_dir(), "bi.sentzoo.tar.gz"))
    other = store_lib.Store(os.path.join(self.get_temp_dir(), "other"))
    archive.install(packed, other)
    self.assertAllClose(
        sentzoo.load(other.verify("bi-fixture")).encode(SENTENCES),
        binding_vectors("bi"), atol=ATOL, rtol=0)

  def test_bad_inputs_are_one_error_line_and_install_nothing(self):
    with open(fixture("uni"), "rb") as f:
      good = f.read()
    store_lib.Store(self.home).install_dir(
        "kept", interop.import_file("sent2vec", fixture("uni"),
                                    output_dir=self.get_temp_dir()),
        {"source": "test"})
    before = sorted(os.listdir(os.path.join(self.home, "models")))
    bad_bin = {
        "empty": (b"", "the file is empty"),
        "truncated": (good[:-100], "truncated"),
        "magic": (struct.pack("<i", 7) + good[4:], "magic number 7"),
        "version": (good[:4] + struct.pack("<i", 12) + good[8:],
                    "version 12"),
        "buckets": (good[:40] + struct.pack("<i", 5000) + good[44:],
                    "5000 buckets"),
        "dim": (good[:8] + struct.pack("<i", 17) + good[12:], "dim 17"),
    }
    bad_text = {
        "ragged": ("glove", "a 1 2\nb 1\n", "expected a word and 2 values"),
        "dim": ("word2vec-text", "1 3\na 1 2\n",
                "expected a word and 3 values, got 2"),
        "nan": ("fasttext-vec", "1 2\na nan 1\n", "NaN or infinite"),
        "inf": ("glove", "a 1 -inf\n", "NaN or infinite"),
        "duplicate": ("glove", "a 1 2\na 1 2\n", "'a' appears twice"),
        "utf8": ("glove", b"\xe9t\xe9 1 2\n", "not UTF-8"),
        "binary": ("word2vec-binary", b"2 1\na \x00\x00", "truncated"),
    }
    cases = []
    for case, (data, text) in bad_bin.items():
      cases.append(("sent2vec", case, data, text))
    for case, (fmt, data, text) in bad_text.items():
      cases.append((fmt, case, data, text))
    cases.append(("glove6", "format", b"a 1\n", "unknown format 'glove6'"))
    for fmt, case, data, text in cases:
      path = os.path.join(self.get_temp_dir(), f"{case}.{fmt}")
      with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
      done = zoo_test_util.run(self.home, "import", fmt, path, "--name",
                               "new")
      self.assertOneErrorLine(done, text)
      self.assertEqual(sorted(os.listdir(os.path.join(self.home, "models"))),
                       before)
      self.assertEqual(sorted(os.listdir(self.home)),
                       [store_lib.LOCK_FILE, "models"], case)
    for path, text in ((os.path.join(self.get_temp_dir(), "absent.bin"),
                        "no such file"),
                       (self.get_temp_dir(), "it is a folder, not a file")):
      self.assertOneErrorLine(zoo_test_util.run(
          self.home, "import", "sent2vec", path, "--name", "new"), text)


if __name__ == "__main__":
  tf.test.main()
