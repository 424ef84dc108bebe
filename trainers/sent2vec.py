r"""Trains Sent2Vec on a corpus of sentences, then exports and evaluates it.

  python -m trainers.sent2vec --flagfile=configs/sent2vec_books_uni.flags \
      --data_dir=../shared/data --model_dir=runs/sent2vec_books_uni

Writes the model directory of every trainer (trainers/trainer.py) plus
corpus_stats.json and token_cache/ (the corpus as word ids). Settings follow
the reference C++ code (epfml/sent2vec) and the paper's Table 5; where this
trainer differs (batched updates): `trainers.sent2vec_step`.

With --strategy=mirrored or multi_worker a step is one global block of
--block_lines lines, block_lines / R consecutive lines per replica, the
replicas' updates summed into full copies of both tables; draws are keyed
per corpus line, so with --negative_group=1 --max_multiplicity=0 a step
equals one device's. --strategy=parameter_server splits the tables over
the "ps" tasks for tables too large for one device: the chief reads the
blocks and schedules one step per block on the workers, which read and
update only the rows the block names (docs/distributed.md).
"""

import dataclasses
import json
import os
from typing import Optional

import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import sts
from sentzoo.export import averaging_encoder
from sentzoo.export import sent2vec as sent2vec_export
from sentzoo.inputs import data_integrity
from sentzoo.inputs import sent2vec_data
from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import token_cache
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import model_specs
from sentzoo.models import sent2vec
from sentzoo.trainers import config
from sentzoo.trainers import corpus_flags
from sentzoo.trainers import distribution
from sentzoo.trainers import init_from as init_from_lib
from sentzoo.trainers import sent2vec_step
from sentzoo.trainers import trainer


@dataclasses.dataclass
class Sent2VecConfig(config.CorpusConfig):
  """Sent2Vec's settings (the command's flags; the C++ code's names in
  parentheses)."""
  learning_rate: float = config.default(0.2)
  num_epochs: int = config.default(9)
  log_every_steps: int = config.default(200)
  embedding_dim: int = config.shared(700)
  word_ngrams: int = config.setting(
      1, "Largest word n-gram order (-wordNgrams; 2: unigrams + bigrams).",
      lower_bound=1, directory=True)
  num_buckets: int = config.setting(
      2000000, "Hash buckets for n-grams (-bucket); unused when "
      "--word_ngrams=1.", lower_bound=0, directory=True)
  min_count: int = config.shared(5)
  min_count_label: int = config.setting(
      8, "Minimum count of a word to be used as a target (-minCountLabel).",
      lower_bound=1)
  sample: float = config.setting(
      1e-5, "Subsampling threshold t of targets (-t): kept with probability "
      "sqrt(t/f) + t/f; 0: no subsampling.", lower_bound=0, upper_bound=1)
  num_negatives: int = config.shared(10)
  dropout_k: int = config.setting(
      0, "Token positions whose n-grams are dropped per sentence "
      "(-dropoutK).", lower_bound=0)
  context: str = config.setting(
      "remove", "remove: the context is the sentence without the target and "
      "its n-grams (the paper); placeholder: the target is replaced by a "
      "zero placeholder that also forms n-grams (the C++ code).",
      choices=sent2vec_data.CONTEXT_VARIANTS)
  keep_punctuation: bool = config.shared(True)
  l1_weight: float = config.setting(
      0.0, "L1 soft-thresholding of updated source rows (paper Appendix B; "
      "0 = off, as in the C++ code).", lower_bound=0)
  negative_group: int = config.setting(
      8, "Targets that share one draw of negatives (1: independent per "
      "target, as the C++ code; larger is faster). With --strategy, groups "
      "are formed within each replica's lines.", lower_bound=1)
  max_multiplicity: float = config.setting(
      8.0, "Per step, a row updated by c > M examples gets each update "
      "scaled by M / c (batched SGD diverges at lr 0.2 without it; 0 = "
      "off). With --strategy, c counts each replica's lines only.",
      lower_bound=0)
  max_source_multiplicity: Optional[float] = config.setting(
      None, "The same cap for source rows (default: --max_multiplicity; 0 = "
      "off; 64 still diverged on the book corpus at lr 0.2).", lower_bound=0)
  block_lines: int = config.setting(
      1024, "Corpus lines per step (the global block: with --strategy each "
      "of the R replicas gets block_lines / R consecutive lines of it; R "
      "must divide it). Smaller blocks are closer to the C++ code's "
      "per-target SGD and score higher; the book configs use 64 (STS mean "
      "after 9 epochs: 53.20 at 64, 49.88 at 128, 46.65 at 1,024; with the "
      "default threads on 2 CPU cores 64 also trained fastest of the three: "
      "docs/sent2vec.md).", lower_bound=1)
  token_cache: bool = config.setting(
      True, "One device: tokenise the corpus once into "
      "<model_dir>/token_cache/ (~4 bytes per word; rebuilt if the corpus, "
      "vocabulary, tokenizer or --block_lines change) and read the word ids "
      "from there every epoch instead of tokenising the text again (same "
      "batches, less input work; resume with the same setting).",
      runtime=True)
  step_threads: int = config.setting(
      1, "One device: step loops running at once, each from its own "
      "thread, on the shared input and tables (Hogwild, as the C++ code's "
      "-thread threads): they use the cores that one loop's ops leave idle. "
      "Each step then writes its rows back under a lock, as they are then "
      "minus its update, so two steps' updates of one row both count; the "
      "run is not deterministic (two runs of 480 steps on part01 ended with "
      "tables up to 0.27 apart; with 1 they are bit-identical). Needs "
      "--steps_per_call >= this. 1 (the default): one loop, deterministic, "
      "so an interrupted run resumes to the same export.", lower_bound=1,
      runtime=True)
  op_threads: int = config.setting(
      1, "Threads one op may use (TensorFlow's intra-op parallelism; 0: "
      "TensorFlow's default, one per core). A step's ops are small (a few "
      "hundred rows): on 2 cores, 1 thread per op with --input_threads=1 "
      "ran 1.2x the words/s of TensorFlow's defaults (docs/sent2vec.md, "
      "64-line blocks).", lower_bound=0, runtime=True)
  input_threads: int = config.setting(
      1, "One device: threads of the input pipeline's own pool (0: "
      "TensorFlow's shared pool, where it queues behind the step's ops).",
      lower_bound=0, runtime=True)


FLAGS = trainer.make_flags(Sent2VecConfig)

# The settings model_config.json records under "training", in this order.
_RECORDED_FIELDS = (
    "num_epochs", "learning_rate", "min_count", "min_count_label", "sample",
    "num_negatives", "dropout_k", "context", "negative_group",
    "max_multiplicity", "max_source_multiplicity", "l1_weight",
    "block_lines", "strategy")


def _vocabulary_and_stats(cfg, model_dir, files, tokenizer, data_dir,
                          init_source=None):
  """The vocabulary (with `init_source`'s words merged in) and corpus
  counts, built by one pass (after --verify_data) and cached."""
  vocab_path = os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE)
  stats_path = os.path.join(model_dir, model_dir_lib.CORPUS_STATS_FILE)
  key = {"files": files, "tokenizer": tokenizer.get_config(),
         "min_count": cfg.min_count}
  if cfg.init_from:
    key["init_from"] = os.path.abspath(cfg.init_from)
  if os.path.exists(vocab_path) and os.path.exists(stats_path):
    stats = model_dir_lib.read_json(stats_path, "the cached corpus counts")
    if all(stats.get(k) == v for k, v in key.items()):
      # A rerun: the corpus must be the one these counts were made from.
      data_integrity.check_corpus_unchanged(model_dir, files)
      return vocabulary_lib.Vocabulary.load(vocab_path), stats
  corpus_flags.verify_if_asked(cfg, data_dir, files)
  print("counting words (one pass over the corpus)...", flush=True)
  counter, sentences, tokens = vocabulary_lib.count_words(files, tokenizer)
  # Without a source, no known words: the corpus's words alone.
  vocabulary = init_from_lib.merged_vocabulary(
      counter, cfg.min_count,
      init_source.words if init_source is not None else ())
  if not len(vocabulary):
    raise errors.UserError(
        f"no word occurs --min_count={cfg.min_count} times in the corpus")
  vocabulary.save(vocab_path)
  stats = dict(key, tokens=int(tokens), sentences=int(sentences),
               lines=sent2vec_data.count_lines(files))
  model_dir_lib.write_text_atomically(stats_path, json.dumps(stats, indent=2))
  data_integrity.record_corpus(model_dir, files)
  return vocabulary, stats


def _init_source(cfg, model_dir):
  return init_from_lib.source_of_run(
      cfg, model_specs.SENT2VEC.name, model_dir, word_ngrams=cfg.word_ngrams,
      num_buckets=cfg.num_buckets if cfg.word_ngrams > 1 else 0)


def _start_from(source, model, vocabulary, num_buckets):
  """Copies the source's rows of the words it knows (and its n-gram
  buckets) into the new model; target rows where it has them."""
  copied = init_from_lib.copy_known_rows(
      model.source_embeddings, source.read_table("source"), source.words,
      vocabulary.words, num_buckets)
  targets = source.read_table("target")
  if targets is not None:
    init_from_lib.copy_known_rows(model.target_embeddings, targets,
                                  source.words, vocabulary.words)
  print(init_from_lib.describe(source, len(vocabulary), copied)
        + ("" if targets is not None else
           "; target vectors start at zero (an export has none)"),
        flush=True)


def _steps_per_epoch(cfg, out_dir, files, stats, num_pipelines):
  """Blocks of --block_lines lines in one pass; with pipelines reading their
  own files, the fewest blocks of block_lines / pipelines lines any has."""
  shards = [distribution.shard_files(files, num_pipelines, i)
            for i in range(num_pipelines)]
  if num_pipelines == 1 or shards[0] is None:
    return sent2vec_data.batches_per_epoch(stats["lines"], cfg.block_lines)
  key = f"lines_of_{num_pipelines}_pipelines"
  if key not in stats:
    stats[key] = [sent2vec_data.count_lines(shard) for shard in shards]
    model_dir_lib.write_text_atomically(
        os.path.join(out_dir, model_dir_lib.CORPUS_STATS_FILE),
        json.dumps(stats, indent=2))
  return min(sent2vec_data.batches_per_epoch(
      lines, cfg.block_lines // num_pipelines) for lines in stats[key])


def _dataset_fn(cfg, files, batch_args):
  """input_context -> this pipeline's per-replica pieces of block_lines / R
  lines: of the global blocks (one pipeline, or fewer files than
  pipelines: its consecutive share of pieces), or of its own files' blocks
  of block_lines / pipelines lines, with its own stream of draws."""

  def dataset_fn(input_context):
    own_files, data_shard = distribution.shard_inputs(files, input_context)
    local = distribution.replicas_per_pipeline(input_context)
    piece_lines = cfg.block_lines // input_context.num_replicas_in_sync
    if data_shard or input_context.num_input_pipelines == 1:
      index = data_shard[1] if data_shard else 0
      read_lines, offset, stream = (cfg.block_lines,
                                    index * local * piece_lines, 0)
    else:
      read_lines, offset, stream = (
          cfg.block_lines // input_context.num_input_pipelines, 0,
          input_context.input_pipeline_id)
    return sent2vec_data.batch_dataset(
        own_files, block_lines=read_lines, pieces=local, piece_offset=offset,
        piece_lines=piece_lines, stream=stream, **batch_args)

  return dataset_fn


def _module_owning_the_table(model, build_module):
  """`build_module()`, made the one owner of the source table's buffer: the
  model's table is emptied to [0, d] (a gather from it then fails).

  With copy-on-read off the module's table starts out sharing the model's
  buffer, but the first gather from a buffer two variables hold copies it
  whole (docs/design_measurements.md). A mirrored table is left.
  """
  table = model.source_embeddings.value
  if getattr(table, "values", None) or not hasattr(table, "handle"):
    return build_module()
  tf.raw_ops.DisableCopyOnRead(resource=table.handle)
  module = build_module()
  tf.raw_ops.AssignVariableOp(
      resource=table.handle, value=tf.zeros([0] + table.shape.as_list()[1:],
                                            table.dtype),
      validate_shape=False)
  return module


class Sent2VecTrainer(trainer.ModelTrainer):
  """Sent2Vec's part of the shared skeleton. --learning_rate is the C++
  code's -lr, decayed linearly to 0 over all tokens of all epochs;
  --jit_compile is off by default (blocks vary in shape: XLA recompiles).
  """

  spec = model_specs.SENT2VEC
  config_class = Sent2VecConfig
  flag_values = FLAGS
  supports_parameter_server = True

  def configure_runtime(self, cfg):
    # Thread pools can only be set before TensorFlow starts.
    if cfg.op_threads:
      tf.config.threading.set_intra_op_parallelism_threads(cfg.op_threads)

  def data_subdir(self, cfg):
    return corpus_flags.data_subdir(cfg)

  def check_flags(self, cfg, strategy):
    replicas = strategy.num_replicas_in_sync
    if cfg.block_lines % replicas:
      raise errors.UserError(
          f"--block_lines={cfg.block_lines} (the global block) must be a "
          f"positive multiple of the {replicas} replicas")
    if cfg.step_threads > 1 and (cfg.strategy != distribution.DEFAULT
                                   or cfg.steps_per_call < cfg.step_threads):
      raise errors.UserError(
          f"--step_threads={cfg.step_threads} runs on one device (no "
          "--strategy) and needs --steps_per_call >= --step_threads")
    if cfg.word_ngrams > 1 and cfg.num_buckets < 1:
      raise errors.UserError("--word_ngrams > 1 needs --num_buckets >= 1")
    _init_source(cfg, cfg.model_dir)

  def build_plan(self, context):
    cfg, data_dir, out_dir, strategy = (context.config, context.data_dir,
                                        context.out_dir, context.strategy)
    sharded = distribution.is_parameter_server(strategy)
    files = corpus_flags.corpus_files(cfg, data_dir)
    tokenizer = tokenizer_lib.Tokenizer(
        keep_punctuation=cfg.keep_punctuation)
    init_source = _init_source(cfg, context.model_dir)
    vocabulary, stats = _vocabulary_and_stats(cfg, out_dir, files, tokenizer,
                                              data_dir, init_source)
    featurizer = sent2vec_featurizer.Sent2VecFeaturizer(
        vocabulary, tokenizer, word_ngrams=cfg.word_ngrams,
        num_buckets=cfg.num_buckets)
    steps_per_epoch = _steps_per_epoch(cfg, out_dir, files, stats,
                                       context.num_pipelines)
    total_steps = trainer.total_steps(cfg, steps_per_epoch)
    print(f"vocabulary: {len(vocabulary):,} words (min count "
          f"{cfg.min_count}); corpus: {len(files)} files, "
          f"{stats['tokens']:,} tokens, {stats['lines']:,} lines; "
          f"{steps_per_epoch:,} batches per epoch; training {total_steps:,} "
          "steps" + (f" over {context.replicas} replicas"
                     if context.replicas > 1 else ""), flush=True)

    with context.scope():
      model = sent2vec.Sent2Vec(vocabulary.size_with_padding,
                                featurizer.num_buckets, cfg.embedding_dim)
      model(tf.zeros([1, 1], tf.int32))
    if init_source is not None:
      _start_from(init_source, model, vocabulary, featurizer.num_buckets)
    if sharded:
      for weight in (model.source_embeddings, model.target_embeddings):
        shards = weight.value.variables
        print(f"{weight.name}: {len(shards)} shards: " + ", ".join(
            f"{shard.shape.as_list()} on {shard.device}" for shard in shards),
              flush=True)
    training = {"corpus_files": [os.path.basename(p) for p in files],
                "total_steps": total_steps}
    training.update((name, getattr(cfg, name)) for name in _RECORDED_FIELDS)
    training["replicas"] = context.replicas
    if cfg.init_from:
      training["init_from"] = os.path.abspath(cfg.init_from)
    config = {
        "model": model.get_config(), "tokenizer": tokenizer.get_config(),
        "featurizer": {"word_ngrams": cfg.word_ngrams}, "training": training}

    batch_args = dict(
        featurizer=featurizer,
        keep_prob=sent2vec_data.keep_probabilities(
            vocabulary.counts, stats["tokens"], cfg.sample,
            cfg.min_count_label),
        cdf=sent2vec_data.negative_cdf(vocabulary.counts),
        num_negatives=cfg.num_negatives, dropout_k=cfg.dropout_k,
        context=cfg.context, num_epochs=cfg.num_epochs, seed=cfg.seed,
        negative_group=cfg.negative_group)
    # One device's blocks (the parameter servers' chief reads them too).
    if context.one_device or sharded:
      cache = None
      if cfg.token_cache:
        cache = token_cache.ensure(
            os.path.join(out_dir, "token_cache",
                         f"blocks_{cfg.block_lines}.tfrecord"),
            files, featurizer, vocabulary, cfg.block_lines,
            log=lambda line: print(line, flush=True))
      dataset = sent2vec_data.batch_dataset(
          files, block_lines=cfg.block_lines, token_cache=cache,
          input_threads=cfg.input_threads, **batch_args)
      element_spec = dataset.element_spec
    else:
      dataset = _dataset_fn(cfg, files, batch_args)
      element_spec = None
    with context.scope():
      train_step, step_counter, tokens_seen, learning_rate_fn = (
          sent2vec_step.make_train_step(
              model, cfg.learning_rate, cfg.num_epochs * stats["tokens"],
              num_negatives=cfg.num_negatives,
              negative_group=cfg.negative_group, l1_weight=cfg.l1_weight,
              max_multiplicity=cfg.max_multiplicity,
              max_source_multiplicity=cfg.max_source_multiplicity,
              jit_compile=cfg.jit_compile, element_spec=element_spec,
              concurrent=cfg.step_threads > 1,
              tables=("sharded" if sharded else "one_device"
                      if context.one_device else "mirrored")))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def encode(sentences):
      # Reads the live table (a mirrored one: the first replica's copy;
      # a sharded one: the named rows of each shard), so a multi-GB source
      # table is not copied.
      ids = featurizer(sentences)
      gather_rows = (sent2vec_step.gather_sharded_rows if sharded
                     else tf.gather)
      return averaging_encoder.ragged_mean_of_rows(
          gather_rows(model.source_embeddings.value, ids.flat_values), ids)

    eval_fn = None
    if context.chief and cfg.eval_every_steps:
      eval_fn = sts.stsb_dev_evaluator(data_dir, encode)

    def export_module(step):
      return _module_owning_the_table(
          model, lambda: sent2vec_export.module_from_model(
              model_dir_lib.read_model_config(context.model_dir), model,
              featurizer, step, **trainer.input_caps(cfg)))

    checkpointed_model = model
    if sharded:
      # A Keras 3 weight holding a ShardedVariable cannot be saved
      # ("'ShardedVariable' object has no attribute 'device'"); the
      # ShardedVariables under the same names save slices of the whole
      # table, which read back as one device's checkpoint.
      checkpointed_model = tf.train.Checkpoint(
          source_embeddings=model.source_embeddings.value,
          target_embeddings=model.target_embeddings.value)
      # The exporter restores the checkpoint on the chief instead.
      export_module = None

    return trainer.TrainingPlan(
        config=config, steps_per_epoch=steps_per_epoch, dataset=dataset,
        train_step=train_step, step_counter=step_counter,
        checkpoint_items={"model": checkpointed_model, "step": step_counter,
                          "tokens_seen": tokens_seen},
        unit_name="tokens",
        units_per_step=max(1, stats["tokens"] // max(steps_per_epoch, 1)),
        learning_rate_fn=learning_rate_fn, eval_fn=eval_fn,
        steps_per_call=cfg.steps_per_call,
        step_threads=cfg.step_threads, export_module=export_module)


def run(argv):
  """Trains from Python with command-line flags; see `trainer.run`."""
  return trainer.run(Sent2VecTrainer(), argv)


if __name__ == "__main__":
  trainer.main(Sent2VecTrainer())
