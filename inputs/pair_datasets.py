"""Labelled sentence pairs in their official formats: Quora, SNLI, MSRP, SICK.

Every loader returns a `PairSet` of raw (untokenised) sentences and 0/1
labels, 1 = match (paraphrase, duplicate, entailment). Tokenisation is left to
`inputs.text_to_ids`, the same code the exports run. Malformed lines raise
`common.errors.DataFormatError` naming the file and line.

Binary entailment follows Nicosia and Moschitti (CIKM 2017, §4.4): entailment
(1) vs contradiction (0); neutral pairs and pairs without a gold label ("-")
are dropped.
"""

import csv
import dataclasses
import gzip
import io
import json
import os
from typing import List

import numpy as np

from sentzoo.common import errors

TASKS = ("msrp", "sick", "quora", "snli")
SPLITS = ("train", "dev", "test")


@dataclasses.dataclass
class PairSet:
  """Sentence pairs with binary labels (1 = match)."""
  name: str
  sentences_a: List[str]
  sentences_b: List[str]
  labels: np.ndarray  # int32 [n]

  def __len__(self):
    return len(self.labels)


def _open_text(path):
  if not os.path.exists(path):
    raise errors.DataDirError(f"data file {path!r} does not exist")
  if path.endswith(".gz"):
    return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig",
                            errors="replace", newline="")
  # utf-8-sig drops a BOM (the MSRP train/test files start with one);
  # invalid bytes are replaced rather than failing a whole data set.
  return open(path, encoding="utf-8-sig", errors="replace", newline="")


def _lines(path):
  with _open_text(path) as f:
    for number, line in enumerate(f, start=1):
      yield number, line.rstrip("\r\n")


def header_columns(path, header, required):
  """{column name: index} of a header line's fields; a `required` name
  missing is an `errors.DataFormatError` at `path`:1."""
  columns = {name: i for i, name in enumerate(header)}
  for name in required:
    if name not in columns:
      raise errors.DataFormatError(path, 1, f"header lacks column {name!r}")
  return columns


def _headed_tsv(path, required):
  """(line number, fields, column index by name) per data line of a TSV whose
  first line names its columns; blank lines skipped.

  Raises:
    errors.DataFormatError: a missing required column, or a short line.
  """
  columns = None
  for number, line in _lines(path):
    fields = line.split("\t")
    if columns is None:
      columns = header_columns(path, fields, required)
      continue
    if not line.strip():
      continue
    if len(fields) < len(columns):
      raise errors.DataFormatError(
          path, number, f"expected {len(columns)} fields, got {len(fields)}")
    yield number, fields, columns


def _pair_set(name, rows):
  a, b, labels = [], [], []
  for sentence_a, sentence_b, label in rows:
    a.append(sentence_a)
    b.append(sentence_b)
    labels.append(label)
  return PairSet(name, a, b, np.asarray(labels, np.int32))


def _label01(path, number, value):
  if value not in ("0", "1"):
    raise errors.DataFormatError(path, number,
                                 f"label {value!r} is not 0 or 1")
  return int(value)


def load_msrp(path):
  """MSRP `msr-para-{train,val,test}.tsv`: header, then Quality, #1 ID, #2 ID,
  #1 String, #2 String (tab-separated, no quoting; CRLF; a BOM on some)."""

  def rows():
    for number, line in _lines(path):
      if number == 1 and line.startswith("Quality"):
        continue
      if not line.strip():
        continue
      fields = line.split("\t")
      if len(fields) != 5:
        raise errors.DataFormatError(
            path, number, f"expected 5 tab-separated fields, got {len(fields)}")
      yield fields[3], fields[4], _label01(path, number, fields[0].strip())

  return _pair_set(os.path.basename(path), rows())


SICK_LABELS = {"ENTAILMENT": 1, "CONTRADICTION": 0}


def load_sick_entailment(path):
  """SICK 2014 `SICK_{train,trial,test_annotated}.txt`: binary entailment
  (ENTAILMENT 1, CONTRADICTION 0; NEUTRAL dropped)."""

  def rows():
    for number, fields, columns in _headed_tsv(
        path, ("sentence_A", "sentence_B", "entailment_judgment")):
      judgment = fields[columns["entailment_judgment"]].strip().upper()
      if judgment == "NEUTRAL":
        continue
      if judgment not in SICK_LABELS:
        raise errors.DataFormatError(
            path, number, f"unknown entailment judgment {judgment!r}")
      yield (fields[columns["sentence_A"]], fields[columns["sentence_B"]],
             SICK_LABELS[judgment])

  return _pair_set(os.path.basename(path), rows())


SNLI_LABELS = {"entailment": 1, "contradiction": 0}
_SNLI_DROPPED = ("neutral", "-")


def load_snli(path):
  """SNLI 1.0 `snli_1.0_{train,dev,test}.{jsonl,txt}`: binary entailment vs
  contradiction (neutral and "-" dropped). jsonl: one object per line with
  gold_label, sentence1, sentence2; txt: tab-separated with a header naming
  gold_label, sentence1 and sentence2."""

  def check(number, label):
    if label in _SNLI_DROPPED:
      return None
    if label not in SNLI_LABELS:
      raise errors.DataFormatError(path, number,
                                   f"unknown gold_label {label!r}")
    return SNLI_LABELS[label]

  def jsonl_rows():
    for number, line in _lines(path):
      if not line.strip():
        continue
      try:
        record = json.loads(line)
        label, s1, s2 = (record["gold_label"], record["sentence1"],
                         record["sentence2"])
      except (ValueError, KeyError, TypeError) as e:
        raise errors.DataFormatError(
            path, number, f"not an SNLI json record ({e})") from None
      label = check(number, label)
      if label is not None:
        yield s1, s2, label

  def txt_rows():
    for number, fields, columns in _headed_tsv(
        path, ("gold_label", "sentence1", "sentence2")):
      label = check(number, fields[columns["gold_label"]])
      if label is not None:
        yield (fields[columns["sentence1"]], fields[columns["sentence2"]],
               label)

  is_jsonl = path.endswith((".jsonl", ".jsonl.gz"))
  return _pair_set(os.path.basename(path),
                   jsonl_rows() if is_jsonl else txt_rows())


def load_quora_bimpm(path):
  """Quora in the BiMPM partition (Wang et al. 2017; `train.tsv`, `dev.tsv`,
  `test.tsv`): label, question 1, question 2, pair id, tab-separated, no
  header; questions already tokenised."""

  def rows():
    for number, line in _lines(path):
      if not line.strip():
        continue
      fields = line.split("\t")
      if len(fields) < 3:
        raise errors.DataFormatError(
            path, number, f"expected label, q1, q2[, id], got {len(fields)} "
            "fields")
      yield fields[1], fields[2], _label01(path, number, fields[0].strip())

  return _pair_set(os.path.basename(path), rows())


def load_quora_raw(path):
  """The original `quora_duplicate_questions.tsv`: header id, qid1, qid2,
  question1, question2, is_duplicate; tab-separated with CSV quoting
  (a quoted question may hold tabs or newlines)."""
  with _open_text(path) as f:
    reader = csv.reader(f, delimiter="\t", quotechar='"')
    try:
      header = next(reader)
    except StopIteration:
      return PairSet(os.path.basename(path), [], [], np.zeros([0], np.int32))
    columns = header_columns(path, header,
                             ("question1", "question2", "is_duplicate"))

    def rows():
      for fields in reader:
        if not fields:
          continue
        if len(fields) != len(header):
          raise errors.DataFormatError(
              path, reader.line_num,
              f"expected {len(header)} fields, got {len(fields)}")
        yield (fields[columns["question1"]], fields[columns["question2"]],
               _label01(path, reader.line_num,
                        fields[columns["is_duplicate"]].strip()))

    return _pair_set(os.path.basename(path), rows())


# {task: (folder, the train, dev and test files)}; quora: the BiMPM partition.
_TASK_FILES = {
    "msrp": ("msrp", ("msr-para-train.tsv", "msr-para-val.tsv",
                      "msr-para-test.tsv")),
    "sick": ("sick2014", ("SICK_train.txt", "SICK_trial.txt",
                          "SICK_test_annotated.txt")),
    "quora": ("quora", tuple(f"{s}.tsv" for s in SPLITS)),
    "snli": ("snli_1.0", tuple(f"snli_1.0_{s}.jsonl" for s in SPLITS)),
}


def _check_task(task):
  if task not in TASKS:
    raise errors.UserError(f"unknown task {task!r}; one of {', '.join(TASKS)}")


def task_files(data_dir, task):
  """{split: path} of the official files of `task` under `data_dir`."""
  _check_task(task)
  folder, names = _TASK_FILES[task]
  return {s: os.path.join(data_dir, folder, n) for s, n in zip(SPLITS, names)}


def load_file(task, path):
  """Loads one file of `task`; a Quora file with an `is_duplicate` header
  is read as the raw Quora release, otherwise as the BiMPM partition."""
  _check_task(task)
  if task == "quora":
    with _open_text(path) as f:
      first = f.readline()
    if "is_duplicate" in first:
      return load_quora_raw(path)
    return load_quora_bimpm(path)
  return {"msrp": load_msrp, "sick": load_sick_entailment,
          "snli": load_snli}[task](path)


def load_task(data_dir, task, files=None):
  """{split: PairSet} of `task`; `files` ({split: path}) override
  `task_files`."""
  paths = dict(task_files(data_dir, task))
  paths.update(files or {})
  return {split: load_file(task, path) for split, path in paths.items()}
