"""Sentence pairs with graded gold scores, and the line reader of their files.

What every sentence-similarity reader returns (`evaluation.sts_data`'s and
`inputs.twitter_pit`'s, which trainers use too: inputs never imports
evaluation). Pairs with binary labels are `inputs.pair_datasets.PairSet`.
"""

import dataclasses

import numpy as np


@dataclasses.dataclass
class PairSet:
  """n sentence pairs with gold similarity scores (float64 [n]); `name`
  e.g. "STS2012.MSRpar", "STSB.dev"."""
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
  """The lines of a UTF-8 file (invalid bytes replaced), split on "\\n" only
  (str.splitlines' other separators occur inside sentences), without a
  trailing "\\r"."""
  with open(path, "rb") as f:
    text = f.read().decode("utf-8", errors="replace")
  lines = text.split("\n")
  if lines and lines[-1] == "":
    lines.pop()
  return [line[:-1] if line.endswith("\r") else line for line in lines]
