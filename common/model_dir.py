"""The model directory: the one place that names its files, for every reader.

A trainer's --model_dir holds model_config.json (model type, model and
tokeniser configs, training facts), flags.txt (the flags of the run),
vocab.txt, corpus_stats.json (where the model counts its corpus),
checkpoints/, tensorboard/, train_log.jsonl and eval_log.jsonl (the loss and
evaluation curves), export/<version>/, sts_results.{json,md}, corpus_fingerprint.json
(the corpus of the first pass) and run.lock (the running writer; named in
common/run_lock.py, which imports no TensorFlow). Trainers,
exporters, input readers, benchmarks and reports all take the names from
here.
"""

import glob
import hashlib
import json
import os
import shutil
import sys

import tensorflow as tf

from sentzoo.common import disk_errors
from sentzoo.common import errors

MODEL_CONFIG_FILE = "model_config.json"
FLAGS_FILE = "flags.txt"
VOCABULARY_FILE = "vocab.txt"
CORPUS_STATS_FILE = "corpus_stats.json"
CHECKPOINT_SUBDIR = "checkpoints"
TRAIN_LOG_FILE = "train_log.jsonl"
EVAL_LOG_FILE = "eval_log.jsonl"
EXPORT_SUBDIR = "export"
STS_RESULTS_FILE = "sts_results.json"
STS_TABLE_FILE = "sts_results.md"
# Written last by a run that trained to its end and exported: its step, its
# export and its flags.
FINISHED_FILE = "finished.json"
# The corpus the directory's vocabulary and plan were made from
# (inputs/data_integrity.record_corpus).
CORPUS_FINGERPRINT_FILE = "corpus_fingerprint.json"


def write_model_config(model_dir, model_type, config):
  """Records what `export` needs to rebuild the model from `model_dir`
  (atomically), with the fingerprint of its vocab.txt where it has one."""
  config = {"model_type": model_type, **config}
  path = os.path.join(model_dir, MODEL_CONFIG_FILE)
  vocabulary = os.path.join(model_dir, VOCABULARY_FILE)
  if os.path.exists(path):
    # A rerun keeps the fingerprint of the vocabulary the model was first
    # trained with (`check_vocabulary` compares the file with it).
    stored = read_json(path, "the model's configuration").get("vocabulary")
    if stored:
      config.setdefault("vocabulary", stored)
  if os.path.exists(vocabulary) and "vocabulary" not in config:
    config["vocabulary"] = vocabulary_fingerprint(vocabulary)
  write_text_atomically(path, json.dumps(config, indent=2))


def read_model_config(model_dir):
  path = os.path.join(model_dir, MODEL_CONFIG_FILE)
  if not os.path.exists(path):
    raise errors.UserError(
        f"{model_dir!r} is not a trained model directory (no "
        f"{MODEL_CONFIG_FILE}); pass the --model_dir a trainer wrote")
  return read_json(path, "the model's configuration")


def restore_latest(model_dir, **objects):
  """Restores `objects` (e.g. model=...) from the newest checkpoint that can
  be read (a damaged newest one is skipped with a warning on stderr);
  returns its path."""
  folder = os.path.join(model_dir, CHECKPOINT_SUBDIR)
  paths = checkpoints_newest_first(model_dir)
  if not paths:
    raise errors.UserError(f"no checkpoint in {folder!r}: train first")
  for path in paths:
    try:
      tf.train.Checkpoint(**objects).restore(path).expect_partial()
      return path
    except Exception as e:  # pylint: disable=broad-except
      print(f"warning: cannot restore {path} ({first_line(e)}); trying the "
            "checkpoint before it", file=sys.stderr, flush=True)
  raise errors.UserError(f"no checkpoint in {folder!r} can be restored")


def checkpoints_newest_first(model_dir):
  """The checkpoints the `checkpoint` state file of checkpoints/ lists,
  newest first (empty: none)."""
  state = tf.train.get_checkpoint_state(os.path.join(model_dir,
                                                     CHECKPOINT_SUBDIR))
  if state is None:
    return []
  paths = list(state.all_model_checkpoint_paths)
  if state.model_checkpoint_path and state.model_checkpoint_path not in paths:
    paths.append(state.model_checkpoint_path)
  return paths[::-1]


def first_line(error):
  """An exception's message, first line only (TensorFlow's run long)."""
  return (str(error).strip().splitlines() or [type(error).__name__])[0]


def latest_checkpoint(model_dir):
  """The newest checkpoint's path prefix in `model_dir`, or None."""
  return tf.train.latest_checkpoint(os.path.join(model_dir, CHECKPOINT_SUBDIR))


def write_text_atomically(path, text):
  """Writes `text` to `path` whole or not at all (`disk_errors.atomic_write`):
  a reader, or a killed run, sees the old file or the new one."""
  with disk_errors.atomic_write(path) as f:
    f.write(text)


def read_flags_file(model_dir):
  """{flag name: its line} of the flags.txt a run left, or {} if none.

  Lines are as absl writes them: `--name=value`, `--name` or `--noname`
  (booleans); a boolean's line is keyed by its name either way.
  """
  path = os.path.join(model_dir, FLAGS_FILE)
  if not os.path.exists(path):
    return {}
  lines = {}
  with open(path, encoding="utf-8") as f:
    for line in f:
      line = line.strip()
      if not line.startswith("--"):
        continue
      name = line[2:].split("=", 1)[0]
      if "=" not in line and name.startswith("no"):
        lines.setdefault(name[2:], line)
      lines[name] = line
  return lines


def check_directory_flags(model_dir, flag_values, names):
  """Raises `errors.UserError` if the run that wrote `model_dir`'s flags.txt
  had other values of the flags `names` (those that shape what the directory
  holds: vocabulary, tables) than `flag_values`; names every difference.

  Called before anything is written, so that a refused rerun leaves the
  directory as it was.
  """
  before = read_flags_file(model_dir)
  if not before:
    return
  differ = []
  for name in names:
    now = flag_values[name].serialize()
    then = before.get(name)
    if then is None:
      if flag_values[name].using_default_value:
        continue
      then = "(not set)"
    if then != now and not (then == f"--{name}" and now == f"--{name}=true"):
      differ.append(f"{now or '--' + name + '=(none)'} (the directory has "
                    f"{then})")
  if differ:
    raise errors.UserError(
        f"{model_dir!r} was trained with other settings; this run has "
        + "; ".join(differ) + ". Use another --model_dir, or the "
        "directory's flags.txt as --flagfile to resume it")


def remove_stale_checkpoint_temporaries(model_dir):
  """Removes the `<checkpoint>_temp` folders a killed save left in
  checkpoints/ (TensorFlow writes a checkpoint there, then renames it);
  returns what was removed. Only the run that writes the directory may call
  it, before it saves."""
  removed = []
  for path in glob.glob(os.path.join(model_dir, CHECKPOINT_SUBDIR, "*_temp*")):
    if os.path.isdir(path):
      shutil.rmtree(path, ignore_errors=True)
    else:
      os.remove(path)
    removed.append(path)
  return removed


def check_writable(model_dir):
  """Makes `model_dir` if needed; a `errors.UserError` naming it if it is a
  file or cannot be written."""
  if os.path.exists(model_dir) and not os.path.isdir(model_dir):
    raise errors.UserError(f"--model_dir={model_dir!r} is a file, not a "
                           "folder")
  try:
    os.makedirs(model_dir, exist_ok=True)
  except OSError as e:
    raise errors.UserError(f"cannot make --model_dir={model_dir!r}: "
                           f"{e.strerror}") from e
  if not os.access(model_dir, os.W_OK | os.X_OK):
    raise errors.UserError(f"--model_dir={model_dir!r} is not writable")


def vocabulary_fingerprint(path):
  """{"size": lines, "sha256": ...} of a vocabulary file."""
  digest = hashlib.sha256()
  size = 0
  with open(path, "rb") as f:
    for line in f:
      digest.update(line)
      size += 1
  return {"size": size, "sha256": digest.hexdigest()}


def check_vocabulary(model_dir, config):
  """Raises `errors.UserError` if vocab.txt is not the file the model was
  trained with (config["vocabulary"], stored by `write_model_config`)."""
  stored = config.get("vocabulary")
  path = os.path.join(model_dir, VOCABULARY_FILE)
  if not stored or not os.path.exists(path):
    return
  actual = vocabulary_fingerprint(path)
  if actual != stored:
    raise errors.UserError(
        f"{path} is not the vocabulary {os.path.join(model_dir, MODEL_CONFIG_FILE)}"
        f" was trained with: it has {actual['size']:,} lines (sha256 "
        f"{actual['sha256'][:12]}...), the model {stored['size']:,} (sha256 "
        f"{stored['sha256'][:12]}...)")


def read_json(path, what):
  """The JSON in `path`; an `errors.UserError` naming the file if it is not
  JSON (`what` says what the file is)."""
  try:
    with open(path, encoding="utf-8") as f:
      return json.load(f)
  except json.JSONDecodeError as e:
    raise errors.UserError(f"{path}: not valid JSON ({what}; line {e.lineno}:"
                           f" {e.msg}); delete it to rebuild it") from e
