r"""Trains a CHARAGRAM-family model on paraphrase pairs, then exports and evaluates it.

  python -m trainers.charagram --flagfile=configs/charagram_phrase.flags \
      --data_dir=../shared/data --model_dir=runs/charagram_phrase

One loop for every variant (`--model`): CHARAGRAM, PARAGRAM-PHRASE,
charCNN and charLSTM (Wieting, Bansal, Gimpel, Livescu, EMNLP 2016). Loss:
the margin loss with in-batch MAX or MIX negatives plus
0.5 * --l2 * sum ||theta||^2; Adam. Under --strategy the negatives come
from the whole global batch (`charagram_step.make_train_step`).
"""

import collections
import dataclasses
import os
import shutil
from typing import List, Optional

import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.export import charagram as charagram_export
from sentzoo.export import featurized_encoder
from sentzoo.inputs import char_ngrams
from sentzoo.inputs import ppdb
from sentzoo.inputs import task_paraphrases
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.inputs import word_vectors as word_vectors_lib
from sentzoo.models import model_specs
from sentzoo.models import paraphrase_margin_loss
from sentzoo.trainers import charagram_step
from sentzoo.trainers import config
from sentzoo.trainers import distribution
from sentzoo.trainers import trainer


@dataclasses.dataclass
class CharagramConfig(config.TrainingConfig):
  """The CHARAGRAM family's settings (the command's flags)."""
  num_epochs: int = config.default(10)
  checkpoint_every_steps: int = config.default(1000)
  log_every_steps: int = config.default(100)
  model: str = config.setting("charagram", "Which model to train.",
                              choices=sorted(charagram_export.VARIANTS),
                              directory=True)
  train_files: List[str] = config.setting(
      ["ppdb/ppdb-2.0-human-labels.ppdb-sample.tsv",
       "ppdb/ppdb-2.0-human-labels.wiki-sample.tsv"],
      "Paraphrase pair files (absolute, or relative to --data_dir).",
      directory=True)
  train_format: str = config.setting(
      "human_labels", "Format of --train_files (see inputs/ppdb.py).",
      choices=sorted(ppdb.FORMATS), directory=True)
  min_score: float = config.setting(
      3.0, "Keep pairs scored at least this (human_labels: mean rating 1-5; "
      "ppdb: PPDB2.0Score).", directory=True)
  max_pairs: int = config.setting(
      0, "Keep a seeded random subset of this many pairs (0: all).",
      lower_bound=0, directory=True)
  lexicon_files: List[str] = config.setting(
      [], "Also train on the word pairs of these lexicon files (format "
      "lexicon: `word para1 para2 ...` lines; absolute, or relative to "
      "--data_dir), beside --train_files: the way to train a phrase model on "
      "PPDB's phrase and word pairs together.", directory=True)
  task_paraphrases: List[str] = config.setting(
      [], "Also train on the paraphrase pairs of these TRAINING splits "
      "(inputs/task_paraphrases.py: any of "
      f"{', '.join(task_paraphrases.SOURCES)}); a pair that occurs in any "
      "test split under --data_dir is dropped.")
  embedding_dim: int = config.shared(300)
  ngram_sizes: List[str] = config.setting(
      ["2", "3", "4"], "Character n-gram sizes (charagram; the paper: 2,3,4 "
      "for phrases, 2-6 for words).", positive_ints=True, directory=True)
  ngram_min_count: int = config.setting(
      1, "An n-gram (a character for charCNN/charLSTM, a word for "
      "PARAGRAM-PHRASE without --word_vectors_vocab) enters the "
      "vocabulary if seen this often in the training pairs.", lower_bound=1, directory=True)
  ngram_buckets: int = config.setting(
      0, "> 0: hash n-grams into this many buckets instead of a "
      "vocabulary.", lower_bound=0, directory=True)
  activation: str = config.setting("tanh", "h of CHARAGRAM.",
                                   choices=["tanh", "linear"])
  init_scale: float = config.setting(
      0.0, "Uniform init range of CHARAGRAM / PARAGRAM-PHRASE tables (0: "
      "Glorot uniform).", lower_bound=0)
  char_dim: int = config.setting(300, "charCNN/charLSTM character vectors.",
                                 lower_bound=1, directory=True)
  filter_widths: List[str] = config.setting(
      ["2", "3", "4"], "charCNN filter widths.", positive_ints=True,
      directory=True)
  filters_per_width: int = config.setting(
      175, "charCNN filters per width.", lower_bound=1, directory=True)
  filter_activation: str = config.setting(
      "relu", "charCNN filter activation.", choices=["relu", "tanh"])
  output_activation: str = config.setting(
      "tanh", "charCNN fully connected layer activation.",
      choices=["tanh", "linear"])
  word_vectors: Optional[str] = config.setting(
      None, "PARAGRAM-PHRASE: word vectors to start from: a model dir of "
      "this project (e.g. runs/siamese_cbow_best or a unigram Sent2Vec run; "
      "its vocab.txt is the vocabulary) or an export with an `embeddings` "
      "table [V+1, d] (needs --word_vectors_vocab); --embedding_dim must "
      "be their d. None: random.")
  word_vectors_vocab: Optional[str] = config.setting(
      None, "PARAGRAM-PHRASE: the vocabulary (word<TAB>count) of an exported "
      "--word_vectors; without --word_vectors, a vocabulary to use with "
      "random init.", directory=True)
  keep_punctuation: bool = config.shared(False)
  sampling: str = config.setting(
      "max", "Negative selection: max or mix (the paper's two), rand.",
      choices=paraphrase_margin_loss.SAMPLINGS)
  max_length: int = config.shared(100)
  margin: float = config.shared(0.4)
  l2: float = config.setting(0.0, "lambda of 0.5 * lambda * sum ||theta||^2.",
                             lower_bound=0)
  batch_size: int = config.shared(100, lower_bound=2)


FLAGS = trainer.make_flags(CharagramConfig)


def _resolve(data_dir, path):
  return path if os.path.isabs(path) or data_dir is None else os.path.join(
      data_dir, path)


def load_pairs(cfg, data_dir):
  """The training pairs of the flags, deduplicated."""
  pairs = []
  for path in cfg.train_files:
    pairs.extend(ppdb.load(_resolve(data_dir, path), cfg.train_format,
                           min_score=cfg.min_score))
  for path in cfg.lexicon_files:
    pairs.extend(ppdb.load(_resolve(data_dir, path), "lexicon"))
  if cfg.task_paraphrases:
    if data_dir is None:
      raise errors.UserError("--task_paraphrases needs --data_dir")
    extra, counts = task_paraphrases.load_training_paraphrases(
        data_dir, cfg.task_paraphrases)
    print("task paraphrases (training splits; pairs also in a test split "
          "dropped): " + ", ".join(
              f"{s} {c['kept']:,} (dropped {c['dropped_as_test_pairs']:,})"
              for s, c in counts.items()), flush=True)
    pairs.extend(extra)
  pairs = ppdb.subsample(ppdb.deduplicate(pairs), cfg.max_pairs,
                         cfg.seed)
  if len(pairs) < cfg.batch_size:
    raise errors.UserError(
        f"{len(pairs)} training pairs, fewer than --batch_size="
        f"{cfg.batch_size}: lower --min_score or add --train_files")
  return pairs


def _is_model_dir(path):
  return os.path.exists(os.path.join(path, model_dir_lib.MODEL_CONFIG_FILE))


def word_vectors_vocab(cfg):
  """The vocabulary --word_vectors' rows follow: --word_vectors_vocab, or the
  vocab.txt of a model dir given as --word_vectors (None without either)."""
  if cfg.word_vectors_vocab:
    return cfg.word_vectors_vocab
  if cfg.word_vectors and _is_model_dir(cfg.word_vectors):
    return os.path.join(cfg.word_vectors, model_dir_lib.VOCABULARY_FILE)
  return None


def _word_featurizer(cfg, model_dir, texts):
  path = os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE)
  tokenizer = tokenizer_lib.Tokenizer(keep_punctuation=cfg.keep_punctuation)
  if not os.path.exists(path):
    if word_vectors_vocab(cfg):
      shutil.copyfile(word_vectors_vocab(cfg), path)
    else:
      tokens = tokenizer.tokenize(tf.constant(texts)).flat_values.numpy()
      counts = collections.Counter(t.decode("utf-8") for t in tokens)
      kept = sorted(counts.items(), key=lambda wc: (-wc[1], wc[0]))
      kept = [(w, c) for w, c in kept if c >= cfg.ngram_min_count]
      vocabulary_lib.Vocabulary([w for w, _ in kept],
                                [c for _, c in kept]).save(path)
  return text_to_ids_lib.TextToIds(vocabulary_lib.Vocabulary.load(path),
                                   tokenizer)


def make_featurizer(cfg, model_dir, texts):
  """The featuriser of --model; its vocabulary is built once and saved."""
  if cfg.model == "paragram_phrase":
    return _word_featurizer(cfg, model_dir, texts)
  characters = cfg.model in ("char_cnn", "char_lstm")
  sizes = [1] if characters else [int(n) for n in cfg.ngram_sizes]
  if cfg.ngram_buckets and not characters:
    return char_ngrams.CharNgramFeaturizer(sizes,
                                           num_buckets=cfg.ngram_buckets)
  path = char_ngrams.vocabulary_path(model_dir)
  if not os.path.exists(path):
    char_ngrams.build_ngram_vocabulary(
        texts, sizes, min_count=cfg.ngram_min_count).save(path)
  return char_ngrams.CharNgramFeaturizer(
      sizes, vocabulary=vocabulary_lib.Vocabulary.load(path),
      unknown_id=characters)


def make_model(cfg, featurizer):
  num_ids = (featurizer.vocabulary_size if cfg.model == "paragram_phrase"
             else featurizer.num_ids)
  cls = charagram_export.VARIANTS[cfg.model]
  if cfg.model == "charagram":
    model = cls(num_ids, cfg.embedding_dim, activation=cfg.activation,
                init_scale=cfg.init_scale)
  elif cfg.model == "paragram_phrase":
    model = cls(num_ids, cfg.embedding_dim, init_scale=cfg.init_scale)
  elif cfg.model == "char_cnn":
    model = cls(num_ids, cfg.char_dim,
                filter_widths=[int(w) for w in cfg.filter_widths],
                filters_per_width=cfg.filters_per_width,
                filter_activation=cfg.filter_activation,
                embedding_dim=cfg.embedding_dim,
                output_activation=cfg.output_activation)
  else:
    model = cls(num_ids, cfg.char_dim, cfg.embedding_dim)
  model(tf.ragged.constant([[1], []], dtype=tf.int32))
  return model


def initial_word_vectors(cfg, vocab_size):
  """Rows [vocab_size, d] from --word_vectors: row 0 (padding) zero, then the
  vectors of the vocabulary's words in order (`inputs.word_vectors`)."""
  vocab = word_vectors_vocab(cfg)
  if not vocab:
    raise errors.UserError("an exported --word_vectors needs --word_vectors_vocab "
                           "(the vocabulary its rows follow)")
  path = cfg.word_vectors
  try:
    if not _is_model_dir(path):
      path = encoder_lib.resolve_export_dir(path)
    vectors = word_vectors_lib.load(path, vocab_path=vocab)
  except (OSError, ValueError, tf.errors.OpError) as e:
    raise errors.UserError(f"cannot load --word_vectors: {e}")
  table = np.concatenate(
      [np.zeros([1, vectors.dim], np.float32), vectors.matrix])
  if table.shape != (vocab_size, cfg.embedding_dim):
    raise errors.UserError(
        f"--word_vectors give a table of shape {table.shape}, the "
        f"vocabulary needs ({vocab_size}, {cfg.embedding_dim}); check "
        "--word_vectors_vocab and --embedding_dim")
  return table


def _dataset_fn(cfg, texts1, texts2, featurizer):
  """input_context -> this pipeline's per-replica batches: replica r gets
  rows [r * B / R, (r + 1) * B / R) of the same seeded global batches."""

  def dataset_fn(input_context):
    dataset = charagram_step.text_batches(
        texts1, texts2, cfg.batch_size, num_epochs=cfg.num_epochs,
        seed=cfg.seed)
    if input_context.num_input_pipelines > 1:
      dataset = distribution.slice_batches(
          dataset, input_context.num_input_pipelines,
          input_context.input_pipeline_id)
    dataset = distribution.split_batches(
        dataset, distribution.replicas_per_pipeline(input_context))
    return charagram_step.featurize_batches(dataset, featurizer,
                                            cfg.max_length)

  return dataset_fn


class CharagramTrainer(trainer.ModelTrainer):
  """The CHARAGRAM family's part of the shared skeleton."""

  spec = model_specs.CHARAGRAM
  config_class = CharagramConfig
  flag_values = FLAGS

  def check_flags(self, cfg, strategy):
    distribution.check_global_batch(cfg.batch_size, strategy)
    if cfg.jit_compile:
      raise errors.UserError("--jit_compile: the CHARAGRAM steps take ragged "
                             "ids, which XLA does not compile")
    unknown = [s for s in cfg.task_paraphrases
               if s not in task_paraphrases.SOURCES]
    if unknown:
      raise errors.UserError(f"--task_paraphrases: unknown {unknown}; known: "
                             f"{', '.join(task_paraphrases.SOURCES)}")

  def model_name(self):
    return self.flag_values.model

  def build_plan(self, context):
    cfg, data_dir, out_dir = context.config, context.data_dir, context.out_dir
    pairs = load_pairs(cfg, data_dir)
    texts1 = [p.phrase1 for p in pairs]
    texts2 = [p.phrase2 for p in pairs]
    featurizer = make_featurizer(cfg, out_dir, texts1 + texts2)
    with context.scope():
      model = make_model(cfg, featurizer)
    init = "random"
    if cfg.model == "paragram_phrase" and cfg.word_vectors:
      init = f"word vectors of {cfg.word_vectors}"
      if model_dir_lib.latest_checkpoint(context.model_dir) is None:
        model.word_embedding.embeddings.assign(
            initial_word_vectors(cfg, model.vocab_size))
    steps_per_epoch = len(pairs) // cfg.batch_size
    total_steps = trainer.total_steps(cfg, steps_per_epoch)
    print(f"{cfg.model}: {len(pairs):,} training pairs, "
          f"{getattr(featurizer, 'num_ids', featurizer.vocabulary_size):,} "
          f"feature ids, {model.count_params():,} parameters, "
          f"{steps_per_epoch:,} batches per epoch, {total_steps:,} steps"
          + (f" over {context.replicas} replicas"
             if context.replicas > 1 else ""),
          flush=True)
    config = {
        "variant": cfg.model,
        "model": model.get_config(),
        "featurizer": charagram_export.featurizer_config(featurizer),
        "loss": paraphrase_margin_loss.ParaphraseMarginLoss(
            cfg.margin, cfg.sampling).get_config(),
        "training": {
            "train_files": [os.path.basename(p) for p in cfg.train_files],
            "train_format": cfg.train_format, "min_score": cfg.min_score,
            "max_pairs": cfg.max_pairs,
            "lexicon_files": [os.path.basename(p) for p in cfg.lexicon_files],
            "task_paraphrases": list(cfg.task_paraphrases),
            "num_pairs": len(pairs), "total_steps": total_steps,
            **{name: getattr(cfg, name) for name in (
                "batch_size", "sampling", "l2", "learning_rate",
                "num_epochs")},
            "initialisation": init, "strategy": cfg.strategy,
            "replicas": context.replicas}}

    loss_fn = paraphrase_margin_loss.ParaphraseMarginLoss(
        cfg.margin, cfg.sampling, seed=cfg.seed)
    with context.scope():
      optimizer = keras.optimizers.Adam(learning_rate=cfg.learning_rate)
      optimizer.build(model.trainable_variables)
    dataset = _dataset_fn(cfg, texts1, texts2, featurizer)
    train_step = charagram_step.make_train_step(model, optimizer, loss_fn,
                                                cfg.l2)

    eval_fn = None
    if context.chief:
      eval_fn = sts.stsb_dev_evaluator(
          data_dir, featurized_encoder.FeaturizedEncoder(featurizer, model))

    return trainer.TrainingPlan(
        config=config, steps_per_epoch=steps_per_epoch, dataset=dataset,
        train_step=train_step, step_counter=optimizer.iterations,
        checkpoint_items={"model": model, "optimizer": optimizer},
        unit_name="pairs", units_per_step=cfg.batch_size, eval_fn=eval_fn)


def run(argv):
  """Trains from Python with command-line flags; see `trainer.run`."""
  return trainer.run(CharagramTrainer(), argv)


if __name__ == "__main__":
  trainer.main(CharagramTrainer())
