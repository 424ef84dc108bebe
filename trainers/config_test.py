"""Tests for trainers/config.py, and every file in configs/ read through it."""

import dataclasses
import glob
import importlib
import os
from typing import List, Optional
from unittest import mock

from absl import flags
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.models import model_specs
from sentzoo.trainers import config

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


@dataclasses.dataclass
class _Settings(config.TrainingConfig):
  learning_rate: float = config.default(0.5)
  width: int = config.setting(3, "Width.", lower_bound=1, directory=True)
  scale: Optional[float] = config.setting(None, "Scale.", positive=True)
  kind: str = config.setting("a", "Kind.", choices=["a", "b"])
  sizes: List[str] = config.setting(["1", "2"], "Sizes.", positive_ints=True)
  fast: bool = config.setting(False, "Fast.", runtime=True)
  embedding_dim: int = config.shared(7)
  batch_size: int = config.shared(9, lower_bound=2)


def _flags(argv=()):
  flag_values = flags.FlagValues()
  config.define_flags(_Settings, flag_values)
  flag_values(["prog", *argv])
  return flag_values


class ConfigTest(tf.test.TestCase):

  def test_fields_become_flags_with_their_default_help_and_kind(self):
    fv = _flags()
    self.assertEqual(fv["width"].default, 3)
    self.assertEqual(fv["width"].help, "Width.")
    self.assertEqual(fv["kind"].parser.enum_values, ["a", "b"])
    self.assertEqual(fv["sizes"].value, ["1", "2"])
    self.assertIsNone(fv["scale"].value)
    self.assertIs(fv["fast"].value, False)

  def test_help_lists_the_fields_of_a_class_of_the_main_module(self):
    # `python -m trainers.<model>`: the settings class is __main__'s.
    main_settings = type("_MainSettings", (_Settings,), {})
    main_settings.__module__ = "__main__"
    flag_values = flags.FlagValues()
    config.define_flags(dataclasses.dataclass(main_settings), flag_values)
    self.assertIn("--width: Width.", flag_values.get_help())

  def test_default_changes_an_inherited_default_and_keeps_its_help(self):
    fv = _flags()
    self.assertEqual(fv["learning_rate"].default, 0.5)
    self.assertEqual(fv["learning_rate"].help, "Initial learning rate.")
    self.assertEqual(_Settings().learning_rate, 0.5)

  def test_shared_takes_the_one_help_and_checks_with_its_own_default(self):
    fv = _flags()
    self.assertEqual(fv["embedding_dim"].default, 7)
    self.assertEqual(fv["embedding_dim"].help,
                     config.SHARED_SETTINGS["embedding_dim"]["help"])
    self.assertEqual(fv["embedding_dim"].parser.lower_bound, 1)
    self.assertIn("embedding_dim", config.names(_Settings, "directory"))
    # A check given to `shared` replaces the shared one.
    self.assertEqual(fv["batch_size"].parser.lower_bound, 2)
    self.assertEqual(fv["batch_size"].help,
                     config.SHARED_SETTINGS["batch_size"]["help"])

  def test_checks_refuse_bad_values(self):
    for argv in (["--width=0"], ["--scale=0"], ["--kind=c"],
                 ["--sizes=1,0"], ["--learning_rate=0"],
                 ["--embedding_dim=0"], ["--batch_size=1"]):
      with self.subTest(argv):
        with self.assertRaises(flags.Error):
          _flags(argv)

  def test_from_flags_is_the_dataclass_of_the_parsed_values(self):
    settings = config.from_flags(
        _Settings, _flags(["--width=7", "--sizes=4", "--fast"]))
    self.assertIsInstance(settings, _Settings)
    self.assertEqual((settings.width, settings.sizes, settings.fast),
                     (7, ["4"], True))
    self.assertEqual(settings.learning_rate, 0.5)

  def test_metadata_names_directory_and_runtime_settings(self):
    self.assertEqual(config.names(_Settings, "directory"),
                     ("width", "embedding_dim"))
    runtime = config.names(_Settings, "runtime")
    self.assertIn("fast", runtime)
    self.assertIn("model_dir", runtime)
    self.assertNotIn("learning_rate", runtime)
    self.assertEqual(config.names(config.CorpusConfig, "directory"),
                     ("corpus_parts", "corpus_files", "init_from"))

  def test_step_threads_default_to_one_per_cpu_unless_deterministic(self):
    cpus = {0, 1, 2}
    with mock.patch.object(os, "sched_getaffinity", return_value=cpus):
      for kwargs, threads in (({}, 3), ({"steps_per_call": 2}, 2),
                              ({"deterministic": True}, 1),
                              ({"strategy": "mirrored"}, 1),
                              ({"step_threads": 5, "steps_per_call": 8}, 5)):
        with self.subTest(kwargs):
          self.assertEqual(
              config.step_threads(config.CorpusConfig(**kwargs)), threads)

  def test_step_threads_the_run_cannot_use_are_refused(self):
    for kwargs, message in (
        ({"deterministic": True}, "is not deterministic"),
        ({"strategy": "mirrored"}, "runs on one device"),
        ({"steps_per_call": 1}, "needs --steps_per_call >= --step_threads")):
      with self.subTest(kwargs):
        with self.assertRaisesRegex(errors.UserError, message):
          config.check_step_threads(
              config.CorpusConfig(step_threads=2, **kwargs))
    config.check_step_threads(config.CorpusConfig(step_threads=2))
    config.check_step_threads(config.CorpusConfig(deterministic=True))

  def test_a_default_without_a_setting_is_an_error(self):
    @dataclasses.dataclass
    class Orphan(config.TrainingConfig):
      nothing: int = config.default(1)

    with self.assertRaisesRegex(TypeError, "overrides no setting"):
      config.define_flags(Orphan, flags.FlagValues())

  def test_every_file_in_configs_parses_into_its_trainers_settings(self):
    paths = set()
    for spec in model_specs.SPECS.values():
      model_trainer = _model_trainer(spec)
      for path in sorted(glob.glob(os.path.join(REPO_ROOT,
                                                spec.config_glob))):
        with self.subTest(os.path.basename(path)):
          self.assertIsInstance(_parse_flagfile(model_trainer, path),
                                model_trainer.config_class)
          paths.add(path)
    self.assertEqual(
        paths, set(glob.glob(os.path.join(REPO_ROOT, "configs", "*.flags"))),
        "a file in configs/ that no model's config_glob names")

  def test_the_flagfiles_the_docs_quote_train_deterministically(self):
    for name, model in (("siamese_cbow_demo", "siamese_cbow"),
                        ("siamese_cbow_best", "siamese_cbow"),
                        ("sent2vec_books_uni", "sent2vec"),
                        ("charagram_phrase_lexicon", "charagram"),
                        ("hybrid_msrp_gru", "hybrid_siamese")):
      path = os.path.join(REPO_ROOT, "configs", name + ".flags")
      with self.subTest(name):
        self.assertTrue(_parse_flagfile(
            _model_trainer(model_specs.SPECS[model]), path).deterministic)

  def test_every_committed_flags_txt_parses_into_its_trainers_settings(self):
    # Records of finished runs, docs/records/<study>/<run>/flags.txt, whose
    # study folder starts with the model's name: reports and reruns of
    # their commands read them again.
    paths = glob.glob(os.path.join(REPO_ROOT, "docs", "records", "*", "*",
                                   "flags.txt"))
    self.assertNotEmpty(paths)
    for path in sorted(paths):
      study = os.path.basename(os.path.dirname(os.path.dirname(path)))
      specs = [spec for spec in model_specs.SPECS.values()
               if study.startswith(spec.name)]
      with self.subTest(os.path.relpath(path, REPO_ROOT)):
        self.assertLen(specs, 1, "no model's name starts the study's folder")
        model_trainer = _model_trainer(specs[0])
        self.assertIsInstance(_parse_flagfile(model_trainer, path),
                              model_trainer.config_class)


def _model_trainer(spec):
  module = importlib.import_module(f"sentzoo.trainers.{spec.name}")
  trainer_classes = [
      value for value in vars(module).values()
      if isinstance(value, type) and getattr(value, "spec", None) is spec]
  assert len(trainer_classes) == 1, spec.name
  return trainer_classes[0]()


def _parse_flagfile(model_trainer, path):
  """The settings `path` gives (flags left unparsed afterwards)."""
  fv = model_trainer.flag_values
  fv.unparse_flags()
  try:
    fv(["prog", f"--flagfile={path}"])
    return model_trainer.settings()
  finally:
    fv.unparse_flags()


if __name__ == "__main__":
  tf.test.main()
