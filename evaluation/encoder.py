"""The one small interface evaluation uses for any sentence encoder.

An encoder maps a list of n sentences to a float32 array [n, dim]: an
in-memory callable (`FunctionEncoder`) or an export (`SavedModelEncoder`).

  encoder = load_encoder("/path/to/exports/my_model")  # base or version dir
  vectors = encoder.encode(["a man is walking .", "a dog runs ."])  # [2, dim]
"""

import abc
import os
from typing import Callable, Optional, Sequence

from absl import logging
import numpy as np
import tensorflow as tf

from sentzoo.common import errors

SIGNATURE_KEY = "serving_default"
INPUT_KEY = "sentences"
OUTPUT_KEY = "embeddings"
_SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")


class Encoder(abc.ABC):
  """A sentence encoder: sentences in, float32 [n, dim] embeddings out.

  Subclasses implement `_encode_batch`; `encode` does the batching, the empty
  input case and the dtype/shape checks.
  """

  _dim: Optional[int] = None

  @property
  def dim(self) -> Optional[int]:
    """The embedding size, or None while it is not known yet."""
    return self._dim

  @abc.abstractmethod
  def _encode_batch(self, sentences: Sequence[str]) -> np.ndarray:
    """Encodes a non-empty batch of b sentences into an array [b, dim]."""

  def encode(self, sentences: Sequence[str], batch_size: int = 1024
             ) -> np.ndarray:
    """Encodes sentences in batches.

    Args:
      sentences: n Python strings.
      batch_size: how many sentences go to the model per call.

    Returns:
      np.ndarray float32 [n, dim]. For n == 0: [0, dim], or [0, 0] if the
      dimension is not known; the model is not called.
    """
    if batch_size < 1:
      raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    sentences = list(sentences)
    if not sentences:
      return np.zeros([0, self.dim or 0], np.float32)
    parts = []
    for start in range(0, len(sentences), batch_size):
      batch = sentences[start:start + batch_size]
      out = np.asarray(self._encode_batch(batch), dtype=np.float32)
      if out.ndim != 2 or out.shape[0] != len(batch):
        raise ValueError(
            f"encoder returned shape {out.shape} for a batch of {len(batch)} "
            "sentences; expected [batch, dim]")
      if self._dim is None:
        self._dim = int(out.shape[1])
      elif out.shape[1] != self._dim:
        raise ValueError(f"encoder returned dim {out.shape[1]}, "
                         f"expected {self._dim}")
      parts.append(out)
    return np.concatenate(parts, axis=0)


class FunctionEncoder(Encoder):
  """Wraps a callable: tf.string tensor [batch] -> float tensor [batch, dim]."""

  def __init__(self, fn: Callable[[tf.Tensor], tf.Tensor],
               dim: Optional[int] = None):
    """Creates the encoder.

    Args:
      fn: called with a 1-D tf.string tensor [batch]; returns a float tensor
        (or array) [batch, dim]. For a `tf.function` method of a tf.Module,
        keep a reference to the module: the bound method holds it weakly.
      dim: the embedding size if known up front; learned on the first call
        otherwise.
    """
    self._fn = fn
    self._dim = dim

  def _encode_batch(self, sentences):
    out = self._fn(tf.constant(list(sentences), dtype=tf.string))
    if isinstance(out, tf.Tensor):
      out = tf.cast(out, tf.float32).numpy()
    return out


def _is_saved_model_dir(path: str) -> bool:
  return any(os.path.isfile(os.path.join(path, f)) for f in _SAVED_MODEL_FILES)


def resolve_export_dir(path: str) -> str:
  """Returns the SavedModel directory for an export base or version dir.

  Args:
    path: a SavedModel directory (holds saved_model.pb), or an export base
      directory holding integer version subfolders ("1", "2", ...). Of those,
      the highest integer that holds a SavedModel is used; other names
      (e.g. "temp-1234" dirs of an export in progress) are ignored.

  Raises:
    errors.DataDirError: if no SavedModel is found there.
  """
  if not path:
    raise errors.DataDirError("no model path given")
  if os.path.isfile(path) and os.path.basename(path) in _SAVED_MODEL_FILES:
    path = os.path.dirname(path) or "."
  if os.path.exists(path) and not os.path.isdir(path):
    raise errors.DataDirError(
        f"model path {path!r} is a file, not a model: pass an export's "
        "folder (it holds saved_model.pb, or integer version folders "
        "1/, 2/, ... that do)")
  if not os.path.isdir(path):
    raise errors.DataDirError(f"model path {path!r} does not exist")
  if _is_saved_model_dir(path):
    return path
  versions = []
  for name in os.listdir(path):
    if name.isdigit() and os.path.isdir(os.path.join(path, name)):
      versions.append(int(name))
  for version in sorted(versions, reverse=True):
    candidate = os.path.join(path, str(version))
    if _is_saved_model_dir(candidate):
      if version != max(versions):
        logging.warning("export %s: highest version %d holds no SavedModel; "
                        "using version %d", path, max(versions), version)
      return candidate
  raise errors.DataDirError(
      f"no SavedModel at {path!r}: expected saved_model.pb there or in an "
      "integer version subfolder (e.g. 1/saved_model.pb)")


class SavedModelEncoder(Encoder):
  """Encodes with an exported SavedModel's "serving_default" signature.

  The signature takes `sentences`: tf.string [batch] and returns a dict with
  `embeddings`: float [batch, dim].
  """

  def __init__(self, path: str):
    """Loads the export at `path` (see `resolve_export_dir`).

    Raises:
      errors.DataDirError: no SavedModel at `path`.
      errors.UserError: the SavedModel lacks the expected signature.
    """
    self.export_dir = resolve_export_dir(path)
    try:
      self._loaded = tf.saved_model.load(self.export_dir)
    except (OSError, ValueError, IndexError, KeyError,
            tf.errors.OpError) as e:
      # A truncated variables file is an IndexError.
      first_line = (str(e).strip().splitlines() or [""])[0][:200]
      raise errors.DataDirError(
          f"cannot load the SavedModel at {self.export_dir!r}, it looks "
          f"damaged ({type(e).__name__}: {first_line}); export it "
          "again") from e
    signatures = getattr(self._loaded, "signatures", {}) or {}
    if SIGNATURE_KEY not in signatures:
      raise errors.UserError(
          f"SavedModel at {self.export_dir!r} has no {SIGNATURE_KEY!r} "
          f"signature (has: {sorted(signatures.keys())})")
    # The loaded serving_default function (what TF Serving runs).
    self.signature = signatures[SIGNATURE_KEY]
    _, input_kwargs = self.signature.structured_input_signature
    if INPUT_KEY not in input_kwargs:
      raise errors.UserError(
          f"SavedModel at {self.export_dir!r}: signature {SIGNATURE_KEY!r} "
          f"has no {INPUT_KEY!r} input (has: {sorted(input_kwargs)})")
    outputs = self.signature.structured_outputs
    if OUTPUT_KEY not in outputs:
      raise errors.UserError(
          f"SavedModel at {self.export_dir!r}: signature {SIGNATURE_KEY!r} "
          f"has no {OUTPUT_KEY!r} output (has: {sorted(outputs)})")
    shape = outputs[OUTPUT_KEY].shape
    if shape.rank == 2 and shape[-1] is not None:
      self._dim = int(shape[-1])

  def _encode_batch(self, sentences):
    out = self.signature(
        **{INPUT_KEY: tf.constant(list(sentences), dtype=tf.string)})
    return tf.cast(out[OUTPUT_KEY], tf.float32).numpy()


def load_encoder(path: str) -> SavedModelEncoder:
  """Returns a `SavedModelEncoder` for an export base or version dir."""
  return SavedModelEncoder(path)
