"""Tests for tools/check_build_targets.py.

Run with `python -m pytest tools` or `python -m tools.check_build_targets_test`
from the repository root (standard library only), or with
`bazel test //tools:check_build_targets_test`.
"""

import contextlib
import io
import os
import shutil
import tempfile
import textwrap
import unittest

from tools import check_build_targets

# The real path: under `bazel test` this file is a link in the test's
# runfiles tree, which holds only the test's inputs; RealRepoTest checks the
# source tree that the link points into.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

_GOOD_TREE = {
    "common/__init__.py": "",
    "common/errors.py": "class Error(Exception):\n  pass\n",
    "common/BUILD": """
        py_library(
            name = "common",
            srcs = ["__init__.py"],
        )

        py_library(
            name = "errors",
            srcs = ["errors.py"],
        )
        """,
    "inputs/__init__.py": "",
    "inputs/tokenizer.py": """
        import os

        import tensorflow as tf

        from common import errors
        """,
    "inputs/tokenizer_test.py": """
        from absl.testing import absltest

        from inputs import tokenizer
        from inputs.tokenizer import os as _os
        """,
    "inputs/BUILD": """
        py_library(
            name = "inputs",
            srcs = ["__init__.py"],
        )

        py_library(
            name = "tokenizer",
            srcs = ["tokenizer.py"],
            deps = [
                "//:expect_tensorflow_installed",
                "//common:errors",
            ],
        )

        py_test(
            name = "tokenizer_test",
            srcs = ["tokenizer_test.py"],
            main = "tokenizer_test.py",
            deps = [
                ":tokenizer",
                "//:expect_absl_installed",
            ],
        )
        """,
    "configs/demo.flags": "--epochs=1\n",
}


class FixtureTreeTest(unittest.TestCase):

  def setUp(self):
    super().setUp()
    self.root = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, self.root)
    for path, text in _GOOD_TREE.items():
      self.write(path, text)

  def write(self, path, text):
    full = os.path.join(self.root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
      f.write(textwrap.dedent(text).lstrip("\n"))

  def remove(self, path):
    os.remove(os.path.join(self.root, path))

  def check(self, **kwargs):
    return check_build_targets.check(self.root, **kwargs)

  def run_main(self, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
      status = check_build_targets.main(["--root", self.root] + list(args))
    return status, out.getvalue()

  def test_good_tree_passes(self):
    self.assertEqual(self.check(), [])
    status, out = self.run_main()
    self.assertEqual(status, 0)
    self.assertIn("OK: 5 modules", out)

  def test_finds_modules(self):
    self.assertEqual(
        check_build_targets.find_modules(self.root),
        ["common/__init__.py", "common/errors.py", "inputs/__init__.py",
         "inputs/tokenizer.py", "inputs/tokenizer_test.py"])

  def test_module_without_target_fails_and_is_listed(self):
    self.write("inputs/vocabulary.py", "import collections\n")
    self.write("common/cli.py", "import sys\n")
    status, out = self.run_main()
    self.assertEqual(status, 1)
    self.assertIn("inputs/vocabulary.py: no py_library in inputs/BUILD", out)
    self.assertIn("common/cli.py: no py_library in common/BUILD", out)
    self.assertIn("2 problem(s)", out)

  def test_test_without_py_test_fails(self):
    self.write("common/errors_test.py", "import unittest\n")
    self.assertEqual(
        self.check(), ["common/errors_test.py: no py_test in common/BUILD "
                       "names it"])

  def test_test_named_only_by_a_py_library_fails(self):
    self.write("common/errors_test.py", "import unittest\n")
    self.write("common/BUILD", """
        py_library(name = "common", srcs = ["__init__.py"])
        py_library(name = "errors", srcs = ["errors.py", "errors_test.py"])
        """)
    self.assertEqual(
        self.check(), ["common/errors_test.py: no py_test in common/BUILD "
                       "names it"])

  def test_target_in_another_package_does_not_count(self):
    self.write("common/cli.py", "import sys\n")
    with open(os.path.join(self.root, "inputs/BUILD"), "a") as f:
      f.write('\npy_library(name = "cli", srcs = ["//common:cli.py"])\n')
    self.assertIn("common/cli.py: no py_library in common/BUILD names it",
                  self.check())

  def test_test_class_after_the_main_block_fails(self):
    self.write("inputs/tokenizer_test.py", """
        import unittest
        class FirstTest(unittest.TestCase):
          pass
        if __name__ == "__main__":
          unittest.main()
        class LateTest(unittest.TestCase):
          pass
        """)
    self.assertEqual(
        self.check(deps_check=False),
        ["inputs/tokenizer_test.py:6: LateTest is defined after the "
         "`if __name__ == \"__main__\":` block, so the py_test (which runs "
         "the file) never runs it"])

  def test_build_naming_missing_file_fails(self):
    self.remove("common/errors.py")
    self.assertEqual(self.check(), [
        "//common:errors: names common/errors.py, which does not exist"
    ])

  def test_import_of_missing_module_fails(self):
    self.write("inputs/tokenizer.py", """
        import tensorflow as tf
        from common import errors
        from common import gone
        import common.vanished
        """)
    self.assertEqual(self.check(), [
        "//inputs:tokenizer: inputs/tokenizer.py imports common.gone, which "
        "does not exist",
        "//inputs:tokenizer: inputs/tokenizer.py imports common.vanished, "
        "which does not exist",
    ])

  def test_missing_main_fails(self):
    self.write("inputs/BUILD", """
        py_library(name = "inputs", srcs = ["__init__.py"])
        py_library(
            name = "tokenizer",
            srcs = ["tokenizer.py"],
            deps = ["//:expect_tensorflow_installed", "//common:errors"],
        )
        py_test(
            name = "tokenizer_test",
            srcs = ["tokenizer_test.py"],
            main = "old_test.py",
            deps = [":tokenizer", "//:expect_absl_installed"],
        )
        """)
    problems = self.check()
    self.assertIn("//inputs:tokenizer_test: names inputs/old_test.py, which "
                  "does not exist", problems)
    self.assertIn("//inputs:tokenizer_test: main inputs/old_test.py is not in "
                  "srcs", problems)

  def test_folder_without_build_fails(self):
    self.write("models/__init__.py", "")
    self.write("models/siamese_cbow.py", "import keras\n")
    self.assertEqual(self.check(),
                     ["models/: has Python modules but no BUILD file"])

  def test_every_top_level_folder_with_modules_is_checked(self):
    # No list of package folders: a new folder is found and checked.
    self.write("tools/__init__.py", "")
    self.write("tools/lint.py", "import sys\n")
    status, out = self.run_main()
    self.assertEqual(status, 1)
    self.assertIn("tools/: has Python modules but no BUILD file", out)
    self.write("tools/BUILD", """
        py_library(name = "tools", srcs = ["__init__.py"])
        py_library(name = "lint", srcs = ["lint.py"])
        """)
    self.assertEqual(self.check(), [])
    # A test in it without a py_test rule fails the check.
    self.write("tools/lint_test.py", "import unittest\nfrom tools import lint\n")
    status, out = self.run_main()
    self.assertEqual(status, 1)
    self.assertIn("tools/lint_test.py: no py_test in tools/BUILD names it", out)
    self.assertEqual(check_build_targets.find_package_dirs(self.root),
                     ("common", "inputs", "tools"))

  def test_ignored_hidden_and_linked_folders_are_not_packages(self):
    for folder in (".hidden", "runs", "venv", "bazel-out"):
      self.write(f"{folder}/x.py", "import pandas\n")
    self.write(".gitignore", "/runs/\nbazel-*\n*.pyc\n")
    self.write(".bazelignore", "venv\n")
    outside = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, outside)
    with open(os.path.join(outside, "x.py"), "w") as f:
      f.write("import pandas\n")
    os.symlink(outside, os.path.join(self.root, "linked"))
    self.assertEqual(check_build_targets.find_package_dirs(self.root),
                     ("common", "inputs"))
    self.assertEqual(self.check(), [])

  def test_subpackage_with_own_build(self):
    self.write("inputs/extra/__init__.py", "")
    self.write("inputs/extra/BUILD",
               'py_library(name = "extra", srcs = ["__init__.py"])\n')
    self.assertEqual(self.check(), [])
    # Without its BUILD file the module belongs to //inputs, which lacks it.
    self.remove("inputs/extra/BUILD")
    self.assertEqual(self.check(), [
        "inputs/extra/__init__.py: no py_library in inputs/BUILD names it"
    ])

  def test_glob_srcs_is_reported(self):
    self.write("common/BUILD", """
        py_library(name = "common", srcs = glob(["*.py"]))
        """)
    problems = self.check()
    self.assertIn("srcs must be a literal list", problems[0])

  def test_missing_first_party_dep(self):
    self.write("inputs/tokenizer.py", """
        import tensorflow as tf
        from common import errors
        from common.errors import Error
        """)
    self.write("inputs/BUILD", _GOOD_TREE["inputs/BUILD"].replace(
        '"//common:errors",', ""))
    self.assertEqual(self.check(), [
        "//inputs:tokenizer: inputs/tokenizer.py imports common/errors.py "
        "but deps lack //common:errors",
    ] * 2)
    self.assertEqual(self.check(deps_check=False), [])
    status, _ = self.run_main("--no_deps_check")
    self.assertEqual(status, 0)

  def test_umbrella_package_import_needs_both_targets(self):
    # `from sentzoo.common import errors` loads sentzoo/__init__.py (which
    # maps the top-level folders into the package) and common/errors.py.
    self.write("sentzoo/__init__.py", "")
    self.write("sentzoo/BUILD",
               'py_library(name = "sentzoo", srcs = ["__init__.py"])\n')
    self.write("inputs/tokenizer.py", """
        import tensorflow as tf
        from sentzoo.common import errors
        """)
    self.assertEqual(self.check(), [
        "//inputs:tokenizer: inputs/tokenizer.py imports sentzoo/__init__.py "
        "but deps lack //sentzoo:sentzoo",
    ])
    self.write("inputs/BUILD", _GOOD_TREE["inputs/BUILD"].replace(
        '"//common:errors",', '"//sentzoo",'))
    self.assertEqual(self.check(), [
        "//inputs:tokenizer: inputs/tokenizer.py imports common/errors.py "
        "but deps lack //common:errors",
    ])

  def test_umbrella_import_through_a_link_needs_the_real_target(self):
    # The checkout's sentzoo/common links to ../common: the import is still
    # common/errors.py's, whose target the deps must name.
    self.write("sentzoo/__init__.py", "")
    self.write("sentzoo/BUILD",
               'py_library(name = "sentzoo", srcs = ["__init__.py"])\n')
    os.symlink(os.path.join("..", "common"),
               os.path.join(self.root, "sentzoo", "common"))
    self.write("inputs/tokenizer.py", """
        import tensorflow as tf
        from sentzoo.common import errors
        """)
    self.write("inputs/BUILD", _GOOD_TREE["inputs/BUILD"].replace(
        '"//common:errors",', '"//sentzoo",'))
    self.assertEqual(self.check(), [
        "//inputs:tokenizer: inputs/tokenizer.py imports common/errors.py "
        "but deps lack //common:errors",
    ])

  def test_missing_sentinel_dep(self):
    self.write("inputs/tokenizer_test.py", """
        from absl.testing import absltest
        import numpy as np

        from inputs import tokenizer

        def helper():
          import tensorflow as tf  # Imports inside functions count too.
        """)
    self.assertEqual(self.check(), [
        "//inputs:tokenizer_test: inputs/tokenizer_test.py imports numpy but "
        "deps lack //:expect_numpy_installed",
        "//inputs:tokenizer_test: inputs/tokenizer_test.py imports tensorflow "
        "but deps lack //:expect_tensorflow_installed",
    ])

  def test_unknown_third_party_import(self):
    self.write("common/errors.py", "import pandas\nimport json\n")
    problems = self.check()
    self.assertEqual(len(problems), 1)
    self.assertIn("imports 'pandas', which has no sentinel target", problems[0])

  def test_package_init_reexports(self):
    # `from inputs import tokenizer` resolves to the module; a name that is
    # not a module resolves to the package's __init__.py.
    self.write("inputs/__init__.py", "from inputs.tokenizer import os\n")
    self.write("common/errors.py", "from inputs import os\n")
    problems = self.check()
    self.assertIn("//inputs:inputs: inputs/__init__.py imports "
                  "inputs/tokenizer.py but deps lack //inputs:tokenizer",
                  problems)
    self.assertIn("//common:errors: common/errors.py imports "
                  "inputs/__init__.py but deps lack //inputs:inputs", problems)

  def test_module_run_as_subprocess_needs_dep(self):
    self.write("inputs/tokenizer_test.py", """
        import subprocess
        import sys

        from absl.testing import absltest
        from inputs import tokenizer

        subprocess.run([sys.executable, "-m", "common.errors"])
        print("not.a_module", "common.not_there")
        """)
    self.assertEqual(self.check(), [
        "//inputs:tokenizer_test: inputs/tokenizer_test.py imports "
        "common/errors.py but deps lack //common:errors",
    ])
    # `data` satisfies it as well as `deps`.
    self.write("inputs/BUILD", _GOOD_TREE["inputs/BUILD"].replace(
        'main = "tokenizer_test.py",',
        'main = "tokenizer_test.py",\n            data = ["//common:errors"],'))
    self.assertEqual(self.check(), [])

  def test_relative_import(self):
    self.write("inputs/tokenizer_test.py", """
        from absl.testing import absltest
        from . import tokenizer
        from .. import common
        """)
    self.assertEqual(self.check(), [
        "//inputs:tokenizer_test: inputs/tokenizer_test.py imports "
        "common/__init__.py but deps lack //common:common",
    ])


class RealRepoTest(unittest.TestCase):

  def test_real_repo_is_covered(self):
    problems = check_build_targets.check(REPO_ROOT)
    self.assertEqual(
        problems, [], "BUILD files are out of date; run "
        "`python tools/check_build_targets.py` and add the missing targets:\n" +
        "\n".join(problems))

  def test_real_repo_has_modules(self):
    modules = check_build_targets.find_modules(REPO_ROOT)
    self.assertIn("common/errors.py", modules)
    self.assertIn("tools/check_build_targets_test.py", modules)
    self.assertFalse([m for m in modules if m.startswith(".venv")])


if __name__ == "__main__":
  unittest.main()
