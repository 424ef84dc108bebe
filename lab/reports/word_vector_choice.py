r"""Which of the zoo's trained word vectors the other models start from.

The hybrid matcher (instead of GloVe) and PARAGRAM-PHRASE (instead of
PARAGRAM-SL999) start from the zoo's own averaged word vectors: Siamese CBOW
or unigram Sent2Vec. This picks, among such finished runs, the one with the
highest STS-B dev Pearson (never a test set), from its sts_results.json or
else its newest export's model card, and writes the choice as JSON:

  python -m lab.reports.word_vector_choice \
      --candidate="Siamese CBOW=runs/siamese_cbow_best" \
      --candidate="Sent2Vec uni=runs/sent2vec_books_uni" \
      --output_json=runs/zoo_word_vectors.json
"""

import dataclasses
import json
import os

from absl import flags

from lab import tables
from sentzoo.common import cli
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.export import saved_model_writer

STSB_DEV = "STSB.dev"
# Model types whose sentence embedding is the average of their word vectors
# (Sent2Vec only with --word_ngrams=1).
AVERAGING_MODEL_TYPES = ("siamese_cbow", "sent2vec")


@dataclasses.dataclass
class Candidate:
  """One trained model directory offered as the zoo's word vectors."""
  name: str
  model_dir: str
  model_type: str
  dev_pearson: float


def read_candidate(name, model_dir):
  """A finished averaging run's type and STS-B dev Pearson (x 100); a
  UserError for anything else (n-grams, no dev result, other models)."""
  config = model_dir_lib.read_model_config(model_dir)
  model_type = config.get("model_type")
  if model_type not in AVERAGING_MODEL_TYPES:
    raise errors.UserError(
        f"{model_dir!r} is a {model_type} model; word vectors come from "
        f"{' or '.join(AVERAGING_MODEL_TYPES)} runs")
  word_ngrams = config.get("featurizer", {}).get("word_ngrams", 1)
  if word_ngrams != 1:
    raise errors.UserError(
        f"{model_dir!r} averages word {word_ngrams}-grams, so its STS-B dev "
        "score is not that of its word vectors: use a unigram run")
  path = os.path.join(model_dir, model_dir_lib.STS_RESULTS_FILE)
  if not os.path.exists(path):
    raise errors.UserError(
        f"{model_dir!r} has no {model_dir_lib.STS_RESULTS_FILE}: train it to "
        "its end first (the trainer evaluates it last)")
  results = model_dir_lib.read_json(path, "the run's final evaluation")
  dev = results.get("sets", {}).get(STSB_DEV) or _export_card_dev(model_dir)
  if dev is None:
    raise errors.UserError(
        f"{path} has no {STSB_DEV} result, nor has the model card of the "
        f"run's newest export: export it again (`--reexport`) with the data "
        "directory at hand")
  return Candidate(name=name, model_dir=model_dir, model_type=model_type,
                   dev_pearson=float(dev["pearson"]))


def _export_card_dev(model_dir):
  """The STS-B dev result in the newest export's model card, or None."""
  try:
    export_dir = encoder_lib.resolve_export_dir(
        os.path.join(model_dir, model_dir_lib.EXPORT_SUBDIR))
  except errors.DataDirError:
    return None
  path = os.path.join(export_dir, saved_model_writer.MODEL_CARD)
  if not os.path.isfile(path):
    return None
  card = model_dir_lib.read_json(path, "the export's model card")
  return card.get("evaluation", {}).get("sets", {}).get(STSB_DEV)


def choose(candidates):
  """The candidate with the highest STS-B dev Pearson."""
  return max(candidates, key=lambda c: c.dev_pearson)


def read_choice(path):
  """The choice a previous run wrote with --output_json (a dict: selected,
  model_dir, criterion, candidates)."""
  if not os.path.exists(path):
    raise errors.UserError(
        f"{path} does not exist: run `bash docs/train_zoo_word_vectors.sh` "
        "(or python -m lab.reports.word_vector_choice --output_json=...) first")
  choice = model_dir_lib.read_json(path, "the zoo's word-vector choice")
  if not isinstance(choice, dict) or "model_dir" not in choice:
    raise errors.UserError(f"{path}: not a word-vector choice (no model_dir)")
  return choice


def define_flags(flag_values):
  flags.DEFINE_multi_string(
      "candidate", [], "NAME=MODEL_DIR of a finished Siamese CBOW or "
      "unigram Sent2Vec run; give two or more.", flag_values=flag_values)
  flags.DEFINE_string("output_json", None, "Where to write the choice "
                      "(selected name and model_dir, every candidate's dev "
                      "Pearson).", flag_values=flag_values)


def report(flag_values):
  """Prints one line per candidate and the choice; returns the choice."""
  if not flag_values.candidate:
    raise errors.UserError("--candidate names no model directory")
  candidates = []
  for entry in flag_values.candidate:
    candidates.append(read_candidate(*tables.name_value(
        entry, "--candidate", "NAME=MODEL_DIR")))
  selected = choose(candidates)
  for c in candidates:
    mark = " (selected)" if c is selected else ""
    print(f"- {c.name}: STS-B dev Pearson {c.dev_pearson:.2f} "
          f"(`{c.model_dir}`){mark}")
  if flag_values.output_json:
    model_dir_lib.write_text_atomically(flag_values.output_json, json.dumps({
        "selected": selected.name,
        "model_dir": selected.model_dir,
        "criterion": "highest STS-B dev Pearson of the averaged vectors",
        "candidates": [dataclasses.asdict(c) for c in candidates]},
        indent=2))
  return selected


def run(argv):
  """Runs the command in-process (argv[0] is the program)."""
  return report(cli.parse_own_flags(define_flags, argv))


if __name__ == "__main__":
  cli.run_with_own_flags(define_flags, report)
