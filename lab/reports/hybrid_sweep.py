r"""Trains the hybrid siamese matcher's table: encoders x losses x seeds.

  python -m lab.reports.hybrid_sweep --data_dir=../shared/data \
      --word_vector_choice=runs/zoo_word_vectors.json \
      --runs_dir=runs/hybrid_table --output=docs/hybrid_siamese.md

Trains, in this process, each run that has neither results.json nor a
record (`hybrid_siamese.run` with configs/hybrid_<task>_<encoder>.flags,
--mode=<loss>, --seed=<k>; its output to train.log in its folder), seed 0 of
every cell before seed 1 of any; --retrain=CELL[/seed<k>] trains a recorded
run again. Each finished run is recorded (`lab.records`) and the page of the
runs is printed (`make docs` writes docs/hybrid_siamese.md from the records);
the flags are `lab.reports.hybrid_table`'s (absl's process-wide flags are the
trainer's).
"""

import contextlib
import os
import sys
import time
from typing import Sequence

from absl import flags
import numpy as np

from lab import records
from lab.reports import hybrid_table
from lab.reports import word_vector_choice
from sentzoo.common import cli
from sentzoo.common import errors
from sentzoo.trainers import hybrid_siamese


def define_flags(flag_values: flags.FlagValues) -> None:
  """The page's flags (`hybrid_table.define_flags`) and the training's."""
  hybrid_table.define_flags(flag_values)
  flags.DEFINE_string("word_vectors", None, "Word vectors for every run: "
                      "a GloVe/word2vec text file, or a model dir or export "
                      "of this project (see inputs/word_vectors.py).",
                      flag_values=flag_values)
  flags.DEFINE_string("word_vectors_vocab", None, "Vocabulary of an export "
                      "given as --word_vectors (default: found beside it).",
                      flag_values=flag_values)
  flags.DEFINE_list("retrain", [], "Runs to train even though they have a "
                    "record: CELL (every seed) or CELL/seed<k>, CELL = "
                    "<task>_<encoder>_<loss>.", flag_values=flag_values)
  flags.DEFINE_integer("num_epochs", 0, "Override the flagfiles' epochs "
                       "(0: keep them, 20).", flag_values=flag_values)
  flags.DEFINE_list("extra_flags", [], "More trainer flags for every run.",
                    flag_values=flag_values)


def write_record(fv, task, encoder, mode, seed):
  """Copies a finished run's results.json and test decisions into its
  record; returns the record folder (None without --records_dir)."""
  destination = hybrid_table.record_dir(fv, task, encoder, mode, seed)
  if destination is None:
    return None
  source = hybrid_table.run_dir(fv, task, encoder, mode, seed)
  records.copy_files(source, destination, [hybrid_siamese.RESULTS_FILE])
  predictions = os.path.join(source, hybrid_siamese.TEST_PREDICTIONS_FILE)
  if os.path.exists(predictions):
    with np.load(predictions) as saved:
      records.save_bools(
          os.path.join(destination, hybrid_siamese.TEST_PREDICTIONS_FILE),
          {k: saved[k] for k in saved.files})
  return destination


def train_argv(fv, task, encoder, mode, seed):
  """The flags of one run for `hybrid_siamese.run` (no program name)."""
  argv = [f"--flagfile=configs/hybrid_{task}_{encoder}.flags",
          f"--mode={mode}", f"--seed={seed}",
          f"--model_dir={hybrid_table.run_dir(fv, task, encoder, mode, seed)}",
          "--noexport"]
  if fv.data_dir:
    argv.append(f"--data_dir={fv.data_dir}")
  if fv.word_vectors:
    argv.append(f"--word_vectors={fv.word_vectors}")
  if fv.word_vectors_vocab:
    argv.append(f"--word_vectors_vocab={fv.word_vectors_vocab}")
  if fv.num_epochs:
    argv.append(f"--num_epochs={fv.num_epochs}")
  return argv + list(fv.extra_flags)


@contextlib.contextmanager
def _output_to(path):
  """Appends this process's stdout and stderr to the file `path`.

  At the level of file descriptors 1 and 2, so that Python's, absl's and
  TensorFlow's C++ output all go there.
  """
  sys.stdout.flush()
  sys.stderr.flush()
  saved = [os.dup(1), os.dup(2)]
  try:
    with open(path, "a", buffering=1) as log:
      os.dup2(log.fileno(), 1)
      os.dup2(log.fileno(), 2)
      try:
        # Also the Python streams, where they are not descriptors 1 and 2
        # (a test runner's capture).
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
          yield
      finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
  finally:
    for fd in saved:
      os.close(fd)


def train_all(fv):
  """Trains the runs without results.json or a record (and --retrain's),
  seeds outermost so that an interrupted sweep covers the whole table;
  records every finished run."""
  retrain = records.parse_retrain(fv.retrain)
  for seed in records.parse_seeds(fv.seeds):
    for task in fv.tasks:
      for encoder in fv.encoders:
        for mode in fv.modes:
          folder = hybrid_table.run_dir(fv, task, encoder, mode, seed)
          record = hybrid_table.record_dir(fv, task, encoder, mode, seed)
          asked = records.asked_for(
              retrain, hybrid_table.cell_name(task, encoder, mode), seed)
          recorded = records.first_with(hybrid_siamese.RESULTS_FILE,
                                            record) is not None
          finished = records.first_with(hybrid_siamese.RESULTS_FILE,
                                            folder) is not None
          if not asked and (finished or recorded):
            if finished and record and not recorded:
              write_record(fv, task, encoder, mode, seed)
              print(f"{task} {encoder} {mode} seed {seed}: recorded in "
                    f"{record}", flush=True)
            continue
          os.makedirs(folder, exist_ok=True)
          log = os.path.join(folder, "train.log")
          print(f"{time.strftime('%H:%M:%S')} training {task} {encoder} "
                f"{mode} seed {seed}: log {log}", flush=True)
          try:
            with _output_to(log):
              hybrid_siamese.run(train_argv(fv, task, encoder, mode, seed))
          except errors.UserError as e:
            raise errors.UserError(f"{task} {encoder} {mode} seed {seed}: "
                                   f"{e} (log: {log})") from e
          result = hybrid_table.read_results(fv, task, encoder, mode, seed)
          print(f"  test accuracy {100 * result['test_accuracy']:.2f} at "
                f"best dev epoch {result['best_epoch']}", flush=True)
          if write_record(fv, task, encoder, mode, seed):
            print(f"  recorded in {record}", flush=True)


def run(argv: Sequence[str]) -> str:
  """Trains the missing runs, then prints the page (argv[0]: the program).
  An interrupted run (errors.Interrupted) resumes when run again."""
  return sweep(cli.parse_own_flags(define_flags, argv))


def sweep(fv) -> str:
  """Trains the missing runs of the parsed flags, then prints the page."""
  hybrid_table.check_flags(fv)
  if fv.word_vector_choice:
    if fv.word_vectors:
      raise errors.UserError("give --word_vectors or --word_vector_choice, "
                             "not both")
    fv.word_vectors = word_vector_choice.read_choice(
        fv.word_vector_choice)["model_dir"]
  train_all(fv)
  page = hybrid_table.render(fv)
  print(page)
  return page


if __name__ == "__main__":
  cli.run_with_own_flags(define_flags, sweep)
