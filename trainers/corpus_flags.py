"""The flags of the models trained on a text corpus (Siamese CBOW, Sent2Vec).

`define_flags` puts --corpus_parts, --corpus_files and --verify_data in a
trainer's flags, with one meaning for every such trainer.
"""

from absl import flags

from sentzoo.inputs import corpus
from sentzoo.inputs import data_integrity

# The data directory's folder of the book corpus.
BOOK_CORPUS_SUBDIR = "gutenberg"


def define_flags(flag_values):
  """Defines the corpus flags in `flag_values`."""
  flags.DEFINE_list("corpus_parts", [], "Book corpus parts to train on, e.g. "
                    "1 for part01 alone; empty: all parts.",
                    flag_values=flag_values)
  flags.DEFINE_string("corpus_files", None, "Comma-separated globs of corpus "
                      "files (one sentence per line, empty line between "
                      "documents); overrides --corpus_parts.",
                      flag_values=flag_values)
  flags.DEFINE_bool("verify_data", True, "Before the first pass over the "
                    "corpus (when the vocabulary is built), read every "
                    "corpus file to its end (a truncated gzip is an error), "
                    "check book corpus parts against gutenberg/index.tsv and "
                    "files against SHA256SUMS where the data dir has them "
                    "(~4 s for the book corpus); --noverify_data skips it.",
                    flag_values=flag_values)


def data_subdir(flag_values):
  """The folder the data directory must have: none with --corpus_files."""
  return None if flag_values.corpus_files else BOOK_CORPUS_SUBDIR


def corpus_files(flag_values, data_dir):
  """The corpus files --corpus_files or --corpus_parts name (sorted)."""
  if flag_values.corpus_files:
    return corpus.list_files(flag_values.corpus_files)
  return corpus.list_files(
      corpus.book_corpus_pattern(data_dir, flag_values.corpus_parts))


def verify_if_asked(flag_values, data_dir, files):
  """--verify_data: every file read to its end, checked against the data
  directory's index.tsv and SHA256SUMS (`data_integrity.verify_corpus`)."""
  if flag_values.verify_data:
    data_integrity.verify_corpus(data_dir, files)
