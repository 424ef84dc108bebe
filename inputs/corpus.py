"""Reading ordered text corpora: one sentence per line, an empty line between documents."""

import glob
import os

import tensorflow as tf

from sentzoo.common import errors
from sentzoo.inputs import data_integrity


def list_files(file_patterns):
  """Expands comma-separated glob patterns (or a list of them) into sorted files."""
  if isinstance(file_patterns, str):
    file_patterns = [p for p in file_patterns.split(",") if p]
  files = []
  for pattern in file_patterns:
    matched = sorted(glob.glob(pattern))
    if not matched:
      raise errors.DataDirError(f"no corpus file matches {pattern!r}")
    files.extend(matched)
  return files


def book_corpus_pattern(data_dir, parts=None):
  """The `gutenberg/partNN.txt.gz` files under `data_dir`: all, or the
  `parts` numbers ([1]: part01 alone)."""
  if not parts:
    return os.path.join(data_dir, "gutenberg", "part*.txt.gz")
  return ",".join(os.path.join(data_dir, "gutenberg", f"part{int(p):02d}.txt.gz")
                  for p in parts)


def last_books_start(data_dir, part, num_books):
  """First line (0-based) of the last `num_books` books of a corpus part,
  from `gutenberg/index.tsv` (first_line_in_part counts from 1); the part
  must keep a book to train on."""
  path = data_integrity.book_index_path(data_dir)
  if not os.path.exists(path):
    raise errors.DataDirError(f"{path}: not found (needed to hold out books)")
  starts = []
  with open(path, encoding="utf-8") as f:
    header = f.readline().rstrip("\n").split("\t")
    try:
      part_col = header.index("part")
      line_col = header.index("first_line_in_part")
    except ValueError as e:
      raise errors.DataFormatError(path, 1, f"no column {e}") from e
    for number, row in enumerate(f, start=2):
      fields = row.rstrip("\n").split("\t")
      try:
        if int(fields[part_col]) == int(part):
          starts.append(int(fields[line_col]) - 1)
      except (IndexError, ValueError) as e:
        raise errors.DataFormatError(path, number, str(e)) from e
  if len(starts) <= num_books:
    raise errors.DataDirError(
        f"{path}: part {part} has {len(starts)} books; cannot hold out "
        f"{num_books}")
  return sorted(starts)[-num_books]


def line_dataset_from_tensor(path):
  """Lines of one file given as a scalar tf.string (gzip if it ends in .gz)."""
  return tf.data.TextLineDataset(path, compression_type=tf.where(
      tf.strings.regex_full_match(path, r".*\.gz"), "GZIP", ""))


def without_autotune_thread(dataset):
  """`dataset`, and every dataset made from it, without tf.data's autotuning
  thread (`tf.data.Options.autotune`).

  In TensorFlow 2.21 that thread sometimes sleeps through the end of its
  iterator: the iterator's destructor then waits for it to wake, up to its
  optimisation period, which grows to 60 s: a stall after the last step
  of a run. Without autotuning the train step runs as fast
  (docs/design_measurements.md).
  """
  options = tf.data.Options()
  options.autotune.enabled = False
  return dataset.with_options(options)


def line_dataset(files):
  """Lines of the files in order (gzip by extension); empty lines are kept.
  Without the autotuning thread (`without_autotune_thread`)."""
  datasets = [
      tf.data.TextLineDataset(
          f, compression_type="GZIP" if f.endswith(".gz") else "")
      for f in files]
  dataset = datasets[0]
  for d in datasets[1:]:
    # A document boundary between files, so no group spans two files.
    dataset = dataset.concatenate(
        tf.data.Dataset.from_tensors(tf.constant(""))).concatenate(d)
  return without_autotune_thread(dataset)
