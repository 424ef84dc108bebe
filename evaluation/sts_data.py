"""Loaders for sentence-similarity evaluation sets: SemEval STS, SICK, STSB.

Every loader returns an `inputs.scored_pairs.PairSet`: n sentence pairs with
a gold score each.
Formats (see the data directory's README.md):

  * SemEval STS 2012-2015 test sets:
    `<data_dir>/sts/STS20XX-test/STS.input.<set>.txt` (`sent1<TAB>sent2` per
    line) and `STS.gs.<set>.txt` (a gold score per line, aligned by line; an
    empty gold line means "not scored" and the pair is skipped). Files are
    decoded as UTF-8 with replacement of invalid bytes.
  * SICK 2014: `<data_dir>/sick2014/SICK_{train,trial,test_annotated}.txt`,
    TSV with a header naming sentence_A, sentence_B, relatedness_score.
  * STS Benchmark: `<data_dir>/sts/STSBenchmark/sts-{train,dev}.csv`, TSV
    without header: genre, file, year, id, score, sent1, sent2 (extra
    trailing columns are ignored).

Malformed lines raise `errors.DataFormatError` ("path:line: message", lines
counted from 1).
"""

import math
import os
from typing import Optional, Sequence

import numpy as np

from sentzoo.common import errors
from sentzoo.inputs import scored_pairs

# The 20 SemEval sets of the Siamese CBOW paper's Table 1 (Kenter et al.,
# 2016), in the table's order, as (year, set name in the file names).
STS_TEST_SETS = (
    (2012, "MSRpar"),
    (2012, "MSRvid"),
    (2012, "surprise.OnWN"),
    (2012, "SMTeuroparl"),
    (2012, "surprise.SMTnews"),
    (2013, "FNWN"),
    (2013, "OnWN"),
    (2013, "SMT"),
    (2013, "headlines"),
    (2014, "OnWN"),
    (2014, "deft-forum"),
    (2014, "deft-news"),
    (2014, "headlines"),
    (2014, "images"),
    (2014, "tweet-news"),
    (2015, "answers-forums"),
    (2015, "answers-students"),
    (2015, "belief"),
    (2015, "headlines"),
    (2015, "images"),
)

SICK_SPLITS = {
    "train": "SICK_train.txt",
    "trial": "SICK_trial.txt",
    "test": "SICK_test_annotated.txt",
}
STSB_SPLITS = {"train": "sts-train.csv", "dev": "sts-dev.csv"}
GROUPS = ("sts", "sick", "stsb")


# Display names of the SemEval sets, e.g. "STS2012.MSRpar".
STS_TEST_SET_NAMES = tuple(f"STS{y}.{s}" for y, s in STS_TEST_SETS)
_YEAR_OF_SET = {name: year for (year, _), name in zip(STS_TEST_SETS,
                                                      STS_TEST_SET_NAMES)}


def sts_year(name: str) -> Optional[int]:
  """Returns the year of a canonical STS set name, else None."""
  return _YEAR_OF_SET.get(name)


def _parse_score(text: str, path: str, line_number: int) -> float:
  try:
    value = float(text)
  except ValueError:
    value = math.nan
  if not math.isfinite(value):
    raise errors.DataFormatError(
        path, line_number, f"gold score {text!r} is not a finite number")
  return value


def load_sts_pair_files(input_path: str, gold_path: str, name: str
                        ) -> scored_pairs.PairSet:
  """Loads one SemEval STS set from its input and gold files.

  Args:
    input_path: `STS.input.<set>.txt`, `sent1<TAB>sent2` per line (further
      tab-separated columns are ignored).
    gold_path: `STS.gs.<set>.txt`, one score per line; an empty line skips
      its pair.
    name: the PairSet's name.

  Raises:
    errors.DataFormatError: an input line without a tab, a gold line that is
      not a number, or files of different line counts.
  """
  inputs = scored_pairs.read_lines(input_path)
  golds = scored_pairs.read_lines(gold_path)
  if len(inputs) != len(golds):
    if len(golds) < len(inputs):
      raise errors.DataFormatError(
          gold_path, len(golds) + 1,
          f"gold file ends after {len(golds)} lines but {input_path} has "
          f"{len(inputs)}")
    raise errors.DataFormatError(
        input_path, len(inputs) + 1,
        f"input file ends after {len(inputs)} lines but {gold_path} has "
        f"{len(golds)}")
  sentences1, sentences2, scores = [], [], []
  for i, (line, gold) in enumerate(zip(inputs, golds), start=1):
    fields = line.split("\t")
    if len(fields) < 2:
      raise errors.DataFormatError(
          input_path, i, "expected two tab-separated sentences, found no tab")
    gold = gold.strip()
    if not gold:
      continue  # Not scored (STS 2015).
    scores.append(_parse_score(gold, gold_path, i))
    sentences1.append(fields[0])
    sentences2.append(fields[1])
  return scored_pairs.PairSet(name, sentences1, sentences2,
                              np.array(scores, np.float64))


def sts_test_files(data_dir: str, year: int, set_name: str) -> tuple:
  """Returns (input_path, gold_path) of a SemEval test set."""
  folder = os.path.join(data_dir, "sts", f"STS{year}-test")
  return (os.path.join(folder, f"STS.input.{set_name}.txt"),
          os.path.join(folder, f"STS.gs.{set_name}.txt"))


def load_sts_test_sets(data_dir: str) -> tuple:
  """Loads the SemEval STS 2012-2015 test sets that are present.

  Returns:
    (pair_sets, missing): a list of PairSet in STS_TEST_SETS order, and the
    names of the sets whose input or gold file is absent from
    `<data_dir>/sts/STS20XX-test/`.

  Raises:
    errors.DataFormatError: a malformed file.
  """
  pair_sets, missing = [], []
  for (year, set_name), name in zip(STS_TEST_SETS, STS_TEST_SET_NAMES):
    input_path, gold_path = sts_test_files(data_dir, year, set_name)
    if not (os.path.isfile(input_path) and os.path.isfile(gold_path)):
      missing.append(name)
      continue
    pair_sets.append(load_sts_pair_files(input_path, gold_path, name))
  return pair_sets, missing


def load_sick(path: str, name: str = "SICK") -> scored_pairs.PairSet:
  """Loads a SICK file: TSV, header with sentence_A, sentence_B, relatedness_score.

  Raises:
    errors.DataFormatError: a missing header column, a short line or a
      non-numeric score.
  """
  lines = scored_pairs.read_lines(path)
  if not lines:
    raise errors.DataFormatError(path, 1, "empty file, expected a header")
  header = [h.strip().lstrip("\ufeff") for h in lines[0].split("\t")]
  columns = {}
  for wanted in ("sentence_A", "sentence_B", "relatedness_score"):
    if wanted not in header:
      raise errors.DataFormatError(
          path, 1, f"header has no {wanted!r} column (has {header})")
    columns[wanted] = header.index(wanted)
  need = max(columns.values()) + 1
  sentences1, sentences2, scores = [], [], []
  for i, line in enumerate(lines[1:], start=2):
    if not line.strip():
      continue
    fields = line.split("\t")
    if len(fields) < need:
      raise errors.DataFormatError(
          path, i, f"expected at least {need} tab-separated columns, "
          f"found {len(fields)}")
    sentences1.append(fields[columns["sentence_A"]])
    sentences2.append(fields[columns["sentence_B"]])
    scores.append(
        _parse_score(fields[columns["relatedness_score"]].strip(), path, i))
  return scored_pairs.PairSet(name, sentences1, sentences2,
                              np.array(scores, np.float64))


def load_sick_split(data_dir: str, split: str = "test"
                    ) -> scored_pairs.PairSet:
  """Loads SICK 2014 `split` ("train", "trial" or "test") as "SICK.<split>".

  Raises:
    errors.DataDirError: the file is not in `<data_dir>/sick2014/`.
  """
  if split not in SICK_SPLITS:
    raise ValueError(f"unknown SICK split {split!r}; known: "
                     f"{sorted(SICK_SPLITS)}")
  path = os.path.join(data_dir, "sick2014", SICK_SPLITS[split])
  if not os.path.isfile(path):
    raise errors.DataDirError(f"SICK {split} file {path!r} does not exist")
  return load_sick(path, f"SICK.{split}")


def load_stsb(path: str, name: str = "STSB") -> scored_pairs.PairSet:
  """Loads an STS Benchmark file (TSV: genre, file, year, id, score, s1, s2).

  Columns after the 7th are ignored. Quotes are not special.

  Raises:
    errors.DataFormatError: a line with fewer than 7 columns or a
      non-numeric score.
  """
  sentences1, sentences2, scores = [], [], []
  for i, line in enumerate(scored_pairs.read_lines(path), start=1):
    fields = line.split("\t")
    if len(fields) < 7:
      raise errors.DataFormatError(
          path, i, f"expected 7 tab-separated columns, found {len(fields)}")
    scores.append(_parse_score(fields[4].strip(), path, i))
    sentences1.append(fields[5])
    sentences2.append(fields[6])
  return scored_pairs.PairSet(name, sentences1, sentences2,
                              np.array(scores, np.float64))


def load_stsb_split(data_dir: str, split: str = "dev"
                    ) -> scored_pairs.PairSet:
  """Loads STS Benchmark `split` ("train" or "dev") as "STSB.<split>".

  Raises:
    errors.DataDirError: the file is not in `<data_dir>/sts/STSBenchmark/`.
  """
  if split not in STSB_SPLITS:
    raise ValueError(f"unknown STSB split {split!r}; known: "
                     f"{sorted(STSB_SPLITS)}")
  path = os.path.join(data_dir, "sts", "STSBenchmark", STSB_SPLITS[split])
  if not os.path.isfile(path):
    raise errors.DataDirError(f"STS Benchmark {split} file {path!r} does not "
                              "exist")
  return load_stsb(path, f"STSB.{split}")


def load_eval_sets(data_dir: str, groups: Sequence[str] = GROUPS) -> tuple:
  """Loads the evaluation sets of the given groups.

  Args:
    data_dir: the data directory.
    groups: any of "sts" (the 20 SemEval 2012-2015 test sets), "sick"
      (SICK.test) and "stsb" (STSB.dev).

  Returns:
    (pair_sets, missing): PairSets in table order and the names of the sets
    whose files are absent.

  Raises:
    ValueError: an unknown group.
    errors.DataFormatError: a malformed file.
  """
  unknown = [g for g in groups if g not in GROUPS]
  if unknown:
    raise ValueError(f"unknown set groups {unknown}; known: {list(GROUPS)}")
  pair_sets, missing = [], []
  if "sts" in groups:
    sts_sets, sts_missing = load_sts_test_sets(data_dir)
    pair_sets.extend(sts_sets)
    missing.extend(sts_missing)
  for group, loader, split, name in (("sick", load_sick_split, "test",
                                      "SICK.test"),
                                     ("stsb", load_stsb_split, "dev",
                                      "STSB.dev")):
    if group in groups:
      try:
        pair_sets.append(loader(data_dir, split))
      except errors.DataDirError:
        missing.append(name)
  return pair_sets, missing
