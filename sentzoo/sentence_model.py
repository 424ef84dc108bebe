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
The sentence encoders are the evaluation code's (`evaluation.encoder`).
`sentzoo.load` and `sentzoo.similarity` are this module's `load` and
`similarity`, imported on first use.
"""

import os
import sys
from typing import Optional, Sequence, Tuple, Union

import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.export import signature_info

# The pair classifier's serving_default (export/hybrid_siamese_export.py).
PAIR_INPUT_KEYS = ("sentences_a", "sentences_b")
PAIR_OUTPUT_KEY = "probability"
# Its root's function that encodes one batch of sentences.
PAIR_ENCODE_FUNCTION = "encode"

Sentences = Union[str, Sequence[str]]


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
  sentences = list(sentences)
  for i, sentence in enumerate(sentences):
    if not isinstance(sentence, (str, bytes)):
      raise TypeError(f"{name}[{i}] is {type(sentence).__name__}, "
                      "expected str")
  return sentences


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
          "`python -m export.hybrid_siamese_export --encoder_only`")
    return self._encoder

  def encode(self, sentences: Sentences, batch_size: int = 64,
             show_progress: bool = False) -> np.ndarray:
    """Embeds sentences.

    Args:
      sentences: n sentences (a list of str), or one str (n = 1). Raw text:
        the export tokenises it. An empty sentence, or one with no known
        word, gives the model's vector of no words (zeros for the averaging
        models), never NaN.
      batch_size: sentences per call of the model.
      show_progress: print "encoded i/n sentences" on stderr after each
        batch.

    Returns:
      np.float32 [n, d]; [0, d] for no sentences.

    Raises:
      TypeError: an item is not a str.
      errors.UserError: a pair model without an encoder.
    """
    encoder = self._checked_encoder()
    if batch_size < 1:
      raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    sentences = _sentence_list(sentences)
    if not sentences:
      return np.zeros([0, self.dim], np.float32)
    if not show_progress:
      return encoder.encode(sentences, batch_size)
    parts = []
    for start in range(0, len(sentences), batch_size):
      parts.append(encoder.encode(sentences[start:start + batch_size],
                                  batch_size))
      done = min(start + batch_size, len(sentences))
      print(f"\rencoded {done}/{len(sentences)} sentences", end="",
            file=sys.stderr, flush=True)
    print(file=sys.stderr, flush=True)
    return np.concatenate(parts, axis=0)

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
    serve = self._pair_model.signatures["serving_default"]
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
    path: a SavedModel folder (holds saved_model.pb), or an export base
      folder holding integer versions ("1", "2", ...): the highest is used.

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
  inputs = tuple(sorted(signature_info.read_signature(export_dir).inputs))
  if inputs == (encoder_lib.INPUT_KEY,):
    return SentenceModel(export_dir, encoder_lib.load_encoder(export_dir))
  if inputs != PAIR_INPUT_KEYS:
    raise errors.UserError(
        f"{export_dir!r}: serving_default takes {list(inputs)}; expected "
        f"[{encoder_lib.INPUT_KEY!r}] (a sentence encoder) or "
        f"{list(PAIR_INPUT_KEYS)} (a pair model)")
  try:
    loaded = tf.saved_model.load(export_dir)
  except (OSError, ValueError, tf.errors.OpError) as e:
    raise errors.DataDirError(
        f"cannot load SavedModel at {export_dir!r}: {e}") from e
  encoder = None
  encode_fn = getattr(loaded, PAIR_ENCODE_FUNCTION, None)
  if encode_fn is not None:
    output = encode_fn.concrete_functions[0].structured_outputs[
        encoder_lib.OUTPUT_KEY]
    encoder = encoder_lib.FunctionEncoder(
        lambda sentences: encode_fn(sentences)[encoder_lib.OUTPUT_KEY],
        dim=output.shape[-1])
  return SentenceModel(export_dir, encoder, pair_model=loaded)
