"""Shared by the tests of the `sentzoo` command: a tiny installed model and
a runner of the command as a subprocess."""

import os
import subprocess
import sys
import tempfile

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


def environ(home, env=None):
  """os.environ for the `sentzoo` command with $SENTZOO_HOME=home."""
  environ = dict(os.environ, SENTZOO_HOME=home,
                 PYTHONPATH=REPO_ROOT + os.pathsep + os.environ.get(
                     "PYTHONPATH", ""))
  environ.update(env or {})
  return environ


def run(home, *args, stdin=None, env=None):
  """`python -m sentzoo.cli ARGS` with $SENTZOO_HOME=home."""
  return subprocess.run([sys.executable, "-m", "sentzoo.cli", *args],
                        capture_output=True, text=True, timeout=600,
                        cwd=REPO_ROOT, env=environ(home, env), input=stdin)


def start(home, *args, env=None):
  """`run`, started: the `subprocess.Popen` (stdout and stderr piped)."""
  return subprocess.Popen([sys.executable, "-m", "sentzoo.cli", *args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, cwd=REPO_ROOT, env=environ(home, env))


def umask():
  mask = os.umask(0)
  os.umask(mask)
  return mask


def mount_tmpfs(test, options):
  """A fresh tmpfs mounted with `options` (e.g. "size=256k", "ro"), unmounted
  at the end of `test`; skips the test where mounting is not allowed."""
  folder = tempfile.mkdtemp(dir=test.get_temp_dir())
  done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs",
                         folder], capture_output=True, text=True, check=False)
  if done.returncode:
    test.skipTest(f"cannot mount a tmpfs here: {done.stderr!r}")
  test.addCleanup(subprocess.run, ["umount", folder], check=False)
  return folder
