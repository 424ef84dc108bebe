r"""Trains a CHARAGRAM-family model on paraphrase pairs, then exports and evaluates it.

  python -m trainers.charagram --flagfile=configs/charagram_phrase.flags \
      --data_dir=../shared/data --model_dir=runs/charagram_phrase

One loop for every variant (`--model`): CHARAGRAM (character n-gram sums;
phrases or words by --ngram_sizes / --activation), PARAGRAM-PHRASE (word
averaging), charCNN and charLSTM (Wieting, Bansal, Gimpel, Livescu, EMNLP
2016). Loss: the margin loss with in-batch MAX or MIX negatives
(`models.paraphrase_margin_loss`) plus 0.5 * --l2 * sum ||theta||^2; Adam.

Writes to --model_dir: flags.txt, ngrams.txt or vocab.txt, model_config.json,
checkpoints/, tensorboard/, train_log.jsonl (the loss curve), and at the end
export/<version>/ and sts_results.{json,md} (STS 2012-2015, SICK test,
Twitter 2015 test). Rerunning the same command resumes from the last checkpoint.

Several devices or machines: --strategy=mirrored (all local GPUs) or
--strategy=multi_worker (TF_CONFIG), see trainers/distribution.py and
docs/distributed.md. --batch_size is then the global batch (a multiple of
the replicas); the replicas' phrase embeddings are all-gathered so that
the MAX / MIX negatives come from the whole global batch, and a step is
the one-device step on that batch (`charagram_step.make_replica_step`).
"""

import collections
import os
import shutil

from absl import flags
import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.export import charagram_export
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
from sentzoo.trainers import distribution
from sentzoo.trainers import trainer

FLAGS = flags.FlagValues()
trainer.define_common_flags(FLAGS)

flags.DEFINE_enum("model", "charagram", sorted(charagram_export.VARIANTS),
                  "Which model to train.", flag_values=FLAGS)
flags.DEFINE_list("train_files", [
    "ppdb/ppdb-2.0-human-labels.ppdb-sample.tsv",
    "ppdb/ppdb-2.0-human-labels.wiki-sample.tsv"],
                  "Paraphrase pair files (absolute, or relative to "
                  "--data_dir).", flag_values=FLAGS)
flags.DEFINE_enum("train_format", "human_labels", sorted(ppdb.FORMATS),
                  "Format of --train_files (see inputs/ppdb.py).", flag_values=FLAGS)
flags.DEFINE_float("min_score", 3.0, "Keep pairs scored at least this "
                   "(human_labels: mean rating 1-5; ppdb: PPDB2.0Score).", flag_values=FLAGS)
flags.DEFINE_integer("max_pairs", 0, "Keep a seeded random subset of this "
                     "many pairs (0: all).", lower_bound=0, flag_values=FLAGS)
flags.DEFINE_list("lexicon_files", [], "Also train on the word pairs of "
                  "these lexicon files (format lexicon: `word para1 para2 "
                  "...` lines; absolute, or relative to --data_dir), beside "
                  "--train_files: the way to train a phrase model on PPDB's "
                  "phrase and word pairs together.", flag_values=FLAGS)
flags.DEFINE_list("task_paraphrases", [], "Also train on the paraphrase "
                  "pairs of these TRAINING splits (inputs/task_paraphrases.py:"
                  f" any of {', '.join(task_paraphrases.SOURCES)}); a pair "
                  "that occurs in any test split under --data_dir is "
                  "dropped.", flag_values=FLAGS)
flags.DEFINE_integer("embedding_dim", 300, "d.", lower_bound=1, flag_values=FLAGS)
flags.DEFINE_list("ngram_sizes", ["2", "3", "4"], "Character n-gram sizes "
                  "(charagram; the paper: 2,3,4 for phrases, 2-6 for words).", flag_values=FLAGS)
flags.DEFINE_integer("ngram_min_count", 1, "An n-gram (a character for "
                     "charCNN/charLSTM, a word for PARAGRAM-PHRASE without "
                     "--word_vocab) enters the vocabulary if seen this often "
                     "in the training pairs.", lower_bound=1, flag_values=FLAGS)
flags.DEFINE_integer("ngram_buckets", 0, "> 0: hash n-grams into this many "
                     "buckets instead of a vocabulary.", lower_bound=0, flag_values=FLAGS)
flags.DEFINE_enum("activation", "tanh", ["tanh", "linear"], "h of CHARAGRAM.", flag_values=FLAGS)
flags.DEFINE_float("init_scale", 0.0, "Uniform init range of CHARAGRAM / "
                   "PARAGRAM-PHRASE tables (0: Glorot uniform).", lower_bound=0, flag_values=FLAGS)
flags.DEFINE_integer("char_dim", 300, "charCNN/charLSTM character vectors.",
                     lower_bound=1, flag_values=FLAGS)
flags.DEFINE_list("filter_widths", ["2", "3", "4"], "charCNN filter widths.", flag_values=FLAGS)
flags.DEFINE_integer("filters_per_width", 175, "charCNN filters per width.",
                     lower_bound=1, flag_values=FLAGS)
flags.DEFINE_enum("filter_activation", "relu", ["relu", "tanh"],
                  "charCNN filter activation.", flag_values=FLAGS)
flags.DEFINE_enum("output_activation", "tanh", ["tanh", "linear"],
                  "charCNN fully connected layer activation.", flag_values=FLAGS)
flags.DEFINE_string("word_vectors", None, "PARAGRAM-PHRASE: word vectors "
                    "to start from: a model dir of this project (e.g. "
                    "runs/siamese_cbow_best or a unigram Sent2Vec run; its "
                    "vocab.txt is the vocabulary) or an export with an "
                    "`embeddings` table [V+1, d] (needs --word_vocab); "
                    "--embedding_dim must be their d. None: random.",
                    flag_values=FLAGS)
flags.DEFINE_string("word_vocab", None, "PARAGRAM-PHRASE: the vocabulary "
                    "(word<TAB>count) of an exported --word_vectors; without "
                    "--word_vectors, a vocabulary to use with random init.", flag_values=FLAGS)
flags.DEFINE_bool("keep_punctuation", False, "PARAGRAM-PHRASE tokeniser: "
                  "keep punctuation tokens (keep False for a Siamese CBOW "
                  "vocabulary, built without them).", flag_values=FLAGS)
flags.DEFINE_enum("sampling", "max", list(paraphrase_margin_loss.SAMPLINGS),
                  "Negative selection: max or mix (the paper's two), rand.", flag_values=FLAGS)
flags.DEFINE_integer("max_length", 100, "Tokens kept per training phrase "
                     "(and their n-grams) before a batch is built.",
                     lower_bound=1, flag_values=FLAGS)
flags.DEFINE_float("margin", 0.4, "delta.", lower_bound=0, flag_values=FLAGS)
flags.DEFINE_float("l2", 0.0, "lambda of 0.5 * lambda * sum ||theta||^2.",
                   lower_bound=0, flag_values=FLAGS)
flags.DEFINE_integer("batch_size", 100, "Pairs per batch (the global "
                     "batch: split across replicas with --strategy; the "
                     "in-batch negatives come from all of it, so at least "
                     "2).", lower_bound=2, flag_values=FLAGS)
trainer.set_defaults(FLAGS, learning_rate=1e-3, num_epochs=10,
                     checkpoint_every_steps=1000, log_every_steps=100,
                     eval_every_steps=0, jit_compile=False)
cli.positive_int_list("ngram_sizes", FLAGS)
cli.positive_int_list("filter_widths", FLAGS)


def _resolve(data_dir, path):
  return path if os.path.isabs(path) or data_dir is None else os.path.join(
      data_dir, path)


def load_pairs(data_dir):
  """The training pairs of the flags, deduplicated."""
  pairs = []
  for path in FLAGS.train_files:
    pairs.extend(ppdb.load(_resolve(data_dir, path), FLAGS.train_format,
                           min_score=FLAGS.min_score))
  for path in FLAGS.lexicon_files:
    pairs.extend(ppdb.load(_resolve(data_dir, path), "lexicon"))
  if FLAGS.task_paraphrases:
    if data_dir is None:
      raise errors.UserError("--task_paraphrases needs --data_dir")
    extra, counts = task_paraphrases.load_training_paraphrases(
        data_dir, FLAGS.task_paraphrases)
    print("task paraphrases (training splits; pairs also in a test split "
          "dropped): " + ", ".join(
              f"{s} {c['kept']:,} (dropped {c['dropped_as_test_pairs']:,})"
              for s, c in counts.items()), flush=True)
    pairs.extend(extra)
  pairs = ppdb.subsample(ppdb.deduplicate(pairs), FLAGS.max_pairs,
                         FLAGS.seed)
  if len(pairs) < FLAGS.batch_size:
    raise errors.UserError(
        f"{len(pairs)} training pairs, fewer than --batch_size="
        f"{FLAGS.batch_size}: lower --min_score or add --train_files")
  return pairs


def _int_list(values, name):
  try:
    return [int(v) for v in values]
  except ValueError:
    raise errors.UserError(f"--{name} must be integers, got {values}")


def _is_model_dir(path):
  return os.path.exists(os.path.join(path, model_dir_lib.MODEL_CONFIG_FILE))


def word_vectors_vocab():
  """The vocabulary --word_vectors' rows follow: --word_vocab, or the
  vocab.txt of a model dir given as --word_vectors (None without either)."""
  if FLAGS.word_vocab:
    return FLAGS.word_vocab
  if FLAGS.word_vectors and _is_model_dir(FLAGS.word_vectors):
    return os.path.join(FLAGS.word_vectors, model_dir_lib.VOCABULARY_FILE)
  return None


def _word_featurizer(model_dir, texts):
  path = os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE)
  tokenizer = tokenizer_lib.Tokenizer(keep_punctuation=FLAGS.keep_punctuation)
  if not os.path.exists(path):
    if word_vectors_vocab():
      shutil.copyfile(word_vectors_vocab(), path)
    else:
      tokens = tokenizer.tokenize(tf.constant(texts)).flat_values.numpy()
      counts = collections.Counter(t.decode("utf-8") for t in tokens)
      kept = sorted(counts.items(), key=lambda wc: (-wc[1], wc[0]))
      kept = [(w, c) for w, c in kept if c >= FLAGS.ngram_min_count]
      vocabulary_lib.Vocabulary([w for w, _ in kept],
                                [c for _, c in kept]).save(path)
  return text_to_ids_lib.TextToIds(vocabulary_lib.Vocabulary.load(path),
                                   tokenizer)


def make_featurizer(model_dir, texts):
  """The featuriser of --model; its vocabulary is built once and saved."""
  if FLAGS.model == "paragram_phrase":
    return _word_featurizer(model_dir, texts)
  characters = FLAGS.model in ("char_cnn", "char_lstm")
  sizes = [1] if characters else _int_list(FLAGS.ngram_sizes, "ngram_sizes")
  if FLAGS.ngram_buckets and not characters:
    return char_ngrams.CharNgramFeaturizer(sizes,
                                           num_buckets=FLAGS.ngram_buckets)
  path = char_ngrams.vocabulary_path(model_dir)
  if not os.path.exists(path):
    char_ngrams.build_ngram_vocabulary(
        texts, sizes, min_count=FLAGS.ngram_min_count).save(path)
  return char_ngrams.CharNgramFeaturizer(
      sizes, vocabulary=vocabulary_lib.Vocabulary.load(path),
      unknown_id=characters)


def make_model(featurizer):
  num_ids = (featurizer.vocabulary_size if FLAGS.model == "paragram_phrase"
             else featurizer.num_ids)
  cls = charagram_export.VARIANTS[FLAGS.model]
  if FLAGS.model == "charagram":
    model = cls(num_ids, FLAGS.embedding_dim, activation=FLAGS.activation,
                init_scale=FLAGS.init_scale)
  elif FLAGS.model == "paragram_phrase":
    model = cls(num_ids, FLAGS.embedding_dim, init_scale=FLAGS.init_scale)
  elif FLAGS.model == "char_cnn":
    model = cls(num_ids, FLAGS.char_dim,
                filter_widths=_int_list(FLAGS.filter_widths, "filter_widths"),
                filters_per_width=FLAGS.filters_per_width,
                filter_activation=FLAGS.filter_activation,
                embedding_dim=FLAGS.embedding_dim,
                output_activation=FLAGS.output_activation)
  else:
    model = cls(num_ids, FLAGS.char_dim, FLAGS.embedding_dim)
  model(tf.ragged.constant([[1], []], dtype=tf.int32))
  return model


def initial_word_vectors(vocab_size):
  """Rows [vocab_size, d] from --word_vectors: row 0 (padding) zero, then the
  vectors of the vocabulary's words in order (`inputs.word_vectors`)."""
  vocab = word_vectors_vocab()
  if not vocab:
    raise errors.UserError("an exported --word_vectors needs --word_vocab "
                           "(the vocabulary its rows follow)")
  path = FLAGS.word_vectors
  try:
    if not _is_model_dir(path):
      path = encoder_lib.resolve_export_dir(path)
    vectors = word_vectors_lib.load(path, vocab_path=vocab)
  except (OSError, ValueError, tf.errors.OpError) as e:
    raise errors.UserError(f"cannot load --word_vectors: {e}")
  table = np.concatenate(
      [np.zeros([1, vectors.dim], np.float32), vectors.matrix])
  if table.shape != (vocab_size, FLAGS.embedding_dim):
    raise errors.UserError(
        f"--word_vectors give a table of shape {table.shape}, the "
        f"vocabulary needs ({vocab_size}, {FLAGS.embedding_dim}); check "
        "--word_vocab and --embedding_dim")
  return table




def _distributed_dataset_fn(texts1, texts2, featurizer):
  """input_context -> this pipeline's per-replica batches.

  Every pipeline builds the same seeded stream of global batches of pairs
  (as on one device) and keeps its slice of each (`distribution.
  slice_batches`; no pair goes to two pipelines); the slice is cut into one
  consecutive piece per local replica, then featurised. Replica r of the
  step thus gets rows [r * B / R, (r + 1) * B / R) of the global batch.
  """

  def dataset_fn(input_context):
    dataset = charagram_step.text_batches(
        texts1, texts2, FLAGS.batch_size, num_epochs=FLAGS.num_epochs,
        seed=FLAGS.seed)
    if input_context.num_input_pipelines > 1:
      dataset = distribution.slice_batches(
          dataset, input_context.num_input_pipelines,
          input_context.input_pipeline_id)
    dataset = distribution.split_batches(
        dataset, distribution.replicas_per_pipeline(input_context))
    return charagram_step.featurize_batches(dataset, featurizer,
                                            FLAGS.max_length)

  return dataset_fn


class CharagramTrainer(trainer.ModelTrainer):
  """The CHARAGRAM family's part of the shared skeleton (trainers/trainer.py).

  --learning_rate is Adam's. --jit_compile is refused: the steps take ragged
  ids, which XLA does not compile.
  """

  spec = model_specs.CHARAGRAM
  flag_values = FLAGS
  directory_flags = ("model", "embedding_dim", "ngram_sizes",
                     "ngram_min_count", "ngram_buckets", "char_dim",
                     "filter_widths", "filters_per_width", "word_vocab",
                     "keep_punctuation", "train_files", "train_format",
                     "lexicon_files", "min_score", "max_pairs")

  def check_flags(self, strategy):
    distribution.check_global_batch(FLAGS.batch_size, strategy)
    if FLAGS.jit_compile:
      raise errors.UserError("--jit_compile: the CHARAGRAM steps take ragged "
                             "ids, which XLA does not compile")
    unknown = [s for s in FLAGS.task_paraphrases
               if s not in task_paraphrases.SOURCES]
    if unknown:
      raise errors.UserError(f"--task_paraphrases: unknown {unknown}; known: "
                             f"{', '.join(task_paraphrases.SOURCES)}")

  def model_name(self):
    return FLAGS.model

  def build_plan(self, context):
    data_dir, out_dir, strategy = (context.data_dir, context.out_dir,
                                   context.strategy)
    pairs = load_pairs(data_dir)
    texts1 = [p.phrase1 for p in pairs]
    texts2 = [p.phrase2 for p in pairs]
    featurizer = make_featurizer(out_dir, texts1 + texts2)
    with context.scope():
      model = make_model(featurizer)
    init = "random"
    if FLAGS.model == "paragram_phrase" and FLAGS.word_vectors:
      init = f"word vectors of {FLAGS.word_vectors}"
      if not context.is_resuming():
        model.word_embedding.embeddings.assign(
            initial_word_vectors(model.vocab_size))
    steps_per_epoch = len(pairs) // FLAGS.batch_size
    total_steps = trainer.total_steps(FLAGS, steps_per_epoch)
    print(f"{FLAGS.model}: {len(pairs):,} training pairs, "
          f"{getattr(featurizer, 'num_ids', featurizer.vocabulary_size):,} "
          f"feature ids, {model.count_params():,} parameters, "
          f"{steps_per_epoch:,} batches per epoch, {total_steps:,} steps"
          + (f" over {context.replicas} replicas" if strategy else ""),
          flush=True)
    config = {
        "variant": FLAGS.model,
        "model": model.get_config(),
        "featurizer": charagram_export.featurizer_config(featurizer),
        "loss": paraphrase_margin_loss.ParaphraseMarginLoss(
            FLAGS.margin, FLAGS.sampling).get_config(),
        "training": {"train_files": [os.path.basename(p)
                                     for p in FLAGS.train_files],
                     "train_format": FLAGS.train_format,
                     "min_score": FLAGS.min_score,
                     "max_pairs": FLAGS.max_pairs,
                     "lexicon_files": [os.path.basename(p)
                                       for p in FLAGS.lexicon_files],
                     "task_paraphrases": list(FLAGS.task_paraphrases),
                     "num_pairs": len(pairs), "total_steps": total_steps,
                     "batch_size": FLAGS.batch_size,
                     "sampling": FLAGS.sampling,
                     "l2": FLAGS.l2, "learning_rate": FLAGS.learning_rate,
                     "num_epochs": FLAGS.num_epochs, "initialisation": init,
                     "strategy": FLAGS.strategy,
                     "replicas": context.replicas}}

    loss_fn = paraphrase_margin_loss.ParaphraseMarginLoss(
        FLAGS.margin, FLAGS.sampling, seed=FLAGS.seed)
    with context.scope():
      optimizer = keras.optimizers.Adam(learning_rate=FLAGS.learning_rate)
      optimizer.build(model.trainable_variables)
    if strategy is None:
      dataset = charagram_step.pair_dataset(
          texts1, texts2, featurizer, FLAGS.batch_size,
          num_epochs=FLAGS.num_epochs, seed=FLAGS.seed,
          max_tokens=FLAGS.max_length)
      train_step = charagram_step.make_train_step(
          model, optimizer, loss_fn, FLAGS.l2,
          input_signature=list(dataset.element_spec))
    else:
      dataset = _distributed_dataset_fn(texts1, texts2, featurizer)
      train_step = charagram_step.make_replica_step(
          model, optimizer, loss_fn, FLAGS.batch_size, FLAGS.l2)

    eval_fn = None
    if context.chief:
      eval_fn = sts.stsb_dev_evaluator(
          data_dir, charagram_export.make_encoder(featurizer, model))

    return trainer.TrainingPlan(
        config=config, steps_per_epoch=steps_per_epoch, dataset=dataset,
        train_step=train_step, step_counter=optimizer.iterations,
        checkpoint_items={"model": model, "optimizer": optimizer},
        unit_name="pairs", units_per_step=FLAGS.batch_size, eval_fn=eval_fn)


def run(argv):
  """Trains from Python with command-line flags; see `trainer.run`."""
  return trainer.run(CharagramTrainer(), argv)


if __name__ == "__main__":
  trainer.main(CharagramTrainer())
