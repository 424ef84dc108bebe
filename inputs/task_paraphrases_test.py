"""Tests for inputs.task_paraphrases: no test-split pair is ever a training pair.

On fixtures written here; with SENTZOO_DATA_DIR set, also on the real data.
"""

import os
import tempfile

from absl.testing import absltest

from sentzoo.inputs import task_paraphrases


def _write(path, lines):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")


def _fixture(root):
  """A data directory where some training paraphrases are test pairs."""
  msrp = ["\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String"]
  _write(f"{root}/msrp/msr-para-train.tsv", msrp + [
      "1\t1\t2\tThe cat sat.\tA cat was sitting.",
      "0\t3\t4\tDogs bark.\tCats meow.",
      "1\t5\t6\tShares rose 5%.\tThe stock went up five percent."])
  _write(f"{root}/msrp/msr-para-test.tsv", msrp + [
      "1\t7\t8\tthe CAT sat\ta cat, was sitting!"])  # = train pair 1
  sick = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"
  _write(f"{root}/sick2014/SICK_train.txt", [
      sick, "1\tA man plays.\tA man is playing.\t4.6\tENTAILMENT",
      "2\tA man plays.\tA woman sings.\t2.1\tNEUTRAL",
      "3\tKids run.\tChildren are running.\t4.0\tENTAILMENT"])
  _write(f"{root}/sick2014/SICK_test_annotated.txt", [
      sick, "9\tChildren are running.\tKids run.\t4.4\tENTAILMENT"])
  _write(f"{root}/sts/STS2012-train/STS.input.MSRvid.txt", [
      "A girl dances.\tA girl is dancing.", "A dog runs.\tA man eats."])
  _write(f"{root}/sts/STS2012-train/STS.gs.MSRvid.txt", ["4.8", "0.2"])
  _write(f"{root}/sts/STS2014-test/STS.input.images.txt", [
      "Shares rose 5 %.\tThe stock went up five percent."])
  _write(f"{root}/twitter_pit2015/dev.data", [
      "1\tT\tgreat game tonight\twhat a game tonight\t(4, 1)\tx\ty",
      "1\tT\tgreat game tonight\tgame was ok\t(2, 3)\tx\ty",
      "1\tT\tgreat game tonight\ti hate mondays\t(0, 5)\tx\ty"])
  _write(f"{root}/twitter_pit2015/test.data", [
      "2\tU\tnew phone out\tthe new phone is out\t5\tx\ty"])


class TaskParaphrasesTest(absltest.TestCase):

  def _check_no_test_pair(self, data_dir):
    pairs, counts = task_paraphrases.load_training_paraphrases(data_dir)
    test_keys = task_paraphrases.test_split_keys(data_dir)
    self.assertNotEmpty(test_keys)
    leaked = [p for p in pairs
              if task_paraphrases.pair_key(p.phrase1, p.phrase2) in test_keys]
    self.assertEmpty(leaked)
    return pairs, counts

  def test_fixture_sources_thresholds_and_guard(self):
    root = tempfile.mkdtemp()
    _fixture(root)
    pairs, counts = self._check_no_test_pair(root)
    self.assertEqual(
        [(p.phrase1, p.phrase2) for p in pairs],
        [("A man plays.", "A man is playing."),
         ("A girl dances.", "A girl is dancing."),
         ("great game tonight", "what a game tonight")])
    self.assertEqual(counts, {
        "msrp": {"kept": 0, "dropped_as_test_pairs": 2},
        "sick": {"kept": 1, "dropped_as_test_pairs": 1},
        "sts2012": {"kept": 1, "dropped_as_test_pairs": 0},
        "twitter": {"kept": 1, "dropped_as_test_pairs": 0}})

  def test_normalisation(self):
    self.assertEqual(task_paraphrases.pair_key("B b!", " a,A "),
                     ("a a", "b b"))
    self.assertEqual(task_paraphrases.normalize("It's 5 %"), "it s 5")

  def test_unknown_source_and_missing_file(self):
    root = tempfile.mkdtemp()
    with self.assertRaisesRegex(Exception, "unknown paraphrase source"):
      task_paraphrases.load_source(root, "quora")
    with self.assertRaisesRegex(Exception, "does not exist"):
      task_paraphrases.load_training_paraphrases(root, ["sick"])

  def test_real_data_when_available(self):
    data_dir = os.environ.get("SENTZOO_DATA_DIR")
    if not data_dir or not os.path.isdir(os.path.join(data_dir, "msrp")):
      self.skipTest("SENTZOO_DATA_DIR not set")
    pairs, counts = self._check_no_test_pair(data_dir)
    self.assertGreater(len(pairs), 1000)
    self.assertEqual(set(counts), set(task_paraphrases.SOURCES))


if __name__ == "__main__":
  absltest.main()
