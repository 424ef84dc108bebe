"""The SemEval-2015 Task 1 (PIT) Twitter test set as an STS-style pair set.

Xu, Callison-Burch, Dolan, "SemEval-2015 Task 1: Paraphrase and Semantic
Similarity in Twitter (PIT)", SemEval 2015. The CHARAGRAM paper's Table 1
(Wieting et al., EMNLP 2016) reports Pearson's r x 100 of cosine similarity
with the graded expert score on this test set ("2015 Twitter").

Format (`<data_dir>/twitter_pit2015/test.data`): tab-separated lines of 7
columns Topic_Id, Topic_Name, Sent_1, Sent_2, Label, Sent_1_tag, Sent_2_tag,
where Label is the expert score 0 (no relation) to 5 (equivalent). The
optional `test.label` (`true|false|----<TAB>score`, score = Label / 5) is
checked against it when present. All 972 pairs are kept (the task kept the
"debatable" ones for its similarity evaluation).
"""

import os

import numpy as np

from sentzoo.common import errors
from sentzoo.inputs import scored_pairs

SET_NAME = "Twitter2015.test"
FOLDER = "twitter_pit2015"


def load_test_data(path, label_path=None) -> scored_pairs.PairSet:
  """Loads a PIT `test.data` file (and checks `test.label` if given).

  Raises:
    errors.DataFormatError: a line with fewer than 5 columns, a label that is
      not an integer 0-5, or a label file that disagrees.
  """
  sentences1, sentences2, scores = [], [], []
  for number, line in enumerate(scored_pairs.read_lines(path), start=1):
    if not line.strip():
      continue
    fields = line.split("\t")
    if len(fields) < 5:
      raise errors.DataFormatError(
          path, number, f"expected 7 tab-separated columns (Topic_Id, "
          f"Topic_Name, Sent_1, Sent_2, Label, ...), found {len(fields)}")
    label = fields[4].strip()
    if not (label.isdigit() and 0 <= int(label) <= 5):
      raise errors.DataFormatError(
          path, number, f"test label {label!r} is not an integer 0-5 (a "
          "train/dev file has '(n, m)' vote labels instead)")
    sentences1.append(fields[2])
    sentences2.append(fields[3])
    scores.append(float(label))
  if label_path is not None:
    graded = []
    for number, line in enumerate(scored_pairs.read_lines(label_path),
                                  start=1):
      fields = line.split("\t")
      try:
        graded.append(float(fields[1]))
      except (IndexError, ValueError):
        raise errors.DataFormatError(label_path, number,
                                     "expected 'label<TAB>score'")
    if len(graded) != len(scores) or not np.allclose(
        np.array(graded) * 5.0, scores, atol=1e-3):
      raise errors.DataFormatError(
          label_path, 1, f"does not match {path} ({len(graded)} scores for "
          f"{len(scores)} pairs, or different values)")
  return scored_pairs.PairSet(SET_NAME, sentences1, sentences2,
                              np.array(scores, np.float64))


def load_test_split(data_dir) -> scored_pairs.PairSet:
  """Loads `<data_dir>/twitter_pit2015/test.data` as "Twitter2015.test".

  Raises:
    errors.DataDirError: the file is absent.
  """
  folder = os.path.join(data_dir, FOLDER)
  path = os.path.join(folder, "test.data")
  if not os.path.isfile(path):
    raise errors.DataDirError(f"Twitter PIT 2015 test file {path!r} does not "
                              "exist")
  label_path = os.path.join(folder, "test.label")
  return load_test_data(
      path, label_path if os.path.isfile(label_path) else None)
