"""Each source file loads as one module, however a command is started.

The repository's top-level folders are the subpackages of `sentzoo` through
the links sentzoo/<folder> -> ../<folder> (sentzoo/__init__.py). A command
started as `python -m trainers.x` imports the folder as `trainers` first;
the folder's __init__.py makes that the module `sentzoo.trainers`.
"""

import importlib
import json
import os
import subprocess
import sys
import tempfile
import unittest

import sentzoo

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

# Written into a sitecustomize.py that the started command imports first: at
# exit, every loaded module's file and id, by module name.
_RECORD_MODULES = """
import atexit, json, os, sys
def _record():
  files = {name: [os.path.abspath(module.__file__), id(module)]
           for name, module in list(sys.modules.items())
           if getattr(module, "__file__", None)}
  with open(os.environ["MODULES_JSON"], "w") as f:
    json.dump(files, f)
atexit.register(_record)
"""


def _library_folders():
  """The top-level folders that are subpackages of sentzoo (links in it)."""
  package = os.path.join(REPO_ROOT, "sentzoo")
  return sorted(name for name in os.listdir(package)
                if os.path.islink(os.path.join(package, name)))


def _files_loaded_twice(files):
  """{file: [module names]}: the repository's files that two modules hold.

  `files`: {module name: [file, id of the module object]}; two names of one
  module object (`trainers` and `sentzoo.trainers`) are one module.
  """
  first_party = {*_library_folders(), "sentzoo", "tools", "lab"}  # Not .venv/.
  modules = {}
  for name, (path, module_id) in files.items():
    path = os.path.realpath(path)
    top = os.path.relpath(path, REPO_ROOT).split(os.sep)[0]
    if name != "__main__" and top in first_party:
      modules.setdefault(path, {}).setdefault(module_id, name)
  return {path: sorted(ids.values()) for path, ids in modules.items()
          if len(ids) > 1}


def _loaded_here():
  return {name: [os.path.abspath(module.__file__), id(module)]
          for name, module in list(sys.modules.items())
          if getattr(module, "__file__", None)}


class ModuleIdentityTest(unittest.TestCase):

  def _run_recording_modules(self, args):
    with tempfile.TemporaryDirectory() as tmp:
      with open(os.path.join(tmp, "sitecustomize.py"), "w") as f:
        f.write(_RECORD_MODULES)
      modules_json = os.path.join(tmp, "modules.json")
      env = dict(os.environ, PYTHONPATH=tmp, MODULES_JSON=modules_json)
      done = subprocess.run([sys.executable, *args], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True, timeout=600)
      self.assertEqual(done.returncode, 0, done.stderr)
      with open(modules_json) as f:
        return json.load(f)

  def test_python_dash_m_from_the_checkout(self):
    files = self._run_recording_modules(
        ["-m", "trainers.siamese_cbow", "--helpshort"])
    self.assertEqual(files["__main__"][0],
                     os.path.join(REPO_ROOT, "trainers", "siamese_cbow.py"))
    self.assertEqual(files["trainers"], files["sentzoo.trainers"])  # One id.
    self.assertIn("sentzoo.trainers.trainer", files)
    self.assertEqual(_files_loaded_twice(files), {})
    # A module's __file__ names the folder, not the link (code finds the
    # repository root from it); only the folder's __init__.py is found
    # through the link.
    self.assertEqual(files["sentzoo.trainers.trainer"][0],
                     os.path.join(REPO_ROOT, "trainers", "trainer.py"))
    self.assertEqual(files["sentzoo.common.cli"][0],
                     os.path.join(REPO_ROOT, "common", "cli.py"))

  def test_python_dash_m_of_the_package(self):
    files = self._run_recording_modules(
        ["-m", "sentzoo.trainers.siamese_cbow", "--helpshort"])
    self.assertNotIn("trainers", files)
    self.assertEqual(_files_loaded_twice(files), {})

  @unittest.skipIf("TEST_SRCDIR" in os.environ,
                   "Bazel's runfiles have no links and hold a folder's own "
                   "__init__.py only if the test depends on its target "
                   "(Bazel writes empty ones): sentzoo/__init__.py's fallback")
  def test_in_process(self):
    """As pytest imports a test file of the checkout."""
    for folder in _library_folders():
      top = importlib.import_module(folder)
      self.assertIs(top, importlib.import_module(f"sentzoo.{folder}"))
      self.assertEqual(top.__path__, [os.path.join(REPO_ROOT, folder)])
    self.assertEqual(_files_loaded_twice(_loaded_here()), {})

  def test_the_package_does_not_hold_itself(self):
    done = subprocess.run(
        [sys.executable, "-c",
         "import sentzoo; print(sentzoo.__path__); import sentzoo.sentzoo"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    self.assertNotEqual(done.returncode, 0)
    self.assertEqual(done.stdout,
                     f"{[os.path.join(REPO_ROOT, 'sentzoo')]}\n")
    self.assertIn("No module named 'sentzoo.sentzoo'", done.stderr)

  def test_imports_can_be_followed_as_files(self):
    """What a static checker sees: sentzoo/common/model_dir.py is a file."""
    self.assertTrue(os.path.isfile(
        os.path.join(REPO_ROOT, "sentzoo", "common", "model_dir.py")))
    # Every top-level package folder but the repository's own tools/ and
    # lab/ (neither installed) has its link, and each link points at the
    # folder beside it.
    packages = sorted(
        name for name in os.listdir(REPO_ROOT)
        if os.path.isfile(os.path.join(REPO_ROOT, name, "__init__.py")) and
        name not in ("sentzoo", "tools", "lab"))
    self.assertEqual(_library_folders(), packages)
    for folder in packages:
      self.assertEqual(
          os.readlink(os.path.join(REPO_ROOT, "sentzoo", folder)),
          os.path.join(os.pardir, folder))


if __name__ == "__main__":
  unittest.main()
