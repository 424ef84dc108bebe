r"""Trains the hybrid siamese + MLP matcher on a sentence-pair task.

  python -m trainers.hybrid_siamese --flagfile=configs/hybrid_msrp_gru.flags \
      --data_dir=../shared/data --model_dir=runs/hybrid_msrp_gru_joint \
      --word_vectors=runs/siamese_cbow_paper/export/1 --mode=joint

Nicosia and Moschitti, "Accurate Sentence Matching with Hybrid Siamese
Networks", CIKM 2017. Evaluates dev and test accuracy after every epoch
and keeps the best dev epoch's weights in <model_dir>/best/ (the paper
reports test accuracy there), which the export is built from; besides the
files of every trainer it writes epochs.jsonl and results.json.
"""

import collections
import dataclasses
import json
import os
import time
from typing import List, Optional

from absl import flags
import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import disk_errors
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import decision_threshold
from sentzoo.inputs import pair_datasets
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.inputs import word_vectors as word_vectors_lib
from sentzoo.models import hybrid_siamese
from sentzoo.models import model_specs
from sentzoo.trainers import config
from sentzoo.trainers import distribution
from sentzoo.trainers import hybrid_siamese_step
from sentzoo.trainers import lazy_optimizers
from sentzoo.trainers import trainer


@dataclasses.dataclass
class HybridSiameseConfig(config.TrainingConfig):
  """The hybrid matcher's settings (the command's flags)."""
  num_epochs: int = config.default(20)
  checkpoint_every_steps: int = config.default(0)
  log_every_steps: int = config.default(50)
  task: str = config.setting(
      "msrp", "Pair task; files from inputs.pair_datasets.task_files unless "
      "overridden.", choices=pair_datasets.TASKS, directory=True)
  train_file: Optional[str] = config.setting(
      None, "Overrides the task's train file.", directory=True)
  dev_file: Optional[str] = config.setting(
      None, "Overrides the task's dev file.", directory=True)
  test_file: Optional[str] = config.setting(
      None, "Overrides the task's test file.", directory=True)
  encoder: str = config.setting("gru", "Sentence encoder.",
                                choices=hybrid_siamese.ENCODERS,
                                directory=True)
  mode: str = config.setting(
      "joint", "contrastive: Lc, predict distance < --threshold; logistic: "
      "Ll; joint: --contrastive_weight * Lc + Ll.",
      choices=hybrid_siamese.MODES, directory=True)
  margin: float = config.shared(1.0)
  contrastive_weight: float = config.setting(
      1.0, "λc (paper: 1.0 paraphrase, 0.01 entailment).", lower_bound=0)
  threshold: float = config.setting(
      0.5, "Contrastive mode: a match if the distance is below this.",
      lower_bound=0)
  encoder_units: int = config.setting(
      200, "LSTM/GRU units (per direction for the BiGRU).", lower_bound=1,
      directory=True)
  cnn_filters: int = config.setting(100, "CNN filters per width.",
                                    lower_bound=1, directory=True)
  cnn_kernel_sizes: List[str] = config.setting(
      ["1", "3", "5"], "CNN widths.", positive_ints=True, directory=True)
  bigru_layers: int = config.setting(2, "Stacked BiGRU layers.",
                                     lower_bound=1, directory=True)
  mlp_units: List[str] = config.setting(
      ["200", "200"], "MLP hidden layers.", positive_ints=True,
      directory=True)
  mlp_activation: str = config.setting("relu", "MLP hidden activation.")
  word_vectors: Optional[str] = config.setting(
      None, "Pretrained vectors: a GloVe/word2vec text file, a model "
      "directory of this project, or an export (e.g. "
      "runs/siamese_cbow_paper/export/1); none: random U[-r, r] rows.",
      directory=True)
  word_vectors_vocab: Optional[str] = config.setting(
      None, "Vocabulary file of an export given as --word_vectors (default: "
      "the model directory's vocab.txt two levels up).", directory=True)
  word_vectors_scale_to_std: float = config.setting(
      0.0, "Rescale the pretrained rows to this standard deviation (0: as "
      "they are).", lower_bound=0)
  oov_range: float = config.setting(
      0.25, "Words without a vector ~ U[-r, r].", lower_bound=0)
  embedding_dim: int = config.shared(300)
  train_embeddings: bool = config.setting(
      True, "Fine-tune the word vectors (the paper does).")
  lazy_adam: bool = config.setting(
      True, "Adam with lazy updates of the looked-up embedding rows (plain "
      "Keras Adam updates every row).")
  keep_punctuation: bool = config.shared(False)
  batch_size: int = config.shared(128)
  max_length: int = config.shared(50)
  pad_multiple: int = config.setting(
      10, "Pad each batch to its longest sentence rounded up to this (0: "
      "always to --max_length; results are the same, masking is exact).",
      lower_bound=0)


FLAGS = trainer.make_flags(HybridSiameseConfig)


def _known_activation(name):
  try:
    keras.activations.get(name)
  except ValueError:
    return False
  return True


flags.register_validator("mlp_activation", _known_activation,
                         message="not a Keras activation", flag_values=FLAGS)

BEST_DIR = "best"
BEST_FILE = "best.json"
# The contrastive mode's second decision rule: the distance threshold tuned
# on each epoch's dev distances (`decision_threshold.tune_threshold`); its
# best dev epoch, and that epoch's test decisions.
BEST_TUNED_FILE = "best_tuned_threshold.json"
# Whether each test pair was classified right at the best dev epoch (bool
# [n], test file order): "correct" under the run's rule (--threshold for
# contrastive, the MLP's 0.5 otherwise), "correct_tuned" under the tuned
# threshold (contrastive only). For paired tests between runs
# (lab.reports.hybrid_table).
TEST_PREDICTIONS_FILE = "test_predictions.npz"
EPOCHS_FILE = "epochs.jsonl"
RESULTS_FILE = "results.json"


def _split_files(cfg):
  return {s: p for s, p in (("train", cfg.train_file),
                            ("dev", cfg.dev_file),
                            ("test", cfg.test_file)) if p}


def _words(pairs, tokenizer):
  """The words of a PairSet's sentences, in order, repeats included."""
  sentences = tf.constant(pairs.sentences_a + pairs.sentences_b)
  return [token.decode("utf-8")
          for token in tokenizer.tokenize(sentences).flat_values.numpy()]


def build_vocabulary(sets, tokenizer, pretrained_words):
  """Every training word, plus dev/test words that have a pretrained vector.

  Dev/test words without a vector could only keep their random rows, so
  they are left unknown (dropped), as are all other unseen words.
  """
  counts = collections.Counter()
  for split, pairs in sets.items():
    for word in _words(pairs, tokenizer):
      if split == "train" or word in pretrained_words:
        counts[word] += 1 if split == "train" else 0
  words = sorted(counts, key=lambda w: (-counts[w], w))
  return vocabulary_lib.Vocabulary(words, [counts[w] for w in words])


def evaluate_set(predict, text_to_ids, pairs, mode, threshold,
                 batch_size=256):
  """Accuracy on a PairSet (and its outputs) of `predict`: (ids_a, ids_b) ->
  the model's outputs in inference mode."""
  if not len(pairs):
    return {"accuracy": float("nan"), "pairs": 0, "mean_distance":
            float("nan"), "correct": np.zeros([0], bool),
            "distances": np.zeros([0], np.float32)}
  matches, distances = [], []
  for start in range(0, len(pairs), batch_size):
    a = text_to_ids(tf.constant(pairs.sentences_a[start:start + batch_size]))
    b = text_to_ids(tf.constant(pairs.sentences_b[start:start + batch_size]))
    outputs = predict(hybrid_siamese.pad_ids(a, text_to_ids.max_length),
                      hybrid_siamese.pad_ids(b, text_to_ids.max_length))
    matches.append(hybrid_siamese.predict_match(outputs, mode,
                                                threshold).numpy())
    distances.append(outputs["distance"].numpy())
  matches = np.concatenate(matches)
  distances = np.concatenate(distances)
  correct = matches == (pairs.labels == 1)
  return {"accuracy": float(np.mean(correct)),
          "pairs": len(pairs),
          "mean_distance": float(np.mean(distances)),
          "correct": correct, "distances": distances}


def _read_json(path, default):
  if os.path.exists(path):
    return model_dir_lib.read_json(path, "the best epoch so far")
  return default


def _keep(best, record, path):
  """Makes `record` the best epoch so far `best`, also in `path`."""
  best.clear()
  best.update(record)
  model_dir_lib.write_text_atomically(path, json.dumps(best, indent=2))


def _dataset_fn(cfg, ids_a, ids_b, labels):
  """input_context -> this pipeline's replicas' pieces of the same seeded
  global batches (replica r: the r-th consecutive piece)."""

  def dataset_fn(input_context):
    dataset = hybrid_siamese_step.pair_dataset(
        ids_a, ids_b, labels, cfg.batch_size, cfg.max_length,
        cfg.pad_multiple, shuffle_seed=cfg.seed, repeat=True)
    local = distribution.replicas_per_pipeline(input_context)
    return hybrid_siamese_step.replica_pieces(
        dataset, input_context.num_replicas_in_sync,
        first=input_context.input_pipeline_id * local, count=local)

  return dataset_fn


class HybridSiameseTrainer(trainer.ModelTrainer):
  """The hybrid matcher's part of the shared skeleton: evaluates every
  epoch whatever --eval_every_steps says."""

  spec = model_specs.HYBRID_SIAMESE
  config_class = HybridSiameseConfig
  flag_values = FLAGS

  def needs_data_dir(self, cfg):
    return len(_split_files(cfg)) < 3

  def check_flags(self, cfg, strategy):
    distribution.check_global_batch(cfg.batch_size, strategy)

  def build_plan(self, context):
    start_time = time.time()
    data_dir, out_dir, model_dir = (context.data_dir, context.out_dir,
                                    context.model_dir)
    cfg, replicas = context.config, context.replicas
    sets = pair_datasets.load_task(data_dir, cfg.task, _split_files(cfg))
    for split in pair_datasets.SPLITS:
      if split not in sets:
        raise errors.UserError(f"no {split} set for task {cfg.task}")
    if not len(sets["train"]):
      raise errors.UserError("the training set has no pairs")
    last_batch = len(sets["train"]) % cfg.batch_size
    if 0 < last_batch < replicas:
      raise errors.UserError(
          f"the last batch of each epoch has {last_batch} pairs "
          f"({len(sets['train'])} % --batch_size={cfg.batch_size}), fewer "
          f"than the {replicas} replicas: choose another --batch_size")
    print(", ".join(f"{s} {len(p):,} pairs ({int(p.labels.sum()):,} matches)"
                    for s, p in sets.items()), flush=True)

    tokenizer = tokenizer_lib.Tokenizer(
        keep_punctuation=cfg.keep_punctuation)
    vocab_path = os.path.join(out_dir, model_dir_lib.VOCABULARY_FILE)
    vectors = None
    if cfg.word_vectors:
      all_words = set().union(*(_words(p, tokenizer) for p in sets.values()))
      vectors = word_vectors_lib.load(
          cfg.word_vectors, cfg.word_vectors_vocab, wanted=all_words)
    if os.path.exists(vocab_path):
      vocabulary = vocabulary_lib.Vocabulary.load(vocab_path)
    else:
      vocabulary = build_vocabulary(
          sets, tokenizer, set(vectors.words) if vectors else set())
      vocabulary.save(vocab_path)
    matrix, found = word_vectors_lib.embedding_matrix(
        vocabulary.words, vectors, dim=cfg.embedding_dim,
        oov_range=cfg.oov_range, seed=cfg.seed,
        scale_to_std=cfg.word_vectors_scale_to_std or None)
    print(f"vocabulary: {len(vocabulary):,} words, {found:,} with a "
          f"pretrained vector ({cfg.word_vectors or 'none'})", flush=True)

    text_to_ids = text_to_ids_lib.TextToIds(vocabulary, tokenizer,
                                            max_length=cfg.max_length)
    with context.scope():
      model = hybrid_siamese.HybridSiamese(
          vocabulary.size_with_padding, matrix.shape[1], cfg.encoder,
          encoder_units=cfg.encoder_units, cnn_filters=cfg.cnn_filters,
          cnn_kernel_sizes=[int(k) for k in cfg.cnn_kernel_sizes],
          bigru_layers=cfg.bigru_layers,
          mlp_units=[int(u) for u in cfg.mlp_units],
          mlp_activation=cfg.mlp_activation)
      model.build()
    model.embedding.embeddings.assign(matrix)
    params = model.count_params_without_embeddings()
    train = sets["train"]
    spe = hybrid_siamese_step.steps_per_epoch(len(train), cfg.batch_size)
    total_steps = trainer.total_steps(cfg, spe)
    training_info = {name: getattr(cfg, name) for name in (
        "task", "mode", "encoder", "margin", "contrastive_weight",
        "threshold", "num_epochs", "batch_size", "learning_rate", "lazy_adam",
        "train_embeddings", "word_vectors")}
    training_info.update(
        pretrained_words=found,
        word_vectors_scale_to_std=cfg.word_vectors_scale_to_std,
        train_pairs=len(train), steps_per_epoch=spe, total_steps=total_steps,
        strategy=cfg.strategy, replicas=replicas)
    config = {
        "model": model.get_config(), "tokenizer": tokenizer.get_config(),
        "mode": cfg.mode, "threshold": cfg.threshold,
        "max_length": cfg.max_length, "training": training_info}
    print(f"{cfg.encoder} encoder, {cfg.mode} loss: {params:,} "
          f"parameters without embeddings; {spe} steps per epoch, "
          f"{total_steps} steps"
          + (f" over {replicas} replicas" if replicas > 1 else ""),
          flush=True)

    optimizer_cls = (lazy_optimizers.LazyAdam if cfg.lazy_adam
                     else keras.optimizers.Adam)
    with context.scope():
      optimizer = optimizer_cls(learning_rate=cfg.learning_rate)
      train_step = hybrid_siamese_step.make_train_step(
          model, optimizer, cfg.mode, cfg.margin,
          cfg.contrastive_weight, cfg.train_embeddings,
          cfg.jit_compile, apply_in_xla=context.one_device)
      optimizer.build(train_step.variables)
    train_ids = (text_to_ids(tf.constant(train.sentences_a)),
                 text_to_ids(tf.constant(train.sentences_b)), train.labels)
    dataset = _dataset_fn(cfg, *train_ids)

    best_path = os.path.join(model_dir, BEST_FILE)
    best = _read_json(best_path, {"dev_accuracy": -1.0})
    tuned_path = os.path.join(model_dir, BEST_TUNED_FILE)
    best_tuned = _read_json(tuned_path, {"dev_accuracy": -1.0})
    predictions_path = os.path.join(model_dir, TEST_PREDICTIONS_FILE)
    predictions = {}
    if os.path.exists(predictions_path):
      with np.load(predictions_path) as saved:
        predictions.update(saved)
    best_checkpoint = tf.train.Checkpoint(model=model)
    last_eval = {}
    predict = tf.function(lambda a, b: model((a, b), training=False),
                          reduce_retracing=True)

    def eval_fn():
      step = int(optimizer.iterations.numpy())
      if last_eval.get("step") == step:  # The loop's final call repeats it.
        return last_eval["metrics"]
      epoch = step // spe
      dev = evaluate_set(predict, text_to_ids, sets["dev"], cfg.mode,
                         cfg.threshold)
      test = evaluate_set(predict, text_to_ids, sets["test"], cfg.mode,
                          cfg.threshold)
      record = {"epoch": epoch, "step": step,
                "dev_accuracy": dev["accuracy"],
                "test_accuracy": test["accuracy"],
                "dev_mean_distance": dev["mean_distance"]}
      tuned = None
      if cfg.mode == "contrastive":
        threshold, dev_tuned = decision_threshold.tune_threshold(
            dev["distances"], sets["dev"].labels, prefer=cfg.threshold)
        tuned = {"epoch": epoch, "step": step, "threshold": threshold,
                 "dev_accuracy": dev_tuned,
                 "test_accuracy": decision_threshold.accuracy_at(
                     test["distances"], sets["test"].labels, threshold)}
        record["tuned_threshold"] = tuned
      with open(os.path.join(model_dir, EPOCHS_FILE), "a") as f:
        f.write(json.dumps(record) + "\n")
      new_predictions = {}
      # At an epoch's end; or, for a run shorter than one epoch
      # (--train_steps), its final evaluation, so that it too has a best
      # model to export.
      def better(kept, new):
        return ((step % spe == 0 or "epoch" not in kept)
                and new["dev_accuracy"] > kept["dev_accuracy"])

      if better(best, record):
        best_checkpoint.write(os.path.join(model_dir, BEST_DIR, "ckpt"))
        _keep(best, record, best_path)
        new_predictions["correct"] = test["correct"]
      if tuned is not None and better(best_tuned, tuned):
        _keep(best_tuned, tuned, tuned_path)
        new_predictions["correct_tuned"] = (
            (test["distances"] < tuned["threshold"])
            == (sets["test"].labels == 1))
      if new_predictions:
        predictions.update(new_predictions)
        with disk_errors.atomic_write(predictions_path, "wb") as f:
          np.savez(f, **predictions)
      metrics = {"dev_accuracy": dev["accuracy"],
                 "test_accuracy": test["accuracy"], "epoch": epoch,
                 "best_dev_accuracy": best["dev_accuracy"]}
      last_eval.update(step=step, metrics=metrics)
      return metrics

    def finish(outcome):
      results = {**training_info, "parameters_without_embeddings": params,
                 "best_epoch": best.get("epoch"),
                 "dev_accuracy": best.get("dev_accuracy"),
                 "test_accuracy": best.get("test_accuracy"),
                 "final_step": outcome["step"],
                 "tuned_threshold": (dict(best_tuned) if "epoch" in best_tuned
                                     else None),
                 "seconds_this_run": round(time.time() - start_time, 1)}
      model_dir_lib.write_text_atomically(
          os.path.join(model_dir, RESULTS_FILE), json.dumps(results, indent=2))
      print(f"best dev epoch {results['best_epoch']}: dev accuracy "
            f"{100 * results['dev_accuracy']:.2f}, test accuracy "
            f"{100 * results['test_accuracy']:.2f}", flush=True)
      return results

    return trainer.TrainingPlan(
        config=config, steps_per_epoch=spe, dataset=dataset,
        train_step=train_step, step_counter=optimizer.iterations,
        checkpoint_items={"model": model, "optimizer": optimizer},
        unit_name="pairs", units_per_step=cfg.batch_size,
        eval_fn=eval_fn if context.chief else None, eval_every_steps=spe,
        finish=finish)


def run(argv):
  """Trains from Python with command-line flags; see `trainer.run`."""
  return trainer.run(HybridSiameseTrainer(), argv)


if __name__ == "__main__":
  trainer.main(HybridSiameseTrainer())
