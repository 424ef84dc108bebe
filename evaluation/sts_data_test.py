"""Tests for evaluation.sts_data."""

import os

from absl.testing import absltest
import numpy as np

from sentzoo.common import errors
from sentzoo.evaluation import sts_data
from sentzoo.tests import test_util


class StsDataTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.data_dir = test_util.write_fixture_data_dir(
        test_util.make_tempdir(self))

  def test_canonical_list(self):
    self.assertLen(sts_data.STS_TEST_SETS, 20)
    self.assertEqual(sts_data.STS_TEST_SET_NAMES[0], "STS2012.MSRpar")
    self.assertIn("STS2013.SMT", sts_data.STS_TEST_SET_NAMES)
    self.assertEqual(sts_data.sts_year("STS2014.deft-news"), 2014)
    self.assertIsNone(sts_data.sts_year("SICK.test"))

  def test_load_sts_test_sets(self):
    pair_sets, missing = sts_data.load_sts_test_sets(self.data_dir)
    names = [p.name for p in pair_sets]
    self.assertEqual(names, ["STS2012.MSRpar", "STS2014.images",
                             "STS2015.answers-forums"])
    self.assertLen(missing, 17)
    self.assertIn("STS2013.SMT", missing)
    self.assertNotIn("STS2012.MSRpar", missing)

    msrpar = pair_sets[0]
    self.assertLen(msrpar, 4)
    self.assertEqual(msrpar.sentences1[0], "a man is playing a guitar .")
    self.assertEqual(msrpar.sentences2[1], "a man is riding a horse")
    # The invalid byte is replaced, not fatal.
    self.assertEqual(msrpar.sentences1[2], "caf\ufffd is open")
    np.testing.assert_allclose(msrpar.scores, [4.8, 0.4, 3.5, 2.9])
    self.assertEqual(msrpar.scores.dtype, np.float64)

  def test_empty_gold_lines_are_skipped(self):
    pair_sets, _ = sts_data.load_sts_test_sets(self.data_dir)
    (forums,) = [p for p in pair_sets if p.name == "STS2015.answers-forums"]
    self.assertLen(forums, 3)
    self.assertEqual(forums.sentences1, ["how do I learn python",
                                         "my cat hates baths",
                                         "buy low sell high"])
    self.assertEqual(forums.sentences2[1], "cats do not like water")
    np.testing.assert_allclose(forums.scores, [4.0, 3.0, 1.5])

  def _sts_files(self, inputs, golds):
    base = test_util.make_tempdir(self)
    return (test_util.write_file(os.path.join(base, "STS.input.x.txt"),
                                 inputs),
            test_util.write_file(os.path.join(base, "STS.gs.x.txt"), golds))

  def test_input_line_without_tab(self):
    input_path, gold_path = self._sts_files("a\tb\nno tab here\nc\td\n",
                                            "1\n2\n3\n")
    with self.assertRaises(errors.DataFormatError) as cm:
      sts_data.load_sts_pair_files(input_path, gold_path, "x")
    self.assertIn(f"{input_path}:2:", str(cm.exception))
    self.assertEqual(cm.exception.line_number, 2)

  def test_gold_not_a_number(self):
    input_path, gold_path = self._sts_files("a\tb\nc\td\ne\tf\n",
                                            "1\n2\nhigh\n")
    with self.assertRaisesRegex(errors.DataFormatError,
                                f"{gold_path}:3: .*'high'"):
      sts_data.load_sts_pair_files(input_path, gold_path, "x")

  def test_different_line_counts(self):
    input_path, gold_path = self._sts_files("a\tb\nc\td\ne\tf\n", "1\n2\n")
    with self.assertRaisesRegex(errors.DataFormatError, f"{gold_path}:3: "):
      sts_data.load_sts_pair_files(input_path, gold_path, "x")
    input_path, gold_path = self._sts_files("a\tb\n", "1\n2\n")
    with self.assertRaisesRegex(errors.DataFormatError, f"{input_path}:2: "):
      sts_data.load_sts_pair_files(input_path, gold_path, "x")

  def test_crlf_and_unicode_separators(self):
    # "\u2028" inside a sentence must not split the line.
    input_path, gold_path = self._sts_files(
        "a\u2028b\tc\r\nd\te\r\n", "1\r\n2\r\n")
    pair_set = sts_data.load_sts_pair_files(input_path, gold_path, "x")
    self.assertEqual(pair_set.sentences1, ["a\u2028b", "d"])
    self.assertEqual(pair_set.sentences2, ["c", "e"])

  def test_sick(self):
    sick = sts_data.load_sick_split(self.data_dir, "test")
    self.assertEqual(sick.name, "SICK.test")
    self.assertLen(sick, 4)
    self.assertEqual(sick.sentences1[1], "A man is cooking")
    self.assertEqual(sick.sentences2[1], "Nobody is cooking")
    np.testing.assert_allclose(sick.scores, [4.5, 3.2, 1.1, 4.9])
    with self.assertRaisesRegex(errors.DataDirError, "SICK_train.txt"):
      sts_data.load_sick_split(self.data_dir, "train")

  def test_sick_bad_header_and_score(self):
    path = test_util.write_file(
        os.path.join(test_util.make_tempdir(self), "s.txt"),
        "pair_ID\tsentence_A\tsentence_B\tscore\n1\ta\tb\t1\n")
    with self.assertRaisesRegex(errors.DataFormatError,
                                f"{path}:1: .*relatedness_score"):
      sts_data.load_sick(path)
    path = test_util.write_file(
        os.path.join(test_util.make_tempdir(self), "s.txt"),
        "\ufeffpair_ID\tsentence_A\tsentence_B\trelatedness_score\n"
        "1\ta\tb\t1\n2\tc\td\tx\n")
    with self.assertRaisesRegex(errors.DataFormatError, f"{path}:3: "):
      sts_data.load_sick(path)

  def test_stsb(self):
    stsb = sts_data.load_stsb_split(self.data_dir, "dev")
    self.assertEqual(stsb.name, "STSB.dev")
    self.assertLen(stsb, 3)
    self.assertEqual(stsb.sentences1[1], "a child rides a horse .")
    self.assertEqual(stsb.sentences2[1], "a dog eats food .")  # Not "extra".
    np.testing.assert_allclose(stsb.scores, [5.0, 0.5, 3.8])

  def test_stsb_short_line(self):
    path = test_util.write_file(
        os.path.join(test_util.make_tempdir(self), "sts-dev.csv"),
        "g\tf\ty\t1\t2.0\ta\tb\ng\tf\ty\t2\t3.0\ta\n")
    with self.assertRaisesRegex(errors.DataFormatError, f"{path}:2: "):
      sts_data.load_stsb(path)

  def test_load_eval_sets(self):
    pair_sets, missing = sts_data.load_eval_sets(self.data_dir)
    self.assertEqual([p.name for p in pair_sets][-2:],
                     ["SICK.test", "STSB.dev"])
    self.assertLen(pair_sets, 5)
    self.assertLen(missing, 17)
    empty = test_util.make_tempdir(self)
    pair_sets, missing = sts_data.load_eval_sets(empty, ["sick", "stsb"])
    self.assertEqual(pair_sets, [])
    self.assertEqual(missing, ["SICK.test", "STSB.dev"])


class RealDataTest(absltest.TestCase):
  """Checks the loaders against the shared data's documented counts."""

  def setUp(self):
    super().setUp()
    self.data_dir = test_util.real_data_dir()
    if self.data_dir is None:
      self.skipTest("no real data: set SENTZOO_DATA_DIR")

  def test_counts(self):
    pair_sets, missing = sts_data.load_sts_test_sets(self.data_dir)
    self.assertEqual(missing, ["STS2013.SMT"])
    counts = {p.name: len(p) for p in pair_sets}
    self.assertEqual(counts, {
        "STS2012.MSRpar": 750,
        "STS2012.MSRvid": 750,
        "STS2012.surprise.OnWN": 750,
        "STS2012.SMTeuroparl": 459,
        "STS2012.surprise.SMTnews": 399,
        "STS2013.FNWN": 189,
        "STS2013.OnWN": 561,
        "STS2013.headlines": 750,
        "STS2014.OnWN": 750,
        "STS2014.deft-forum": 450,
        "STS2014.deft-news": 300,
        "STS2014.headlines": 750,
        "STS2014.images": 750,
        "STS2014.tweet-news": 750,
        "STS2015.answers-forums": 375,
        "STS2015.answers-students": 750,
        "STS2015.belief": 375,
        "STS2015.headlines": 750,
        "STS2015.images": 750,
    })
    for p in pair_sets:
      self.assertTrue(np.all((p.scores >= 0) & (p.scores <= 5)), p.name)
      self.assertTrue(all(p.sentences1) and all(p.sentences2), p.name)
    self.assertLen(sts_data.load_sick_split(self.data_dir, "test"), 4927)
    self.assertLen(sts_data.load_sick_split(self.data_dir, "train"), 4500)
    self.assertLen(sts_data.load_sick_split(self.data_dir, "trial"), 500)
    self.assertLen(sts_data.load_stsb_split(self.data_dir, "dev"), 1500)
    self.assertLen(sts_data.load_stsb_split(self.data_dir, "train"), 5749)


if __name__ == "__main__":
  absltest.main()
