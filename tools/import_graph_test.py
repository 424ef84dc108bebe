"""Checks the folder-level import graph: no upward arrow, no cycle.

Every first-party import of every `.py` file below the repository's top-level
folders is read with `ast` (module-level imports and those inside functions;
`from sentzoo.inputs import x`, `import sentzoo.inputs.x`, the plain
`from inputs import x` and relative imports alike). A string such as the
"trainers.hybrid_siamese" of `python -m trainers.hybrid_siamese` is not an
import and does not count. `import sentzoo` alone is no arrow: it loads only
sentzoo/__init__.py, which every first-party import loads anyway.

An arrow A -> B (a module of folder A imports one of folder B) is allowed when
B ranks below A in RANKS (or B is A). Test-only helpers (tests/, and modules
named *test_util.py, *_fixtures.py or *test_case.py in any folder) may be
imported only by test files (*_test.py), other test-only helpers and lab/
(which is not installed either); those may import tests/ from any folder, a
rank notwithstanding. The failure
message names each offending import as `file:line: A -> B`.

Run with `python -m pytest tools/import_graph_test.py` or `python -m
tools.import_graph_test` from the repository root (standard library only), or
with `bazel test //tools:import_graph_test`.
"""

import ast
import collections
import os
import re
import shutil
import tempfile
import textwrap
import unittest

from tools import check_build_targets

# A module may import its own folder and the folders ranked below it, never
# one ranked at or above it. The order follows the code, not only the plan:
#
#   common      errors, flags, data dirs: imports no other folder.
#   layers      Keras layers; only common.
#   models      Keras models composed from layers.
#   inputs      tokeniser, vocabulary, readers and tf.data pipelines. Neither
#               inputs nor models imports the other today; the design puts the
#               pipelines above the models (a pipeline may read what a model
#               needs; a model never reads files), so inputs may import models
#               and models may not import inputs.
#   evaluation  the evaluation library: metrics, STS/SentEval readers (on
#               inputs.scored_pairs), encoders over exports, evaluators. It is
#               below export and trainers because they call it: the exporter
#               scores an export (export_model.export_time_scores), trainers
#               evaluate on STS-B dev while training and write
#               sts_results.{json,md} at the end.
#   export      model directory -> SavedModel; trainers export at the end of
#               training, so export is below trainers (it never imports them).
#   trainers    `python -m trainers.<model>`.
#   sentzoo     the public API over exports (sentzoo.load, sentence_model.py),
#               the `sentzoo` command, the catalogue and the store.
#   docs, lab, tests, tools
#               leaves: they may import any folder ranked below them, and
#               nothing imports them (tests/ only from test code, see above);
#               being of one rank, they may not import each other. lab/ is
#               what writes the docs and the claims (page generators,
#               benchmarks): it is not installed, and the library never
#               imports it.
RANKS = {
    "common": 0,
    "layers": 1,
    "models": 2,
    "inputs": 3,
    "evaluation": 4,
    "export": 5,
    "trainers": 6,
    "sentzoo": 7,
    "docs": 8,
    "lab": 8,
    "tests": 8,
    "tools": 8,
}

# Arrows against the order that are known and waiting for a fix, as (file,
# imported folder) -> why; RealRepoTest fails on any other violation, and on
# an entry here that no longer occurs (delete it then).
KNOWN_VIOLATIONS = {
}

# The folder of the shared test helpers; and the names of the test-only
# helper modules that live beside the code they help to test.
TEST_HELPER_FOLDER = "tests"
_TEST_HELPER_NAME = re.compile(r"(test_util|_fixtures|test_case)$")

# The package whose subpackages the top-level folders are (sentzoo.layers...);
# its own folder holds the public API.
UMBRELLA = "sentzoo"

# The real path: under `bazel test` this file is a link in the test's
# runfiles tree; the graph is that of the source tree it points into.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

Arrow = collections.namedtuple(
    "Arrow", "path line source target target_module statement")


def is_test_file(path):
  return os.path.basename(path).endswith("_test.py")


def is_test_helper(folder, module):
  """Whether module `module` (no ".py") of `folder` is a test-only helper."""
  if folder == TEST_HELPER_FOLDER:
    return not module.endswith("_test")
  return bool(_TEST_HELPER_NAME.search(module))


def _imported(node, importer_parts, folders):
  """(folder, module or None) for each first-party module `node` imports.

  Args:
    node: an ast.Import or ast.ImportFrom.
    importer_parts: the importing file's path parts below the root, without
      ".py" (["inputs", "twitter_pit"]).
    folders: the top-level folder names.
  """
  if isinstance(node, ast.Import):
    targets = [(name.name.split("."), ()) for name in node.names]
  else:
    names = tuple(alias.name for alias in node.names)
    if node.level:
      base = importer_parts[:-node.level]
      parts = base + (node.module.split(".") if node.module else [])
      targets = [([UMBRELLA] + parts, names)]
    else:
      targets = [(node.module.split("."), names)]
  found = []
  for parts, names in targets:
    if parts[0] == UMBRELLA:
      parts = parts[1:]
      if not parts:  # `import sentzoo`, `from sentzoo import layers, load`.
        for name in names:
          found.append((name, None) if name in folders else (UMBRELLA, name))
        continue
      if parts[0] not in folders:  # sentzoo.sentence_model: the public API.
        found.append((UMBRELLA, parts[0]))
        continue
    elif parts[0] not in folders:
      continue  # The standard library or a pip package.
    folder = parts[0]
    if len(parts) > 1:
      found.append((folder, parts[1]))
    elif names:
      found.extend((folder, name) for name in names)
    else:
      found.append((folder, None))
  return found


def find_arrows(root):
  """Every import from one top-level folder into another, as Arrows.

  An import of a test-only helper of the importer's own folder is an Arrow
  too (from the folder to itself), so that its importer can be checked.
  """
  folders = set(check_build_targets.find_package_dirs(root))
  arrows = []
  for path in check_build_targets.find_modules(root):
    with open(os.path.join(root, path), encoding="utf-8") as f:
      source = f.read()
    tree = ast.parse(source, filename=path)
    parts = path[:-len(".py")].split("/")
    lines = source.splitlines()
    for node in ast.walk(tree):
      if not isinstance(node, (ast.Import, ast.ImportFrom)):
        continue
      for folder, module in _imported(node, parts, folders):
        if folder != parts[0] or (module is not None and
                                  is_test_helper(folder, module)):
          arrows.append(Arrow(path, node.lineno, parts[0], folder, module,
                              lines[node.lineno - 1].strip()))
  return arrows


def violations(arrows, ranks=None):
  """The arrows that break the rules, as "file:line: A -> B ..." messages."""
  ranks = RANKS if ranks is None else ranks
  problems = []
  for arrow in arrows:
    where = (f"{arrow.path}:{arrow.line}: {arrow.source} -> {arrow.target} "
             f"(`{arrow.statement}`)")
    importer = os.path.basename(arrow.path)[:-len(".py")]
    # lab/ is not installed either: it may drive the code as the tests do.
    test_code = (is_test_file(arrow.path) or arrow.source == "lab" or
                 is_test_helper(arrow.source, importer))
    helper = arrow.target == TEST_HELPER_FOLDER or (
        arrow.target_module is not None and
        is_test_helper(arrow.target, arrow.target_module))
    if helper and not test_code:
      problems.append(f"{where}: a test-only helper, imported by code that "
                      "is not a test")
      continue
    if arrow.target == arrow.source or (
        helper and arrow.target == TEST_HELPER_FOLDER):
      continue
    unranked = [f for f in (arrow.source, arrow.target) if f not in ranks]
    if unranked:
      problems.append(f"{where}: folder {unranked[0]}/ has no rank: add it to "
                      "RANKS in tools/import_graph_test.py")
    elif ranks[arrow.target] >= ranks[arrow.source]:
      problems.append(
          f"{where}: {arrow.source} (rank {ranks[arrow.source]}) may not "
          f"import {arrow.target} (rank {ranks[arrow.target]})")
  return problems


def cycles(arrows):
  """Folder cycles of the non-test code, each as "A -> B -> A (file:line...)".

  Test files are left out: nothing imports a test, so a test is in no cycle
  (a layer's test that uses a tests/ helper built on higher folders is not a
  loop).
  """
  graph = collections.defaultdict(dict)  # source -> {target: first Arrow}
  for arrow in arrows:
    if not is_test_file(arrow.path) and arrow.source != arrow.target:
      graph[arrow.source].setdefault(arrow.target, arrow)
  found = []
  state = {}  # folder -> "active" while on the DFS stack, then "done"
  stack = []

  def visit(folder):
    state[folder] = "active"
    stack.append(folder)
    for target, arrow in sorted(graph[folder].items()):
      if state.get(target) == "active":
        loop = stack[stack.index(target):] + [target]
        steps = [graph[a][b] for a, b in zip(loop, loop[1:])]
        found.append(" -> ".join(loop) + " (" + "; ".join(
            f"{s.path}:{s.line}" for s in steps) + ")")
      elif target not in state:
        visit(target)
    stack.pop()
    state[folder] = "done"

  for folder in sorted(graph):
    if folder not in state:
      visit(folder)
  return found


class _TreeTest(unittest.TestCase):
  """Writes a small repository tree for each test."""

  def write(self, files):
    root = tempfile.mkdtemp(prefix="import_graph_test_")
    self.addCleanup(shutil.rmtree, root, ignore_errors=True)
    for path, text in files.items():
      full = os.path.join(root, path)
      os.makedirs(os.path.dirname(full), exist_ok=True)
      with open(full, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(text))
    return root


class RulesTest(_TreeTest):

  def test_import_forms(self):
    root = self.write({
        "common/errors.py": "",
        "inputs/reader.py": """
            import os
            from sentzoo.common import errors
            import sentzoo
            import sentzoo.layers.dense as dense
            from sentzoo import models, load
            from evaluation import sts

            def later():
              from sentzoo.evaluation.sts import evaluate_pair_sets
              from .. import export
              from . import tokenizer
              return "trainers.charagram"
            """,
        "inputs/tokenizer.py": "",
        "layers/dense.py": "",
        "models/__init__.py": "",
        "evaluation/sts.py": "",
        "export/__init__.py": "",
    })
    got = sorted((a.line, a.target, a.target_module)
                 for a in find_arrows(root))
    self.assertEqual(got, [
        (3, "common", "errors"),
        (5, "layers", "dense"),
        (6, "models", None),
        (6, UMBRELLA, "load"),
        (7, "evaluation", "sts"),
        (10, "evaluation", "sts"),
        (11, "export", None),
    ])

  def test_upward_arrow_names_file_line_and_arrow(self):
    root = self.write({
        "common/errors.py": "",
        "evaluation/sts_data.py": "from sentzoo.common import errors\n",
        "inputs/twitter_pit.py": "\nfrom sentzoo.evaluation import sts_data\n",
    })
    self.assertEqual(violations(find_arrows(root)), [
        "inputs/twitter_pit.py:2: inputs -> evaluation (`from "
        "sentzoo.evaluation import sts_data`): inputs (rank 3) may not import "
        "evaluation (rank 4)"])

  def test_same_rank_and_unranked_folders(self):
    root = self.write({
        "lab/speed.py": "from tools import check\n",
        "tools/check.py": "",
        "scripts/run.py": "from sentzoo.common import errors\n",
        "common/errors.py": "",
    })
    problems = violations(find_arrows(root))
    self.assertEqual(len(problems), 2, problems)
    self.assertIn("lab (rank 8) may not import tools (rank 8)",
                  problems[0])
    self.assertIn("folder scripts/ has no rank", problems[1])

  def test_test_helpers(self):
    root = self.write({
        "tests/layer_test_case.py": "from sentzoo.export import writer\n",
        "export/writer.py": "",
        "layers/dense_test.py": "from sentzoo.tests import layer_test_case\n",
        "layers/dense.py": "from sentzoo.tests import layer_test_case\n",
        "layers/conv.py": "from sentzoo.layers import encoder_test_util\n",
        "layers/encoder_test_util.py": "from sentzoo.tests import fixtures\n",
        "layers/conv_test.py": "from sentzoo.layers import encoder_test_util\n",
        "evaluation/test_util.py": "",
        "evaluation/sts.py": "",
        "lab/page_test.py": "from sentzoo.evaluation import test_util\n",
        "lab/page.py": "from sentzoo.evaluation import test_util, sts\n",
    })
    problems = sorted(violations(find_arrows(root)))
    # lab/page.py is not installed: it may use a test helper as tests do.
    self.assertEqual(len(problems), 2, problems)
    self.assertTrue(problems[0].startswith("layers/conv.py:1: layers -> "
                                           "layers"), problems)
    self.assertTrue(problems[1].startswith("layers/dense.py:1: layers -> "
                                           "tests"), problems)
    for problem in problems:
      self.assertIn("a test-only helper, imported by code that is not a test",
                    problem)

  def test_cycles_leave_tests_out(self):
    root = self.write({
        "tests/fixtures.py": "from sentzoo.export import writer\n",
        "export/writer.py": "from sentzoo.layers import dense\n",
        "layers/dense.py": "",
        "layers/dense_test.py": "from sentzoo.tests import fixtures\n",
    })
    self.assertEqual(cycles(find_arrows(root)), [])
    loop = self.write({
        "inputs/a.py": "from sentzoo.evaluation import b\n",
        "evaluation/b.py": "\n\nfrom sentzoo.inputs import a\n",
    })
    self.assertEqual(cycles(find_arrows(loop)), [
        "evaluation -> inputs -> evaluation (evaluation/b.py:3; "
        "inputs/a.py:1)"])


class RealRepoTest(unittest.TestCase):

  def test_every_folder_has_a_rank(self):
    folders = {m.split("/")[0]
               for m in check_build_targets.find_modules(REPO_ROOT)}
    self.assertEqual(sorted(folders - set(RANKS)), [],
                     "add the new folders to RANKS")

  def test_no_upward_arrow(self):
    arrows = [a for a in find_arrows(REPO_ROOT)
              if (a.path, a.target) not in KNOWN_VIOLATIONS]
    problems = violations(arrows)
    self.assertEqual(problems, [], "imports against the folder order (see "
                     "RANKS in tools/import_graph_test.py):\n" +
                     "\n".join(problems))

  def test_known_violations_still_occur(self):
    arrows = find_arrows(REPO_ROOT)
    flagged = {(a.path, a.target) for a in arrows if violations([a])}
    stale = sorted(set(KNOWN_VIOLATIONS) - flagged)
    self.assertEqual(stale, [], "fixed: delete these KNOWN_VIOLATIONS entries")

  def test_no_cycle(self):
    found = cycles([a for a in find_arrows(REPO_ROOT)
                    if (a.path, a.target) not in KNOWN_VIOLATIONS])
    self.assertEqual(found, [], "folder import cycles:\n" + "\n".join(found))


if __name__ == "__main__":
  unittest.main()
