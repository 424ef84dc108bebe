"""The public API over any export: load it, encode sentences, compare them.

  import sentzoo

  model = sentzoo.load("runs/siamese_cbow_demo/export")  # newest version
  vectors = model.encode(["A man plays a guitar.", "A dog runs."])  # [2, d]
  scores = model.similarity(vectors, vectors)  # cosine [2, 2]

`load` takes any export that `python -m export.export_model` (or a trainer)
wrote: a SavedModel version folder, or the export base folder holding
integer versions (the highest is used). Two kinds of export exist:

  * sentence encoders (Siamese CBOW, Sent2Vec, CHARAGRAM, the hybrid siamese
    `--encoder_only` export): `serving_default` takes `sentences` and
    returns `embeddings`;
  * the hybrid siamese pair classifier: `serving_default` takes
    `sentences_a` and `sentences_b` and returns a match `probability`; its
    `encode` function gives the sentence encodings.

Both give `encode` and `similarity`; the pair classifier also `predict`s.
"""

import collections
import concurrent.futures
import json
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union
import warnings

import numpy as np
import tensorflow as tf
import tqdm

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.export import saved_model_writer
from sentzoo.export import signature_info

# The pair classifier's serving_default (export/hybrid_siamese.py).
PAIR_INPUT_KEYS = ("sentences_a", "sentences_b")
PAIR_OUTPUT_KEY = "probability"
# Its root's function that encodes one batch of sentences.
PAIR_ENCODE_FUNCTION = "encode"

Sentences = Union[str, Sequence[str]]

# `encode`'s default sentences per call of the model: the fastest measured on
# CPU (docs/encode_speed.md, `python -m lab.benchmarks.encode --batch_sizes=...`).
DEFAULT_BATCH_SIZE = 4096
# Batches in flight at once: one more than the one the model runs, so that
# Python builds the next input tensor and copies out the last result while
# the graph runs (the graph itself spreads a batch over the cores).
_BATCHES_IN_FLIGHT = 2
# `show_progress_bar=None` shows progress on a terminal from this many
# sentences on.
PROGRESS_MIN_SENTENCES = 20_000
# `encode`'s output types (sentence-transformers' names):
# * "float32": the embeddings;
# * "int8": each row scaled by 127 / max|row| and rounded (symmetric, per
#   sentence, so that queries and a corpus encoded apart compare by cosine;
#   sentence-transformers instead maps each dimension's range seen in the
#   call or a calibration set);
# * "ubinary": the sign bits (x > 0), packed 8 per uint8
#   (`np.packbits`), [n, ceil(d / 8)]: for Hamming distance.
PRECISIONS = ("float32", "int8", "ubinary")


class SentencesTypeError(errors.UserError, TypeError):
  """`sentences` is not a str or a sequence of str (one `error:` line)."""


def similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """Cosine similarity of every row of `a` with every row of `b`.

  Args:
    a: float array [n, d], or one vector [d] (taken as [1, d]).
    b: float array [m, d], or one vector [d].

  Returns:
    np.float32 [n, m] in [-1, 1]; 0.0 where either row is all zeros (an
    empty or all-unknown sentence), never NaN.

  Raises:
    TypeError: `a` or `b` holds strings (`SentenceModel.similarity` takes
      sentences).
    ValueError: not 1-D or 2-D, or different sizes d.
  """
  a, b = _unit_rows(a, "a"), _unit_rows(b, "b")
  if a.shape[1] != b.shape[1]:
    raise ValueError(f"vectors of different sizes: a is {a.shape}, "
                     f"b is {b.shape}")
  return np.clip(a @ b.T, -1.0, 1.0).astype(np.float32)


def _unit_rows(x, name):
  """float64 [n, d] rows of `x` scaled to norm 1; zero rows stay zero."""
  x = np.asarray(x)
  if x.dtype.kind not in "biuf":
    raise TypeError(
        f"similarity: {name} must be a numeric array [n, d], got dtype "
        f"{x.dtype}; to compare sentences, call model.similarity(...)")
  x = x.astype(np.float64)
  if x.ndim == 1:
    x = x[None, :]
  if x.ndim != 2:
    raise ValueError(f"similarity: {name} must be [n, d] or [d], got shape "
                     f"{x.shape}")
  norms = np.linalg.norm(x, axis=1, keepdims=True)
  return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def _sentence_list(sentences, name="sentences"):
  """`sentences` as a list of str/bytes; one str is a list of one."""
  if isinstance(sentences, (str, bytes)):
    return [sentences]
  if isinstance(sentences, np.ndarray) and sentences.ndim != 1:
    raise ValueError(f"{name} must be 1-D, got shape {sentences.shape}")
  try:
    sentences = list(sentences)
  except TypeError:
    raise SentencesTypeError(
        f"{name} must be a str or a list of str, got "
        f"{type(sentences).__name__}") from None
  for i, sentence in enumerate(sentences):
    if not isinstance(sentence, (str, bytes)):
      raise SentencesTypeError(f"{name}[{i}] is {type(sentence).__name__}, "
                               "expected str")
  return sentences


def quantize_embeddings(embeddings: np.ndarray, precision: str
                        ) -> np.ndarray:
  """float [n, d] embeddings in `precision` (one of PRECISIONS).

  Returns float32 [n, d], int8 [n, d] (row-wise symmetric; an all-zero row
  stays zero) or uint8 [n, ceil(d / 8)] (packed sign bits).
  """
  embeddings = np.asarray(embeddings, np.float32)
  if precision == "float32":
    return embeddings
  if precision == "int8":
    scale = np.max(np.abs(embeddings), axis=1, keepdims=True) / 127.0
    scaled = np.divide(embeddings, scale, out=np.zeros_like(embeddings),
                       where=scale > 0)
    return np.clip(np.rint(scaled), -127, 127).astype(np.int8)
  if precision == "ubinary":
    return np.packbits(embeddings > 0, axis=-1)
  raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, "
                   f"got {precision!r}")


def semantic_search(query_embeddings: np.ndarray,
                    corpus_embeddings: np.ndarray, top_k: int = 10,
                    query_chunk_size: int = 1000,
                    corpus_chunk_size: int = 100_000
                    ) -> List[List[Dict[str, Any]]]:
  """The `top_k` corpus rows nearest each query by cosine similarity.

  As sentence-transformers' `util.semantic_search`: embeddings in (e.g.
  `model.encode(...)`, float32 or int8), for each query a list of
  {"corpus_id": row of the corpus, "score": cosine}, best first (ties:
  lower corpus_id first). Memory: one [query_chunk_size,
  corpus_chunk_size] block of scores at a time.

  Args:
    query_embeddings: [q, d] (or one vector [d]).
    corpus_embeddings: [c, d] (or one vector [d]).
    top_k: results per query (fewer if the corpus is smaller), >= 1.

  Returns:
    q lists of min(top_k, c) dicts.

  Raises:
    errors.UserError: not numeric [n, d] arrays of one size d, uint8
      ("ubinary") embeddings, or top_k < 1.
  """
  if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) \
      or top_k < 1:
    raise errors.UserError(f"top_k must be an integer >= 1, got {top_k!r}")
  for name, x in (("query_embeddings", query_embeddings),
                  ("corpus_embeddings", corpus_embeddings)):
    if np.asarray(x).dtype == np.uint8:
      raise errors.UserError(
          f"semantic_search: {name} are uint8 (precision='ubinary' packed "
          "bits): cosine needs float32 or int8 embeddings")
  try:
    queries = _unit_rows(query_embeddings, "query_embeddings")
    corpus = _unit_rows(corpus_embeddings, "corpus_embeddings")
  except (TypeError, ValueError) as e:
    raise errors.UserError(f"semantic_search: {e}") from e
  if len(corpus) and len(queries) and queries.shape[1] != corpus.shape[1]:
    raise errors.UserError(
        f"semantic_search: queries have d={queries.shape[1]}, the corpus "
        f"d={corpus.shape[1]}")
  k = min(int(top_k), len(corpus))
  results = []
  for q_start in range(0, len(queries), query_chunk_size):
    chunk = queries[q_start:q_start + query_chunk_size]
    best_scores = np.full([len(chunk), 0], -np.inf)
    best_ids = np.zeros([len(chunk), 0], np.int64)
    for c_start in range(0, len(corpus), corpus_chunk_size):
      scores = np.clip(chunk @ corpus[c_start:c_start + corpus_chunk_size].T,
                       -1.0, 1.0)
      ids = np.broadcast_to(
          np.arange(c_start, c_start + scores.shape[1]), scores.shape)
      best_scores = np.concatenate([best_scores, scores], axis=1)
      best_ids = np.concatenate([best_ids, ids], axis=1)
      if best_scores.shape[1] > k:
        keep = np.argpartition(-best_scores, k - 1, axis=1)[:, :k]
        best_scores = np.take_along_axis(best_scores, keep, axis=1)
        best_ids = np.take_along_axis(best_ids, keep, axis=1)
    order = np.lexsort((best_ids, -best_scores), axis=1)
    for scores, ids, row in zip(best_scores, best_ids, order):
      results.append([{"corpus_id": int(ids[i]), "score": float(scores[i])}
                      for i in row])
  return results


def _is_sentences(x):
  """Whether `x` is sentences: a str, or a sequence of str (or empty)."""
  if isinstance(x, (str, bytes)):
    return True
  if isinstance(x, np.ndarray):
    return x.dtype.kind in "US" or (
        x.dtype == object and x.size > 0 and
        all(isinstance(s, (str, bytes)) for s in x.ravel()))
  return (isinstance(x, (list, tuple)) and
          all(isinstance(s, (str, bytes)) for s in x))


class SentenceModel:
  """A loaded export: `encode`, `similarity`, and `predict` for pair models.

  Made by `load`. `encode` and `similarity` work for every export;
  `predict` only for the hybrid siamese pair classifier.
  """

  def __init__(self, export_dir: str,
               encoder: Optional[encoder_lib.Encoder], pair_model=None):
    """Wraps what `load` loaded.

    Args:
      export_dir: the SavedModel folder.
      encoder: encodes sentences; None for a pair model without an
        `encode` function.
      pair_model: the loaded pair classifier (its serving_default takes
        `sentences_a`, `sentences_b` and returns `probability`, ...); None
        for a sentence encoder.
    """
    self.export_dir = export_dir
    self._encoder = encoder
    self._pair_model = pair_model

  @property
  def is_pair_model(self) -> bool:
    """Whether the export is a pair classifier (it has `predict`)."""
    return self._pair_model is not None

  @property
  def signature(self):
    """The loaded `serving_default` function: keyword tf.string [batch]
    inputs (PAIR_INPUT_KEYS for a pair model) to a dict of output tensors,
    what TF Serving runs."""
    if self._pair_model is not None:
      return self._pair_model.signatures["serving_default"]
    return self._checked_encoder().signature

  @property
  def dim(self) -> int:
    """The embedding size d."""
    encoder = self._checked_encoder()
    if encoder.dim is None:
      encoder.encode([""])  # Sets it.
    return encoder.dim

  def __repr__(self):
    kind = "pair model" if self.is_pair_model else "sentence encoder"
    return f"SentenceModel({self.export_dir!r}, {kind})"

  def _checked_encoder(self) -> encoder_lib.Encoder:
    if self._encoder is None:
      raise errors.UserError(
          f"the pair model at {self.export_dir!r} has no {PAIR_ENCODE_FUNCTION}"
          " function to encode single sentences; export the encoder with "
          "`python -m export.hybrid_siamese --encoder_only`")
    return self._encoder

  @property
  def card(self) -> Dict[str, Any]:
    """The export's model card (assets.extra/model_card.json) as a dict;
    {} for an export that has none."""
    path = os.path.join(self.export_dir, saved_model_writer.MODEL_CARD)
    if not os.path.isfile(path):
      return {}
    try:
      with open(path, encoding="utf-8") as f:
        return json.load(f)
    except (OSError, ValueError) as e:
      raise errors.DataDirError(f"cannot read the model card {path!r}: "
                                f"{e}") from e

  def encode(self, sentences: Sentences,
             batch_size: int = DEFAULT_BATCH_SIZE,
             show_progress_bar: Optional[bool] = None,
             normalize_embeddings: bool = False,
             precision: str = "float32") -> np.ndarray:
    """Embeds sentences (sentence-transformers' `encode` arguments).

    Args:
      sentences: n sentences (a list of str), or one str (n = 1). Raw text:
        the export tokenises it. An empty sentence, or one with no known
        word, gives the model's vector of no words (zeros for the averaging
        models), never NaN.
      batch_size: sentences per call of the model (default: the fastest
        measured on CPU).
      show_progress_bar: print "encoded i/n sentences" with the rate and
        ETA on stderr; None: when stderr is a terminal and there are at
        least PROGRESS_MIN_SENTENCES sentences.
      normalize_embeddings: scale each vector to length 1 (a zero vector
        stays zero), so that a dot product is the cosine.
      precision: "float32", "int8" or "ubinary" (`PRECISIONS`; applied
        after `normalize_embeddings`).

    Returns:
      [n, d] float32 or int8, or [n, ceil(d / 8)] uint8 for "ubinary";
      [0, ...] for no sentences.

    Raises:
      SentencesTypeError (a UserError and a TypeError): `sentences` is not
        a str or a sequence of str.
      ValueError: batch_size < 1 or an unknown precision.
      errors.UserError: a pair model without an encoder.
    """
    encoder = self._checked_encoder()
    if isinstance(batch_size, bool) or not isinstance(
        batch_size, (int, np.integer)) or batch_size < 1:
      raise ValueError(f"batch_size must be an integer >= 1, got "
                       f"{batch_size!r}")
    if precision not in PRECISIONS:
      raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, "
                       f"got {precision!r}")
    sentences = _sentence_list(sentences)
    if not sentences:
      return quantize_embeddings(np.zeros([0, self.dim], np.float32),
                                 precision)
    if show_progress_bar is None:
      show_progress_bar = (len(sentences) >= PROGRESS_MIN_SENTENCES and
                           sys.stderr.isatty())
    out = None
    progress = tqdm.tqdm(total=len(sentences), desc="encoding",
                         unit=" sentences",
                         disable=not show_progress_bar, file=sys.stderr)
    # Batches are encoded in order, _BATCHES_IN_FLIGHT at a time; each is
    # written into the output as it arrives (no list of parts to join,
    # which doubled the peak memory).
    def write(start, future):
      nonlocal out
      vectors = future.result()
      if normalize_embeddings:
        vectors = _unit_rows(vectors, "embeddings").astype(np.float32)
      vectors = quantize_embeddings(vectors, precision)
      if out is None:
        out = np.empty([len(sentences), vectors.shape[1]], vectors.dtype)
      out[start:start + len(vectors)] = vectors
      progress.update(len(vectors))

    with concurrent.futures.ThreadPoolExecutor(_BATCHES_IN_FLIGHT) as pool:
      in_flight = collections.deque()
      for start in range(0, len(sentences), batch_size):
        in_flight.append((start, pool.submit(
            encoder.encode, sentences[start:start + batch_size],
            batch_size)))
        if len(in_flight) >= _BATCHES_IN_FLIGHT:
          write(*in_flight.popleft())
      while in_flight:
        write(*in_flight.popleft())
    progress.close()
    return out

  def similarity(self, a: Union[Sentences, np.ndarray],
                 b: Union[Sentences, np.ndarray]) -> np.ndarray:
    """Cosine similarity of every item of `a` with every item of `b`.

    Args:
      a: n sentences (str or list of str, encoded here) or embeddings
        [n, d] (as `encode` returns them).
      b: m sentences or embeddings [m, d].

    Returns:
      np.float32 [n, m]; 0.0 for a zero vector, never NaN.
    """
    return similarity(self._embeddings(a), self._embeddings(b))

  def _embeddings(self, x):
    if _is_sentences(x):
      return self.encode(x)
    x = np.asarray(x)
    if x.ndim == 1 and x.size == 0:  # An empty list: no sentences.
      return np.zeros([0, self.dim], np.float32)
    return x

  def predict(self, pairs: Sequence[Tuple[str, str]],
              batch_size: int = 64) -> np.ndarray:
    """The pair model's match probability of every sentence pair.

    Args:
      pairs: n (sentence_a, sentence_b) pairs of str.
      batch_size: pairs per call of the model.

    Returns:
      np.float32 [n]: the MLP's match probability; for a model trained in
      contrastive mode, its decision (distance < threshold) as 0.0 / 1.0.

    Raises:
      errors.UserError: the export is a sentence encoder, not a pair model.
      TypeError / ValueError: a pair is not two str.
    """
    if not self.is_pair_model:
      raise errors.UserError(
          f"{self.export_dir!r} is a sentence encoder: it has no predict(); "
          "score pairs with similarity(), or load a hybrid siamese pair "
          "export")
    if isinstance(pairs, (str, bytes)):
      raise TypeError("pairs must be a list of (sentence_a, sentence_b)")
    sides = ([], [])
    for i, pair in enumerate(pairs):
      if isinstance(pair, (str, bytes)) or len(pair) != 2:
        raise ValueError(f"pairs[{i}] is not a (sentence_a, sentence_b) pair")
      for j, (side, sentence) in enumerate(zip(sides, pair)):
        if not isinstance(sentence, (str, bytes)):
          raise TypeError(f"pairs[{i}][{j}] is {type(sentence).__name__}, "
                          "expected str")
        side.append(sentence)
    if batch_size < 1:
      raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    serve = self.signature
    parts = [np.zeros([0], np.float32)]
    for start in range(0, len(sides[0]), batch_size):
      feeds = {key: tf.constant(side[start:start + batch_size], tf.string)
               for key, side in zip(PAIR_INPUT_KEYS, sides)}
      out = serve(**feeds)[PAIR_OUTPUT_KEY]
      parts.append(tf.cast(out, tf.float32).numpy())
    return np.concatenate(parts, axis=0)


def load(path: Union[str, os.PathLike]) -> SentenceModel:
  """Loads an export of any model of the zoo.

  Args:
    path: a SavedModel folder (holds saved_model.pb), an export base
      folder holding integer versions ("1", "2", ...): the highest is used,
      or the name of a model in the store (`sentzoo models`).

  Returns:
    A `SentenceModel`.

  Raises:
    errors.UserError: `path` is not an export (the message says what was
      expected), or an export of neither a sentence encoder nor a pair
      model.
  """
  from sentzoo import store  # pylint: disable=g-import-not-at-top
  path = store.resolve(path)  # A model's name: its verified store entry.
  try:
    export_dir = encoder_lib.resolve_export_dir(path)
  except errors.DataDirError as e:
    hint = os.path.join(path, model_dir_lib.EXPORT_SUBDIR)
    if os.path.isdir(hint):
      raise errors.DataDirError(f"{e}; {path!r} looks like a model "
                                f"directory: load {hint!r}") from e
    raise
  try:
    model = _load_export(export_dir)
  except errors.UserError:
    raise
  except (OSError, ValueError, IndexError, KeyError, tf.errors.OpError) as e:
    # A truncated variables file gives an IndexError, ... (a corrupt
    # saved_model.pb is a DataDirError of signature_info): one line that
    # says what to do.
    raise errors.DataDirError(
        f"cannot load the export at {export_dir!r}, it looks damaged "
        f"({type(e).__name__}: {_first_line(e)}); export it again "
        "(python -m export.export_model)") from e
  quantization = model.card.get("quantization", {})
  if quantization.get("inference_only"):
    warnings.warn(
        f"{export_dir!r} stores its table as {quantization.get('mode')}: it "
        "is for inference only (no trainable variables; "
        "hub.KerasLayer(trainable=True) would not fine-tune it); fine-tune "
        "the float32 export instead", stacklevel=2)
  return model


def _first_line(error):
  text = str(error).strip().splitlines()
  return text[0][:200] if text else ""


def _load_export(export_dir):
  inputs = tuple(sorted(signature_info.read_signature(export_dir).inputs))
  if inputs == (encoder_lib.INPUT_KEY,):
    return SentenceModel(export_dir, encoder_lib.load_encoder(export_dir))
  if inputs != PAIR_INPUT_KEYS:
    raise errors.UserError(
        f"{export_dir!r}: serving_default takes {list(inputs)}; expected "
        f"[{encoder_lib.INPUT_KEY!r}] (a sentence encoder) or "
        f"{list(PAIR_INPUT_KEYS)} (a pair model)")
  loaded = tf.saved_model.load(export_dir)
  encoder = None
  encode_fn = getattr(loaded, PAIR_ENCODE_FUNCTION, None)
  if encode_fn is not None:
    output = encode_fn.concrete_functions[0].structured_outputs[
        encoder_lib.OUTPUT_KEY]
    encoder = encoder_lib.FunctionEncoder(
        lambda sentences: encode_fn(sentences)[encoder_lib.OUTPUT_KEY],
        dim=output.shape[-1])
  return SentenceModel(export_dir, encoder, pair_model=loaded)
