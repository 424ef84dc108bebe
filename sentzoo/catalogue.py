"""The zoo's trained models by name, declared once (plain data).

  sentzoo train siamese-cbow-demo        # trains the entry, installs it
  sentzoo.load("siamese-cbow-demo")      # loads it from the local store

An entry names a trained model of the zoo: which model (a model type of
models/model_specs.py, whose trainer trains it), which flagfile of configs/,
which data, what it is for, and the paper's figure to read its scores
against. sentzoo/store.py keeps the trained exports; sentzoo/cli.py trains,
lists, packs and installs them; sentzoo/catalogue_table.py writes the
"pick a model" table from the entries and their measured scores.
"""

import dataclasses
import re
from typing import Optional, Tuple

from sentzoo.common import errors

# A model's name in the store and on the command line: also a folder name.
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


@dataclasses.dataclass(frozen=True)
class PaperFigure:
  """A paper's STS 2014 mean (Pearson x 100) to read an entry against.

  Attributes:
    paper: "siamese_cbow" (Table 1), "charagram" (supplement Table 1) or
      "sent2vec" (Table 2): the tables of lab/reports/paper_numbers.py.
    column: the column (model) of that table.
  """
  paper: str
  column: str


@dataclasses.dataclass(frozen=True)
class CatalogueEntry:
  """One trained model of the zoo.

  Attributes:
    name: its name (NAME_PATTERN).
    model_type: a model of models/model_specs.py; its trainer trains it.
    flagfile: the trainer's flagfile, relative to the repository root.
    data: the data it trains on, in words.
    purpose: one line: what to use it for.
    paper_figure: the paper's figure, or None where the paper has none for
      this model on this data.
    word_vectors_from: another entry whose export initialises the word
      vectors (passed as --word_vectors), or None.
    export_of: another entry whose finished run this entry exports again
      (with `quantize`) instead of training, or None.
    quantize: the export's table storage (export/table_quantization.py).
  """
  name: str
  model_type: str
  flagfile: str
  data: str
  purpose: str
  paper_figure: Optional[PaperFigure] = None
  word_vectors_from: Optional[str] = None
  export_of: Optional[str] = None
  quantize: str = "none"


# In training order: an entry comes after the entry it takes word vectors
# from or exports again (`make zoo` trains them in this order). The hybrid
# matchers take the word vectors that scored higher on their task's dev
# split (docs/records/catalogue_choices/hybrid_word_vectors.json).
ENTRIES: Tuple[CatalogueEntry, ...] = (
    CatalogueEntry(
        name="siamese-cbow-demo", model_type="siamese_cbow",
        flagfile="configs/siamese_cbow_demo.flags",
        data="Gutenberg books, part01 (0.5M sentences), 1 epoch",
        purpose="a first try: trains in minutes on 2 CPU cores",
        paper_figure=PaperFigure("siamese_cbow", "Siamese CBOW")),
    CatalogueEntry(
        name="siamese-cbow-books", model_type="siamese_cbow",
        flagfile="configs/siamese_cbow_best.flags",
        data="Gutenberg books, parts 01-07 (3.8M sentences)",
        purpose="word vectors for the hybrid matchers; fast averaging "
                "encoder",
        paper_figure=PaperFigure("siamese_cbow", "Siamese CBOW")),
    CatalogueEntry(
        name="sent2vec-books-uni", model_type="sent2vec",
        flagfile="configs/sent2vec_books_uni.flags",
        data="Gutenberg books, parts 01-07, 9 epochs",
        purpose="a general sentence encoder (STS, search)",
        paper_figure=PaperFigure("sent2vec", "Sent2Vec uni.")),
    CatalogueEntry(
        name="sent2vec-books-uni-int8", model_type="sent2vec",
        flagfile="configs/sent2vec_books_uni.flags",
        data="sent2vec-books-uni's run, its table stored as int8",
        purpose="sent2vec-books-uni at about a quarter of its size "
                "(inference only)",
        paper_figure=PaperFigure("sent2vec", "Sent2Vec uni."),
        export_of="sent2vec-books-uni", quantize="int8"),
    CatalogueEntry(
        name="sent2vec-books-unibi", model_type="sent2vec",
        flagfile="configs/sent2vec_books_unibi.flags",
        data="Gutenberg books, parts 01-07, 12 epochs",
        purpose="word order through bigrams; large (5.9 GB table)",
        paper_figure=PaperFigure("sent2vec", "Sent2Vec uni. + bi.")),
    CatalogueEntry(
        name="sent2vec-books-unibi-int8", model_type="sent2vec",
        flagfile="configs/sent2vec_books_unibi.flags",
        data="sent2vec-books-unibi's run, its table stored as int8",
        purpose="sent2vec-books-unibi at about a quarter of its size "
                "(inference only)",
        paper_figure=PaperFigure("sent2vec", "Sent2Vec uni. + bi."),
        export_of="sent2vec-books-unibi", quantize="int8"),
    CatalogueEntry(
        name="charagram-phrase-ppdb", model_type="charagram",
        flagfile="configs/charagram_phrase_lexicon.flags",
        data="PPDB 2.0 human-rated pairs (12,564 pairs, rating >= 3) and "
             "the PPDB-XL lexicon's 187,276 word pairs, 2 epochs",
        purpose="short phrases, misspellings and unknown words "
                "(character n-grams)",
        paper_figure=PaperFigure("charagram", "CHARAGRAM-PHRASE")),
    CatalogueEntry(
        name="paragram-phrase-ppdb", model_type="charagram",
        flagfile="configs/charagram_paragram_phrase_zoo_vectors.flags",
        data="PPDB 2.0 human-rated pairs (12,564 pairs, rating >= 3); word "
             "vectors of sent2vec-books-uni",
        purpose="phrase similarity by word averaging (PPDB-tuned words)",
        paper_figure=PaperFigure("charagram", "PARAGRAM-PHRASE"),
        word_vectors_from="sent2vec-books-uni"),
    CatalogueEntry(
        name="hybrid-msrp-gru", model_type="hybrid_siamese",
        flagfile="configs/hybrid_msrp_gru.flags",
        data="MSRP train (4,076 pairs); word vectors of siamese-cbow-books",
        purpose="paraphrase or not: a pair classifier (predict)",
        word_vectors_from="siamese-cbow-books"),
    CatalogueEntry(
        name="hybrid-sick-gru", model_type="hybrid_siamese",
        flagfile="configs/hybrid_sick_gru.flags",
        data="SICK train, entailment vs contradiction; word vectors of "
             "siamese-cbow-books",
        purpose="entailment or not: a pair classifier (predict)",
        word_vectors_from="siamese-cbow-books"),
)

_BY_NAME = {entry.name: entry for entry in ENTRIES}


def names() -> Tuple[str, ...]:
  """The entries' names, in training order."""
  return tuple(entry.name for entry in ENTRIES)


def find(name: str) -> Optional[CatalogueEntry]:
  """The entry named `name`, or None."""
  return _BY_NAME.get(name)


def get(name: str) -> CatalogueEntry:
  """The entry named `name`.

  Raises:
    errors.UserError: no such entry (the message lists the names).
  """
  entry = _BY_NAME.get(name)
  if entry is None:
    raise errors.UserError(
        f"unknown model {name!r}: the catalogue has {', '.join(names())} "
        "(`sentzoo models` lists them)")
  return entry
