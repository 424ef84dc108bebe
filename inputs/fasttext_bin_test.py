"""Tests for fasttext_bin on .bin files the C++ sent2vec tool trained
(tests/testdata/sent2vec/README.md says how) and on files written here."""

import hashlib
import os
import struct
from unittest import mock

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.inputs import fasttext_bin

TESTDATA = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "tests", "testdata", "sent2vec")


def fixture(name):
  return os.path.join(TESTDATA, name + ".bin")


class ReadTest(tf.test.TestCase):

  def test_reads_the_tools_files(self):
    # uni: 1400 words (minCount 2), dim 16, no buckets; the tool adds one
    # bucketChar row that inference never reads.
    for name, ngrams, buckets, dim in (("uni", 1, 0, 16), ("bi", 2, 1000, 16),
                                       ("tri", 3, 500, 12)):
      source = fasttext_bin.Sent2VecFile(fixture(name))
      self.assertEqual(source.words[0], fasttext_bin.PLACEHOLDER)
      self.assertEqual(source.counts[0], 0)
      self.assertEqual((source.args["wordNgrams"], source.args["bucket"],
                        source.dim), (ngrams, buckets, dim))
      self.assertEqual(source.rows, len(source.words) + buckets)
      self.assertLen(set(source.words), len(source.words))
      rows = np.concatenate([c.copy() for _, c in source.table_chunks(333)])
      self.assertEqual(rows.shape, (source.rows, dim))
      with open(fixture(name), "rb") as f:
        data = f.read()
      self.assertEqual(source.sha256().result(),
                       hashlib.sha256(data).hexdigest())
      # The table is the float32 block just before the bucketChar row.
      end = data.index(rows[-1].tobytes()) + 4 * dim
      self.assertEqual(data[end - rows.nbytes:end], rows.tobytes())
    self.assertLen(source.words, 3430)  # tri: minCount 1.
    self.assertEqual(source.counts[1:4].tolist(), [1586, 1173, 629])

  def test_small_blocks_read_the_same_dictionary(self):
    whole = fasttext_bin.Sent2VecFile(fixture("tri"))
    with mock.patch.object(fasttext_bin, "_BLOCK", 23):
      blocks = fasttext_bin.Sent2VecFile(fixture("tri"))
    self.assertEqual(blocks.words, whole.words)
    self.assertAllEqual(blocks.counts, whole.counts)
    self.assertAllEqual(next(blocks.table_chunks(5))[1],
                        next(whole.table_chunks(5))[1])
    # The rest of the file is hashed too: the whole file's sha256.
    with open(fixture("tri"), "rb") as f:
      self.assertEqual(blocks.sha256().result(),
                       hashlib.sha256(f.read()).hexdigest())
    whole.close()

  def test_chunks_cover_the_asked_rows_in_order(self):
    whole = [c.copy() for _, c in
             fasttext_bin.Sent2VecFile(fixture("bi")).table_chunks(10**6)][0]
    source = fasttext_bin.Sent2VecFile(fixture("bi"))
    starts, parts = zip(*[(s, c.copy()) for s, c in
                          source.table_chunks(7, rows=100)])
    self.assertEqual(starts, tuple(range(0, 100, 7)))
    self.assertAllEqual(np.concatenate(parts), whole[:100])


class WriteTest(tf.test.TestCase):

  def test_round_trip(self):
    words, counts = ["the", "cat", "café"], [9, 5, 2]
    table = np.random.default_rng(0).normal(size=(4 + 7, 5)).astype(
        np.float32)
    path = os.path.join(self.get_temp_dir(), "m.bin")
    fasttext_bin.write(path, words, counts, [table[:3], table[3:]],
                       len(table), 5, word_ngrams=2, bucket=7)
    source = fasttext_bin.Sent2VecFile(path)
    self.assertEqual(source.words, [fasttext_bin.PLACEHOLDER] + words)
    self.assertAllEqual(source.counts, [0] + counts)
    self.assertEqual((source.args["wordNgrams"], source.args["bucket"],
                      source.args["model"]), (2, 7, 4))
    self.assertAllEqual(
        np.concatenate([c.copy() for _, c in source.table_chunks(4)]), table)
    source.close()
    self.assertFalse(os.path.exists(path + ".partial"))
    with self.assertRaises(ValueError):
      fasttext_bin.write(path, words, counts, [table], len(table) + 1, 5, 2,
                         7)


class BadFileTest(tf.test.TestCase):
  """Each damage is one UserError naming what is wrong."""

  def setUp(self):
    super().setUp()
    with open(fixture("uni"), "rb") as f:
      self.data = f.read()

  def _refused(self, data, text):
    path = os.path.join(self.get_temp_dir(), "bad.bin")
    with open(path, "wb") as f:
      f.write(data)
    with self.assertRaisesRegex(errors.UserError, text):
      fasttext_bin.Sent2VecFile(path)

  def _patched(self, offset, fmt, value):
    return (self.data[:offset] + struct.pack(fmt, value) +
            self.data[offset + struct.calcsize(fmt):])

  def test_header(self):
    self._refused(b"", "empty")
    self._refused(self.data[:6], "truncated")
    self._refused(self._patched(0, "<i", 1234), "magic number 1234")
    self._refused(self._patched(4, "<i", 12), "version 12")
    self._refused(self._patched(8 + 4 * 7, "<i", 1), "'cbow' model")
    self._refused(self._patched(8, "<i", 0), "damaged header")

  def test_dictionary_and_sizes(self):
    self._refused(self.data[:1000], r"dictionary entry 69 \(truncated")
    self._refused(self.data[:-100], "truncated")
    self._refused(self.data + b"x", "extra bytes")
    self._refused(self._patched(8, "<i", 17), "its table is 1401 x 16, but "
                  "its 1400 words [+] 0 buckets and dim 17 need 1400 x 17")
    self._refused(self._patched(8 + 4 * 8, "<i", 5000), "5000 buckets")
    self._refused(self.data.replace(b"\x00the\x00", b"\x00th\xff\x00", 1),
                  "not UTF-8")
    self._refused(self.data.replace(b"\x00the\x00", b"\x00and\x00", 1),
                  "'and' appears twice")

  def test_quantised_or_pruned(self):
    nwords, dim = 1400, 16
    quantised_at = (len(self.data) - (17 + nwords * dim * 4) -
                    (16 + (nwords + 1) * dim * 4) - 1)
    self._refused(self._patched(quantised_at, "<b", 1), "quantised")
    pruned_at = 8 + 12 * 4 + 8 + 12 + 8
    self._refused(self._patched(pruned_at, "<q", 3), "pruned")


if __name__ == "__main__":
  tf.test.main()
