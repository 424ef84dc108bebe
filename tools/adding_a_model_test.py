"""Every registered model has the files docs/adding_a_model.md lists.

Reads the registry (models/model_specs.py) and the source tree (the real
path of this file, as tools/check_build_targets_test.py does, so that it
also runs under Bazel): for each model its trainer, train step, exporter,
their tests, a flagfile, a docs page and their Bazel targets; the trainer
is a `trainer.ModelTrainer` subclass declaring that spec and its settings
dataclass, defines no flag by hand and has both entry points; and counts
the places a model touches (`places`). Parses files with `ast`
and imports nothing but the registry, so it needs no TensorFlow.
"""

import ast
import glob
import os
import unittest

from sentzoo.models import model_specs
from tools import check_build_targets

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def _parse(relative_path):
  with open(os.path.join(REPO_ROOT, relative_path), encoding="utf-8") as f:
    return ast.parse(f.read(), filename=relative_path)


def _defined_flags(tree):
  names = set()
  for node in ast.walk(tree):
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and node.func.attr.startswith("DEFINE_") and node.args and
        isinstance(node.args[0], ast.Constant)):
      names.add(node.args[0].value)
  return names


def _targets(package):
  targets, errors = check_build_targets.parse_build_file(
      os.path.join(REPO_ROOT, package, "BUILD"), package)
  assert not errors, errors
  return {(t.kind, t.name) for t in targets}


# The places a model touches at 8d78520, counted as `places` counts them,
# plus the count of models that this test then hard-coded.
PLACES_AT_8D78520 = 19


def places(spec):
  """What adding `spec`'s model writes or edits: its registry entry, the
  files named after it (models/<name>.py, trainer, train step, exporter,
  their tests, flagfiles, docs page), their Bazel targets, and the two
  places outside the code: its README row and its paper numbers in
  lab/reports/results_page.py's STS_REFERENCES."""
  name = spec.name
  files = [f"models/{name}.py", f"trainers/{name}.py",
           f"trainers/{name}_test.py", f"trainers/{name}_step.py",
           f"trainers/{name}_step_test.py", f"export/{name}.py",
           f"export/{name}_test.py", spec.config_glob, spec.docs_page]
  targets = [("trainers", "py_library", name),
             ("trainers", "py_test", f"{name}_test"),
             ("trainers", "py_library", f"{name}_step"),
             ("trainers", "py_test", f"{name}_step_test"),
             ("export", "py_library", f"{name}"),
             ("export", "py_test", f"{name}_test")]
  return (["models/model_specs.py"] + files + targets
          + ["README.md row", "lab/reports/results_page.py STS_REFERENCES"])


class AddingAModelTest(unittest.TestCase):

  def test_registry_names_are_unique_snake_case(self):
    self.assertTrue(model_specs.SPECS)
    for name, spec in model_specs.SPECS.items():
      self.assertEqual(name, spec.name)
      self.assertRegex(name, r"^[a-z][a-z0-9_]*$")
    with self.assertRaisesRegex(KeyError, "siamese_cbow"):
      model_specs.get("skip_thought")

  def test_every_model_has_its_files_and_targets(self):
    for spec in model_specs.SPECS.values():
      with self.subTest(spec.name):
        name = spec.name
        files = [f"trainers/{name}.py", f"trainers/{name}_test.py",
                 f"trainers/{name}_step.py", f"trainers/{name}_step_test.py",
                 f"export/{name}.py", f"export/{name}_test.py",
                 spec.docs_page, *spec.models, *spec.inputs]
        for path in files:
          self.assertTrue(os.path.isfile(os.path.join(REPO_ROOT, path)),
                          f"{name}: no {path}")
        self.assertTrue(glob.glob(os.path.join(REPO_ROOT, spec.config_glob)),
                        f"{name}: no {spec.config_glob}")
        self.assertLessEqual(
            {("py_library", name), ("py_test", f"{name}_test"),
             ("py_library", f"{name}_step"),
             ("py_test", f"{name}_step_test")}, _targets("trainers"))
        self.assertLessEqual(
            {("py_library", f"{name}"),
             ("py_test", f"{name}_test")}, _targets("export"))

  def test_every_trainer_declares_its_spec_settings_and_entry_points(self):
    for spec in model_specs.SPECS.values():
      with self.subTest(spec.name):
        tree = _parse(f"trainers/{spec.name}.py")
        classes = [
            node for node in tree.body if isinstance(node, ast.ClassDef) and
            any(ast.unparse(base) == "trainer.ModelTrainer"
                for base in node.bases)]
        self.assertEqual(len(classes), 1, "one trainer.ModelTrainer subclass")
        assigned = {ast.unparse(t): ast.unparse(node.value)
                    for node in classes[0].body if isinstance(node, ast.Assign)
                    for t in node.targets}
        constant = assigned["spec"].split(".")[-1]
        self.assertEqual(getattr(model_specs, constant).name, spec.name)
        # Its settings: one dataclass extending config's, the flags made
        # from it, none defined by hand.
        settings = [node for node in tree.body
                    if isinstance(node, ast.ClassDef) and
                    node.name == assigned["config_class"]]
        self.assertEqual(len(settings), 1, "config_class = <its dataclass>")
        self.assertIn(ast.unparse(settings[0].bases[0]),
                      ("config.TrainingConfig", "config.CorpusConfig"))
        self.assertIn(f"trainer.make_flags({assigned['config_class']})",
                      ast.unparse(tree))
        self.assertFalse(_defined_flags(tree), "flags come from the settings")
        functions = {node.name for node in tree.body
                     if isinstance(node, ast.FunctionDef)}
        self.assertIn("run", functions)
        self.assertIn("trainer.main(", ast.unparse(tree))

  def test_a_model_touches_fewer_places_than_at_8d78520(self):
    with open(os.path.join(REPO_ROOT, "docs", "adding_a_model.md"),
              encoding="utf-8") as f:
      guide = f.read()
    for spec in model_specs.SPECS.values():
      with self.subTest(spec.name):
        count = len(places(spec))
        self.assertLess(count, PLACES_AT_8D78520)
        self.assertIn(f"{count} places", guide)

  def test_guide_lists_every_kind_of_file(self):
    with open(os.path.join(REPO_ROOT, "docs", "adding_a_model.md"),
              encoding="utf-8") as f:
      guide = f.read()
    for pattern in ("models/model_specs.py", "trainers/<name>.py",
                    "config.TrainingConfig", "config.setting",
                    "trainers/<name>_step.py", "export/<name>.py",
                    "configs/<name>_*.flags", "docs/<name>.md",
                    "models/<name>.py", "tools/adding_a_model_test.py"):
      self.assertIn(pattern, guide)


if __name__ == "__main__":
  unittest.main()
