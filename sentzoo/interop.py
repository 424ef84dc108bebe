"""Other tools' files in, the zoo's out: `sentzoo import` and `export-as`.

  sentzoo import sent2vec wiki_unigrams.bin --name sent2vec-wiki-uni
  sentzoo import glove glove.6B.300d.txt --output exports/glove --precision int8
  sentzoo export-as sent2vec sent2vec-books-unibi books_unibi.bin

`import_file` turns a sent2vec `.bin` (`inputs.fasttext_bin`) or a
word-vector file (`inputs.word_vectors.FORMATS`) into an averaging export
(`export.averaging_encoder`): Sent2Vec's featurizer (words, then hashed
n-grams, the C++ code's hash) or a word average (Siamese CBOW's and
PARAGRAM-PHRASE's encoder). The table goes from the file into its variables
a chunk at a time, quantised per chunk: one copy of it is ever in memory.
The tokeniser is the import's choice, written in the model card:
"whitespace" is the C++ inference's own split (it reproduces a sent2vec
file's vectors), "zoo" the zoo's tokeniser for raw text.

`export_as` writes a float32 averaging export of the zoo as a sent2vec
`.bin` or word2vec text or binary (docs/import.md).
"""

import concurrent.futures
import itertools
import json
import os
import sys
import tempfile
import time

import numpy as np

from sentzoo import store as store_lib
from sentzoo.common import disk_errors
from sentzoo.common import errors
from sentzoo.common import resources
from sentzoo.inputs import fasttext_bin
from sentzoo.inputs import word_vectors

IMPORT_FORMATS = ("sent2vec",) + word_vectors.FORMATS
EXPORT_FORMATS = ("sent2vec", "word2vec-text", "word2vec-binary")
# --precision -> the table's storage (export.table_quantization.MODES).
PRECISIONS = {"float32": "none", "float16": "float16", "int8": "int8"}
# --tokenizer -> (`inputs.tokenizer.Tokenizer` settings, the card's words).
TOKENIZERS = {
    "whitespace": ({"lowercase": False, "split": "whitespace"},
                   "fastText's split, as the C++ inference: tokens between "
                   "ASCII whitespace and NUL bytes, a sentence ends at its "
                   "first newline or \"</s>\" token, no lower-casing; give "
                   "it text tokenised as the file's training text was (this "
                   "split reproduces a sent2vec file's own vectors)"),
    "zoo": ({"keep_punctuation": True},
            "the zoo's tokeniser, for raw text: lower-case; tokens \\w+ and "
            "single punctuation characters (close to, not the same as, the "
            "authors' NLTK and Stanford tokenisers)"),
}
# Rows read, quantised and assigned at a time: a bound on the memory an
# import needs beside the table.
_CHUNK_BYTES = 1 << 23
_PROGRESS_SECONDS = 5


def _chunk_rows(dim):
  return max(1, _CHUNK_BYTES // (4 * dim))


def _checked(chunks):
  """The (first row, rows) chunks, each checked for NaN and infinities: a
  float64 sum of float32 values cannot overflow, so it is finite exactly
  when they all are (one pass, no temporary array)."""
  for start, rows in chunks:
    if not np.isfinite(rows.sum(dtype=np.float64)):
      bad = np.argmax(~np.isfinite(rows).all(axis=1))
      raise errors.UserError(f"table row {start + int(bad)} has a NaN or "
                             "infinite value")
    yield start, rows


def build_module(fmt, path, vocab_path, tokenizer="whitespace",
                 precision="float32"):
  """The averaging encoder of an imported file.

  Args:
    fmt, path: the file (a format of IMPORT_FORMATS).
    vocab_path: where its words are written (`Vocabulary.save`).
    tokenizer, precision: keys of TOKENIZERS and PRECISIONS.

  Returns:
    (module, source): the `AveragingSentenceEncoder` (its card says where
    it came from) and {"format", "file", "sha256", "size_bytes"}, the
    sha256 a `concurrent.futures.Future` (`saved_model_writer` waits for
    it when it writes the card).

  Raises:
    errors.UserError: an unknown format, precision or tokeniser, or a file
      that is not what `fmt` says (the message names the place).
  """
  if fmt not in IMPORT_FORMATS:
    raise errors.UserError(f"unknown format {fmt!r}; import reads "
                           f"{', '.join(IMPORT_FORMATS)}")
  if precision not in PRECISIONS or tokenizer not in TOKENIZERS:
    raise errors.UserError(f"--precision is one of {', '.join(PRECISIONS)} "
                           f"and --tokenizer one of {', '.join(TOKENIZERS)}")
  # The file's header and first chunk are checked before TensorFlow is
  # imported: a bad file is refused in a moment. Its sha256 is taken by
  # another thread (hashlib lets go of the GIL): of the bytes a .bin's
  # reader reads (one pass over the disk), or of a word-vector file.
  if not os.path.isfile(path):
    raise errors.UserError(f"cannot import {path!r}: " + (
        "it is a folder, not a file" if os.path.isdir(path)
        else "no such file"))
  card, words = {"imported": {"format": fmt, "file": os.path.abspath(path),
                              "size_bytes": os.path.getsize(path)}}, []
  if fmt == "sent2vec":
    source = fasttext_bin.Sent2VecFile(path)
    ngrams, buckets, dim = (source.args["wordNgrams"], source.args["bucket"],
                            source.dim)
    rows = source.rows if ngrams > 1 else len(source.words)
    chunks = _checked(source.table_chunks(_chunk_rows(dim), rows))
    card.update(word_ngrams=ngrams, num_buckets=buckets if ngrams > 1 else 0,
                sent2vec_args=source.args)
  else:
    source = word_vectors.VectorFile(path, fmt)
    dim, rows = source.dim, source.count + 1
    hashing = concurrent.futures.ThreadPoolExecutor(1)
    sha256 = hashing.submit(disk_errors.sha256_file, path)
    hashing.shutdown(wait=False)

    def word_chunks():
      for chunk_words, chunk in source.chunks(_chunk_rows(dim)):
        yield len(words) + 1, chunk
        words.extend(chunk_words)

    chunks = _checked(itertools.chain(word_chunks(), [
        (0, np.zeros([1, dim], np.float32))]))  # Row 0: padding.
  chunks = itertools.chain([next(chunks)], chunks)
  # pylint: disable=g-import-not-at-top
  from sentzoo.export import averaging_encoder
  from sentzoo.export import model_card
  from sentzoo.export import table_quantization
  from sentzoo.inputs import sent2vec_featurizer
  from sentzoo.inputs import text_to_ids
  from sentzoo.inputs import tokenizer as tokenizer_lib
  from sentzoo.inputs import vocabulary as vocabulary_lib
  from sentzoo.models import model_specs
  # pylint: enable=g-import-not-at-top
  tokenize = tokenizer_lib.Tokenizer(**TOKENIZERS[tokenizer][0])

  def words_to_ids(vocabulary):
    """The featurizer; the words written and let go (before the table of a
    .bin file is read, so their Python objects and the table are never in
    memory together)."""
    vocabulary.save(vocab_path)
    card["vocabulary_size"] = len(vocabulary)
    if fmt == "sent2vec":
      return sent2vec_featurizer.Sent2VecFeaturizer(
          vocabulary, tokenize, word_ngrams=ngrams, num_buckets=buckets)
    return text_to_ids.TextToIds(vocabulary, tokenize)

  if fmt == "sent2vec":
    featurizer = words_to_ids(vocabulary_lib.Vocabulary(source.words[1:],
                                                        source.counts[1:]))
    source.words = None
    # The words' memory back to the system (0.09 GB of 1.5M words), so
    # that it is not part of the peak once the table is in memory.
    resources.release_free_memory()
  mode = PRECISIONS[precision]
  variables = table_quantization.table_variables(rows, dim, mode)
  started = last = time.time()
  for start, chunk in chunks:
    table_quantization.assign_rows(variables, start, chunk, mode)
    if time.time() - last >= _PROGRESS_SECONDS:
      last = time.time()
      print(f"read {start + len(chunk):,} of {rows:,} rows "
            f"({last - started:.0f} s)", file=sys.stderr, flush=True)
  if fmt == "sent2vec":
    sha256 = source.sha256()
  else:
    featurizer = words_to_ids(vocabulary_lib.Vocabulary(
        words, np.zeros(len(words))))
    del words[:]
  card["imported"]["sha256"] = sha256  # A future: taken while saving.
  card.update(model_card.base_model_card(
      model_specs.SENT2VEC, {"training": {"imported": card["imported"]}},
      path, model_card.encoder_signature(dim)))
  card.update(embedding_dim=dim, tokenization={
      **tokenize.get_config(), "name": tokenizer,
      "description": TOKENIZERS[tokenizer][1] + "; unknown words dropped; "
                     "sentence = mean of the rows of its words" + (
                         " and word n-grams" if fmt == "sent2vec" else "") +
                     " (zero if none)"})
  if fmt != "sent2vec":
    card.update(model_type="word_averaging", paper=(
        f"word vectors from a {fmt} file, averaged (the encoder of Siamese "
        "CBOW and PARAGRAM-PHRASE)"))
  module = averaging_encoder.AveragingSentenceEncoder(
      featurizer, variables, card, quantize=mode)
  return module, card["imported"]


def import_file(fmt, path, *, name=None, output_dir=None, store=None,
                tokenizer="whitespace", precision="float32", replace=False,
                data_dir=None):
  """Imports a file as store entry `name`, or as a new version of the export
  folder `output_dir`; returns the export's path. A store entry records the
  file ("imported": its path, size and sha256) and the scores measured on
  it (`install_scores`, as `sentzoo install`).

  Raises:
    errors.UserError: as `build_module`, or `name` taken (without
      `replace`); nothing is written then.
  """
  if (name is None) == (output_dir is None):
    raise errors.UserError("give --name NAME (a store entry) or --output "
                           "DIR (an export folder)")
  store = store or store_lib.Store()
  if name is not None:
    store_lib.check_name(name)
    if store.is_installed(name) and not replace:
      raise errors.UserError(f"model {name!r} is already installed in "
                             f"{store.root!r}; pass --replace to replace it")
  with tempfile.TemporaryDirectory() as tmp:
    vocab = os.path.join(tmp, "vocab.txt")
    module, imported = build_module(fmt, path, vocab, tokenizer, precision)
    extra = {store_lib.VOCABULARY_IN_EXPORT: vocab}
    # pylint: disable=g-import-not-at-top
    from sentzoo import install_scores
    from sentzoo import sentence_model
    from sentzoo.export import saved_model_writer
    # pylint: enable=g-import-not-at-top
    if output_dir is not None:
      return saved_model_writer.write(module, output_dir, extra_files=extra)
    with store.staging() as staging:
      export_dir = os.path.join(staging, store_lib.EXPORT_SUBDIR)
      saved_model_writer.save(module, export_dir, name, extra)
      del module  # Its table: the loaded export holds its own.
      scores = install_scores.measure(sentence_model.load(export_dir),
                                      export_dir, data_dir)
      return store.commit(name, staging, {
          "source": f"imported from {os.path.basename(path)} ({fmt})",
          "imported": dict(imported, sha256=imported["sha256"].result()),
          "scores": scores}, replace=replace)


def export_as(fmt, model, out_path):
  """Writes a float32 averaging export (a path or a store entry's name) as
  a sent2vec `.bin` (Sent2Vec exports) or word2vec text or binary (its word
  rows); returns the model card's tokenisation, which the file's users must
  reproduce."""
  # pylint: disable=g-import-not-at-top
  import tensorflow as tf
  from sentzoo.evaluation import encoder as encoder_lib
  from sentzoo.export import saved_model_writer
  from sentzoo.inputs import vocabulary as vocabulary_lib
  # pylint: enable=g-import-not-at-top
  if fmt not in EXPORT_FORMATS:
    raise errors.UserError(f"unknown format {fmt!r}; export-as writes "
                           f"{', '.join(EXPORT_FORMATS)}")
  export_dir = encoder_lib.resolve_export_dir(store_lib.resolve(model))
  card_path = os.path.join(export_dir, saved_model_writer.MODEL_CARD)
  card = {}
  if os.path.isfile(card_path):
    with open(card_path, encoding="utf-8") as f:
      card = json.load(f)
  table = getattr(tf.saved_model.load(export_dir), "embeddings", None)
  if table is None:
    raise errors.UserError(
        f"{export_dir!r} has no float32 word table: export-as takes the "
        "float32 export of an averaging model (Sent2Vec, Siamese CBOW, an "
        "import), not a quantised one")
  vocab = [os.path.join(export_dir, store_lib.VOCABULARY_IN_EXPORT),
           os.path.join(export_dir, os.pardir, os.pardir, "vocab.txt")]
  vocab = next((p for p in vocab if os.path.isfile(p)), None)
  if vocab is None:
    raise errors.UserError(f"{export_dir!r} does not list its words "
                           f"({store_lib.VOCABULARY_IN_EXPORT}); export-as "
                           "takes a store entry or a trainer's export")
  vocabulary = vocabulary_lib.Vocabulary.load(vocab)
  rows, dim = (int(d) for d in table.shape)
  step = _chunk_rows(dim)
  if fmt == "sent2vec":
    if card.get("model_type") != "sent2vec":
      raise errors.UserError(f"{export_dir!r} is a {card.get('model_type')} "
                             "export; a sent2vec .bin needs a Sent2Vec one")
    fasttext_bin.write(
        out_path, vocabulary.words, vocabulary.counts,
        (table[i:i + step].numpy() for i in range(0, rows, step)), rows, dim,
        card["word_ngrams"], card["num_buckets"])
  else:
    words = vocabulary.words
    if any(" " in w for w in words):
      raise errors.UserError("a word holds a space, which word2vec files "
                             "cannot: export-as writes no such vocabulary")
    word_vectors.write_word2vec(
        out_path, words, (table[i:min(i + step, len(words) + 1)].numpy()
                          for i in range(1, len(words) + 1, step)),
        dim, binary=fmt == "word2vec-binary")
  return card.get("tokenization", {})
