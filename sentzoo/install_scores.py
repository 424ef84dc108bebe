"""The scores a store entry records when it is installed (sentzoo/store.py).

Measured on the installed export itself, on this machine:

  sts_mean      Pearson x 100, mean of the STS 2012-2015 test sets present
                (19: STS2013.SMT is not in the shared data)
  sts2014_mean  the same over the six STS 2014 sets (the papers' figure)
  stsb_dev      STS Benchmark dev Pearson x 100
  sick_test     SICK 2014 test relatedness Pearson x 100
  encode_sentences_per_s   `model.encode` of the evaluation's distinct
                sentences at its default batch, after one warm-up batch:
                the fastest of 3 runs
  size_bytes    the export's files
  precision     its table's storage: float32, float16 or int8
  pair_test     a pair model's test accuracy and F1 x 100 on its task,
                beside the majority class's (`measure_pairs`)

Without the evaluation data only size and speed are measured (on a fixed
list of sentences), and "note" says so.
"""

import math
import os
import time
from typing import Any, Dict, Optional, Sequence

import numpy as np

from sentzoo import sentence_model
from sentzoo import store as store_lib
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.inputs import pair_datasets

# The machine may be shared: the fastest of a few runs is the least
# disturbed one.
ENCODE_REPEATS = 3
# Encoded to time a model when the evaluation data is absent.
_FALLBACK_SENTENCES = tuple(
    f"sentence {i} : a man is playing the guitar while {i % 7} dogs run ."
    for i in range(4096))


class ModelEncoder(encoder_lib.Encoder):
  """The evaluation's encoder interface over a loaded `SentenceModel`."""

  def __init__(self, model):
    self._model = model

  def _encode_batch(self, sentences: Sequence[str]) -> np.ndarray:
    vectors = self._model.encode(list(sentences),
                                 batch_size=max(len(sentences), 1))
    self._dim = vectors.shape[1]
    return vectors


def evaluate(model, data_dir: str) -> sts.EvalResults:
  """The STS 2012-2015 / SICK test / STS-B dev results of `model`."""
  pair_sets, missing = sts_data.load_eval_sets(data_dir)
  if not pair_sets:
    raise errors.DataDirError(
        f"no STS, SICK or STS-B set found in {data_dir!r}")
  return sts.evaluate_pair_sets(ModelEncoder(model), pair_sets,
                                missing=missing)


def _rounded(value):
  return round(float(value), 2) if value is not None and math.isfinite(
      value) else None


def _can_encode(model) -> bool:
  """Whether `model` encodes sentences (a pair model may not)."""
  try:
    model.encode([""])
  except errors.UserError:
    return False
  return True


def export_size(export_dir: str) -> int:
  return sum(os.path.getsize(os.path.join(d, f))
             for d, _, files in os.walk(export_dir) for f in files)


def f1(labels: np.ndarray, decisions: np.ndarray) -> float:
  """F1 x 100 of the positive class (label 1); 0 when nothing is right."""
  hits = float(np.sum((labels == 1) & (decisions == 1)))
  return 100 * 2 * hits / max(float(np.sum(labels == 1) +
                                    np.sum(decisions == 1)), 1.0)


def measure_pairs(model, data_dir: str) -> Dict[str, Any]:
  """A pair model's test accuracy and F1 (x 100) on its task's test split,
  beside the majority class's (the test split's more frequent label)."""
  task = model.card.get("training", {}).get("task")
  if task is None:
    return {}
  test = pair_datasets.load_file(
      task, pair_datasets.task_files(data_dir, task)["test"])
  decisions = (model.predict(list(zip(test.sentences_a, test.sentences_b)))
               >= 0.5).astype(np.int32)
  majority = int(np.mean(test.labels) >= 0.5)
  constant = np.full_like(test.labels, majority)
  return {"task": task, "pairs": len(test.labels),
          "accuracy": _rounded(100 * np.mean(decisions == test.labels)),
          "f1": _rounded(f1(test.labels, decisions)),
          "majority_accuracy": _rounded(
              100 * np.mean(constant == test.labels)),
          "majority_f1": _rounded(f1(test.labels, constant))}


def evaluation_sentences(pair_sets) -> list:
  """The distinct sentences of `pair_sets`, in order of appearance."""
  seen = {}
  for pair_set in pair_sets:
    for sentence in (*pair_set.sentences1, *pair_set.sentences2):
      seen.setdefault(sentence, None)
  return list(seen)


def encode_speed(model, sentences: Sequence[str]) -> Dict[str, Any]:
  """`encode_sentences_per_s` and `encode_measured_on` of `model`: the
  fastest of ENCODE_REPEATS encodes of `sentences` after a warm-up batch."""
  batch = sentence_model.DEFAULT_BATCH_SIZE
  model.encode(sentences[:batch], batch_size=batch)  # Traces the graph.
  seconds = []
  for _ in range(ENCODE_REPEATS):
    start = time.perf_counter()
    model.encode(sentences, batch_size=batch)
    seconds.append(time.perf_counter() - start)
  return {"encode_sentences_per_s": int(len(sentences) / min(seconds)),
          "encode_measured_on": (
              f"{len(sentences)} sentences, batch {batch}, "
              f"fastest of {ENCODE_REPEATS} runs, {os.cpu_count()} CPUs, "
              f"load average {os.getloadavg()[0]:.1f}")}


def measure(model, export_dir: str,
            data_dir: Optional[str] = None) -> Dict[str, Any]:
  """The install scores of `model` (a `SentenceModel` of `export_dir`)."""
  scores: Dict[str, Any] = {"size_bytes": export_size(export_dir),
                            "precision": store_lib.export_precision(export_dir)}
  sentences = list(_FALLBACK_SENTENCES)
  try:
    pair_sets, missing = sts_data.load_eval_sets(
        data_dir_lib.resolve_data_dir(data_dir))
  except errors.UserError as e:
    pair_sets = []
    scores["note"] = f"STS scores not measured: {e}"
  can_encode = _can_encode(model)
  if model.is_pair_model:
    try:
      scores["pair_test"] = measure_pairs(
          model, data_dir_lib.resolve_data_dir(data_dir))
    except (errors.UserError, OSError) as e:
      scores["note"] = f"pair accuracy not measured: {e}"
  if pair_sets and can_encode:
    results = sts.evaluate_pair_sets(ModelEncoder(model), pair_sets,
                                     missing=missing)
    means = results.aggregates
    scores.update({
        "sts_mean": _rounded(means[sts.STS_MEAN_KEY].pearson)
                    if sts.STS_MEAN_KEY in means else None,
        "sts_sets": len(means[sts.STS_MEAN_KEY].members)
                    if sts.STS_MEAN_KEY in means else 0,
        "sts2014_mean": _rounded(means["STS2014.mean"].pearson)
                        if "STS2014.mean" in means else None,
        "stsb_dev": _rounded(results.sets["STSB.dev"].pearson)
                    if "STSB.dev" in results.sets else None,
        "sick_test": _rounded(results.sets["SICK.test"].pearson)
                     if "SICK.test" in results.sets else None,
    })
    sentences = evaluation_sentences(pair_sets)
  if can_encode:
    scores.update(encode_speed(model, sentences))
  return scores
