"""The wheel: the library only, and a core install of what `load().encode()` needs.

Builds the wheel of a copy of the checkout (setuptools writes build/ into the
tree it builds) under a temporary folder and reads its file list and METADATA.
"""

import email.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

import sentzoo

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

# Needed only by an extra: a core install must not bring them.
EXTRAS_ONLY = ("tensorflow-text", "tensorflow-hub", "tensorflow-serving-api",
               "tensorboard", "matplotlib", "tf-keras", "scipy", "uvicorn",
               "starlette", "prometheus-client", "orjson", "pybase64",
               "openai")


def _build_wheel(out_dir):
  src = os.path.join(out_dir, "src")
  shutil.copytree(REPO_ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
      ".git", ".venv", "build", "runs", "exports", "*.egg-info",
      "__pycache__", "bazel-*", ".cache"))
  subprocess.run(
      [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
       "--no-build-isolation", "--wheel-dir", out_dir, src],
      check=True, capture_output=True, timeout=600)
  wheels = [name for name in os.listdir(out_dir) if name.endswith(".whl")]
  assert len(wheels) == 1, wheels
  return os.path.join(out_dir, wheels[0])


class WheelTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    tmp = tempfile.mkdtemp()
    cls.addClassCleanup(shutil.rmtree, tmp)
    with zipfile.ZipFile(_build_wheel(tmp)) as wheel:
      cls.names = wheel.namelist()
      metadata_file, = [n for n in cls.names if n.endswith(".dist-info/METADATA")]
      cls.metadata = email.parser.Parser().parsestr(
          wheel.read(metadata_file).decode("utf-8"))

  def test_the_library_and_nothing_else(self):
    tops = {name.split("/")[0] for name in self.names}
    self.assertEqual(tops, {"sentzoo", f"sentzoo-{sentzoo.__version__}.dist-info"})
    for name in self.names:
      self.assertFalse(name.endswith("_test.py"), name)
      self.assertFalse(name.startswith(("sentzoo/tests/", "sentzoo/tools/",
                                        "sentzoo/sentzoo/")), name)
    for module in ("sentzoo/__init__.py", "sentzoo/sentence_model.py",
                   "sentzoo/common/model_dir.py", "sentzoo/trainers/trainer.py",
                   "sentzoo/export/c_loader/run_signature.c"):
      self.assertIn(module, self.names)

  def test_version(self):
    self.assertEqual(self.metadata["Version"], sentzoo.__version__)

  def test_core_requirements_are_ranges_without_the_extras_packages(self):
    core = [r for r in self.metadata.get_all("Requires-Dist")
            if "extra ==" not in r]
    names = sorted(re.match(r"[A-Za-z0-9_.-]+", r).group(0) for r in core)
    self.assertEqual(names, ["absl-py", "filelock", "numpy", "tensorflow",
                             "tqdm"])
    for requirement in self.metadata.get_all("Requires-Dist"):
      self.assertNotIn("==", requirement.split(";")[0])  # No pins.
    for name in EXTRAS_ONLY:
      self.assertFalse([r for r in core if r.startswith(name)], name)
    self.assertEqual(sorted(self.metadata.get_all("Provides-Extra")),
                     ["hub", "plots", "serve", "test", "train"])


if __name__ == "__main__":
  unittest.main()
