"""Paraphrase pairs from the TRAINING splits of labelled pair tasks, never a test split.

An optional extra source of CHARAGRAM-PHRASE training pairs
(`trainers.charagram --task_paraphrases=...`), beside PPDB. What counts as a
paraphrase in each source:

  * msrp: `msrp/msr-para-train.tsv`, label 1 (the val file is the hybrid
    matcher's dev split and the test file its test split: neither is used).
  * sick: `sick2014/SICK_train.txt`, relatedness_score >= 4.0 (relatedness,
    not entailment: an entailed hypothesis is often a generalisation, "a
    man plays a guitar" -> "a man plays an instrument", not a paraphrase;
    trial and test are not used).
  * sts2012: `sts/STS2012-train/STS.input.*.txt`, gold score >= 4.0 (MSRpar,
    MSRvid, SMTeuroparl train).
  * twitter: `twitter_pit2015/dev.data`, vote label (n, m) with n >= 3 of 5
    annotators saying paraphrase (Xu et al. 2015's threshold; n = 2 is
    "debatable" and left out). The PIT test file is not used.

Leakage guard. `test_split_keys` collects every pair of every test split
under the data directory (STS 2012-2015 test, SICK test, MSRP test, Twitter
PIT test; all pairs whatever their gold score), and `load_training_
paraphrases` drops any training pair whose normalised key (`pair_key`:
lower-cased alphanumeric tokens of both texts, in either order) is among
them. STS 2012 MSRpar was sampled from the whole MSR corpus, so an MSRP
training pair can be an STS test pair: such pairs are dropped, not kept.
"""

import glob
import os
import re

from sentzoo.common import errors
from sentzoo.inputs import pair_datasets
from sentzoo.inputs import ppdb
from sentzoo.inputs import scored_pairs
from sentzoo.inputs import twitter_pit

SOURCES = ("msrp", "sick", "sts2012", "twitter")
SICK_MIN_RELATEDNESS = 4.0
STS_MIN_SCORE = 4.0
TWITTER_MIN_VOTES = 3

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def normalize(text):
  """Lower-cased alphanumeric tokens joined by one space."""
  return " ".join(_TOKEN.findall(text.lower()))


def pair_key(text1, text2):
  """The order-free key of a pair of normalised texts."""
  return tuple(sorted((normalize(text1), normalize(text2))))


def _sick_rows(path):
  """(sentence_A, sentence_B, relatedness) of a SICK file with a header."""
  columns = None
  for number, line in enumerate(scored_pairs.read_lines(path), start=1):
    fields = line.split("\t")
    if columns is None:
      columns = pair_datasets.header_columns(
          path, fields, ("sentence_A", "sentence_B", "relatedness_score"))
      continue
    if not line.strip():
      continue
    try:
      score = float(fields[columns["relatedness_score"]])
    except (IndexError, ValueError):
      raise errors.DataFormatError(path, number, "no relatedness score")
    yield fields[columns["sentence_A"]], fields[columns["sentence_B"]], score


def _sts_rows(input_path, with_scores=True):
  """(s1, s2, score or None) of an STS.input file and its STS.gs file."""
  lines = scored_pairs.read_lines(input_path)
  gold = None
  if with_scores:
    gold_path = input_path.replace("STS.input.", "STS.gs.")
    gold = scored_pairs.read_lines(gold_path)
    if len(gold) < len(lines):
      raise errors.DataFormatError(gold_path, len(gold),
                                   f"fewer scores than {input_path} has pairs")
  for number, line in enumerate(lines, start=1):
    fields = line.split("\t")
    if len(fields) < 2:
      raise errors.DataFormatError(input_path, number,
                                   "expected 'sent1<TAB>sent2'")
    score = None
    if gold is not None and gold[number - 1].strip():
      score = float(gold[number - 1])
    yield fields[0], fields[1], score


def _twitter_rows(path):
  """(s1, s2, paraphrase votes) of a PIT train/dev file."""
  for number, line in enumerate(scored_pairs.read_lines(path), start=1):
    if not line.strip():
      continue
    fields = line.split("\t")
    match = re.fullmatch(r"\((\d), *(\d)\)", fields[4].strip()) if len(
        fields) >= 5 else None
    if not match:
      raise errors.DataFormatError(path, number, "expected a '(n, m)' vote "
                                   "label in column 5")
    yield fields[2], fields[3], int(match.group(1))


def _require(path):
  if not os.path.exists(path):
    raise errors.DataDirError(f"data file {path!r} does not exist")
  return path


def load_source(data_dir, source):
  """The paraphrase pairs of one training source (before the test guard)."""
  if source == "msrp":
    pairs = pair_datasets.load_msrp(
        os.path.join(data_dir, "msrp", "msr-para-train.tsv"))
    return [ppdb.PhrasePair(a, b) for a, b, y in zip(
        pairs.sentences_a, pairs.sentences_b, pairs.labels) if y == 1]
  if source == "sick":
    path = _require(os.path.join(data_dir, "sick2014", "SICK_train.txt"))
    return [ppdb.PhrasePair(a, b, s) for a, b, s in _sick_rows(path)
            if s >= SICK_MIN_RELATEDNESS]
  if source == "sts2012":
    paths = sorted(glob.glob(os.path.join(
        data_dir, "sts", "STS2012-train", "STS.input.*.txt")))
    if not paths:
      raise errors.DataDirError(
          f"no STS.input.*.txt under {data_dir}/sts/STS2012-train")
    return [ppdb.PhrasePair(a, b, s) for path in paths
            for a, b, s in _sts_rows(path)
            if s is not None and s >= STS_MIN_SCORE]
  if source == "twitter":
    path = _require(os.path.join(data_dir, twitter_pit.FOLDER, "dev.data"))
    return [ppdb.PhrasePair(a, b, float(v)) for a, b, v in _twitter_rows(path)
            if v >= TWITTER_MIN_VOTES]
  raise errors.UserError(f"unknown paraphrase source {source!r}; known: "
                         f"{', '.join(SOURCES)}")


def test_split_keys(data_dir):
  """The `pair_key`s of every test-split pair under data_dir."""
  pairs = []
  for path in sorted(glob.glob(os.path.join(data_dir, "sts", "STS20*-test",
                                            "STS.input.*.txt"))):
    pairs += [(a, b) for a, b, _ in _sts_rows(path, with_scores=False)]
  sick = os.path.join(data_dir, "sick2014", "SICK_test_annotated.txt")
  if os.path.exists(sick):
    pairs += [(a, b) for a, b, _ in _sick_rows(sick)]
  msrp = os.path.join(data_dir, "msrp", "msr-para-test.tsv")
  if os.path.exists(msrp):
    msrp_pairs = pair_datasets.load_msrp(msrp)
    pairs += zip(msrp_pairs.sentences_a, msrp_pairs.sentences_b)
  try:
    pit = twitter_pit.load_test_split(data_dir)
    pairs += zip(pit.sentences1, pit.sentences2)
  except errors.DataDirError:
    pass
  return {pair_key(a, b) for a, b in pairs}


def load_training_paraphrases(data_dir, sources=SOURCES):
  """(pairs, counts): training paraphrases of `sources`, no test-split pair.

  Returns:
    pairs: PhrasePairs, in source order, exact duplicates kept (the
      trainer deduplicates all its pairs together).
    counts: {source: {"kept": n, "dropped_as_test_pairs": m}}.
  """
  test_keys = test_split_keys(data_dir)
  pairs, counts = [], {}
  for source in sources:
    kept = dropped = 0
    for pair in load_source(data_dir, source):
      if pair_key(pair.phrase1, pair.phrase2) in test_keys:
        dropped += 1
        continue
      pairs.append(pair)
      kept += 1
    counts[source] = {"kept": kept, "dropped_as_test_pairs": dropped}
  return pairs, counts
