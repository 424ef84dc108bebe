"""A trainer's settings: one dataclass, whose fields are the command's flags.

Each trainer's settings dataclass extends `TrainingConfig` (or
`CorpusConfig`), as TF Model Garden's `ExperimentConfig`; a field is made
with `setting(default, help, ...)`; `default(value)` changes only an
inherited field's default, and `shared(value)` declares one of the
`SHARED_SETTINGS` (one help text for the trainers that take it).
`define_flags` makes the absl flags, so every --flagfile still reads;
`from_flags` gives the dataclass back.

Metadata: "directory" settings shape what the model directory holds (a
rerun with another value is refused before anything is written); "runtime"
ones only say how a run goes (changing one does not make a finished run's
rerun a new run).
"""

import dataclasses
import os
import sys
import typing
from typing import Any, List, Optional, Sequence, Tuple

from absl import flags

from sentzoo.common import cli
from sentzoo.common import errors
from sentzoo.export import input_limits
from sentzoo.export import table_quantization
from sentzoo.trainers import distribution

_INHERIT = "inherit"
_SHARED = "shared"


def _checks(help: str, *,  # pylint: disable=redefined-builtin
            lower_bound=None, upper_bound=None,
            choices: Optional[Sequence[str]] = None, positive: bool = False,
            positive_ints: bool = False, directory: bool = False,
            runtime: bool = False):
  """A setting's flag help and checks (inclusive bounds; `positive`: a
  float > 0; `positive_ints`: every list item an int >= 1) and metadata."""
  return dict(help=help, lower_bound=lower_bound, upper_bound=upper_bound,
              choices=None if choices is None else list(choices),
              positive=positive, positive_ints=positive_ints,
              directory=directory, runtime=runtime)


def _field(value: Any, metadata):
  if isinstance(value, list):  # Copied per instance.
    return dataclasses.field(default_factory=lambda: list(value),
                             metadata=metadata)
  return dataclasses.field(default=value, metadata=metadata)


def setting(default: Any, help: str,  # pylint: disable=redefined-builtin
            **checks):
  """A settings field: its flag's default, help and checks (`_checks`)."""
  return _field(default, _checks(help, **checks))


def default(value: Any):
  """An inherited field with another default (its help and checks kept)."""
  return _field(value, {_INHERIT: True})


def shared(value: Any, **checks):
  """A field of `SHARED_SETTINGS`, with this trainer's default (and any
  check that differs, e.g. a bound)."""
  return _field(value, {_SHARED: checks})


# The settings that several trainers take with one meaning: one help text
# and one set of checks each; a trainer declares one with `shared`.
SHARED_SETTINGS = {
    "embedding_dim": dict(
        help="Word vector size d (Sent2Vec's -dim); an averaging model's "
        "sentence vectors have it too. With --word_vectors, theirs: "
        "CHARAGRAM checks it, hybrid_siamese ignores it.",
        lower_bound=1, directory=True),
    "keep_punctuation": dict(
        help="Keep punctuation tokens (Sent2Vec's C++ baseline keeps them; "
        "the Siamese CBOW reference code drops them, so a PARAGRAM-PHRASE "
        "model on a Siamese CBOW vocabulary must too).", directory=True),
    "min_count": dict(
        help="Minimum corpus count of a vocabulary word (Sent2Vec's "
        "-minCount).", lower_bound=1, directory=True),
    "batch_size": dict(
        help="Training examples per batch (pairs; Siamese CBOW: groups): "
        "the global batch, split across replicas with --strategy. CHARAGRAM "
        "takes its negatives from all of it, so at least 2.", lower_bound=1),
    "max_length": dict(
        help="Tokens kept per training sentence (CHARAGRAM: per phrase, "
        "with their n-grams) before a batch is built; hybrid_siamese's "
        "evaluation and export cut sentences there too.", lower_bound=1),
    "num_negatives": dict(
        help="Negatives per example (Siamese CBOW: random sentences per "
        "group, n; Sent2Vec: per target, -neg).", lower_bound=1),
    "margin": dict(
        help="The loss's margin (CHARAGRAM: delta of the paraphrase margin "
        "loss; hybrid_siamese: M of the contrastive loss).", lower_bound=0),
}


def _metadata(config_class, name):
  """Field `name`'s metadata, from the class that declared it."""
  for cls in config_class.__mro__:
    field = getattr(cls, "__dataclass_fields__", {}).get(name)
    if field is None or _INHERIT in field.metadata:
      continue
    if _SHARED in field.metadata:
      return _checks(**{**SHARED_SETTINGS[name], **field.metadata[_SHARED]})
    return field.metadata
  raise TypeError(f"{config_class.__name__}.{name} overrides no setting")


def _fields(config_class):
  """(name, type, default, metadata) of every field, in declaration order."""
  hints = typing.get_type_hints(config_class)
  for field in dataclasses.fields(config_class):
    value = (field.default_factory() if field.default is dataclasses.MISSING
             else field.default)
    yield field.name, hints[field.name], value, _metadata(config_class,
                                                          field.name)


def define_flags(config_class, flag_values: flags.FlagValues) -> None:
  """Defines one flag per field of `config_class` in `flag_values`."""
  module_name = config_class.__module__
  if module_name == "__main__":
    # absl's help looks the main module's flags up under sys.argv[0] (as
    # its own DEFINEs file them): under "__main__", `python -m trainers.x
    # --help` listed none of them.
    module_name = sys.argv[0]
  for name, kind, value, meta in _fields(config_class):
    args = dict(flag_values=flag_values, module_name=module_name)
    bounds = dict(lower_bound=meta["lower_bound"],
                  upper_bound=meta["upper_bound"])
    base = (typing.get_args(kind)[0] if typing.get_origin(kind) is typing.Union
            else kind)
    if meta["choices"] is not None:
      flags.DEFINE_enum(name, value, meta["choices"], meta["help"], **args)
    elif base is bool:
      flags.DEFINE_bool(name, value, meta["help"], **args)
    elif base is int:
      flags.DEFINE_integer(name, value, meta["help"], **bounds, **args)
    elif base is float:
      flags.DEFINE_float(name, value, meta["help"], **bounds, **args)
    elif typing.get_origin(base) is list:
      flags.DEFINE_list(name, value, meta["help"], **args)
    else:
      flags.DEFINE_string(name, value, meta["help"], **args)
    if meta["positive"]:
      cli.positive_float(name, flag_values)
    if meta["positive_ints"]:
      cli.positive_int_list(name, flag_values)


def from_flags(config_class, flag_values: flags.FlagValues):
  """The settings the parsed `flag_values` hold."""
  return config_class(**{field.name: flag_values[field.name].value
                         for field in dataclasses.fields(config_class)})


def names(config_class, kind: str) -> Tuple[str, ...]:
  """The fields whose metadata marks them `kind` ("directory", "runtime")."""
  return tuple(name for name, _, _, meta in _fields(config_class)
               if meta[kind])


@dataclasses.dataclass
class TrainingConfig:
  """The settings every trainer takes, with the same meaning."""
  data_dir: Optional[str] = setting(
      None, "Data directory (default $SENTZOO_DATA_DIR).", runtime=True)
  model_dir: Optional[str] = setting(
      None, "Where checkpoints, logs, vocabulary and the export go "
      "(required).", runtime=True)
  export_dir: Optional[str] = setting(
      None, "Export base folder; default <model_dir>/export.", runtime=True)
  export: bool = setting(
      True, "At the end, export the model and (for a sentence encoder) "
      "evaluate the export.", runtime=True)
  seed: int = setting(0, "Seed for initialisation and sampling.",
                      lower_bound=0)
  learning_rate: float = setting(1e-3, "Initial learning rate.",
                                 positive=True)
  num_epochs: int = setting(1, "Passes over the training data.",
                            lower_bound=1)
  train_steps: int = setting(
      0, "Stop after this many batches (0: num_epochs full passes).",
      lower_bound=0)
  max_steps_per_run: int = setting(
      0, "Checkpoint and stop after this many steps of this invocation (0: "
      "run to the end); rerun the same command to continue.", lower_bound=0,
      runtime=True)
  checkpoint_every_steps: int = setting(
      2000, "Checkpoint interval in steps (0: once per epoch).",
      lower_bound=0, runtime=True)
  max_checkpoints: int = setting(
      3, "Checkpoints kept in <model_dir>/checkpoints: the newest ones (the "
      "next is written before the oldest is deleted, so the disk holds one "
      "more while saving). Each holds every table: 6.1 GB for Sent2Vec "
      "uni+bi with 2M buckets.", lower_bound=1, runtime=True)
  log_every_steps: int = setting(500, "Console/TensorBoard interval.",
                                 lower_bound=1, runtime=True)
  eval_every_steps: int = setting(
      0, "Dev evaluation interval in steps (0: only at the end; a model "
      "that keeps its best epoch evaluates every epoch whatever this says).",
      lower_bound=0, runtime=True)
  jit_compile: bool = setting(False, "Compile the train step with XLA.",
                              runtime=True)
  max_bytes_per_sentence: int = setting(
      input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE,
      "The export cuts each input sentence to this many bytes before "
      "tokenising it (recorded in its model card; export/input_limits.py).",
      lower_bound=1, upper_bound=2**31 - 1, runtime=True)
  max_tokens_per_sentence: int = setting(
      input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE,
      "The export keeps at most this many tokens of each input sentence "
      "(recorded in its model card).", lower_bound=1, upper_bound=2**31 - 1,
      runtime=True)
  quantize: str = setting(
      "none", "Store the export's table as float16 or row-wise int8: a "
      "smaller, inference-only export of an averaging model (sent2vec, "
      "siamese_cbow, paragram_phrase; recorded in its model card; "
      "export/table_quantization.py).", choices=table_quantization.MODES,
      runtime=True)
  reexport: bool = setting(
      False, "When the model directory holds a run that finished with the "
      "same flags (rerunning it does nothing): export its last checkpoint "
      "again.", runtime=True)
  strategy: str = setting(
      distribution.DEFAULT, distribution.STRATEGY_HELP,
      choices=distribution.STRATEGIES, runtime=True)
  num_cpu_devices: int = setting(0, distribution.NUM_CPU_DEVICES_HELP,
                                 lower_bound=0, runtime=True)
  deterministic: bool = setting(
      False, "Train reproducibly: the same flags give the same model to the "
      "bit, and a resumed run the model of an uninterrupted one: one step "
      "loop (--step_threads=1) where the trainer would run several (Sent2Vec "
      "by default: Hogwild step threads, whose updates interleave as the "
      "CPUs schedule them, faster, but two runs end with other tables). "
      "Siamese CBOW runs one loop by default, CHARAGRAM and the hybrid "
      "matcher have no step loops: they train the same either way.",
      runtime=True)


@dataclasses.dataclass
class CorpusConfig(TrainingConfig):
  """The settings of a model trained on a text corpus."""
  corpus_parts: List[str] = setting(
      [], "Book corpus parts to train on, e.g. 1 for part01 alone; empty: "
      "all parts.", directory=True)
  corpus_files: Optional[str] = setting(
      None, "Comma-separated globs of corpus files (one sentence per line, "
      "empty line between documents); overrides --corpus_parts.",
      directory=True)
  verify_data: bool = setting(
      True, "Before the first pass over the corpus (when the vocabulary is "
      "built), read every corpus file to its end (a truncated gzip is an "
      "error), check book corpus parts against gutenberg/index.tsv and "
      "files against SHA256SUMS where the data dir has them (~4 s for the "
      "book corpus); --noverify_data skips it.", runtime=True)
  init_from: Optional[str] = setting(
      None, "Continued training: start from the tables of a trained model "
      "of the same type, its model directory or float32 export; the "
      "vocabulary is the new corpus's merged with the model's (known words "
      "keep their rows). Same --embedding_dim and tokenisation; "
      "trainers/init_from.py has the rules.", directory=True)
  steps_per_call: int = setting(
      16, "Steps run per call of one graph that loops over the input (one "
      "device; logs, evaluations and checkpoints still happen at their "
      "steps): saves the Python dispatch of each step, which costs small "
      "steps ~10% of their speed. 1: one call per step.", lower_bound=1,
      runtime=True)
  step_threads: int = setting(
      0, "One device: step loops running at once, each from its own thread, "
      "on the shared input and tables (Hogwild, as the C++ Sent2Vec code's "
      "-thread threads): concurrent updates of a row all count, but in the "
      "order the CPUs run them, so the run is not deterministic. 0: one per "
      "CPU this process may use (os.sched_getaffinity), at most "
      "--steps_per_call; 1 with --deterministic or --strategy.",
      lower_bound=0, runtime=True)


def step_threads(cfg) -> int:
  """The step loops a `CorpusConfig` run uses (its --step_threads
  resolved)."""
  if cfg.step_threads:
    return cfg.step_threads
  if cfg.deterministic or cfg.strategy != distribution.DEFAULT:
    return 1
  return max(1, min(len(os.sched_getaffinity(0)), cfg.steps_per_call))


def check_step_threads(cfg) -> None:
  """A `UserError` for a --step_threads the run cannot use."""
  if cfg.step_threads > 1 and cfg.deterministic:
    raise errors.UserError(
        f"--step_threads={cfg.step_threads} is not deterministic: leave out "
        "--step_threads or --deterministic")
  if cfg.step_threads > 1 and (cfg.strategy != distribution.DEFAULT
                               or cfg.steps_per_call < cfg.step_threads):
    raise errors.UserError(
        f"--step_threads={cfg.step_threads} runs on one device (no "
        "--strategy) and needs --steps_per_call >= --step_threads")
