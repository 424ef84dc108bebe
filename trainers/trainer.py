r"""The one trainer skeleton: what every model's training run does.

A model's trainer, trainers/<name>.py, defines its settings (a
`config.TrainingConfig` dataclass whose fields are its flags) and a
`ModelTrainer` whose `build_plan` returns a `TrainingPlan`. This module
runs the rest, the same for every model, under a `tf.distribute` strategy
(the default strategy on one device): a finished run's rerun does nothing
(unless --reexport); the opening (strategy first, then data directory,
directory flags checked before anything is written, lock, flags.txt,
seed); model_config.json; `training_loop.run`; exit 75 when interrupted;
on the chief the export and the final evaluation, then finished.json.

  python -m trainers.<name> --flagfile=...      (exit codes: README)
  from sentzoo.trainers import <name>; <name>.run(["--model_dir=...", ...])
"""

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import sys
import tempfile
import traceback
from typing import Any, Callable, Dict, Mapping, Optional, Sequence

from absl import flags
import keras
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.common import interrupts
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.common import resources
from sentzoo.common import run_lock
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.export import export_model
from sentzoo.export import saved_model_writer
from sentzoo.inputs import twitter_pit
from sentzoo.models import model_specs
from sentzoo.trainers import config as config_lib
from sentzoo.trainers import distribution
from sentzoo.trainers import training_loop


# The name of Twitter PIT 2015's test split among a spec's eval_sets (the
# others are evaluation.sts_data's groups).
TWITTER_PIT_GROUP = "twitter_pit"


def make_flags(config_class) -> flags.FlagValues:
  """One flag per field of `config_class`, and --verbose."""
  flag_values = flags.FlagValues()
  config_lib.define_flags(config_class, flag_values)
  cli.define_verbose_flag(flag_values)
  # absl's bounds let nan through; no float setting means anything at nan
  # or an infinity.
  cli.finite_floats(flag_values)
  return flag_values


@dataclasses.dataclass
class RunContext:
  """What the opening decided, for `ModelTrainer.build_plan`. `data_dir`
  is "" where the trainer needs none; `out_dir` is where this worker
  writes (the model dir on the chief, which alone exports and evaluates).
  """
  spec: model_specs.ModelSpec
  config: Any
  strategy: tf.distribute.Strategy
  data_dir: str
  model_dir: str
  out_dir: str
  chief: bool
  lock: Optional[run_lock.RunLock] = None

  @property
  def replicas(self) -> int:
    return self.strategy.num_replicas_in_sync

  @property
  def num_pipelines(self) -> int:
    return distribution.num_input_pipelines(self.strategy)

  @property
  def one_device(self) -> bool:
    return distribution.is_one_device(self.strategy)

  def scope(self):
    return self.strategy.scope()


@dataclasses.dataclass
class TrainingPlan:
  """Everything the shared loop needs from a model's trainer.

  Attributes:
    config: model_config.json's content besides "model_type" (the exporter
      reads it back).
    dataset, train_step, step_counter, checkpoint_items, learning_rate_fn,
      eval_fn, actions: as `training_loop.run` takes them.
    unit_name, units_per_step: what a step takes, for the speed line.
    eval_every_steps: a model's own evaluation interval (hybrid: every
      epoch, whatever the flag); None: the flag.
    steps_per_call, step_threads: as `training_loop.LoopConfig`.
    before_training: runs on the chief before the first step.
    export_module: step -> the export module built from the model in
      memory (a large table is not restored again); None: the exporter
      restores the latest checkpoint.
    baseline: () -> (label, sts.Results) shown beside the trained model in
      the final table, or None.
    finish: runs on the chief before the export; returns what the run adds
      to `RunSummary.results`.
  """
  config: Dict[str, Any]
  steps_per_epoch: int
  dataset: Any
  train_step: Callable[..., Mapping[str, tf.Tensor]]
  step_counter: tf.Variable
  checkpoint_items: Dict[str, Any]
  unit_name: str
  units_per_step: int
  learning_rate_fn: Optional[Callable[[], float]] = None
  eval_fn: Optional[Callable[[], Mapping[str, float]]] = None
  eval_every_steps: Optional[int] = None
  steps_per_call: int = 1
  step_threads: int = 1
  before_training: Optional[Callable[[], None]] = None
  export_module: Optional[Callable[[int], tf.Module]] = None
  baseline: Optional[Callable[[], Optional[tuple]]] = None
  finish: Optional[Callable[[dict], Dict[str, Any]]] = None
  actions: Sequence[Callable[[int, Mapping[str, tf.Tensor]], None]] = ()


@dataclasses.dataclass
class RunSummary:
  """What a finished run returns to a Python caller: `export_path` is None
  with --noexport; `results` the final evaluation's JSON (a sentence
  encoder) or `finish`'s output."""
  model_dir: str
  step: int
  export_path: Optional[str]
  results: Dict[str, Any]


def input_caps(flag_values) -> Dict[str, int]:
  """The export's caps on one input sentence."""
  return {"max_bytes_per_sentence": flag_values.max_bytes_per_sentence,
          "max_tokens_per_sentence": flag_values.max_tokens_per_sentence}


def total_steps(flag_values, steps_per_epoch: int) -> int:
  """--num_epochs passes of `steps_per_epoch`, capped by --train_steps."""
  steps = flag_values.num_epochs * steps_per_epoch
  if flag_values.train_steps:
    steps = min(steps, flag_values.train_steps)
  return steps


class ModelTrainer:
  """A model's part of a training run; subclass it in trainers/<name>.py.

  Subclasses set `spec`, `config_class` and `flag_values` (the module's own
  `make_flags(config_class)`, so that several trainers can run in one
  process) and implement `build_plan`.
  """

  spec: model_specs.ModelSpec
  flag_values: flags.FlagValues
  config_class: Any
  # Others refuse --strategy=parameter_server with one error line.
  supports_parameter_server: bool = False

  def settings(self):
    """The parsed flags as the trainer's settings dataclass."""
    return config_lib.from_flags(self.config_class, self.flag_values)

  def configure_runtime(self, cfg) -> None:
    """Runs before TensorFlow starts (e.g. thread pools)."""

  def data_subdir(self, cfg) -> Optional[str]:
    """The folder the data directory must hold (None: none)."""
    return None

  def needs_data_dir(self, cfg) -> bool:
    """False: --data_dir is optional."""
    return True

  def check_flags(self, cfg, strategy) -> None:
    """Flag checks that need the strategy (e.g. batch vs replicas)."""

  def build_plan(self, context: RunContext) -> TrainingPlan:
    raise NotImplementedError

  def final_eval_sets(self, data_dir: str):
    """(pair sets, missing names) of the final evaluation: the spec's sets."""
    names = [n for n in self.spec.eval_sets if n != TWITTER_PIT_GROUP]
    pair_sets, missing = sts_data.load_eval_sets(data_dir, names)
    if TWITTER_PIT_GROUP in self.spec.eval_sets:
      try:
        pair_sets.append(twitter_pit.load_test_split(data_dir))
      except errors.DataDirError:
        missing.append(twitter_pit.SET_NAME)
    return pair_sets, missing

  def model_name(self) -> str:
    """The trained model's column name in the final table."""
    return self.spec.title


def _open(model_trainer: ModelTrainer) -> RunContext:
  fv = model_trainer.flag_values
  cfg = model_trainer.settings()
  distribution.check_supported(fv.strategy, model_trainer.spec.title,
                               model_trainer.supports_parameter_server)
  model_trainer.configure_runtime(cfg)
  # A parameter_server "worker" or "ps" task serves from here on.
  strategy = distribution.make_strategy(fv.strategy, fv.num_cpu_devices)
  data_dir = fv.data_dir or ""
  if model_trainer.needs_data_dir(cfg):
    data_dir = data_dir_lib.resolve_data_dir(fv.data_dir,
                                             model_trainer.data_subdir(cfg))
  model_trainer.check_flags(cfg, strategy)
  model_dir = fv.model_dir
  model_dir_lib.check_writable(model_dir)
  # A refused rerun leaves the directory as it was.
  model_dir_lib.check_directory_flags(
      model_dir, fv, config_lib.names(model_trainer.config_class,
                                      "directory"))
  chief = distribution.is_chief(strategy)
  lock = None
  if chief:
    # One writer per model directory, from here until the run ends.
    lock = run_lock.RunLock(model_dir, "training")
    lock.acquire()
    for path in model_dir_lib.remove_stale_checkpoint_temporaries(model_dir):
      print(f"removed {path}, left by a killed checkpoint save", flush=True)
  out_dir = distribution.prepare_worker_dir(model_dir, strategy, fv)
  keras.utils.set_random_seed(fv.seed)
  return RunContext(spec=model_trainer.spec, config=cfg, strategy=strategy,
                    data_dir=data_dir, model_dir=model_dir, out_dir=out_dir,
                    chief=chief, lock=lock)


def _run_identity(model_trainer):
  """{flag: its command-line form} of the flags that say what a run trains."""
  fv = model_trainer.flag_values
  skip = set(config_lib.names(model_trainer.config_class, "runtime"))
  skip.add("verbose")
  return {name: fv[name].serialize() for name in sorted(fv)
          if name not in skip and fv[name].name == name}


def _finished_run(model_trainer):
  """finished.json of the run in --model_dir if it finished with the same
  flags (`_run_identity`), else None."""
  path = os.path.join(model_trainer.flag_values.model_dir,
                      model_dir_lib.FINISHED_FILE)
  if not os.path.exists(path):
    return None
  finished = model_dir_lib.read_json(path, "the record of a finished run")
  if finished.get("flags") != _run_identity(model_trainer):
    return None
  return finished


def _export_again(model_trainer, finished):
  """--reexport of a finished run: its last checkpoint, exported anew."""
  fv = model_trainer.flag_values
  context = _open(model_trainer)
  export_dir = fv.export_dir or os.path.join(context.model_dir,
                                             model_dir_lib.EXPORT_SUBDIR)
  try:
    path = export_model.export(context.model_dir, export_dir,
                               data_dir=context.data_dir or None,
                               quantize=fv.quantize, **input_caps(fv))
  finally:
    _release(context)
  print(f"exported to {path}\nexport: {os.path.abspath(path)}", flush=True)
  return RunSummary(model_dir=context.model_dir, step=finished["step"],
                    export_path=path, results={})


def _loop_config(fv, plan: TrainingPlan,
                 steps: int) -> training_loop.LoopConfig:
  checkpoint_every = fv.checkpoint_every_steps or plan.steps_per_epoch
  eval_every = (fv.eval_every_steps if plan.eval_every_steps is None
                else plan.eval_every_steps)
  return training_loop.LoopConfig(
      total_steps=steps,
      checkpoint_every_steps=max(1, checkpoint_every),
      max_checkpoints=fv.max_checkpoints,
      log_every_steps=fv.log_every_steps,
      eval_every_steps=eval_every,
      unit_name=plan.unit_name,
      units_per_step=plan.units_per_step,
      max_steps_per_run=fv.max_steps_per_run,
      steps_per_call=plan.steps_per_call,
      step_threads=plan.step_threads)


def _evaluate_export(model_trainer, context, plan, path, module=None):
  """Scores the export on the spec's sets: sts_results.{json,md} and the
  table on the console. `module`, the in-memory module just written to
  `path`, is scored instead of loading `path` (a second copy of a large
  table: Sent2Vec +5.7 GB at 2M buckets); its `__call__` is the export's
  serving_default graph."""
  pair_sets, missing = model_trainer.final_eval_sets(context.data_dir)
  encoder = (encoder_lib.FunctionEncoder(module.__call__) if module is not None
             else encoder_lib.load_encoder(path))
  results = sts.evaluate_pair_sets(
      encoder, pair_sets, missing=missing,
      model_name=model_trainer.model_name())
  columns = [results]
  baseline = plan.baseline() if plan.baseline else None
  if baseline:
    columns.append(baseline[1])
  table = sts.format_table(columns)
  results_json = sts.results_to_json(results, include_predictions=False)
  model_dir_lib.write_text_atomically(
      os.path.join(context.model_dir, model_dir_lib.STS_RESULTS_FILE),
      json.dumps(results_json, indent=2))
  model_dir_lib.write_text_atomically(
      os.path.join(context.model_dir, model_dir_lib.STS_TABLE_FILE),
      table + "\n")
  print(table, flush=True)
  if baseline:
    print(compare_headline_scores(results, *baseline), flush=True)
  return results_json


def compare_headline_scores(trained, label, other):
  """One line per headline score: the trained model, `other`, which is higher."""
  lines = []
  for name, key in (("mean of the STS 2012-2015 sets", "STS.mean"),
                    ("STS-B dev", "STSB.dev")):
    mine = trained.aggregates if key in trained.aggregates else trained.sets
    theirs = other.aggregates if key in other.aggregates else other.sets
    if key not in mine or key not in theirs:
      continue
    now, before = mine[key].pearson, theirs[key].pearson
    # Compared as printed: a difference that rounds to +0.00 is no gain.
    gain = round(now - before, 2)
    verdict = ("above" if gain > 0 else
               "level with" if gain == 0 else "NOT above")
    lines.append(f"{name}: trained {now:.2f}, {label} {before:.2f} "
                 f"({verdict} the {label} model, {now - before:+.2f})")
  return "\n".join(lines)


def train(model_trainer: ModelTrainer) -> RunSummary:
  """One training run with the parsed flags: opening, plan, loop, ending."""
  fv = model_trainer.flag_values
  cli.require_flags("model_dir", flag_values=fv)
  finished = _finished_run(model_trainer)
  if finished and fv.reexport:
    return _export_again(model_trainer, finished)
  if finished:
    print(f"{fv.model_dir} already holds this run, finished at step "
          f"{finished['step']:,} and exported to {finished['export_path']}: "
          "nothing to do (--reexport exports it again)", flush=True)
    return RunSummary(model_dir=fv.model_dir, step=finished["step"],
                      export_path=finished["export_path"], results={})
  config_path = os.path.join(fv.model_dir, model_dir_lib.MODEL_CONFIG_FILE)
  if os.path.exists(config_path):
    # A rerun: the vocabulary must still be the one the model was trained
    # with.
    model_dir_lib.check_vocabulary(
        fv.model_dir, model_dir_lib.read_model_config(fv.model_dir))
  flags_path = os.path.join(fv.model_dir, model_dir_lib.FLAGS_FILE)
  first_run = not os.path.exists(flags_path)
  with _sigterm_as_interrupt():
    context = _open(model_trainer)
    try:
      return _train_opened(model_trainer, context, first_run)
    finally:
      _release(context)


@contextlib.contextmanager
def _sigterm_as_interrupt():
  """For `run` from Python (a command has common/interrupts.py): SIGTERM
  outside the loop's own handler stops the run as Ctrl-C does, in one line
  and exit 75, not a silent death between the export and finished.json."""
  if interrupts.installed() is not None:
    yield
    return
  try:
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
  except ValueError:  # Not in the main thread: leave signals alone.
    yield
    return
  try:
    yield
  finally:
    signal.signal(signal.SIGTERM, previous)


def _export_of_latest_checkpoint(context, export_dir, quantize):
  """The version in the model directory's own export folder written from
  its latest checkpoint, or None: a run stopped after publishing its
  export but before finished.json reuses it on its rerun."""
  if (os.path.abspath(export_dir) != os.path.abspath(os.path.join(
      context.model_dir, model_dir_lib.EXPORT_SUBDIR)) or
      not os.path.isdir(export_dir)):
    return None
  latest = model_dir_lib.latest_checkpoint(context.model_dir)
  if latest is None:
    return None
  versions = sorted((int(name) for name in os.listdir(export_dir)
                     if name.isdigit()), reverse=True)
  for version in versions:
    path = os.path.join(export_dir, str(version))
    try:
      with open(os.path.join(path, saved_model_writer.MODEL_CARD),
                encoding="utf-8") as f:
        card = json.load(f)
    except (OSError, ValueError):
      continue
    if (isinstance(card, dict) and
        card.get("checkpoint") == os.path.basename(latest) and
        card.get("quantization", {}).get("mode") == quantize):
      return path
  return None


def _release(context):
  if context.lock is not None:
    context.lock.release()


def _forget_unstarted_run(context):
  """Removes flags.txt of a first run that wrote nothing else, so that a
  corrected command is not refused as a rerun with other settings."""
  left = set(os.listdir(context.out_dir)) - {model_dir_lib.FLAGS_FILE,
                                              run_lock.LOCK_FILE}
  if not left:
    os.remove(os.path.join(context.out_dir, model_dir_lib.FLAGS_FILE))


def _train_opened(model_trainer, context, first_run):
  fv = model_trainer.flag_values
  try:
    plan = model_trainer.build_plan(context)
    # What the plan's passes over the corpus (counts) freed goes back.
    resources.release_free_memory()
  except (KeyboardInterrupt, Exception) as e:  # pylint: disable=broad-except
    if first_run and (isinstance(e, errors.UserError) or
                      interrupts.is_interrupt(e)):
      _forget_unstarted_run(context)
    raise
  steps = total_steps(fv, plan.steps_per_epoch)
  if fv.train_steps and steps < fv.train_steps:
    print(f"note: --train_steps={fv.train_steps:,} is more than "
          f"--num_epochs={fv.num_epochs} allow ({plan.steps_per_epoch:,} "
          f"steps per epoch): training {steps:,} steps; raise --num_epochs "
          "to train more", flush=True)
  if steps <= 0:
    raise errors.UserError(
        "the training data yields no full batch: use more data or a smaller "
        "batch")
  model_dir_lib.write_model_config(context.out_dir, model_trainer.spec.name,
                                   plan.config)
  if context.chief and plan.before_training:
    plan.before_training()
  try:
    outcome = training_loop.run(
        context.model_dir, _loop_config(fv, plan, steps), plan.dataset,
        plan.train_step, plan.step_counter, plan.checkpoint_items,
        learning_rate_fn=plan.learning_rate_fn, eval_fn=plan.eval_fn,
        strategy=context.strategy, actions=plan.actions)
  except (KeyboardInterrupt, Exception) as e:  # pylint: disable=broad-except
    if not interrupts.is_interrupt(e):
      raise
    # A second signal, maybe in a checkpoint save (or a first one outside
    # the steps: restoring, ending the loop): its temporary is removed at
    # the next start, the checkpoints before it are whole.
    raise errors.StoppedAtOnce(
        model_dir_lib.latest_checkpoint(context.model_dir)) from None
  cli.exit_if_interrupted(outcome)
  summary = RunSummary(model_dir=context.model_dir, step=outcome["step"],
                       export_path=None, results={})
  if not context.chief:
    return summary
  if plan.finish:
    summary.results.update(plan.finish(outcome))
  if not fv.export:
    return summary
  export_dir = fv.export_dir or os.path.join(context.model_dir,
                                                model_dir_lib.EXPORT_SUBDIR)
  module = None
  path = _export_of_latest_checkpoint(context, export_dir, fv.quantize)
  if path:
    print(f"{path} already holds the export of the last checkpoint "
          "(written by a run stopped before it finished): not exported again",
          flush=True)
  else:
    # The in-memory module is float32: a quantised export is built from the
    # checkpoint.
    if plan.export_module and fv.quantize == "none":
      plan.train_step = plan.dataset = None
      module = plan.export_module(outcome["step"])
    path = export_model.export(
        context.model_dir, export_dir, data_dir=context.data_dir or None,
        module=module, quantize=fv.quantize, **input_caps(fv))
    print(f"exported to {path}", flush=True)
  summary.export_path = path
  if model_trainer.spec.sentence_encoder:
    summary.results.update(
        _evaluate_export(model_trainer, context, plan, path, module))
  model_dir_lib.write_text_atomically(
      os.path.join(context.model_dir, model_dir_lib.FINISHED_FILE),
      json.dumps({"step": summary.step, "export_path": path,
                  "flags": _run_identity(model_trainer)}, indent=2))
  print(f"export: {os.path.abspath(path)}", flush=True)
  return summary


@contextlib.contextmanager
def plan_to_measure(model_trainer: ModelTrainer):
  """Yields the plan a run with the parsed flags would train, for
  benchmarks: one device, not the chief, in --model_dir or a temporary
  folder removed afterwards."""
  fv = model_trainer.flag_values
  model_dir = fv.model_dir or tempfile.mkdtemp(prefix="sentzoo_plan_")
  try:
    # A new --model_dir is created as the trainer creates one.
    tf.io.gfile.makedirs(model_dir)
    cfg = model_trainer.settings()
    data_dir = data_dir_lib.resolve_data_dir(fv.data_dir,
                                             model_trainer.data_subdir(cfg))
    plan = model_trainer.build_plan(RunContext(
        spec=model_trainer.spec, config=cfg,
        strategy=tf.distribute.get_strategy(), data_dir=data_dir,
        model_dir=model_dir, out_dir=model_dir, chief=False))
    # One device's batches, as the loop reads them.
    plan.dataset = training_loop.distribute(tf.distribute.get_strategy(),
                                            plan.dataset)
    yield plan
  finally:
    if not fv.model_dir:
      shutil.rmtree(model_dir, ignore_errors=True)


def main(model_trainer: ModelTrainer) -> None:
  """The `python -m trainers.<name>` entry point (exit codes: README). A
  parameter-server chief ends with `distribution.exit_process`."""
  fv = model_trainer.flag_values
  parameter_server = lambda: (fv.is_parsed() and
                              fv.strategy == distribution.PARAMETER_SERVER)
  try:
    cli.run(lambda argv: _train_without_arguments(model_trainer, argv), fv)
  except SystemExit as e:
    if parameter_server():
      code = e.code
      if isinstance(code, str):
        print(code, file=sys.stderr)
      distribution.exit_process(code if isinstance(code, int) else
                                (0 if code is None else 1))
    raise
  except BaseException:  # pylint: disable=broad-except
    if parameter_server():
      # A bug's traceback, then exit 1 (an interpreter exit would hang).
      traceback.print_exc()
      distribution.exit_process(errors.EXIT_FAILED)
    raise


def _train_without_arguments(model_trainer, argv):
  cli.reject_arguments(argv)
  # SIGINT/SIGTERM: one interrupt, then ignored while the command ends
  # (common/interrupts.py, set up before TensorFlow was imported).
  train(model_trainer)


def run(model_trainer: ModelTrainer, argv: Sequence[str]) -> RunSummary:
  """The Python entry point: trains with the flags in `argv` (as on the
  command line, without the program name; flags not given take their
  defaults). Raises `errors.UserError` / `errors.Interrupted` where the
  command would exit 2 / 75.
  """
  fv = model_trainer.flag_values
  fv.unparse_flags()
  rest = cli.parse_argv([sys.argv[0] if sys.argv else "sentzoo"] + list(argv),
                        fv)
  cli.reject_arguments(rest)
  return train(model_trainer)
