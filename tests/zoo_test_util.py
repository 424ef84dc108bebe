"""Shared by the tests of the `sentzoo` command: a tiny installed model and
a runner of the command as a subprocess."""

import os
import subprocess
import sys

from sentzoo import install_scores
from sentzoo import sentence_model
from sentzoo import store as store_lib
from sentzoo.export import export_model
from sentzoo.tests import model_dir_fixtures

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SENTENCES = ["The cat sat on the mat.", "the cat", "café , 猫 .", "",
             "sat on the mat", "dog bird"]


def make_export(root):
  """A Siamese CBOW export of the test vocabulary; its version folder."""
  model_dir = os.path.join(root, "model")
  model_dir_fixtures.make_siamese_cbow_model_dir(model_dir)
  return export_model.export(model_dir, os.path.join(root, "export"),
                             evaluate=False)


def install_tiny(home, name, export_dir):
  """Installs `export_dir` as `name` in the store at `home`."""
  model = sentence_model.load(export_dir)
  scores = install_scores.measure(model, export_dir)
  return store_lib.Store(home).install_dir(name, export_dir,
                                           {"source": "test",
                                            "scores": scores})


def run(home, *args, stdin=None, env=None):
  """`python -m sentzoo.cli ARGS` with $SENTZOO_HOME=home."""
  environ = dict(os.environ, SENTZOO_HOME=home,
                 PYTHONPATH=REPO_ROOT + os.pathsep + os.environ.get(
                     "PYTHONPATH", ""))
  environ.update(env or {})
  return subprocess.run([sys.executable, "-m", "sentzoo.cli", *args],
                        capture_output=True, text=True, timeout=600,
                        cwd=REPO_ROOT, env=environ, input=stdin)
