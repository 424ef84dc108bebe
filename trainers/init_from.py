"""--init_from: start a run from a trained model's tables (continued training).

A Sent2Vec or Siamese CBOW run can start from a model trained before: its
model directory (the newest checkpoint's tables) or its float32 export
(words from vocab.txt two folders up, or `assets.extra/vocab.txt`).

  * The vocabulary is the new corpus's words that reach --min_count plus
    every word of the source, each with its count in the new corpus (0:
    never a target or a negative), sorted as a fresh vocabulary is.
  * A known word's rows are copied exactly; every other row keeps the
    value the initialiser gave it with --seed. Sent2Vec's n-gram bucket
    rows are copied as they are; its target vectors come from a model
    directory only (an export has none: they start at zero). Optimiser
    state, step and schedule start afresh.
  * Refused with one `error:` line: neither a model directory nor an
    export; another model type; an int8 or float16 export; another
    --embedding_dim, tokenisation or (Sent2Vec) --word_ngrams or bucket
    count; --strategy=parameter_server; --init_from equal to --model_dir.
  * A --model_dir with a checkpoint resumes it (the source is not read);
    one trained with another --init_from is refused as any rerun with
    other directory settings.
"""

import dataclasses
import os
from typing import Collection, Dict, List, Optional, Sequence

import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.trainers import distribution

# The export's model card and, where a packaged export carries it, its words.
MODEL_CARD_IN_EXPORT = os.path.join("assets.extra", "model_card.json")
VOCABULARY_IN_EXPORT = os.path.join("assets.extra", "vocab.txt")
# The checkpoint keys of the tables, by model type (a model directory) and
# of an export's float32 table.
_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"
_MODEL_DIR_TABLES = {
    "sent2vec": {"source": "model/source_embeddings" + _VALUE,
                 "target": "model/target_embeddings" + _VALUE},
    "siamese_cbow": {"source": "model/embedding/embeddings" + _VALUE},
}
_EXPORT_TABLE = "embeddings" + _VALUE
# Rows written per scatter (a multi-GB table is never copied whole).
_CHUNK_ROWS = 1 << 13


@dataclasses.dataclass
class InitSource:
  """A trained model whose tables start a run (`words`: word id = position
  + 1; `kind`: "model directory" or "export"; `table_keys`: {"source":
  key[, "target": key]} in `checkpoint`)."""
  path: str
  kind: str
  model_type: str
  words: List[str]
  embedding_dim: int
  tokenizer: Dict[str, bool]
  num_buckets: int
  word_ngrams: int
  checkpoint: str
  table_keys: Dict[str, str]

  def check(self, *, embedding_dim: int, tokenizer: Dict[str, bool],
            word_ngrams: int = 1, num_buckets: int = 0) -> None:
    """Refuses a run with other settings (the module docstring)."""
    where = f"--init_from={self.path!r}"
    if embedding_dim != self.embedding_dim:
      raise errors.UserError(
          f"{where} has {self.embedding_dim}-d vectors but "
          f"--embedding_dim={embedding_dim}: use "
          f"--embedding_dim={self.embedding_dim}")
    if bool(tokenizer.get("keep_punctuation")) != bool(
        self.tokenizer.get("keep_punctuation")):
      flag = ("--keep_punctuation" if self.tokenizer.get("keep_punctuation")
              else "--nokeep_punctuation")
      raise errors.UserError(
          f"{where} was tokenised with another punctuation rule: use {flag}")
    if (word_ngrams, num_buckets) != (self.word_ngrams, self.num_buckets):
      raise errors.UserError(
          f"{where} has --word_ngrams={self.word_ngrams} with "
          f"{self.num_buckets:,} n-gram buckets, this run "
          f"--word_ngrams={word_ngrams} with {num_buckets:,}: n-gram rows "
          "cannot be mapped between other bucket settings; use the "
          "source's")

  def read_table(self, role: str) -> Optional[np.ndarray]:
    """The float32 table `role` ("source" or "target"), or None."""
    key = self.table_keys.get(role)
    if key is None:
      return None
    return tf.train.load_checkpoint(self.checkpoint).get_tensor(key)


def _read_words(path: str) -> List[str]:
  return list(vocabulary_lib.Vocabulary.load(path).words)


def _from_model_dir(path: str, model_type: str) -> InitSource:
  config = model_dir_lib.read_model_config(path)
  found = config.get("model_type")
  if found != model_type:
    raise errors.UserError(f"--init_from={path!r} holds a {found} model, "
                           f"not {model_type}")
  model_dir_lib.check_vocabulary(path, config)
  checkpoint = model_dir_lib.latest_checkpoint(path)
  if checkpoint is None:
    raise errors.UserError(f"--init_from={path!r} has no checkpoint: train "
                           "it first")
  model = config["model"]
  return InitSource(
      path=path, kind="model directory", model_type=model_type,
      words=_read_words(os.path.join(path, model_dir_lib.VOCABULARY_FILE)),
      embedding_dim=int(model["embedding_dim"]),
      tokenizer=dict(config.get("tokenizer", {})),
      num_buckets=int(model.get("num_buckets", 0)),
      word_ngrams=int(config.get("featurizer", {}).get("word_ngrams", 1)),
      checkpoint=checkpoint, table_keys=dict(_MODEL_DIR_TABLES[model_type]))


def _from_export(path: str, model_type: str) -> InitSource:
  card_path = os.path.join(path, MODEL_CARD_IN_EXPORT)
  if not os.path.exists(card_path):
    raise errors.UserError(f"--init_from={path!r} is an export without "
                           f"{MODEL_CARD_IN_EXPORT}: not this project's")
  card = model_dir_lib.read_json(card_path, "the export's model card")
  found = card.get("model_type")
  if found != model_type:
    raise errors.UserError(f"--init_from={path!r} is a {found} export, not "
                           f"{model_type}")
  mode = card.get("quantization", {}).get("mode", "none")
  if mode != "none":
    raise errors.UserError(
        f"--init_from={path!r} is a {mode} export (inference only): start "
        "from its float32 export or its model directory")
  vocab_path = next(
      (p for p in (os.path.join(path, os.pardir, os.pardir,
                                model_dir_lib.VOCABULARY_FILE),
                   os.path.join(path, VOCABULARY_IN_EXPORT))
       if os.path.exists(p)), None)
  if vocab_path is None:
    raise errors.UserError(
        f"--init_from={path!r} does not list its words (no "
        f"{VOCABULARY_IN_EXPORT} and no vocab.txt two folders up): give the "
        "model directory it was exported from")
  words = _read_words(vocab_path)
  checkpoint = os.path.join(path, "variables", "variables")
  shapes = dict(tf.train.list_variables(checkpoint))
  num_buckets = int(card.get("num_buckets", 0))
  rows = len(words) + 1 + num_buckets
  if _EXPORT_TABLE not in shapes or shapes[_EXPORT_TABLE][0] != rows:
    raise errors.UserError(
        f"--init_from={path!r}: its table is not {rows:,} rows ({len(words):,}"
        f" words of {vocab_path} + padding + {num_buckets:,} buckets)")
  tokenizer = {k: v for k, v in card.get("tokenization", {}).items()
               if k != "description"}
  return InitSource(
      path=path, kind="export", model_type=model_type, words=words,
      embedding_dim=int(shapes[_EXPORT_TABLE][1]), tokenizer=tokenizer,
      num_buckets=num_buckets, word_ngrams=int(card.get("word_ngrams", 1)),
      checkpoint=checkpoint, table_keys={"source": _EXPORT_TABLE})


def open_source(path: str, model_type: str, model_dir: str) -> InitSource:
  """The `model_type` model directory or float32 export --init_from names
  (no table read yet)."""
  if not os.path.isdir(path):
    raise errors.UserError(f"--init_from={path!r} is not a folder (a model "
                           "directory or an export)")
  if model_dir and os.path.realpath(path) == os.path.realpath(model_dir):
    raise errors.UserError("--init_from names --model_dir itself: rerun "
                           "without --init_from to resume it")
  if os.path.exists(os.path.join(path, "saved_model.pb")):
    return _from_export(path, model_type)
  if os.path.exists(os.path.join(path, model_dir_lib.MODEL_CONFIG_FILE)):
    return _from_model_dir(path, model_type)
  raise errors.UserError(f"--init_from={path!r} is neither an export "
                         "(saved_model.pb) nor a model directory "
                         f"({model_dir_lib.MODEL_CONFIG_FILE})")


def source_of_run(cfg, model_type: str, model_dir: str,
                  **settings) -> Optional[InitSource]:
  """The --init_from source of a fresh run, checked against the run's
  settings (`InitSource.check`); None without --init_from or when
  `model_dir` has a checkpoint (resume wins). Refuses --strategy=parameter_server (its tables
  are sharded over other processes). A trainer's `check_flags` calls it
  too, so that its mistakes come before anything is written."""
  if cfg.init_from and cfg.strategy == distribution.PARAMETER_SERVER:
    raise errors.UserError("--init_from runs on one device or with "
                           "--strategy=mirrored/multi_worker, not "
                           "--strategy=parameter_server")
  if not cfg.init_from or model_dir_lib.latest_checkpoint(model_dir):
    return None
  source = open_source(cfg.init_from, model_type, cfg.model_dir)
  source.check(embedding_dim=cfg.embedding_dim,
               tokenizer={"keep_punctuation": cfg.keep_punctuation},
               **settings)
  return source


def merged_vocabulary(counts: Dict[bytes, int], min_count: int,
                      known_words: Collection[str],
                      max_size: Optional[int] = None
                      ) -> vocabulary_lib.Vocabulary:
  """The `counts` (word bytes -> count) words that reach `min_count` (the
  `max_size` most frequent), plus every known word, sorted as a fresh
  vocabulary (descending count, then bytes)."""
  kept = sorted(((w, c) for w, c in counts.items() if c >= min_count),
                key=lambda wc: (-wc[1], wc[0]))
  if max_size:
    kept = kept[:max_size]
  chosen = dict(kept)
  for word in known_words:
    key = word.encode("utf-8")
    chosen.setdefault(key, int(counts.get(key, 0)))
  merged = sorted(chosen.items(), key=lambda wc: (-wc[1], wc[0]))
  return vocabulary_lib.Vocabulary([w.decode("utf-8") for w, _ in merged],
                                   [c for _, c in merged])


def row_map(old_words: Sequence[str], new_words: Sequence[str]):
  """(new rows, old rows), int64: the table rows (word id = position + 1)
  of the words both vocabularies have."""
  old_ids = {w: i for i, w in enumerate(old_words, start=1)}
  pairs = [(i, old_ids[w]) for i, w in enumerate(new_words, start=1)
           if w in old_ids]
  if not pairs:
    return np.zeros([0], np.int64), np.zeros([0], np.int64)
  new_rows, old_rows = zip(*pairs)
  return np.asarray(new_rows, np.int64), np.asarray(old_rows, np.int64)


def copy_known_rows(variable, old_table: np.ndarray,
                    old_words: Sequence[str], new_words: Sequence[str],
                    num_buckets: int = 0) -> int:
  """Copies the rows of the words both vocabularies have (and the
  `num_buckets` rows after the words) from `old_table` into every copy of
  `variable`, in chunks; returns the number of words copied."""
  new_rows, old_rows = row_map(old_words, new_words)
  if num_buckets:
    new_rows = np.concatenate([new_rows, np.arange(
        len(new_words) + 1, len(new_words) + 1 + num_buckets)])
    old_rows = np.concatenate([old_rows, np.arange(
        len(old_words) + 1, len(old_words) + 1 + num_buckets)])
  table = variable.value if isinstance(variable, keras.Variable) else variable
  copies = getattr(table, "values", None) or (table,)
  for start in range(0, len(new_rows), _CHUNK_ROWS):
    rows = new_rows[start:start + _CHUNK_ROWS]
    values = tf.constant(old_table[old_rows[start:start + _CHUNK_ROWS]],
                         table.dtype)
    for copy in copies:
      copy.scatter_update(tf.IndexedSlices(values, tf.constant(rows)))
  return len(new_rows) - num_buckets


def describe(source: InitSource, vocabulary_size: int, copied: int) -> str:
  """The line a run prints when it starts from `source`."""
  return (f"--init_from: {copied:,} of {vocabulary_size:,} words start from "
          f"the {source.kind} {source.path} ({len(source.words):,} words); "
          f"{vocabulary_size - copied:,} new words are initialised as from "
          "scratch")
