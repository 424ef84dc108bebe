r"""Trains Siamese CBOW on an ordered corpus, then exports and evaluates it.

  python -m trainers.siamese_cbow --flagfile=configs/siamese_cbow_demo.flags \
      --data_dir=../shared/data --model_dir=runs/siamese_cbow_demo

Writes to --model_dir: flags.txt (the resolved flags, usable as a
--flagfile), vocab.txt, model_config.json, checkpoints/, tensorboard/,
train_log.jsonl (the loss curve), and at the end export/<version>/ and
sts_results.{json,md}. Rerunning the same command after an interruption
resumes from the last checkpoint.

Several devices or machines: --strategy=mirrored (all local GPUs) or
--strategy=multi_worker (TF_CONFIG), see trainers/distribution.py and
docs/distributed.md; --batch_size is then the global batch.
"""

import json
import os

from absl import flags
import keras
import tensorflow as tf

from common import cli
from common import data_dir as data_dir_lib
from common import errors
from evaluation import encoder as encoder_lib
from evaluation import sts
from evaluation import sts_data
from export import export_model
from export import siamese_cbow_export
from inputs import corpus
from inputs import siamese_cbow_data
from inputs import text_to_ids as text_to_ids_lib
from inputs import tokenizer as tokenizer_lib
from inputs import vocabulary as vocabulary_lib
from models import siamese_cbow
from trainers import distribution
from trainers import siamese_cbow_step
from trainers import training_loop

FLAGS = flags.FLAGS

flags.DEFINE_string("data_dir", None,
                    f"Data directory (default ${data_dir_lib.ENV_VAR}); the "
                    "corpus is <data_dir>/gutenberg/partNN.txt.gz.")
flags.DEFINE_list("corpus_parts", [], "Book corpus parts to train on, e.g. 1 "
                  "for part01 alone; empty: all parts.")
flags.DEFINE_string("corpus_files", None, "Comma-separated globs of corpus "
                    "files (one sentence per line, empty line between "
                    "documents); overrides --corpus_parts.")
flags.DEFINE_string("model_dir", None, "Where checkpoints, logs, vocabulary "
                    "and the export go.", required=True)
flags.DEFINE_string("export_dir", None, "Export base folder; default "
                    "<model_dir>/export.")
flags.DEFINE_integer("embedding_dim", 300, "Word (and sentence) vector size.")
flags.DEFINE_integer("num_negatives", 2, "Random sentences per group (n).")
flags.DEFINE_integer("batch_size", 100, "Groups per batch (the global "
                     "batch: split across replicas with --strategy).")
flags.DEFINE_integer("blocks_per_mix", 8, "Blocks of 2048 lines whose "
                     "sentences are shuffled together and supply negatives; "
                     "with several corpus files each block comes from another "
                     "file (1: negatives mostly from the same book).")
flags.DEFINE_integer("max_length", 50, "Ids kept per training sentence.")
flags.DEFINE_integer("min_count", 5, "Minimum corpus count of a vocabulary "
                     "word.")
flags.DEFINE_integer("max_vocabulary", 0, "Keep at most this many words "
                     "(0: no limit).")
flags.DEFINE_bool("keep_punctuation", False, "Keep punctuation tokens (the "
                  "reference Siamese CBOW code drops them).")
flags.DEFINE_float("init_stddev", 0.01, "W ~ N(0, init_stddev^2).")
flags.DEFINE_float("learning_rate", 1e-4, "Initial SGD learning rate.")
flags.DEFINE_float("final_learning_rate_fraction", 1e-4, "The learning rate "
                   "decays linearly to this fraction of the initial one over "
                   "training (the reference code's floor).")
flags.DEFINE_integer("num_epochs", 1, "Passes over the corpus.")
flags.DEFINE_integer("train_steps", 0, "Stop after this many batches "
                     "(0: num_epochs full passes).")
flags.DEFINE_integer("max_steps_per_run", 0, "Checkpoint and stop after this "
                     "many steps of this invocation (0: run to the end); "
                     "rerun the same command to continue.")
flags.DEFINE_integer("checkpoint_every_steps", 2000, "Checkpoint interval.")
flags.DEFINE_integer("log_every_steps", 500, "Console/TensorBoard interval.")
flags.DEFINE_integer("eval_every_steps", 10000, "STS Benchmark dev "
                     "evaluation interval (0: only at the end).")
flags.DEFINE_integer("seed", 0, "Seed for initialisation and sampling.")
flags.DEFINE_bool("jit_compile", True, "Compile the train step with XLA "
                  "(about 3x faster on CPU).")
flags.DEFINE_bool("export", True, "Export and evaluate on STS at the end.")


def _corpus_files(data_dir):
  if FLAGS.corpus_files:
    return corpus.list_files(FLAGS.corpus_files)
  return corpus.list_files(
      corpus.book_corpus_pattern(data_dir, FLAGS.corpus_parts))


def _load_or_build_vocabulary(model_dir, files, tokenizer):
  path = os.path.join(model_dir, export_model.VOCABULARY_FILE)
  if os.path.exists(path):
    return vocabulary_lib.Vocabulary.load(path)
  vocabulary = vocabulary_lib.build_vocabulary(
      files, tokenizer, min_count=FLAGS.min_count,
      max_size=FLAGS.max_vocabulary or None)
  if not len(vocabulary):
    raise errors.UserError(
        f"no word occurs --min_count={FLAGS.min_count} times in the corpus")
  vocabulary.save(path)
  return vocabulary


def _batches_per_epoch(model_dir, files, text_to_ids, num_pipelines=1):
  """Counted once by a pass over the corpus, then cached in the model dir.

  With several input pipelines reading disjoint files (see
  `distribution.shard_inputs`), a step takes one batch of
  batch_size / pipelines groups from each, so an epoch is as many steps as
  the pipeline with the fewest batches has (the others' extra batches are
  left over; no pipeline runs dry before the last step).
  """
  path = os.path.join(model_dir, "corpus_stats.json")
  key = {"files": files, "batch_size": FLAGS.batch_size,
         "max_length": FLAGS.max_length,
         "blocks_per_mix": FLAGS.blocks_per_mix}
  if num_pipelines > 1:
    key["input_pipelines"] = num_pipelines
  if os.path.exists(path):
    with open(path) as f:
      stats = json.load(f)
    if stats.get("key") == key:
      return stats["batches_per_epoch"]
  print("counting training groups (one pass over the corpus)...", flush=True)
  shards = [distribution.shard_files(files, num_pipelines, i)
            for i in range(num_pipelines)]
  if num_pipelines == 1 or shards[0] is None:
    shards, batch_size = [files], FLAGS.batch_size
  else:
    batch_size = FLAGS.batch_size // num_pipelines
  batches = min(siamese_cbow_data.count_batches(
      shard, text_to_ids, batch_size=batch_size,
      max_length=FLAGS.max_length, blocks_per_mix=FLAGS.blocks_per_mix)
                for shard in shards)
  with open(path, "w") as f:
    json.dump({"key": key, "batches_per_epoch": batches}, f)
  return batches


def _distributed_dataset_fn(files, text_to_ids):
  """input_context -> this pipeline's per-replica batches (see
  `distribution`): its own files in batches of batch_size / pipelines, or
  its slice of the global batches when there are fewer files than
  pipelines; each cut into one piece per local replica."""

  def dataset_fn(input_context):
    own_files, data_shard = distribution.shard_inputs(files, input_context)
    pipelines = input_context.num_input_pipelines
    batch_size = FLAGS.batch_size if data_shard else (
        FLAGS.batch_size // pipelines)
    dataset = siamese_cbow_data.group_dataset(
        own_files, text_to_ids, batch_size=batch_size,
        num_negatives=FLAGS.num_negatives, max_length=FLAGS.max_length,
        num_epochs=FLAGS.num_epochs, blocks_per_mix=FLAGS.blocks_per_mix,
        seed=FLAGS.seed)
    if data_shard:
      dataset = distribution.slice_batches(dataset, *data_shard)
    return distribution.split_batches(
        dataset, distribution.replicas_per_pipeline(input_context))

  return dataset_fn


def main(argv):
  del argv
  # First: logical CPU devices can only be set before TensorFlow starts.
  strategy = distribution.make_strategy()
  data_dir = data_dir_lib.resolve_data_dir(
      FLAGS.data_dir, None if FLAGS.corpus_files else "gutenberg")
  distribution.check_global_batch(FLAGS.batch_size, strategy)
  num_pipelines = distribution.num_input_pipelines(strategy)
  chief = distribution.is_chief(strategy)
  model_dir = FLAGS.model_dir
  out_dir = distribution.prepare_worker_dir(model_dir, strategy)
  keras.utils.set_random_seed(FLAGS.seed)

  files = _corpus_files(data_dir)
  tokenizer = tokenizer_lib.Tokenizer(keep_punctuation=FLAGS.keep_punctuation)
  vocabulary = _load_or_build_vocabulary(out_dir, files, tokenizer)
  text_to_ids = text_to_ids_lib.TextToIds(vocabulary, tokenizer,
                                          max_length=FLAGS.max_length)
  print(f"vocabulary: {len(vocabulary):,} words (min count "
        f"{FLAGS.min_count}); corpus: {len(files)} files", flush=True)
  batches_per_epoch = _batches_per_epoch(out_dir, files, text_to_ids,
                                         num_pipelines)
  total_steps = FLAGS.num_epochs * batches_per_epoch
  if FLAGS.train_steps:
    total_steps = min(total_steps, FLAGS.train_steps)
  if total_steps <= 0:
    raise errors.UserError("the corpus yields no full batch of groups")
  print(f"{batches_per_epoch:,} batches per epoch; training {total_steps:,} "
        f"steps of {FLAGS.batch_size} groups"
        + (f" over {strategy.num_replicas_in_sync} replicas"
           if strategy else ""), flush=True)

  with distribution.scope(strategy):
    model = siamese_cbow.SiameseCBOW(
        vocabulary.size_with_padding, FLAGS.embedding_dim,
        init_stddev=FLAGS.init_stddev)
  export_model.write_model_config(out_dir, "siamese_cbow", {
      "model": model.get_config(), "tokenizer": tokenizer.get_config(),
      "training": {"corpus_files": [os.path.basename(p) for p in files],
                   "total_steps": total_steps,
                   "batch_size": FLAGS.batch_size,
                   "num_epochs": FLAGS.num_epochs,
                   "strategy": FLAGS.strategy,
                   "replicas": distribution.num_replicas(strategy)}})
  schedule = keras.optimizers.schedules.PolynomialDecay(
      FLAGS.learning_rate, decay_steps=total_steps,
      end_learning_rate=FLAGS.learning_rate
      * FLAGS.final_learning_rate_fraction, power=1.0)
  with distribution.scope(strategy):
    # Plain SGD (no momentum) updates only the looked-up rows of the table.
    optimizer = keras.optimizers.SGD(learning_rate=schedule)
    model(tf.zeros([1, 1 + siamese_cbow_data.NUM_POSITIVES
                    + FLAGS.num_negatives, 1], tf.int32))
    optimizer.build(model.trainable_variables)
  if strategy is None:
    train_step = siamese_cbow_step.make_train_step(
        model, optimizer, FLAGS.num_negatives, FLAGS.jit_compile)
    dataset = siamese_cbow_data.group_dataset(
        files, text_to_ids, batch_size=FLAGS.batch_size,
        num_negatives=FLAGS.num_negatives, max_length=FLAGS.max_length,
        num_epochs=FLAGS.num_epochs, blocks_per_mix=FLAGS.blocks_per_mix,
        seed=FLAGS.seed)
  else:
    train_step = siamese_cbow_step.make_replica_step(
        model, optimizer, FLAGS.num_negatives, FLAGS.batch_size,
        FLAGS.jit_compile)
    dataset = _distributed_dataset_fn(files, text_to_ids)

  eval_fn = None
  if chief:
    eval_encoder = siamese_cbow_export.make_encoder(
        vocabulary, tokenizer, model, {})
    eval_fn = sts.stsb_dev_evaluator(
        data_dir, eval_encoder,
        before=lambda: eval_encoder.embeddings.assign(
            model.embedding.embeddings))

  outcome = training_loop.run(
      model_dir,
      training_loop.LoopConfig(
          total_steps=total_steps,
          checkpoint_every_steps=FLAGS.checkpoint_every_steps,
          log_every_steps=FLAGS.log_every_steps,
          eval_every_steps=FLAGS.eval_every_steps,
          unit_name="groups", units_per_step=FLAGS.batch_size,
          max_steps_per_run=FLAGS.max_steps_per_run),
      dataset, train_step, optimizer.iterations,
      {"model": model, "optimizer": optimizer},
      learning_rate_fn=lambda: schedule(optimizer.iterations),
      eval_fn=eval_fn, strategy=strategy)
  if outcome["interrupted"]:
    print(f"stopped at step {outcome['step']}; rerun the same command to "
          "resume", flush=True)
    return
  if not FLAGS.export or not chief:
    return
  export_dir = FLAGS.export_dir or os.path.join(model_dir, "export")
  path = export_model.export(model_dir, export_dir, data_dir=data_dir)
  print(f"exported to {path}", flush=True)
  pair_sets, missing = sts_data.load_eval_sets(data_dir, ("sts", "sick"))
  results = sts.evaluate_pair_sets(
      encoder_lib.load_encoder(path), pair_sets, missing=missing,
      model_name="Siamese CBOW")
  table = sts.format_table([results])
  with open(os.path.join(model_dir, "sts_results.json"), "w") as f:
    json.dump(sts.results_to_json(results, include_predictions=False), f,
              indent=2)
  with open(os.path.join(model_dir, "sts_results.md"), "w") as f:
    f.write(table + "\n")
  print(table, flush=True)
  print(f"export: {os.path.abspath(path)}", flush=True)


if __name__ == "__main__":
  cli.run(main)
