"""What `make typecheck` (mypy with pyproject.toml's [tool.mypy]) reports.

CI runs `mypy -p sentzoo` itself (`make typecheck`); these cases show that
the configuration reports an unresolved import, and resolves a good one as a
file, through the links sentzoo/<folder> (no import hook).
"""

import os
import subprocess
import sys
import unittest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def _mypy(program):
  return subprocess.run(
      [sys.executable, "-m", "mypy", "--no-incremental", "-c", program],
      cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)


class TypecheckTest(unittest.TestCase):

  def test_resolved_imports_pass(self):
    done = _mypy("from sentzoo.common import model_dir\n"
                 "from sentzoo.layers import MaskedAverage\n"
                 "import sentzoo.trainers.trainer\n")
    self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

  def test_unresolved_imports_fail(self):
    done = _mypy("from sentzoo.common import no_such_module\n"
                 "import sentzoo.no_such\n"
                 "import sentzoo.sentzoo\n")
    self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
    self.assertIn('Module "sentzoo.common" has no attribute "no_such_module"',
                  done.stdout)
    self.assertIn('module named "sentzoo.no_such"  [import-not-found]',
                  done.stdout)
    self.assertIn('module named "sentzoo.sentzoo"  [import-not-found]',
                  done.stdout)


if __name__ == "__main__":
  unittest.main()
