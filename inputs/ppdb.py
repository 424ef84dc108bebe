"""Paraphrase-pair loaders: PPDB release files, phrase-pair TSVs, PPDB 2.0 human labels, lexicons.

CHARAGRAM, PARAGRAM-PHRASE and their baselines (Wieting et al., EMNLP 2016)
train on paraphrase pairs from the Paraphrase Database (PPDB; Ganitkevitch,
Van Durme, Callison-Burch, NAACL 2013; PPDB 2.0: Pavlick et al., ACL 2015).
Every loader returns a list of `PhrasePair`. Formats:

  * official PPDB release (`ppdb-2.0-s-phrasal` etc., optionally gzipped):
    `LHS ||| phrase ||| paraphrase ||| features ||| alignment ||| entailment`
    (at least the first three fields; features are `Name=value` pairs, of
    which `PPDB2.0Score` is read as the pair's score when present).
  * a two-column TSV: `phrase<TAB>paraphrase` (further columns ignored), the
    format of Wieting's phrase training files.
  * PPDB 2.0 human labels (`ppdb-2.0-human-labels.*.tsv`): `mean_score
    <TAB> [LABEL] <TAB> phrase1 <TAB> phrase2 <TAB> ratings`.
  * a lexical paraphrase lexicon (`retrofitting-lexicon-ppdb-xl.txt.gz`):
    `word para1 para2 ...` per line, space separated; every (word, para_i) is
    a pair.

Files may be gzipped (by the `.gz` suffix). Malformed lines raise
`common.errors.DataFormatError` (path:line: message).
"""

import dataclasses
import gzip
import math
import random
from typing import Iterable, List, Optional

from sentzoo.common import errors


@dataclasses.dataclass(frozen=True)
class PhrasePair:
  """Two texts taken to be paraphrases, with an optional score."""
  phrase1: str
  phrase2: str
  score: float = math.nan


def _lines(path):
  """(line number, line without newline) of a UTF-8 file, gzipped or not."""
  opener = gzip.open if str(path).endswith(".gz") else open
  try:
    with opener(path, "rb") as f:
      for number, raw in enumerate(f, start=1):
        line = raw.decode("utf-8", errors="replace").rstrip("\n")
        yield number, line[:-1] if line.endswith("\r") else line
  except FileNotFoundError as e:
    raise errors.DataDirError(f"paraphrase file {path!r} does not exist") from e


def load_ppdb_release(path, min_score=None) -> List[PhrasePair]:
  """Loads an official PPDB release file; with `min_score`, only the pairs
  whose PPDB2.0Score feature is at least that (none without the feature)."""
  pairs = []
  for number, line in _lines(path):
    if not line.strip():
      continue
    fields = [f.strip() for f in line.split("|||")]
    if len(fields) < 3 or not fields[1] or not fields[2]:
      raise errors.DataFormatError(
          path, number, "expected 'LHS ||| phrase ||| paraphrase ||| "
          "features ...'")
    score = math.nan
    if len(fields) > 3:
      for feature in fields[3].split():
        name, _, value = feature.partition("=")
        if name == "PPDB2.0Score":
          try:
            score = float(value)
          except ValueError:
            raise errors.DataFormatError(
                path, number, f"PPDB2.0Score {value!r} is not a number")
    if min_score is not None and not score >= min_score:
      continue
    pairs.append(PhrasePair(fields[1], fields[2], score))
  return pairs


def load_pair_tsv(path) -> List[PhrasePair]:
  """Loads `phrase<TAB>paraphrase[<TAB>...]` lines (empty lines skipped)."""
  pairs = []
  for number, line in _lines(path):
    if not line.strip():
      continue
    fields = line.split("\t")
    if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
      raise errors.DataFormatError(
          path, number, "expected 'phrase<TAB>paraphrase'")
    pairs.append(PhrasePair(fields[0].strip(), fields[1].strip()))
  return pairs


def load_human_labels(path, min_score=None) -> List[PhrasePair]:
  """Loads a PPDB 2.0 human-labels TSV; with `min_score`, only the pairs
  whose mean human score (1-5) is at least that."""
  pairs = []
  for number, line in _lines(path):
    if not line.strip():
      continue
    fields = line.split("\t")
    if len(fields) < 4:
      raise errors.DataFormatError(
          path, number, f"expected 5 tab-separated columns (mean_score, "
          f"label, phrase1, phrase2, ratings), found {len(fields)}")
    try:
      score = float(fields[0])
    except ValueError:
      score = math.nan
    if not math.isfinite(score):
      raise errors.DataFormatError(
          path, number, f"mean score {fields[0]!r} is not a finite number")
    if min_score is not None and score < min_score:
      continue
    pairs.append(PhrasePair(fields[2].strip(), fields[3].strip(), score))
  return pairs


def load_lexicon(path) -> List[PhrasePair]:
  """Loads `word para1 para2 ...` lines as (word, para_i) pairs (a word
  without a paraphrase gives none)."""
  pairs = []
  for _, line in _lines(path):
    words = line.split()
    pairs.extend(PhrasePair(words[0], para) for para in words[1:])
  return pairs


def deduplicate(pairs: Iterable[PhrasePair]) -> List[PhrasePair]:
  """Drops repeated pairs (either order) and pairs of two equal texts."""
  seen, out = set(), []
  for pair in pairs:
    key = tuple(sorted((pair.phrase1, pair.phrase2)))
    if pair.phrase1 == pair.phrase2 or key in seen:
      continue
    seen.add(key)
    out.append(pair)
  return out


def subsample(pairs: List[PhrasePair], max_pairs: Optional[int], seed=0
              ) -> List[PhrasePair]:
  """At most `max_pairs` pairs, a seeded random subset in original order."""
  if not max_pairs or len(pairs) <= max_pairs:
    return list(pairs)
  keep = sorted(random.Random(seed).sample(range(len(pairs)), max_pairs))
  return [pairs[i] for i in keep]


FORMATS = {
    "ppdb": load_ppdb_release,
    "tsv": load_pair_tsv,
    "human_labels": load_human_labels,
    "lexicon": load_lexicon,
}


def load(path, file_format, min_score=None) -> List[PhrasePair]:
  """Loads `path` in one of FORMATS; `min_score` where the format has one."""
  if file_format not in FORMATS:
    raise errors.UserError(f"unknown paraphrase file format {file_format!r}; "
                           f"known: {', '.join(sorted(FORMATS))}")
  if file_format in ("ppdb", "human_labels"):
    return FORMATS[file_format](path, min_score=min_score)
  return FORMATS[file_format](path)
