"""Sentence pairs with graded gold scores, and the line reader of their files.

A `PairSet` is what every sentence-similarity reader returns: the SemEval STS,
SICK and STS Benchmark readers of `evaluation.sts_data`, and the Twitter PIT
reader of `inputs.twitter_pit` (which trainers use too, so it lives in
`inputs/`, below `evaluation/`: inputs never imports evaluation).
`evaluation.sts.evaluate_pair_sets` scores any of them.

(Pairs with binary match labels for training classifiers are
`inputs.pair_datasets.PairSet`.)
"""

import dataclasses

import numpy as np


@dataclasses.dataclass
class PairSet:
  """n sentence pairs with gold similarity scores.

  Attributes:
    name: e.g. "STS2012.MSRpar", "SICK.test", "STSB.dev".
    sentences1: n first sentences.
    sentences2: n second sentences.
    scores: np.ndarray float64 [n], the gold scores.
  """
  name: str
  sentences1: list
  sentences2: list
  scores: np.ndarray

  def __post_init__(self):
    self.scores = np.asarray(self.scores, dtype=np.float64).reshape([-1])
    if not len(self.sentences1) == len(self.sentences2) == len(self.scores):
      raise ValueError(
          f"PairSet {self.name}: {len(self.sentences1)} / "
          f"{len(self.sentences2)} sentences and {len(self.scores)} scores")

  def __len__(self):
    return len(self.scores)


def read_lines(path: str) -> list:
  """Returns the lines of a file (UTF-8, invalid bytes replaced).

  Lines are split on "\\n" only (not on the other separators that
  str.splitlines knows, which may occur inside sentences); a trailing "\\r"
  is removed; the empty string after a final newline is not a line.
  """
  with open(path, "rb") as f:
    text = f.read().decode("utf-8", errors="replace")
  lines = text.split("\n")
  if lines and lines[-1] == "":
    lines.pop()
  return [line[:-1] if line.endswith("\r") else line for line in lines]
