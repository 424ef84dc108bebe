"""Loaders for the SentEval transfer tasks: MR, CR, SUBJ, MPQA, TREC, MSRP.

Formats are the original distributions' (see the data directory's README.md):

  * MR, CR, SUBJ, MPQA (binary classification, evaluated by 10-fold cross
    validation): `<data_dir>/senteval/<TASK>/` holds one file per class with
    one sentence per line: MR `rt-polarity.{pos,neg}`, CR
    `custrev.{pos,neg}`, SUBJ `subj.{subjective,objective}`, MPQA
    `mpqa.{pos,neg}`. Every line is a sample, an empty line included (as in
    SentEval, whose CR and MPQA sizes, 3,775 and 10,606, count them).
  * TREC (6-class question type): `<data_dir>/senteval/TREC/train_5500.label`
    and `TREC_10.label` (test), lines `COARSE:fine question words`; the label
    is the coarse class (ABBR, DESC, ENTY, HUM, LOC, NUM), as in SentEval.
  * MSRP (paraphrase pairs): `<data_dir>/msrp/msr-para-{train,val,test}.tsv`,
    TSV with a header (`Quality, #1 ID, #2 ID, #1 String, #2 String`; some
    headers start with a UTF-8 byte-order mark; lines may end in CRLF). The
    shared copy moved the last 500 training pairs to `val`; train + val is
    the original 4,076-pair training set, which SentEval trains on.

Encodings: each file is decoded as UTF-8 if it is valid UTF-8, else as
latin-1 (MR, SUBJ and TREC's train file are latin-1). Lines are split on
"\\n" only, a trailing "\\r" is removed.

Malformed lines raise `errors.DataFormatError` ("path:line: message", lines
counted from 1).
"""

import dataclasses
import os
from typing import Dict, Sequence, Tuple

import numpy as np

from sentzoo.common import errors

# name -> (folder, ((file name, label name), ...)); label i = position i.
BINARY_TASKS = {
    "MR": ("MR", (("rt-polarity.neg", "negative"),
                  ("rt-polarity.pos", "positive"))),
    "CR": ("CR", (("custrev.neg", "negative"), ("custrev.pos", "positive"))),
    "SUBJ": ("SUBJ", (("subj.objective", "objective"),
                      ("subj.subjective", "subjective"))),
    "MPQA": ("MPQA", (("mpqa.neg", "negative"), ("mpqa.pos", "positive"))),
}
TREC_LABELS = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
TREC_FILES = {"train": "train_5500.label", "test": "TREC_10.label"}
MSRP_FILES = {"train": "msr-para-train.tsv", "val": "msr-para-val.tsv",
              "test": "msr-para-test.tsv"}
MSRP_LABELS = ("not paraphrase", "paraphrase")
TASKS = ("MR", "CR", "SUBJ", "MPQA", "TREC", "MSRP")
_BOM = "\ufeff"


@dataclasses.dataclass
class ClassificationData:
  """Sentences with integer class labels.

  Attributes:
    sentences: n Python strings.
    labels: np.ndarray int64 [n], values in [0, len(label_names)).
    label_names: the class names, by label id.
  """
  sentences: list
  labels: np.ndarray
  label_names: tuple

  def __post_init__(self):
    self.labels = np.asarray(self.labels, np.int64).reshape([-1])
    if len(self.sentences) != self.labels.size:
      raise ValueError(f"{len(self.sentences)} sentences and "
                       f"{self.labels.size} labels")

  def __len__(self):
    return int(self.labels.size)


@dataclasses.dataclass
class PairData:
  """Sentence pairs with integer labels (MSRP: 1 = paraphrase).

  Attributes:
    sentences1, sentences2: n Python strings each.
    labels: np.ndarray int64 [n].
    label_names: the class names, by label id.
  """
  sentences1: list
  sentences2: list
  labels: np.ndarray
  label_names: tuple

  def __post_init__(self):
    self.labels = np.asarray(self.labels, np.int64).reshape([-1])
    if not len(self.sentences1) == len(self.sentences2) == self.labels.size:
      raise ValueError(f"{len(self.sentences1)}/{len(self.sentences2)} "
                       f"sentences and {self.labels.size} labels")

  def __len__(self):
    return int(self.labels.size)


def read_lines(path: str) -> list:
  """The lines of a text file: UTF-8 if valid, else latin-1.

  Lines are split on "\\n" only; a trailing "\\r" is removed; the empty
  string after a final newline is not a line.

  Raises:
    errors.DataDirError: the file does not exist.
  """
  if not os.path.isfile(path):
    raise errors.DataDirError(f"data file {path!r} does not exist")
  with open(path, "rb") as f:
    data = f.read()
  try:
    text = data.decode("utf-8")
  except UnicodeDecodeError:
    text = data.decode("latin-1")
  lines = text.split("\n")
  if lines and lines[-1] == "":
    lines.pop()
  return [line[:-1] if line.endswith("\r") else line for line in lines]


def load_binary_files(paths: Sequence[str], label_names: Sequence[str]
                      ) -> ClassificationData:
  """Loads one-sentence-per-line files; file i holds the samples of class i.

  Raises:
    errors.DataFormatError: a file without any line, or with a NUL byte.
  """
  sentences, labels = [], []
  for label, path in enumerate(paths):
    lines = read_lines(path)
    if not lines:
      raise errors.DataFormatError(path, 1, "file is empty: expected one "
                                   "sentence per line")
    for number, line in enumerate(lines, start=1):
      if "\x00" in line:
        raise errors.DataFormatError(path, number, "NUL byte in a sentence "
                                     "(is this a binary file?)")
      sentences.append(line.strip())
      labels.append(label)
  return ClassificationData(sentences, np.array(labels, np.int64),
                            tuple(label_names))


def load_trec_file(path: str) -> ClassificationData:
  """Loads a TREC file: lines `COARSE:fine question` (coarse labels).

  Raises:
    errors.DataFormatError: a line without `LABEL:fine question`, or with
      an unknown coarse label.
  """
  sentences, labels = [], []
  for number, line in enumerate(read_lines(path), start=1):
    if not line.strip():
      raise errors.DataFormatError(path, number, "empty line; expected "
                                   "'COARSE:fine question'")
    head, _, question = line.strip().partition(" ")
    coarse, colon, fine = head.partition(":")
    if not colon or not fine:
      raise errors.DataFormatError(
          path, number, f"expected 'COARSE:fine question', got {line[:60]!r}")
    if coarse not in TREC_LABELS:
      raise errors.DataFormatError(
          path, number, f"unknown TREC label {coarse!r}; expected one of "
          f"{', '.join(TREC_LABELS)}")
    sentences.append(question.strip())
    labels.append(TREC_LABELS.index(coarse))
  if not sentences:
    raise errors.DataFormatError(path, 1, "file is empty")
  return ClassificationData(sentences, np.array(labels, np.int64),
                            TREC_LABELS)


def load_trec(data_dir: str) -> Dict[str, ClassificationData]:
  """{"train": 5,452 questions, "test": 500} from `<data_dir>/senteval/TREC`."""
  return {split: load_trec_file(path) for split, path in
          zip(TREC_FILES, task_files(data_dir, "TREC"))}


def load_msrp_file(path: str) -> PairData:
  """Loads one MSRP TSV file (header line, then Quality, id1, id2, s1, s2).

  Raises:
    errors.DataFormatError: a header without the expected columns, a line
      with fewer than 5 columns, or a Quality other than 0 or 1.
  """
  lines = read_lines(path)
  if not lines:
    raise errors.DataFormatError(path, 1, "file is empty; expected a header")
  header = lines[0].lstrip(_BOM).split("\t")
  if len(header) < 5 or header[0].strip() != "Quality":
    raise errors.DataFormatError(
        path, 1, "expected the header 'Quality<TAB>#1 ID<TAB>#2 ID<TAB>"
        f"#1 String<TAB>#2 String', got {lines[0][:60]!r}")
  sentences1, sentences2, labels = [], [], []
  for number, line in enumerate(lines[1:], start=2):
    if not line.strip():
      continue
    cells = line.split("\t")
    if len(cells) < 5:
      raise errors.DataFormatError(
          path, number, f"expected 5 tab-separated columns, got {len(cells)}")
    if cells[0].strip() not in ("0", "1"):
      raise errors.DataFormatError(
          path, number, f"Quality must be 0 or 1, got {cells[0]!r}")
    labels.append(int(cells[0]))
    sentences1.append(cells[3].strip())
    sentences2.append(cells[4].strip())
  return PairData(sentences1, sentences2, np.array(labels, np.int64),
                  MSRP_LABELS)


def load_msrp(data_dir: str) -> Dict[str, PairData]:
  """{"train": train + val (4,076 pairs), "test": 1,725} from `<data_dir>/msrp`.

  A missing val file is allowed (a user's download of the original 4,076-pair
  training file named msr-para-train.tsv).
  """
  base = os.path.join(data_dir, "msrp")
  train = [load_msrp_file(os.path.join(base, MSRP_FILES["train"]))]
  val_path = os.path.join(base, MSRP_FILES["val"])
  if os.path.isfile(val_path):
    train.append(load_msrp_file(val_path))
  return {"train": PairData([s for p in train for s in p.sentences1],
                            [s for p in train for s in p.sentences2],
                            np.concatenate([p.labels for p in train]),
                            MSRP_LABELS),
          "test": load_msrp_file(os.path.join(base, MSRP_FILES["test"]))}


def task_files(data_dir: str, task: str) -> Tuple[str, ...]:
  """The files a task reads (for availability checks and cache keys)."""
  if task in BINARY_TASKS:
    folder, files = BINARY_TASKS[task]
    return tuple(os.path.join(data_dir, "senteval", folder, f)
                 for f, _ in files)
  if task == "TREC":
    return tuple(os.path.join(data_dir, "senteval", "TREC", f)
                 for f in TREC_FILES.values())
  if task == "MSRP":
    return tuple(os.path.join(data_dir, "msrp", MSRP_FILES[s])
                 for s in ("train", "test"))
  raise ValueError(f"unknown task {task!r}; choose from {', '.join(TASKS)}")


def task_available(data_dir: str, task: str) -> bool:
  """Whether every file the task needs exists under data_dir."""
  return all(os.path.isfile(p) for p in task_files(data_dir, task))


def load_task(data_dir: str, task: str):
  """ClassificationData (MR/CR/SUBJ/MPQA) or a {"train", "test"} dict."""
  if task in BINARY_TASKS:
    return load_binary_files(task_files(data_dir, task),
                             [label for _, label in BINARY_TASKS[task][1]])
  if task == "TREC":
    return load_trec(data_dir)
  if task == "MSRP":
    return load_msrp(data_dir)
  raise ValueError(f"unknown task {task!r}; choose from {', '.join(TASKS)}")
