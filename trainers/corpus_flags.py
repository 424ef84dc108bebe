"""The corpus of the models trained on a text corpus (Siamese CBOW, Sent2Vec):
what `config.CorpusConfig`'s settings name.
"""

from sentzoo.inputs import corpus
from sentzoo.inputs import data_integrity

# The data directory's folder of the book corpus.
BOOK_CORPUS_SUBDIR = "gutenberg"


def data_subdir(cfg):
  """The folder the data directory must have: none with --corpus_files."""
  return None if cfg.corpus_files else BOOK_CORPUS_SUBDIR


def corpus_files(cfg, data_dir):
  """The corpus files --corpus_files or --corpus_parts name (sorted)."""
  if cfg.corpus_files:
    return corpus.list_files(cfg.corpus_files)
  return corpus.list_files(
      corpus.book_corpus_pattern(data_dir, cfg.corpus_parts))


def verify_if_asked(cfg, data_dir, files):
  """--verify_data: every file read to its end, checked against the data
  directory's index.tsv and SHA256SUMS (`data_integrity.verify_corpus`)."""
  if cfg.verify_data:
    data_integrity.verify_corpus(data_dir, files)
