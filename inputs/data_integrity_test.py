"""Tests for inputs.data_integrity."""

import gzip
import hashlib
import io
import json
import os
import re

import tensorflow as tf

from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.inputs import data_integrity


def _gzip_bytes(text):
  return gzip.compress(text.encode("utf-8"))


def _book_text(books):
  """A part: each book's sentences one per line, an empty line after each."""
  return "".join("".join(s + "\n" for s in book) + "\n" for book in books)


class DataIntegrityTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    # A fresh data directory per test: <data_dir>/gutenberg/part01.txt.gz.
    self.data_dir = os.path.join(self.get_temp_dir(), self._testMethodName)
    os.makedirs(os.path.join(self.data_dir, "gutenberg"))
    self.books = [["one a.", "one b.", "one c."], ["two a.", "two b."]]
    self.part = self._write("gutenberg/part01.txt.gz",
                            _gzip_bytes(_book_text(self.books)))

  def _write(self, rel, data):
    path = os.path.join(self.data_dir, rel)
    with open(path, "wb") as f:
      f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path

  def _write_sums(self, entries):
    """SHA256SUMS with `<digest>  ./<rel>` lines, as in the shared data."""
    self._write(data_integrity.SHA256SUMS, "".join(
        f"{digest}  ./{rel}\n" for rel, digest in entries))

  def _digest(self, path):
    with open(path, "rb") as f:
      return hashlib.sha256(f.read()).hexdigest()

  def _write_index(self, rows):
    header = ("part\tbook_order_in_part\tauthor\ttitle\t"
              "gutenberg_text_git_blob_sha\tfirst_line_in_part\t"
              "num_sentences\tnum_whitespace_tokens\n")
    return self._write("gutenberg/index.tsv", header + "".join(
        "\t".join(str(x) for x in row) + "\n" for row in rows))

  def _good_index_rows(self):
    # Book 0 on lines 1-3, empty line 4, book 1 on lines 5-6, empty line 7.
    return [(1, 0, "A", "Book one", "0" * 40, 1, 3, 6),
            (1, 1, "B", "Book two", "1" * 40, 5, 2, 4)]

  # count_newlines

  def test_good_gzip_counts_lines(self):
    self.assertEqual(data_integrity.count_newlines(self.part)[0], 7)

  def test_plain_file_counts_lines(self):
    path = self._write("plain.txt", "a\nb\n\nc\n")
    self.assertEqual(data_integrity.count_newlines(path), (4, True))
    path = self._write("no_final_newline.txt", "a\nb")
    self.assertEqual(data_integrity.count_newlines(path), (1, False))

  def test_truncated_gzip_names_file(self):
    data = _gzip_bytes("".join(f"sentence {i} of a longer book.\n"
                               for i in range(2000)))
    for cut in (len(data) // 2, len(data) - 4, 20):
      path = self._write(f"cut{cut}.txt.gz", data[:cut])
      with self.assertRaisesRegex(
          errors.DataDirError,
          rf"^{re.escape(path)}: truncated or corrupt gzip \(.+\)$"):
        data_integrity.count_newlines(path)[0]

  def test_corrupt_gzip_names_file(self):
    data = bytearray(_gzip_bytes("hello world\n" * 1000))
    data[-6] ^= 0xFF  # the CRC / length trailer
    path = self._write("bad.txt.gz", bytes(data))
    with self.assertRaisesRegex(
        errors.DataDirError, rf"{re.escape(path)}: truncated or corrupt gzip"):
      data_integrity.count_newlines(path)[0]
    path = self._write("notgzip.txt.gz", "plain text, not gzip\n")
    with self.assertRaisesRegex(
        errors.UserError, rf"{re.escape(path)}: truncated or corrupt gzip"):
      data_integrity.count_newlines(path)[0]

  def test_missing_file_is_a_user_error(self):
    missing = os.path.join(self.data_dir, "missing.txt.gz")
    with self.assertRaisesRegex(errors.DataDirError,
                                rf"{re.escape(missing)}: cannot read"):
      data_integrity.count_newlines(missing)[0]

  # verify_checksums

  def test_checksum_match_counts_checked_files(self):
    self._write_sums([("gutenberg/part01.txt.gz", self._digest(self.part))])
    self.assertEqual(
        data_integrity.verify_checksums(self.data_dir, [self.part]), 1)

  def test_checksum_mismatch_names_file_and_digests(self):
    wrong = "ab" * 32
    self._write_sums([("gutenberg/part01.txt.gz", wrong)])
    found = self._digest(self.part)
    with self.assertRaisesRegex(
        errors.DataDirError,
        rf"^{re.escape(self.part)}: sha256 {found[:12]}\.\.\. does not match "
        rf"{wrong[:12]}\.\.\."):
      data_integrity.verify_checksums(self.data_dir, [self.part])

  def test_files_not_listed_are_skipped(self):
    other = self._write("gutenberg/part02.txt.gz", _gzip_bytes("x\n"))
    outside = os.path.join(self.get_temp_dir(), "outside.txt")
    with open(outside, "w") as f:
      f.write("y\n")
    self._write_sums([("gutenberg/part01.txt.gz", self._digest(self.part))])
    self.assertEqual(data_integrity.verify_checksums(
        self.data_dir, [self.part, other, outside]), 1)

  def test_no_sums_file_checks_nothing(self):
    self.assertEqual(
        data_integrity.verify_checksums(self.data_dir, [self.part]), 0)

  def test_malformed_sums_line_names_file_and_line(self):
    self._write(data_integrity.SHA256SUMS,
                f"{self._digest(self.part)}  ./gutenberg/part01.txt.gz\n"
                "not a checksum line\n")
    with self.assertRaisesRegex(errors.DataFormatError, r"SHA256SUMS:2:"):
      data_integrity.verify_checksums(self.data_dir, [self.part])

  # verify_book_corpus

  def test_index_line_count_matches(self):
    self._write_index(self._good_index_rows())
    self.assertEqual(
        data_integrity.verify_book_corpus(self.data_dir, [self.part]), 1)
    # A copy without the final empty line also passes.
    self._write("gutenberg/part01.txt.gz",
                _gzip_bytes(_book_text(self.books)[:-1]))
    self.assertEqual(
        data_integrity.verify_book_corpus(self.data_dir, [self.part]), 1)

  def test_index_line_count_mismatch_names_file_and_counts(self):
    self._write_index(self._good_index_rows())
    # A whole gzip stream that lacks the last book: gzip cannot tell.
    self._write("gutenberg/part01.txt.gz",
                _gzip_bytes(_book_text(self.books[:1])))
    with self.assertRaisesRegex(
        errors.DataDirError,
        rf"^{re.escape(self.part)}: 4 lines, but .*index.tsv implies 7 "):
      data_integrity.verify_book_corpus(self.data_dir, [self.part])

  def test_precomputed_line_counts_are_used(self):
    self._write_index(self._good_index_rows())
    with self.assertRaisesRegex(errors.DataDirError, "99 lines"):
      data_integrity.verify_book_corpus(self.data_dir, [self.part],
                                        line_counts={self.part: 99})

  def test_parts_not_in_index_and_other_files_are_skipped(self):
    self._write_index(self._good_index_rows())
    part9 = self._write("gutenberg/part09.txt.gz", _gzip_bytes("x\n"))
    other = self._write("other.txt.gz", _gzip_bytes("x\n"))
    self.assertEqual(data_integrity.verify_book_corpus(
        self.data_dir, [part9, other]), 0)

  def test_no_index_checks_nothing(self):
    self.assertEqual(
        data_integrity.verify_book_corpus(self.data_dir, [self.part]), 0)

  def test_malformed_index_line_names_file_and_line(self):
    rows = self._good_index_rows()
    rows[1] = (1, 1, "B", "Book two", "1" * 40, "five", 2, 4)
    index = self._write_index(rows)
    with self.assertRaisesRegex(errors.DataFormatError,
                                rf"^{re.escape(index)}:3: "):
      data_integrity.verify_book_corpus(self.data_dir, [self.part])
    self._write("gutenberg/index.tsv", "part\tbook\n1\t0\n")
    with self.assertRaisesRegex(errors.DataFormatError,
                                rf"^{re.escape(index)}:1: "):
      data_integrity.verify_book_corpus(self.data_dir, [self.part])
    self._write_index(self._good_index_rows()[:1] + [(1, 1, "B")])
    with self.assertRaisesRegex(errors.DataFormatError,
                                rf"^{re.escape(index)}:3: "):
      data_integrity.verify_book_corpus(self.data_dir, [self.part])

  # verify_corpus

  def test_verify_corpus_good_files(self):
    self._write_index(self._good_index_rows())
    plain = self._write("plain.txt", "a\nb\n")
    self._write_sums([("gutenberg/part01.txt.gz", self._digest(self.part)),
                      ("plain.txt", self._digest(plain))])
    out = io.StringIO()
    counts = data_integrity.verify_corpus(self.data_dir, [self.part, plain],
                                          out=out)
    self.assertEqual(counts, {self.part: 7, plain: 2})
    lines = out.getvalue().splitlines()
    self.assertLen(lines, 2)
    self.assertRegex(lines[0],
                     r"^verified part01.txt.gz: 7 lines, sha256 ok, index ok")
    self.assertRegex(lines[1], r"^verified plain.txt: 2 lines, sha256 ok \(")

  def test_verify_corpus_truncated_gzip_is_an_error(self):
    data = _gzip_bytes(_book_text(self.books * 200))
    self._write("gutenberg/part01.txt.gz", data[:len(data) // 2])
    with self.assertRaisesRegex(
        errors.DataDirError,
        rf"{re.escape(self.part)}: truncated or corrupt gzip"):
      data_integrity.verify_corpus(self.data_dir, [self.part],
                                   checksums=False, out=io.StringIO())

  def test_verify_corpus_checksums_flag(self):
    self._write_sums([("gutenberg/part01.txt.gz", "00" * 32)])
    out = io.StringIO()
    data_integrity.verify_corpus(self.data_dir, [self.part], checksums=False,
                                 out=out)
    self.assertNotIn("sha256", out.getvalue())
    with self.assertRaisesRegex(errors.DataDirError, "sha256"):
      data_integrity.verify_corpus(self.data_dir, [self.part], out=out)

  def test_verify_corpus_without_data_dir_checks_gzip_only(self):
    self.assertEqual(data_integrity.verify_corpus(None, [self.part],
                                                  out=io.StringIO()),
                     {self.part: 7})

  def test_mismatches_say_what_a_user_with_their_own_corpus_does(self):
    # Issue 33 row 12: a modified corpus beside the shipped SHA256SUMS /
    # index.tsv was refused without a word on the way out.
    self._write_sums([("gutenberg/part01.txt.gz", "ab" * 32)])
    with self.assertRaises(errors.DataDirError) as caught:
      data_integrity.verify_checksums(self.data_dir, [self.part])
    self.assertTrue(str(caught.exception).endswith(
        "(a corrupt, truncated or changed copy); "
        + data_integrity.OWN_CORPUS_ADVICE), str(caught.exception))
    os.remove(os.path.join(self.data_dir, data_integrity.SHA256SUMS))
    self._write_index(self._good_index_rows())
    self._write("gutenberg/part01.txt.gz",
                _gzip_bytes(_book_text(self.books[:1])))
    with self.assertRaises(errors.DataDirError) as caught:
      data_integrity.verify_book_corpus(self.data_dir, [self.part])
    self.assertTrue(str(caught.exception).endswith(
        "a truncated or different copy of part 1; "
        + data_integrity.OWN_CORPUS_ADVICE), str(caught.exception))
    self.assertIn("your own corpus", data_integrity.OWN_CORPUS_ADVICE)
    self.assertIn("--noverify_data", data_integrity.OWN_CORPUS_ADVICE)
    # The way out works: the same file under a name of its own is read
    # without the shipped checks.
    own = os.path.join(self.data_dir, "mine", "part01.txt.gz")
    os.makedirs(os.path.dirname(own))
    os.replace(self.part, own)
    self.assertEqual(data_integrity.verify_book_corpus(self.data_dir, [own]), 0)
    self.assertEqual(data_integrity.verify_corpus(
        self.data_dir, [own], out=io.StringIO()), {own: 4})

  # record_corpus / check_corpus_unchanged

  def _model_dir(self):
    path = os.path.join(self.get_temp_dir(), self._testMethodName + "_model")
    os.makedirs(path, exist_ok=True)
    return path

  def test_unchanged_corpus_passes_and_nothing_recorded_checks_nothing(self):
    model_dir = self._model_dir()
    other = self._write("gutenberg/part02.txt.gz", _gzip_bytes("x\ny\n"))
    files = [self.part, other]
    self.assertEqual(data_integrity.check_corpus_unchanged(model_dir, files),
                     0)
    data_integrity.record_corpus(model_dir, files)
    self.assertEqual(data_integrity.check_corpus_unchanged(model_dir, files),
                     2)
    # A copy or `touch`: same bytes, a new mtime.
    os.utime(other, ns=(1, 10**18))
    self.assertEqual(data_integrity.check_corpus_unchanged(model_dir, files),
                     2)

  def test_changed_corpus_is_an_error_saying_what_to_do(self):
    # Issue 33 row 4: a rerun trained on a changed file (69 batches an epoch
    # where the plan had 197) without a word.
    model_dir = self._model_dir()
    data_integrity.record_corpus(model_dir, [self.part])
    before = os.path.getsize(self.part)
    self._write("gutenberg/part01.txt.gz",
                _gzip_bytes(_book_text(self.books[:1])))
    with self.assertRaises(errors.DataDirError) as caught:
      data_integrity.check_corpus_unchanged(model_dir, [self.part])
    message = str(caught.exception)
    self.assertRegex(
        message, f"^the corpus changed since {re.escape(repr(model_dir))} was "
        f"first trained: {re.escape(self.part)} is .* bytes, modified .*, it "
        f"was {before:,} bytes, modified .*UTC; ")
    self.assertIn("Put them back, or train on the new corpus in a new "
                  "--model_dir", message)

  def test_same_size_new_content_and_other_file_counts_are_errors(self):
    model_dir = self._model_dir()
    plain = self._write("plain.txt", "abc\ndef\n")
    data_integrity.record_corpus(model_dir, [plain])
    self._write("plain.txt", "abc\nxyz\n")
    os.utime(plain, ns=(1, 10**18))
    with self.assertRaisesRegex(errors.DataDirError, "plain.txt is 8 bytes"):
      data_integrity.check_corpus_unchanged(model_dir, [plain])
    with self.assertRaisesRegex(errors.DataDirError,
                                "2 corpus files now, 1 then"):
      data_integrity.check_corpus_unchanged(model_dir, [plain, self.part])

  def test_fingerprint_file_is_written_whole_and_readable(self):
    model_dir = self._model_dir()
    data_integrity.record_corpus(model_dir, [self.part])
    with open(os.path.join(model_dir,
                           model_dir_lib.CORPUS_FINGERPRINT_FILE)) as f:
      [entry] = json.load(f)["files"]
    self.assertEqual(entry["size"], os.path.getsize(self.part))
    self.assertEqual(entry["path"], os.path.abspath(self.part))
    with open(os.path.join(model_dir,
                           model_dir_lib.CORPUS_FINGERPRINT_FILE), "w") as f:
      f.write("{not json")
    with self.assertRaisesRegex(errors.DataDirError, "delete it"):
      data_integrity.check_corpus_unchanged(model_dir, [self.part])


class RealDataTest(tf.test.TestCase):
  """The shared book corpus part01 passes all checks."""

  def test_real_part01(self):
    data_dir = os.environ.get(data_dir_lib.ENV_VAR, "")
    part = os.path.join(data_dir, "gutenberg", "part01.txt.gz")
    if not data_dir or not os.path.isfile(part):
      self.skipTest(f"no ${data_dir_lib.ENV_VAR} with gutenberg/part01.txt.gz")
    out = io.StringIO()
    counts = data_integrity.verify_corpus(data_dir, [part], out=out)
    self.assertEqual(counts, {part: 526745})
    self.assertRegex(out.getvalue(),
                     r"^verified part01.txt.gz: 526,745 lines, sha256 ok, "
                     r"index ok \(")


if __name__ == "__main__":
  tf.test.main()
