"""Every registered model has the files docs/adding_a_model.md lists.

Reads the registry (models/model_specs.py) and the source tree (the real
path of this file, as tools/check_build_targets_test.py does, so that it
also runs under Bazel): for each model its trainer, train step, exporter,
their tests, a flagfile, a docs page and their Bazel targets; the trainer
is a `trainer.ModelTrainer` subclass declaring that spec, defines none of
the common flags itself and has both entry points. Parses files with `ast`
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


def _common_flags():
  """trainer.COMMON_FLAGS, read from trainers/trainer.py."""
  for node in _parse("trainers/trainer.py").body:
    if (isinstance(node, ast.Assign) and
        [t.id for t in node.targets if isinstance(t, ast.Name)] ==
        ["COMMON_FLAGS"]):
      return set(ast.literal_eval(node.value))
  raise AssertionError("trainers/trainer.py defines no COMMON_FLAGS")


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


class AddingAModelTest(unittest.TestCase):

  def test_registry_names_are_unique_snake_case(self):
    self.assertEqual(len(model_specs.SPECS), 4)
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
                 f"export/{name}_export.py", f"export/{name}_export_test.py",
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
            {("py_library", f"{name}_export"),
             ("py_test", f"{name}_export_test")}, _targets("export"))

  def test_every_trainer_declares_its_spec_and_entry_points(self):
    common = _common_flags()
    for spec in model_specs.SPECS.values():
      with self.subTest(spec.name):
        tree = _parse(f"trainers/{spec.name}.py")
        classes = [
            node for node in tree.body if isinstance(node, ast.ClassDef) and
            any(ast.unparse(base) == "trainer.ModelTrainer"
                for base in node.bases)]
        self.assertEqual(len(classes), 1, "one trainer.ModelTrainer subclass")
        declared = [ast.unparse(node.value) for node in classes[0].body
                    if isinstance(node, ast.Assign) and
                    [ast.unparse(t) for t in node.targets] == ["spec"]]
        self.assertEqual(len(declared), 1, "spec = model_specs.<NAME>")
        constant = declared[0].split(".")[-1]
        self.assertEqual(getattr(model_specs, constant).name, spec.name)
        functions = {node.name for node in tree.body
                     if isinstance(node, ast.FunctionDef)}
        self.assertIn("run", functions)
        self.assertIn("trainer.main(", ast.unparse(tree))
        self.assertFalse(
            _defined_flags(tree) & common,
            "common flags are defined once, in trainers/trainer.py")

  def test_guide_lists_every_kind_of_file(self):
    with open(os.path.join(REPO_ROOT, "docs", "adding_a_model.md"),
              encoding="utf-8") as f:
      guide = f.read()
    for pattern in ("models/model_specs.py", "trainers/<name>.py",
                    "trainers/<name>_step.py", "export/<name>_export.py",
                    "configs/<name>_*.flags", "docs/<name>.md",
                    "models/<name>.py", "tools/adding_a_model_test.py"):
      self.assertIn(pattern, guide)


if __name__ == "__main__":
  unittest.main()
