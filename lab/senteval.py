r"""SentEval transfer tasks for any exported sentence encoder.

The protocol of the Sent2Vec paper's Table 1 (Pagliardini et al., 2018,
section 4, "Downstream Supervised Evaluation", which follows Kiros et al.,
2015 and Hill et al., 2016) and of SentEval (Conneau & Kiela, 2018): a
logistic regression (lab/logistic_regression.py) on the frozen
sentence embeddings.

  * MR, CR, SUBJ, MPQA: accuracy by stratified 10-fold cross-validation
    (mean of the fold accuracies); in every outer fold the L2 penalty is
    chosen by an inner stratified cross-validation on that fold's training
    part (nested CV), then the classifier is refitted on the whole training
    part with the chosen penalty.
  * TREC: the penalty is chosen by cross-validation on the train split
    (5,452 questions, 6 coarse classes); accuracy on the 500 test questions.
  * MSRP: features [|u - v|; u * v] of the two sentences' embeddings u, v,
    as the Sent2Vec paper and Kiros et al. use (SentEval itself also
    concatenates u and v; we do not); penalty chosen by cross-validation on
    the 4,076 training pairs (the shared data's train + val); accuracy and
    F1 of the paraphrase class on the 1,725 test pairs.

The penalty grid is `--l2_grid` (penalty on the mean loss of standardised
features); ties go to the stronger penalty. For speed, the k classifiers of
a tuning cross-validation are fitted jointly (one matrix product per L-BFGS
step for all folds), from the strongest penalty to the weakest, each
warm-started from the previous penalty's solutions. Splits are seeded (`--seed`), so results are
deterministic.

The command that evaluates exports and prints the accuracy table beside the
Sent2Vec paper's Table 1 is `python -m lab.reports.senteval_tables`
(lab/reports/senteval_tables.py).
"""

import dataclasses
import time
from typing import Any, Dict, Mapping, Optional, Sequence

from absl import logging
import numpy as np

from lab import logistic_regression
from lab import senteval_data
from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib

CV_TASKS = tuple(senteval_data.BINARY_TASKS)
# Penalties tried (strongest first is how they are fitted).
DEFAULT_L2_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
DEFAULT_SEED = 1111


@dataclasses.dataclass(frozen=True)
class TransferConfig:
  """How the classifiers are trained and evaluated.

  Attributes:
    outer_folds: folds of the accuracy cross-validation (MR, CR, SUBJ, MPQA).
    inner_folds: folds of the penalty-tuning cross-validation (all tasks).
    l2_grid: penalties tried.
    seed: seeds the fold assignment.
    standardize: standardise features with the training part's statistics.
  """
  outer_folds: int = 10
  inner_folds: int = 10
  l2_grid: tuple = DEFAULT_L2_GRID
  seed: int = DEFAULT_SEED
  standardize: bool = True

  def __post_init__(self):
    if self.outer_folds < 2 or self.inner_folds < 2:
      raise errors.UserError("outer and inner folds must be >= 2")
    if not self.l2_grid or any(l2 < 0 for l2 in self.l2_grid):
      raise errors.UserError(f"bad L2 grid {self.l2_grid}")

  def to_json(self) -> dict:
    return {"outer_folds": self.outer_folds, "inner_folds": self.inner_folds,
            "l2_grid": [float(x) for x in self.l2_grid], "seed": self.seed,
            "standardize": self.standardize}

  def describe(self) -> str:
    grid = ", ".join(f"{x:g}" for x in self.l2_grid)
    return (f"logistic regression on {'standardised ' if self.standardize else ''}"
            f"embeddings; MR/CR/SUBJ/MPQA: {self.outer_folds}-fold CV with "
            f"the L2 penalty chosen by {self.inner_folds}-fold inner CV; "
            f"TREC/MSRP: penalty chosen by {self.inner_folds}-fold CV on the "
            f"train split, scored on the test split; MSRP features "
            f"[|u\u2212v|; u\u2299v]; L2 grid {{{grid}}}; seed {self.seed}")


@dataclasses.dataclass
class TaskResult:
  """One model's result on one transfer task.

  Attributes:
    task: MR, CR, SUBJ, MPQA, TREC or MSRP.
    accuracy: accuracy x 100 (CV tasks: mean over the outer folds).
    f1: F1 x 100 of the positive class (MSRP), else None.
    accuracy_std: standard deviation x 100 over the outer folds (CV tasks).
    l2: the chosen penalty (CV tasks: one per outer fold).
    tuning_accuracy: inner-CV accuracy x 100 at the chosen penalty (CV
      tasks: mean over the outer folds).
    num_train: training examples (CV tasks: all examples).
    num_test: test examples (CV tasks: 0).
    encode_seconds: seconds spent encoding the task's sentences.
    classifier_seconds: seconds spent fitting and scoring classifiers.
  """
  task: str
  accuracy: float
  f1: Optional[float] = None
  accuracy_std: Optional[float] = None
  l2: Any = None
  tuning_accuracy: Optional[float] = None
  num_train: int = 0
  num_test: int = 0
  encode_seconds: float = 0.0
  classifier_seconds: float = 0.0

  @property
  def seconds(self) -> float:
    return self.encode_seconds + self.classifier_seconds

  def to_json(self) -> dict:
    return dataclasses.asdict(self)


# ------------------------------------------------------------ CV logic --


def stratified_folds(labels, num_folds: int, seed: int) -> list:
  """Splits indices into `num_folds` test folds with balanced classes.

  Within each class the examples are shuffled (seeded) and dealt round
  robin; the dealing continues across classes, so fold sizes differ by at
  most one.

  Args:
    labels: int [n].
    num_folds: k >= 2, at most n.
    seed: the shuffling seed.

  Returns:
    list of k sorted int64 index arrays that partition range(n).
  """
  labels = np.asarray(labels).reshape([-1])
  n = labels.size
  if num_folds < 2 or num_folds > n:
    raise ValueError(f"need 2 <= num_folds <= n, got {num_folds} for n={n}")
  rng = np.random.default_rng(seed)
  fold_of = np.empty([n], np.int64)
  offset = 0
  for label in np.unique(labels):
    idx = np.flatnonzero(labels == label)
    rng.shuffle(idx)
    fold_of[idx] = (np.arange(idx.size) + offset) % num_folds
    offset += idx.size
  return [np.flatnonzero(fold_of == f) for f in range(num_folds)]


def tune_l2(features, labels, num_classes: int, config: TransferConfig,
            seed: Optional[int] = None) -> tuple:
  """Chooses the L2 penalty by stratified k-fold CV (k = inner_folds).

  The features are standardised once with the statistics of all of
  (features, labels) (the classifier's own data; the held-out fold's share
  of the mean and variance is not label information). For each penalty, the
  k fold classifiers are fitted jointly (logistic_regression.fit_weights),
  warm-started from the previous, stronger penalty's solutions.

  Returns:
    (best penalty, {penalty: CV accuracy in [0, 1]}); the accuracy pools the
    predictions of all folds; ties go to the larger penalty.
  """
  x = np.asarray(features, np.float64)
  y = np.asarray(labels).reshape([-1])
  if config.standardize:
    mean, scale = logistic_regression.standardization(x)
    x = (x - mean) / scale
  grid = sorted({float(v) for v in config.l2_grid}, reverse=True)
  folds = stratified_folds(y, min(config.inner_folds, y.size),
                           config.seed if seed is None else seed)
  masks = np.ones([len(folds), y.size], bool)
  for j, test_idx in enumerate(folds):
    masks[j, test_idx] = False
  accuracy = {}
  initial = None
  for l2 in grid:
    weights, bias, _ = logistic_regression.fit_weights(
        x, y, num_classes, l2, train_masks=masks, initial=initial)
    initial = (weights, bias)
    correct = 0
    for j, test_idx in enumerate(folds):
      predicted = np.argmax(x[test_idx] @ weights[j] + bias[j], axis=1)
      correct += int(np.sum(predicted == y[test_idx]))
    accuracy[l2] = correct / y.size
  best = max(grid, key=lambda l2: (accuracy[l2], l2))
  return best, accuracy


def fit_tuned(features, labels, num_classes: int, config: TransferConfig,
              seed: Optional[int] = None) -> tuple:
  """Tunes the penalty by CV, then fits on all of (features, labels).

  Returns:
    (fitted LogisticRegression, chosen penalty, CV accuracy in [0, 1]).
  """
  best, accuracy = tune_l2(features, labels, num_classes, config, seed)
  clf = logistic_regression.LogisticRegression(
      l2=best, standardize=config.standardize).fit(features, labels,
                                                   num_classes)
  return clf, best, accuracy[best]


def nested_cross_validation(features, labels, config: TransferConfig
                            ) -> dict:
  """Accuracy by outer k-fold CV with the penalty tuned by inner CV.

  Returns:
    dict with "accuracy" (mean of fold accuracies, x 100), "accuracy_std",
    "fold_accuracies" (x 100), "l2" (chosen per fold), "tuning_accuracy"
    (mean inner-CV accuracy at the chosen penalties, x 100).
  """
  x = np.asarray(features)
  y = np.asarray(labels).reshape([-1])
  num_classes = max(2, int(y.max()) + 1)
  fold_accuracies, chosen, tuning = [], [], []
  for fold, test_idx in enumerate(
      stratified_folds(y, config.outer_folds, config.seed)):
    train_idx = np.setdiff1d(np.arange(y.size), test_idx)
    clf, l2, cv_accuracy = fit_tuned(x[train_idx], y[train_idx], num_classes,
                                     config, seed=config.seed + 1 + fold)
    fold_accuracies.append(100.0 * clf.accuracy(x[test_idx], y[test_idx]))
    chosen.append(l2)
    tuning.append(100.0 * cv_accuracy)
  return {"accuracy": float(np.mean(fold_accuracies)),
          "accuracy_std": float(np.std(fold_accuracies)),
          "fold_accuracies": [float(a) for a in fold_accuracies],
          "l2": chosen, "tuning_accuracy": float(np.mean(tuning))}


def f1_score(predicted, labels, positive: int = 1) -> float:
  """F1 x 100 of the `positive` class (0.0 if it is never predicted/true)."""
  predicted = np.asarray(predicted).reshape([-1])
  labels = np.asarray(labels).reshape([-1])
  tp = int(np.sum((predicted == positive) & (labels == positive)))
  fp = int(np.sum((predicted == positive) & (labels != positive)))
  fn = int(np.sum((predicted != positive) & (labels == positive)))
  return 0.0 if tp == 0 else 100.0 * 2 * tp / (2 * tp + fp + fn)


def pair_features(u, v) -> np.ndarray:
  """[|u - v|; u * v]: float [n, 2 * dim] MSRP features of [n, dim] pairs."""
  u = np.asarray(u, np.float64)
  v = np.asarray(v, np.float64)
  return np.concatenate([np.abs(u - v), u * v], axis=1)


# ------------------------------------------------------------ encoding --


def encode_unique(encoder: encoder_lib.Encoder, sentences: Sequence[str],
                  batch_size: int = 1024) -> np.ndarray:
  """Encodes each distinct sentence once; float32 [n, dim] in input order."""
  index = {}
  ids = np.array([index.setdefault(s, len(index)) for s in sentences],
                 np.int64)
  # `Encoder.encode` returns one row per distinct sentence ([0, dim] for
  # none), so the empty ids give [0, dim] too.
  return encoder.encode(list(index), batch_size=batch_size)[ids]


def evaluate_task(encoder: encoder_lib.Encoder, task: str, data,
                  config: TransferConfig, batch_size: int = 1024
                  ) -> TaskResult:
  """Evaluates one task on loaded data (see senteval_data.load_task)."""
  start = time.perf_counter()
  if task in CV_TASKS:
    x = encode_unique(encoder, data.sentences, batch_size)
    encoded = time.perf_counter()
    cv = nested_cross_validation(x, data.labels, config)
    return TaskResult(
        task, cv["accuracy"], accuracy_std=cv["accuracy_std"], l2=cv["l2"],
        tuning_accuracy=cv["tuning_accuracy"], num_train=len(data),
        encode_seconds=encoded - start,
        classifier_seconds=time.perf_counter() - encoded)
  train, test = data["train"], data["test"]
  if task == "TREC":
    train_x = encode_unique(encoder, train.sentences, batch_size)
    test_x = encode_unique(encoder, test.sentences, batch_size)
    f1 = None
  elif task == "MSRP":
    vectors = encode_unique(
        encoder, [*train.sentences1, *train.sentences2, *test.sentences1,
                  *test.sentences2], batch_size)
    n, m = len(train), len(test)
    train_x = pair_features(vectors[:n], vectors[n:2 * n])
    test_x = pair_features(vectors[2 * n:2 * n + m], vectors[2 * n + m:])
  else:
    raise ValueError(f"unknown task {task!r}")
  encoded = time.perf_counter()
  num_classes = len(train.label_names)
  clf, l2, cv_accuracy = fit_tuned(train_x, train.labels, num_classes, config)
  predicted = clf.predict(test_x)
  accuracy = 100.0 * float(np.mean(predicted == test.labels))
  if task == "MSRP":
    f1 = f1_score(predicted, test.labels, positive=1)
  return TaskResult(task, accuracy, f1=f1, l2=l2,
                    tuning_accuracy=100.0 * cv_accuracy,
                    num_train=len(train), num_test=len(test),
                    encode_seconds=encoded - start,
                    classifier_seconds=time.perf_counter() - encoded)


def load_tasks(data_dir: str, tasks: Sequence[str]) -> tuple:
  """Loads the available tasks: ({task: data}, [missing task names])."""
  loaded, missing = {}, []
  for task in tasks:
    if task not in senteval_data.TASKS:
      raise errors.UserError(f"unknown task {task!r}; choose from "
                             f"{','.join(senteval_data.TASKS)}")
    if senteval_data.task_available(data_dir, task):
      loaded[task] = senteval_data.load_task(data_dir, task)
    else:
      missing.append(task)
  return loaded, missing


def evaluate(encoder: encoder_lib.Encoder, loaded: Mapping[str, Any],
             config: TransferConfig, batch_size: int = 1024,
             model_name: str = "") -> Dict[str, TaskResult]:
  """{task: TaskResult} of the loaded tasks, in senteval_data.TASKS order."""
  results = {}
  for task in senteval_data.TASKS:
    if task in loaded:
      results[task] = evaluate_task(encoder, task, loaded[task], config,
                                    batch_size)
      r = results[task]
      logging.info("%s %s: accuracy %.2f in %.1f s (encode %.1f s)",
                   model_name, task, r.accuracy, r.seconds, r.encode_seconds)
  return results


# ------------------------------------------------------------- metrics --


def average_accuracy(results: Mapping[str, Any]) -> Optional[float]:
  """The papers' "Average": mean accuracy over the six tasks (MSRP: acc).

  A row's own "Average" entry (a paper's printed figure) wins; else None
  unless all six tasks have a result.
  """
  if results.get("Average") is not None:
    return float(results["Average"])
  values = []
  for task in senteval_data.TASKS:
    r = results.get(task)
    if r is None:
      return None
    values.append(r["accuracy"] if isinstance(r, Mapping) else r.accuracy)
  return float(np.mean(values))
