"""Tests for the pair loaders, on small fixtures in the official formats."""

import gzip
import json
import os

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.inputs import pair_datasets


class PairDatasetsTest(tf.test.TestCase):

  def _write(self, name, text, binary=False):
    path = os.path.join(self.get_temp_dir(), name)
    mode = "wb" if binary else "w"
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, mode) as f:
      f.write(text)
    return path

  def test_msrp_with_bom_and_crlf(self):
    path = self._write("msr.tsv", (
        "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"
        "1\t1\t2\tHe said \"hi\".\tHe said hello.\r\n"
        "0\t3\t4\tA cat.\tA dog.\r\n").encode("utf-8"), binary=True)
    pairs = pair_datasets.load_msrp(path)
    self.assertEqual(pairs.sentences_a, ['He said "hi".', "A cat."])
    self.assertEqual(pairs.sentences_b, ["He said hello.", "A dog."])
    self.assertAllEqual(pairs.labels, [1, 0])

  def test_msrp_malformed_line_names_file_and_line(self):
    path = self._write("bad.tsv", "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
                       "1\t1\t2\tonly four\n")
    with self.assertRaisesRegex(errors.DataFormatError, r"bad.tsv:2:"):
      pair_datasets.load_msrp(path)

  def test_sick_binary_drops_neutral(self):
    path = self._write("SICK.txt", (
        "pair_ID\tsentence_A\tsentence_B\trelatedness_score\t"
        "entailment_judgment\n"
        "1\tA b\tC d\t4.5\tNEUTRAL\n"
        "2\tE f\tG h\t3.0\tENTAILMENT\n"
        "3\tI j\tK l\t1.0\tCONTRADICTION\n"))
    pairs = pair_datasets.load_sick_entailment(path)
    self.assertEqual(pairs.sentences_a, ["E f", "I j"])
    self.assertAllEqual(pairs.labels, [1, 0])

  def test_sick_unknown_judgment(self):
    path = self._write("SICK.txt", "pair_ID\tsentence_A\tsentence_B\t"
                       "relatedness_score\tentailment_judgment\n"
                       "1\ta\tb\t1\tMAYBE\n")
    with self.assertRaisesRegex(errors.DataFormatError, r"SICK.txt:2:"):
      pair_datasets.load_sick_entailment(path)

  def test_header_lacking_a_column_names_file_and_line_1(self):
    self.assertEqual(pair_datasets.header_columns("f.tsv", ["a", "b"], ["b"]),
                     {"a": 0, "b": 1})
    path = self._write("SICK.txt", "pair_ID\tsentence_A\tsentence_B\n"
                       "1\ta\tb\n")
    with self.assertRaisesRegex(
        errors.DataFormatError,
        r"^.*SICK.txt:1: header lacks column 'entailment_judgment'$"):
      pair_datasets.load_sick_entailment(path)

  def _snli_records(self):
    return [
        {"gold_label": "entailment", "sentence1": "A man.",
         "sentence2": "A person."},
        {"gold_label": "neutral", "sentence1": "x", "sentence2": "y"},
        {"gold_label": "-", "sentence1": "x", "sentence2": "y"},
        {"gold_label": "contradiction", "sentence1": "A dog.",
         "sentence2": "No animal."},
    ]

  def test_snli_jsonl_and_gzip(self):
    text = "".join(json.dumps(r) + "\n" for r in self._snli_records())
    for name, data in (("snli_1.0_dev.jsonl", text),
                       ("snli_1.0_dev.jsonl.gz", text.encode())):
      path = self._write(name, data, binary=name.endswith(".gz"))
      pairs = pair_datasets.load_snli(path)
      self.assertEqual(pairs.sentences_a, ["A man.", "A dog."])
      self.assertEqual(pairs.sentences_b, ["A person.", "No animal."])
      self.assertAllEqual(pairs.labels, [1, 0])

  def test_snli_txt(self):
    header = ("gold_label\tsentence1_binary_parse\tsentence2_binary_parse\t"
              "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\t"
              "captionID\tpairID\tlabel1\n")
    lines = "".join(
        f"{r['gold_label']}\t( x )\t( y )\t(ROOT)\t(ROOT)\t{r['sentence1']}\t"
        f"{r['sentence2']}\tc\tp\t{r['gold_label']}\n"
        for r in self._snli_records())
    pairs = pair_datasets.load_snli(self._write("snli_1.0_dev.txt",
                                                header + lines))
    self.assertEqual(pairs.sentences_b, ["A person.", "No animal."])
    self.assertAllEqual(pairs.labels, [1, 0])

  def test_snli_malformed_json(self):
    path = self._write("s.jsonl", '{"gold_label": "entailment"}\n')
    with self.assertRaisesRegex(errors.DataFormatError, r"s.jsonl:1:"):
      pair_datasets.load_snli(path)

  def test_quora_bimpm(self):
    path = self._write("train.tsv", "1\thow do i learn ?\thow to learn ?\t7\n"
                       "0\twhat is x ?\twho is y ?\t8\n")
    pairs = pair_datasets.load_file("quora", path)
    self.assertEqual(pairs.sentences_a, ["how do i learn ?", "what is x ?"])
    self.assertAllEqual(pairs.labels, [1, 0])

  def test_quora_raw_with_quoted_newline(self):
    path = self._write("quora_duplicate_questions.tsv", (
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
        '0\t1\t2\t"What is ""x""?"\tWhat is x?\t1\n'
        '1\t3\t4\t"Two\nlines?"\tOne line?\t0\n'))
    pairs = pair_datasets.load_file("quora", path)
    self.assertEqual(pairs.sentences_a, ['What is "x"?', "Two\nlines?"])
    self.assertAllEqual(pairs.labels, [1, 0])

  def test_quora_bad_label(self):
    path = self._write("dev.tsv", "yes\ta\tb\t1\n")
    with self.assertRaisesRegex(errors.DataFormatError, r"dev.tsv:1:"):
      pair_datasets.load_quora_bimpm(path)

  def test_load_task_paths(self):
    files = pair_datasets.task_files("/d", "snli")
    self.assertEqual(files["dev"], "/d/snli_1.0/snli_1.0_dev.jsonl")
    with self.assertRaises(errors.UserError):
      pair_datasets.task_files("/d", "nope")
    with self.assertRaises(errors.DataDirError):
      pair_datasets.load_task("/nonexistent", "msrp")


class RealDataTest(tf.test.TestCase):
  """The shared copies of MSRP and SICK load with the published counts."""

  def setUp(self):
    super().setUp()
    self.data_dir = os.environ.get("SENTZOO_DATA_DIR", "")
    if not os.path.isdir(os.path.join(self.data_dir, "msrp")):
      self.skipTest("no $SENTZOO_DATA_DIR with msrp/ and sick2014/")

  def test_msrp_counts(self):
    sets = pair_datasets.load_task(self.data_dir, "msrp")
    self.assertEqual({k: len(v) for k, v in sets.items()},
                     {"train": 3576, "dev": 500, "test": 1725})
    self.assertFalse(sets["train"].sentences_a[0].startswith("\ufeff"))

  def test_sick_binary_counts(self):
    sets = pair_datasets.load_task(self.data_dir, "sick")
    self.assertEqual({k: len(v) for k, v in sets.items()},
                     {"train": 1299 + 665, "dev": 144 + 74,
                      "test": 1414 + 720})
    self.assertEqual(int(np.sum(sets["test"].labels)), 1414)


if __name__ == "__main__":
  tf.test.main()
