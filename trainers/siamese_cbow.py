r"""Trains Siamese CBOW on an ordered corpus, then exports and evaluates it.

  python -m trainers.siamese_cbow --flagfile=configs/siamese_cbow_demo.flags \
      --data_dir=../shared/data --model_dir=runs/siamese_cbow_demo

Writes the model directory of every trainer (trainers/trainer.py);
--strategy: trainers/distribution.py and docs/distributed.md.
"""

import dataclasses
import hashlib
import json
import os

import keras

from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import neighbour_ranking
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.export import siamese_cbow as siamese_cbow_export
from sentzoo.inputs import corpus
from sentzoo.inputs import data_integrity
from sentzoo.inputs import sent2vec_data
from sentzoo.inputs import siamese_cbow_data
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import model_specs
from sentzoo.models import siamese_cbow
from sentzoo.trainers import config
from sentzoo.trainers import corpus_flags
from sentzoo.trainers import distribution
from sentzoo.trainers import init_from as init_from_lib
from sentzoo.trainers import siamese_cbow_step
from sentzoo.trainers import trainer

# Held-out groups scored by eval/neighbour_ranking, and their random
# sentences per group.
HELDOUT_GROUPS = 5000
HELDOUT_NEGATIVES = 10
# Sentences encoded per call by eval/neighbour_ranking: `encode` gathers
# [batch, max_length, dim] floats and makes a few temporaries of that size,
# on top of training's memory: small calls keep the evaluations off the
# trainer's peak; the vectors did not change with the batch
# (docs/design_measurements.md).
NEIGHBOUR_RANKING_BATCH = 32


def _default_count_cache_dir():
  """cache/siamese_cbow_counts of the store ($SENTZOO_HOME)."""
  return os.path.join(data_dir_lib.home(), "cache", "siamese_cbow_counts")


def _cache_path(cfg, files, what, settings):
  """`<count_cache_dir>/<what>-<digest>` (no extension), keyed by the
  files' fingerprints without their folder (a moved data directory still
  hits) and `settings`; None without a cache."""
  if not cfg.count_cache_dir:
    return None
  prints = [{k: v for k, v in entry.items() if k != "path"}
            | {"name": os.path.basename(entry["path"])}
            for entry in data_integrity.corpus_fingerprint(files)]
  digest = hashlib.sha256(json.dumps(
      {"files": prints, "settings": settings}, sort_keys=True).encode()
                          ).hexdigest()[:32]
  os.makedirs(cfg.count_cache_dir, exist_ok=True)
  return os.path.join(cfg.count_cache_dir, f"{what}-{digest}")


@dataclasses.dataclass
class SiameseCBOWConfig(config.CorpusConfig):
  """Siamese CBOW's settings (the command's flags)."""
  learning_rate: float = config.default(1e-4)
  eval_every_steps: int = config.default(10000)
  jit_compile: bool = config.default(True)
  embedding_dim: int = config.shared(300)
  num_negatives: int = config.shared(2)
  batch_size: int = config.shared(100)
  blocks_per_mix: int = config.setting(
      8, "Blocks of 2048 lines whose sentences are shuffled together and "
      "supply negatives; with several corpus files each block comes from "
      "another file (1: negatives mostly from the same book).",
      lower_bound=1)
  max_length: int = config.shared(50)
  min_count: int = config.shared(5)
  max_vocabulary: int = config.setting(
      0, "Keep at most this many words (0: no limit).", lower_bound=0,
      directory=True)
  keep_punctuation: bool = config.shared(False)
  negatives: str = config.setting(
      "mix", "Where negatives come from: mix (any sentence of the "
      "--blocks_per_mix blocks, mostly other books, like the reference's "
      "uniform draw), document (the centre's own book only) or nearby (the "
      "centre's book, at most --nearby_window sentences away).",
      choices=siamese_cbow_data.NEGATIVE_SOURCES)
  nearby_window: int = config.setting(
      siamese_cbow_data.NEARBY_WINDOW, "With --negatives=nearby: how many "
      "usable sentences before or after the centre a negative may be.",
      lower_bound=1)
  batch_layout: str = config.setting(
      "by_length", "How groups make a batch: by_length (groups shuffled, then "
      "cut by the length of their longest member: the reference's random "
      "triples) or consecutive (the groups of consecutive centres, each "
      "distinct sentence averaged and updated once per batch: a sentence is "
      "a centre, a neighbour twice and often a nearby negative, so the step "
      "gathers and updates ~3.6x fewer rows with the best flagfile; one "
      "device only).",
      choices=siamese_cbow_data.BATCH_LAYOUTS)
  min_sentence_length: int = config.setting(
      1, "Sentences with fewer vocabulary words (after dropping unknown "
      "words and, without --keep_punctuation, punctuation) are not used as "
      "centres, neighbours or negatives.", lower_bound=1)
  subsample: float = config.setting(
      0.0, "t: each word occurrence of a training sentence is kept with "
      "probability min(1, sqrt(t/f) + t/f), f = the word's share of the "
      "vocabulary's corpus tokens (word2vec's and Sent2Vec's subsampling of "
      "frequent words; not in the Siamese CBOW paper). Training only: the "
      "encoder averages every word. 0: off.", lower_bound=0.0)
  heldout_books: int = config.setting(
      20, "The last N books of the last corpus part are kept out of "
      "training; the share of their neighbours ranked above random "
      "sentences is logged as eval/neighbour_ranking (book corpus only; 0: "
      "none).", lower_bound=0)
  init_stddev: float = config.setting(0.01, "W ~ N(0, init_stddev^2).",
                                      positive=True)
  optimizer: str = config.setting(
      "sgd", "sgd: plain SGD (the paper); adagrad / adadelta: their lazy "
      "variants, which update only the looked-up rows (adadelta with "
      "--learning_rate=1 is the authors' code default).",
      choices=siamese_cbow_step.OPTIMIZERS)
  final_learning_rate_fraction: float = config.setting(
      1e-4, "The learning rate decays linearly to this fraction of the "
      "initial one over training (the reference code's floor).",
      lower_bound=0, upper_bound=1)
  count_cache_dir: str = config.setting(
      _default_count_cache_dir(), "Where the corpus passes before the first "
      "step (the vocabulary's word counts, the batch count) are cached for "
      "other runs on the same corpus files and settings, keyed by the files' "
      "fingerprints (size, mtime, sampled digest); \"\": no cache.",
      runtime=True)
  compare_untrained: bool = config.setting(
      True, "Also evaluate the initial (untrained) word vectors, at the "
      "start of a fresh run, and show them beside the trained ones in the "
      "final table.", runtime=True)


FLAGS = trainer.make_flags(SiameseCBOWConfig)

# Where the untrained model's results go.
UNTRAINED_RESULTS_FILE = "sts_results_untrained.json"


def _line_limits(cfg, data_dir, files):
  """{file: lines read (-1: all)} and the held-out (file, first line), or
  None when no books are held out."""
  limits = {f: -1 for f in files}
  if not cfg.heldout_books or cfg.corpus_files:
    return limits, None
  index = data_integrity.book_index_path(data_dir)
  if not os.path.exists(index):
    print(f"no {index}: no books held out, no neighbour ranking", flush=True)
    return limits, None
  last = files[-1]
  part = int(os.path.basename(last)[len("part"):len("part") + 2])
  try:
    first_line = corpus.last_books_start(data_dir, part, cfg.heldout_books)
  except errors.DataDirError as e:
    raise errors.UserError(f"--heldout_books={cfg.heldout_books}: {e}") from e
  # The empty line before the first held-out book ends the training text.
  limits[last] = max(first_line - 1, 0)
  return limits, (last, first_line)


def _load_or_build_vocabulary(cfg, model_dir, files, tokenizer, data_dir,
                              init_source=None):
  """The corpus's vocabulary (with `init_source`'s words merged in),
  cached."""
  path = os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE)
  if os.path.exists(path):
    # A rerun: the corpus must be the one the vocabulary and the plan of
    # batches were made from.
    data_integrity.check_corpus_unchanged(model_dir, files)
    return vocabulary_lib.Vocabulary.load(path)
  corpus_flags.verify_if_asked(cfg, data_dir, files)
  if init_source is not None:
    counter, _, _ = vocabulary_lib.count_words(files, tokenizer)
    vocabulary = init_from_lib.merged_vocabulary(
        counter, cfg.min_count, init_source.words,
        max_size=cfg.max_vocabulary or None)
  else:
    cached = _cache_path(cfg, files, "vocabulary", {
        "tokenizer": tokenizer.get_config(), "min_count": cfg.min_count,
        "max_vocabulary": cfg.max_vocabulary})
    if cached and os.path.exists(cached + ".txt"):
      print(f"vocabulary: counted before, read from {cached}.txt", flush=True)
      vocabulary = vocabulary_lib.Vocabulary.load(cached + ".txt")
    else:
      vocabulary = vocabulary_lib.build_vocabulary(
          files, tokenizer, min_count=cfg.min_count,
          max_size=cfg.max_vocabulary or None)
      if cached:
        vocabulary.save(cached + ".txt")
  if not len(vocabulary):
    raise errors.UserError(
        f"no word occurs --min_count={cfg.min_count} times in the corpus")
  vocabulary.save(path)
  data_integrity.record_corpus(model_dir, files)
  return vocabulary


def _batches_per_epoch(cfg, model_dir, files, text_to_ids, line_limits,
                       num_pipelines=1):
  """Counted once by a pass over the corpus, then cached. With pipelines
  reading their own files, the fewest batches of batch_size / pipelines
  groups any has (no pipeline runs dry)."""
  path = os.path.join(model_dir, model_dir_lib.CORPUS_STATS_FILE)
  key = {"files": files, "batch_size": cfg.batch_size,
         "max_length": cfg.max_length,
         "blocks_per_mix": cfg.blocks_per_mix}
  if cfg.min_sentence_length > 1:
    key["min_sentence_length"] = cfg.min_sentence_length
  if any(limit >= 0 for limit in line_limits.values()):
    key["line_limits"] = [line_limits[f] for f in files]
  if num_pipelines > 1:
    key["input_pipelines"] = num_pipelines
  if os.path.exists(path):
    stats = model_dir_lib.read_json(path, "the cached batch count")
    if stats.get("key") == key:
      return stats["batches_per_epoch"]
  with open(os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE),
            "rb") as f:
    # The count depends on the vocabulary (which sentences are usable).
    vocabulary_digest = hashlib.sha256(f.read()).hexdigest()
  # The files are in the fingerprints; their folder is not part of the key.
  cached = _cache_path(cfg, files, "batches",
                       {"key": dict(key, files=None),
                        "vocabulary": vocabulary_digest})
  if cached and os.path.exists(cached + ".json"):
    batches = model_dir_lib.read_json(cached + ".json",
                                      "the cached batch count")
    print(f"{batches:,} batches per epoch: counted before, read from "
          f"{cached}.json", flush=True)
  else:
    print("counting training groups (one pass over the corpus)...",
          flush=True)
    shards = [distribution.shard_files(files, num_pipelines, i)
              for i in range(num_pipelines)]
    if num_pipelines == 1 or shards[0] is None:
      shards, batch_size = [files], cfg.batch_size
    else:
      batch_size = cfg.batch_size // num_pipelines
    batches = min(siamese_cbow_data.count_batches(
        shard, text_to_ids, batch_size=batch_size,
        max_length=cfg.max_length, blocks_per_mix=cfg.blocks_per_mix,
        min_sentence_ids=cfg.min_sentence_length,
        line_limits=[line_limits[f] for f in shard])
                  for shard in shards)
    if cached:
      model_dir_lib.write_text_atomically(cached + ".json",
                                          json.dumps(batches))
  model_dir_lib.write_text_atomically(
      path, json.dumps({"key": key, "batches_per_epoch": batches}))
  return batches


def _dataset_fn(cfg, files, text_to_ids, line_limits, keep_probability):
  """input_context -> this pipeline's per-replica batches: its own files in
  batches of batch_size / pipelines, or its slice of the global batches
  (`distribution.shard_inputs`)."""

  def dataset_fn(input_context):
    own_files, data_shard = distribution.shard_inputs(files, input_context)
    pipelines = input_context.num_input_pipelines
    batch_size = cfg.batch_size if data_shard else (
        cfg.batch_size // pipelines)
    dataset = siamese_cbow_data.group_dataset(
        own_files, text_to_ids, batch_size=batch_size,
        num_negatives=cfg.num_negatives, max_length=cfg.max_length,
        num_epochs=cfg.num_epochs, blocks_per_mix=cfg.blocks_per_mix,
        seed=cfg.seed, negatives=cfg.negatives,
        min_sentence_ids=cfg.min_sentence_length,
        nearby_window=cfg.nearby_window,
        line_limits=[line_limits[f] for f in own_files],
        keep_probability=keep_probability, batch_layout=cfg.batch_layout)
    if data_shard:
      dataset = distribution.slice_batches(dataset, *data_shard)
    return distribution.split_batches(
        dataset, distribution.replicas_per_pipeline(input_context))

  return dataset_fn


def _evaluate_untrained(model_dir, data_dir, eval_encoder, model_name):
  """Scores the initial word vectors once, at the start of a fresh run
  (with --init_from: the vectors it starts from)."""
  path = os.path.join(model_dir, UNTRAINED_RESULTS_FILE)
  if os.path.exists(path) or model_dir_lib.latest_checkpoint(model_dir):
    return
  print("evaluating the untrained word vectors (--compare_untrained)...",
        flush=True)
  pair_sets, missing = sts_data.load_eval_sets(
      data_dir, model_specs.SIAMESE_CBOW.eval_sets)
  results = sts.evaluate_pair_sets(
      encoder_lib.FunctionEncoder(eval_encoder), pair_sets, missing=missing,
      model_name=model_name)
  model_dir_lib.write_text_atomically(
      path, json.dumps(sts.results_to_json(results)))


def _with_neighbour_ranking(cfg, eval_fn, model, text_to_ids, heldout):
  """eval_fn plus eval/neighbour_ranking on the held-out books."""
  groups = siamese_cbow_data.heldout_groups(
      *heldout, text_to_ids, HELDOUT_NEGATIVES, cfg.max_length,
      HELDOUT_GROUPS, seed=cfg.seed)
  print(f"held out: {cfg.heldout_books} books from line {heldout[1] + 1} "
        f"of {os.path.basename(heldout[0])} ({int(groups.nrows()):,} groups "
        "scored)", flush=True)

  def evaluate():
    metrics = dict(eval_fn())
    metrics["neighbour_ranking"] = neighbour_ranking.neighbour_ranking_accuracy(
        lambda ids: model.encode(ids).numpy(), groups,
        siamese_cbow_data.NUM_POSITIVES,
        batch_size=NEIGHBOUR_RANKING_BATCH, length=cfg.max_length)
    return metrics

  return evaluate


def _untrained_results(model_dir, label):
  """(label, the untrained vectors' results) if they were scored (with
  --init_from: the vectors the run started from)."""
  path = os.path.join(model_dir, UNTRAINED_RESULTS_FILE)
  if not os.path.exists(path):
    return None
  with open(path) as f:
    return label, sts.results_from_json(json.load(f))


class SiameseCBOWTrainer(trainer.ModelTrainer):
  """Siamese CBOW's part of the shared skeleton."""

  spec = model_specs.SIAMESE_CBOW
  config_class = SiameseCBOWConfig
  flag_values = FLAGS

  def data_subdir(self, cfg):
    return corpus_flags.data_subdir(cfg)

  def check_flags(self, cfg, strategy):
    distribution.check_global_batch(cfg.batch_size, strategy)
    if cfg.batch_layout == "consecutive" and not distribution.is_one_device(
        strategy):
      # Its batches are lists of sentences, which a strategy cannot split.
      raise errors.UserError(
          "--batch_layout=consecutive trains on one device: leave out "
          "--strategy")
    init_from_lib.source_of_run(cfg, model_specs.SIAMESE_CBOW.name,
                                cfg.model_dir)

  def model_name(self):
    return "Siamese CBOW (trained)"

  def build_plan(self, context):
    cfg, data_dir, out_dir = context.config, context.data_dir, context.out_dir
    files = corpus_flags.corpus_files(cfg, data_dir)
    line_limits, heldout = _line_limits(cfg, data_dir, files)
    tokenizer = tokenizer_lib.Tokenizer(
        keep_punctuation=cfg.keep_punctuation)
    init_source = init_from_lib.source_of_run(
        cfg, model_specs.SIAMESE_CBOW.name, context.model_dir)
    vocabulary = _load_or_build_vocabulary(cfg, out_dir, files, tokenizer,
                                           data_dir, init_source)
    text_to_ids = text_to_ids_lib.TextToIds(vocabulary, tokenizer,
                                            max_length=cfg.max_length)
    print(f"vocabulary: {len(vocabulary):,} words (min count "
          f"{cfg.min_count}); corpus: {len(files)} files", flush=True)
    batches_per_epoch = _batches_per_epoch(cfg, out_dir, files, text_to_ids,
                                           line_limits, context.num_pipelines)
    total_steps = trainer.total_steps(cfg, batches_per_epoch)
    print(f"{batches_per_epoch:,} batches per epoch; training "
          f"{total_steps:,} steps of {cfg.batch_size} groups"
          + (f" over {context.replicas} replicas"
             if context.replicas > 1 else ""),
          flush=True)

    with context.scope():
      model = siamese_cbow.SiameseCBOW(
          vocabulary.size_with_padding, cfg.embedding_dim,
          init_stddev=cfg.init_stddev)
    config = {
        "model": model.get_config(), "tokenizer": tokenizer.get_config(),
        "training": {
            "corpus_files": [os.path.basename(p) for p in files],
            "total_steps": total_steps,
            **{name: getattr(cfg, name) for name in (
                "batch_size", "num_epochs", "optimizer", "negatives",
                "batch_layout", "nearby_window", "min_sentence_length",
                "subsample")},
            "heldout_books": cfg.heldout_books if heldout else 0,
            "strategy": cfg.strategy, "replicas": context.replicas}}
    if cfg.init_from:
      config["training"]["init_from"] = os.path.abspath(cfg.init_from)
    schedule = keras.optimizers.schedules.PolynomialDecay(
        cfg.learning_rate, decay_steps=max(total_steps, 1),
        end_learning_rate=cfg.learning_rate
        * cfg.final_learning_rate_fraction, power=1.0)
    with context.scope():
      optimizer = siamese_cbow_step.OPTIMIZERS[cfg.optimizer](
          learning_rate=schedule)
      # Not a call: once filled in place, the table is in TensorFlow's
      # copy-on-read mode, where a dense read copies it (110 MB).
      model.build()
      optimizer.build(model.trainable_variables)
    if init_source is not None:
      copied = init_from_lib.copy_known_rows(
          model.embedding.embeddings, init_source.read_table("source"),
          init_source.words, vocabulary.words)
      print(init_from_lib.describe(init_source, len(vocabulary), copied),
            flush=True)
    # The update runs inside XLA only with SGD on one device: the lazy
    # optimizers' cannot (`siamese_cbow_step.OPTIMIZERS`), and several
    # replicas all-reduce their gradients in `optimizer.apply`, outside XLA.
    train_step = siamese_cbow_step.make_train_step(
        model, optimizer, cfg.num_negatives, cfg.jit_compile,
        apply_in_xla=cfg.optimizer == "sgd" and context.one_device)
    keep_probability = sent2vec_data.keep_probabilities(
        vocabulary.counts, int(vocabulary.counts.sum()), cfg.subsample,
        min_count_label=0) if cfg.subsample else None
    dataset = _dataset_fn(cfg, files, text_to_ids, line_limits,
                          keep_probability)

    eval_fn = before_training = None
    if context.chief:
      eval_encoder = siamese_cbow_export.make_encoder(
          vocabulary, tokenizer, model, {}, live=True,
          lookup_table=text_to_ids.table)
      eval_fn = sts.stsb_dev_evaluator(data_dir, eval_encoder)
      if heldout:
        eval_fn = _with_neighbour_ranking(cfg, eval_fn, model, text_to_ids,
                                          heldout)
      if cfg.export and cfg.compare_untrained:
        before_training = lambda: _evaluate_untrained(
            context.model_dir, data_dir, eval_encoder,
            "Siamese CBOW (start, --init_from)" if cfg.init_from
            else "Siamese CBOW (untrained)")

    return trainer.TrainingPlan(
        config=config, steps_per_epoch=batches_per_epoch, dataset=dataset,
        train_step=train_step, step_counter=optimizer.iterations,
        checkpoint_items={"model": model, "optimizer": optimizer},
        unit_name="groups", units_per_step=cfg.batch_size,
        steps_per_call=cfg.steps_per_call,
        learning_rate_fn=lambda: schedule(optimizer.iterations),
        eval_fn=eval_fn, before_training=before_training,
        baseline=lambda: _untrained_results(
            context.model_dir,
            "start (--init_from)" if cfg.init_from else "untrained"))


def run(argv):
  """Trains from Python with command-line flags; see `trainer.run`."""
  return trainer.run(SiameseCBOWTrainer(), argv)


if __name__ == "__main__":
  trainer.main(SiameseCBOWTrainer())
