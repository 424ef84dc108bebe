"""Tests for inputs.ppdb, on fixtures written by the tests."""

import gzip
import math
import os
import tempfile

import tensorflow as tf

from sentzoo.common import errors
from sentzoo.inputs import ppdb


class PpdbTest(tf.test.TestCase):

  def _write(self, name, text, gz=False):
    path = os.path.join(self.get_temp_dir(), name)
    if gz:
      with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)
    else:
      with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path

  def test_release_format(self):
    path = self._write("ppdb-2.0-s-phrasal", (
        "[NP] ||| the movie ||| this film ||| PPDB2.0Score=3.5 p(e|f)=1.2 "
        "||| 0-0 1-1 ||| Equivalence\n"
        "[VP] ||| go home ||| return home ||| PPDB2.0Score=1.0 ||| 0-0 ||| "
        "OtherRelated\n"
        "[X] ||| a ||| b\n"))
    pairs = ppdb.load_ppdb_release(path)
    self.assertEqual([(p.phrase1, p.phrase2) for p in pairs],
                     [("the movie", "this film"), ("go home", "return home"),
                      ("a", "b")])
    self.assertEqual(pairs[0].score, 3.5)
    self.assertTrue(math.isnan(pairs[2].score))
    kept = ppdb.load_ppdb_release(path, min_score=2.0)
    self.assertEqual([p.phrase1 for p in kept], ["the movie"])

  def test_release_format_gzipped_and_malformed(self):
    path = self._write("p.gz", "[NP] ||| a ||| b ||| PPDB2.0Score=2\n",
                       gz=True)
    self.assertLen(ppdb.load_ppdb_release(path), 1)
    bad = self._write("bad", "[NP] ||| a ||| b\n[NP] ||| only one\n")
    with self.assertRaisesRegex(errors.DataFormatError, r"bad:2:"):
      ppdb.load_ppdb_release(bad)
    bad_score = self._write("bad2", "[NP] ||| a ||| b ||| PPDB2.0Score=x\n")
    with self.assertRaisesRegex(errors.DataFormatError, r"bad2:1:"):
      ppdb.load_ppdb_release(bad_score)

  def test_pair_tsv(self):
    path = self._write("pairs.txt", "a b\tc d\textra\n\nx\ty\n")
    pairs = ppdb.load_pair_tsv(path)
    self.assertEqual([(p.phrase1, p.phrase2) for p in pairs],
                     [("a b", "c d"), ("x", "y")])
    bad = self._write("bad.txt", "a\tb\nno tab here\n")
    with self.assertRaisesRegex(errors.DataFormatError, r"bad.txt:2:"):
      ppdb.load_pair_tsv(bad)

  def test_human_labels(self):
    path = self._write("h.tsv", (
        "4.0\t[NP]\tthis video\tthe movie\t3.0,4.0,4.0,4.0,5.0\n"
        "1.0\t[FRAG]\tmr. brunner\toh , mr collins .\t1.0,1.0\n"
        "3.0\t[NN]\teditor\thead\t3.0\n"))
    pairs = ppdb.load_human_labels(path)
    self.assertLen(pairs, 3)
    self.assertEqual(pairs[1], ppdb.PhrasePair("mr. brunner",
                                               "oh , mr collins .", 1.0))
    kept = ppdb.load_human_labels(path, min_score=3.0)
    self.assertEqual([p.phrase1 for p in kept], ["this video", "editor"])
    bad = self._write("bad.tsv", "x\t[NP]\ta\tb\tr\n")
    with self.assertRaisesRegex(errors.DataFormatError, r"bad.tsv:1:.*mean"):
      ppdb.load_human_labels(bad)
    short = self._write("short.tsv", "1.0\t[NP]\ta\n")
    with self.assertRaisesRegex(errors.DataFormatError, r"short.tsv:1:"):
      ppdb.load_human_labels(short)

  def test_lexicon(self):
    path = self._write("lex.txt.gz", "fawn crawl\nlonely\n"
                       "realloc re-alloc reassign\n", gz=True)
    pairs = ppdb.load_lexicon(path)
    self.assertEqual([(p.phrase1, p.phrase2) for p in pairs],
                     [("fawn", "crawl"), ("realloc", "re-alloc"),
                      ("realloc", "reassign")])

  def test_deduplicate_and_subsample(self):
    pairs = [ppdb.PhrasePair("a", "b"), ppdb.PhrasePair("b", "a"),
             ppdb.PhrasePair("c", "c"), ppdb.PhrasePair("d", "e")]
    self.assertEqual(ppdb.deduplicate(pairs),
                     [ppdb.PhrasePair("a", "b"), ppdb.PhrasePair("d", "e")])
    many = [ppdb.PhrasePair(str(i), "x") for i in range(10)]
    sub = ppdb.subsample(many, 4, seed=1)
    self.assertLen(sub, 4)
    self.assertEqual(sub, ppdb.subsample(many, 4, seed=1))
    self.assertEqual(sub, sorted(sub, key=lambda p: int(p.phrase1)))
    self.assertEqual(ppdb.subsample(many, 0), many)

  def test_load_dispatch_and_errors(self):
    path = self._write("p.tsv", "a\tb\n")
    self.assertLen(ppdb.load(path, "tsv"), 1)
    with self.assertRaises(errors.UserError):
      ppdb.load(path, "nope")
    with self.assertRaises(errors.DataDirError):
      ppdb.load(os.path.join(tempfile.mkdtemp(), "absent"), "tsv")


if __name__ == "__main__":
  tf.test.main()
