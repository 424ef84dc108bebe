"""Checks lab.reports.paper_numbers against ../shared/MODELS.md and the papers.

Every figure that ../shared/MODELS.md quotes for a system must equal the
generator's number, and every number in lab/reports/paper_numbers.py must
equal the one printed in the paper's table (../shared/papers/*.txt). Skipped
with a reason where ../shared is not present (a checkout without the
project's shared folder).
"""

import os
import re

import tensorflow as tf

from lab.reports import paper_numbers


def _shared_dir():
  """<repo>/../shared, or the parent of $SENTZOO_DATA_DIR; None if absent."""
  candidates = []
  data_dir = os.environ.get("SENTZOO_DATA_DIR")
  if data_dir:
    candidates.append(os.path.dirname(os.path.abspath(data_dir)))
  candidates.append(os.path.join(
      os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "..",
      "shared"))
  for path in candidates:
    if os.path.isfile(os.path.join(path, "MODELS.md")):
      return path
  return None


def _read(test_case, *parts):
  shared = _shared_dir()
  if shared is None:
    test_case.skipTest("../shared (MODELS.md and papers/) is not available: "
                       "the check of the paper numbers needs it")
  path = os.path.join(shared, *parts)
  if not os.path.isfile(path):
    test_case.skipTest(f"{path} is not available")
  with open(path, encoding="utf-8") as f:
    return f.read()


def _section(text, heading_start):
  """The text of the MODELS.md section whose heading starts as given."""
  match = re.search(r"^## " + re.escape(heading_start) + r".*?(?=^## |\Z)",
                    text, re.M | re.S)
  assert match, f"no section {heading_start!r} in MODELS.md"
  return " ".join(match.group(0).split())  # lines re-wrapped as one


# Supplement Table 1's row labels, as the paper's text prints them.
CHARAGRAM_ROW_LABELS = {
    "STS2012.MSRpar": "MSRpar", "STS2012.MSRvid": "MSRvid",
    "STS2012.SMTeuroparl": "SMT-eur", "STS2012.surprise.OnWN": "OnWN",
    "STS2012.surprise.SMTnews": "SMT-news",
    "STS2012.mean": "STS 2012 Average", "STS2013.headlines": "headline",
    "STS2013.OnWN": "OnWN", "STS2013.FNWN": "FNWN", "STS2013.SMT": "SMT",
    "STS2013.mean": "STS 2013 Average", "STS2014.deft-forum": "deft forum",
    "STS2014.deft-news": "deft news", "STS2014.headlines": "headline",
    "STS2014.images": "images", "STS2014.OnWN": "OnWN",
    "STS2014.tweet-news": "tweet news", "STS2014.mean": "STS 2014 Average",
    "STS2015.answers-forums": "answers-forums",
    "STS2015.answers-students": "answers-students",
    "STS2015.belief": "belief", "STS2015.headlines": "headline",
    "STS2015.images": "images", "STS2015.mean": "STS 2015 Average",
    "SICK.test": "2014 SICK", "Twitter2015": "2015 Twitter",
    "Average": "Average",
}


class ModelsMdTest(tf.test.TestCase):
  """Every system figure quoted in MODELS.md equals the generator's."""

  def test_siamese_cbow(self):
    section = _section(_read(self, "MODELS.md"), "1. Siamese CBOW")
    found = re.findall(r"(\d{4}) ([\w.-]+) \.(\d{4})", section)
    self.assertGreaterEqual(len(found), 3, "MODELS.md's figures not found")
    column = paper_numbers.SIAMESE_CBOW_COLUMNS.index("Siamese CBOW")
    for year, name, digits in found:
      row = paper_numbers.SIAMESE_CBOW_TABLE1[f"STS{year}.{name}"]
      self.assertAlmostEqual(row[column][0], int(digits) / 100, places=6,
                             msg=f"{year} {name}")

  def test_charagram(self):
    section = _section(_read(self, "MODELS.md"), "3. CHARAGRAM")
    match = re.search(
        r"CHARAGRAM-PHRASE averages ([\d.]+) \(STS 2012\), ([\d.]+) \(2013\), "
        r"([\d.]+) \(2014\), ([\d.]+) \(2015\), ([\d.]+) \(SICK\), "
        r"([\d.]+) \(Twitter 2015\), overall ([\d.]+); PARAGRAM-PHRASE "
        r"(\d+\.\d); charCNN (\d+\.\d); charLSTM (\d+\.\d)", section)
    self.assertIsNotNone(match, "MODELS.md's CHARAGRAM figures not found")
    values = [float(v) for v in match.groups()]
    table = paper_numbers.CHARAGRAM_TABLE1
    phrase = paper_numbers.CHARAGRAM_COLUMNS.index("CHARAGRAM-PHRASE")
    keys = ("STS2012.mean", "STS2013.mean", "STS2014.mean", "STS2015.mean",
            "SICK.test", "Twitter2015", "Average")
    for key, value in zip(keys, values[:7]):
      self.assertEqual(table[key][phrase], value, key)
    for column, value in zip(("PARAGRAM-PHRASE", "charCNN", "charLSTM"),
                             values[7:]):
      i = paper_numbers.CHARAGRAM_COLUMNS.index(column)
      self.assertEqual(table["Average"][i], value, column)

  def test_sent2vec(self):
    section = _section(_read(self, "MODELS.md"), "4. Sent2Vec")
    match = re.search(r"STS 2014 average Spearman/Pearson \.(\d+)/\.(\d+) "
                      r"\(uni\), SICK \.(\d+)/\.(\d+)", section)
    self.assertIsNotNone(match, "MODELS.md's Sent2Vec STS figures not found")
    uni = paper_numbers.SENT2VEC_TABLE2["Sent2Vec uni."]
    self.assertEqual(uni["Average"], (float(match[1]), float(match[2])))
    self.assertEqual(uni["SICK"], (float(match[3]), float(match[4])))
    match = re.search(r"supervised average ([\d.]+) \(uni\) / ([\d.]+) "
                      r"\(uni\+bi\)", section)
    self.assertIsNotNone(match, "MODELS.md's supervised averages not found")
    table = paper_numbers.SENT2VEC_TABLE1
    self.assertEqual(table["Sent2Vec uni."]["Average"], float(match[1]))
    self.assertEqual(table["Sent2Vec uni. + bi."]["Average"], float(match[2]))


class PapersTest(tf.test.TestCase):
  """Every number in paper_numbers equals the paper's printed table."""

  def test_siamese_cbow_table1(self):
    text = _read(self, "papers", "siamese_cbow_kenter2016.txt")
    start = text.index("Dataset w2v skipgram w2v CBOW skip-thought")
    value = r"\.(\d{4})\u2020? \(\.(\d{4})\)"
    rows = re.findall(r"^(\S+) " + " ".join([value] * 4) + r"\s*$",
                      text[start:], re.M)[:20]
    self.assertLen(rows, 20)
    for name, row in zip(paper_numbers.SIAMESE_CBOW_TABLE1, rows):
      expected = paper_numbers.SIAMESE_CBOW_TABLE1[name]
      got = tuple((int(row[1 + 2 * i]) / 100, int(row[2 + 2 * i]) / 100)
                  for i in range(4))
      self.assertAllClose(got, expected, atol=1e-9, msg=f"{name} ({row[0]})")
      self.assertTrue(name.endswith(row[0].replace("answ-", "answers-"))
                      or row[0] in name, f"{name} vs paper row {row[0]}")

  def test_charagram_table1(self):
    text = _read(self, "papers", "charagram_wieting2016_supplement.txt")
    start = text.index("Dataset 50% 75% Max charCNN")
    end = text.index("Table 1:", start)
    rows = re.findall(r"^(.+?) ((?:-?\d+\.\d ?){7})$", text[start:end], re.M)
    self.assertLen(rows, len(paper_numbers.CHARAGRAM_TABLE1))
    for (key, expected), (label, numbers) in zip(
        paper_numbers.CHARAGRAM_TABLE1.items(), rows):
      self.assertEqual(label, CHARAGRAM_ROW_LABELS[key])
      self.assertEqual(tuple(float(v) for v in numbers.split()[3:]),
                       expected, key)

  def test_sent2vec_table1(self):
    text = _read(self, "papers", "sent2vec_pagliardini2018.txt")
    text = text[:text.index("Table 1: Comparison")]
    for model, row in paper_numbers.SENT2VEC_TABLE1.items():
      match = re.search(r"(?:^|\s)" + re.escape(model) +
                        r" (\d+\.\d) / (\d+\.\d)((?: \d+\.\d){6})", text)
      self.assertIsNotNone(match, model)
      got = [float(match[1]), float(match[2])] + [
          float(v) for v in match[3].split()]
      self.assertEqual(
          got, [row[t] for t in paper_numbers.SENT2VEC_TABLE1_TASKS], model)

  def test_sent2vec_table2(self):
    text = _read(self, "papers", "sent2vec_pagliardini2018.txt")
    start = text.index("Model News Forum WordNet Twitter Images Headlines")
    text = text[start:text.index("Table 2:", start)]
    for model, row in paper_numbers.SENT2VEC_TABLE2.items():
      label = "Siamese C-BOW4" if model == "Siamese C-BOW" else model
      match = re.search(r"^" + re.escape(label) + r" (.*)$", text, re.M)
      self.assertIsNotNone(match, model)
      cells = match[1].split()
      for name, cell in zip(paper_numbers.SENT2VEC_TABLE2_SETS, cells):
        expected = row[name]
        if expected is None:
          self.assertEqual(cell, "\u2212", f"{model} {name}")
          continue
        spearman, pearson = cell.split("/")
        self.assertEqual((round(float(spearman) * 100, 6),
                          round(float(pearson) * 100, 6)),
                         expected, f"{model} {name}")

  def test_hybrid_siamese_tables(self):
    text = _read(self, "papers", "hybrid_siamese_contrastive_logistic.txt")
    printed = set(re.findall(r"\b\d{2}\.\d{1,2}\b", text))
    for table in paper_numbers.HYBRID_SIAMESE_TABLES.values():
      for values in table.values():
        for value in values:
          self.assertTrue(f"{value:.2f}" in printed or f"{value:.1f}"
                          in printed, value)

  def test_references_are_pearson_then_spearman(self):
    ref = paper_numbers.sent2vec_sts_reference("Sent2Vec uni.")
    self.assertEqual(ref["STS2014.OnWN"], (72.0, 75.0))  # WordNet .75/.72
    self.assertNotIn("SICK.test", ref)
    siamese = paper_numbers.siamese_cbow_reference()
    self.assertEqual(siamese["STS2014.tweet-news"], (73.15, 71.28))
    charagram = paper_numbers.charagram_reference()
    self.assertEqual(charagram["STS2014.mean"], 74.7)
    self.assertNotIn("Average", charagram)


if __name__ == "__main__":
  tf.test.main()
