#!/usr/bin/env python3
"""Checks that the Bazel BUILD files cover every Python module of the repo.

Usage (from the repository root; needs only the standard library):

    python tools/check_build_targets.py [--root=DIR] [--no_deps_check]

For every `*.py` file below the package folders it finds the BUILD file of the Bazel package that holds it (the nearest
folder at or above it, inside the package folder, that has a BUILD file) and
reports, exiting with status 1:

  * a module that no `py_library` / `py_test` / `py_binary` names in `srcs`
    (a `*_test.py` file must be named by a `py_test`, any other module by a
    `py_library` or `py_binary`), or a package folder with modules but no
    BUILD file;
  * a `.py` file named in a BUILD file (`srcs` or `main`) that does not exist;
  * a class or function of a `*_test.py` file defined after its
    `if __name__ == "__main__":` block (the py_test runs the file, so its
    tests would never run there);
  * unless --no_deps_check: an import that the importing target does not
    declare in `deps` (or `data`): a first-party module (`from inputs import tokenizer`)
    needs the `py_library` that holds it (`from sentzoo.inputs import
    tokenizer` needs it and //sentzoo, the package whose subpackages the
    folders are), a known pip package needs its
    sentinel target (`import tensorflow` -> `//:expect_tensorflow_installed`),
    and an import that is neither first-party, nor standard library, nor a
    known pip package is reported so that a sentinel gets added for it. A
    string that names a first-party module ("trainers.siamese_cbow", as in
    `python -m trainers.siamese_cbow` run by a test) counts as an import.

The package folders are found, not listed: every top-level folder of the
repository that holds a `*.py` or BUILD file anywhere below it (tools/
included), except
hidden folders, symbolic links (bazel-bin, ...), and the folders that
.bazelignore or .gitignore leave out (.venv, runs/, ...). Python files directly
in the repository root are not checked.

BUILD files are read with `ast` (Starlark is a subset of Python); `srcs` must
be literal lists of strings (no `glob()`) so that they can be checked.
"""

import argparse
import ast
import fnmatch
import os
import re
import sys

PY_RULES = ("py_library", "py_test", "py_binary")

# Top-level module of a pip package -> the sentinel target in the top-level
# BUILD that states the dependency.
THIRD_PARTY_SENTINELS = {
    "tensorflow": "//:expect_tensorflow_installed",
    "keras": "//:expect_keras_installed",
    "tf_keras": "//:expect_tf_keras_installed",
    "tensorflow_hub": "//:expect_tensorflow_hub_installed",
    "tensorflow_text": "//:expect_tensorflow_text_installed",
    "scipy": "//:expect_scipy_installed",
    "matplotlib": "//:expect_matplotlib_installed",
    "absl": "//:expect_absl_installed",
    "filelock": "//:expect_filelock_installed",
    "numpy": "//:expect_numpy_installed",
    "tensorflow_serving": "//:expect_tensorflow_serving_api_installed",
    "gensim": "//:expect_gensim_installed",
    "uvicorn": "//:expect_uvicorn_installed",
    "starlette": "//:expect_starlette_installed",
    "prometheus_client": "//:expect_prometheus_client_installed",
    "orjson": "//:expect_orjson_installed",
    "pybase64": "//:expect_pybase64_installed",
    "httptools": "//:expect_httptools_installed",
    "uvloop": "//:expect_uvloop_installed",
    "openai": "//:expect_openai_installed",
    "tqdm": "//:expect_tqdm_installed",
}

# The package whose subpackages the top-level folders are (sentzoo.layers,
# ...: the links sentzoo/<folder>).
UMBRELLA = "sentzoo"

_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")

_SKIP_DIRS = frozenset(("__pycache__", ".git", ".venv"))


class Target(object):
  """One py_* rule of a BUILD file."""

  def __init__(self, package, kind, name, srcs, main, deps, lineno):
    self.package = package  # "layers", "layers/sub" or "" (repo root)
    self.kind = kind
    self.name = name
    self.srcs = srcs  # file paths relative to the repository root
    self.main = main  # file path relative to the repository root, or None
    self.deps = deps  # normalized labels of deps and data, "//pkg:name"
    self.lineno = lineno

  @property
  def label(self):
    return "//%s:%s" % (self.package, self.name)


def _normalize_label(label, package):
  """Returns `label` as "//pkg:name"; None for labels of other repositories."""
  if label.startswith("@"):
    return None
  if label.startswith(":"):
    return "//%s%s" % (package, label)
  if label.startswith("//"):
    if ":" in label:
      return label
    return "%s:%s" % (label, label.rstrip("/").rsplit("/", 1)[-1])
  return "//%s:%s" % (package, label)


def _string_list(node):
  """The strings of a literal list/tuple node; None if it is anything else."""
  if isinstance(node, (ast.List, ast.Tuple)):
    values = []
    for element in node.elts:
      if not (isinstance(element, ast.Constant) and
              isinstance(element.value, str)):
        return None
      values.append(element.value)
    return values
  return None


def _src_path(src, package):
  """Path relative to the repo root of a `srcs`/`main` entry naming a file."""
  if src.startswith("//"):
    pkg, _, name = src[2:].partition(":")
    return "/".join(p for p in (pkg, name) if p)
  if src.startswith(":"):
    src = src[1:]
  return "/".join(p for p in (package, src) if p)


def parse_build_file(path, package):
  """Returns ([Target], [error message]) for the BUILD file at `path`."""
  errors = []
  with open(path, encoding="utf-8") as f:
    source = f.read()
  try:
    tree = ast.parse(source, filename=path)
  except SyntaxError as e:
    return [], ["%s:%s: cannot parse BUILD file: %s" % (path, e.lineno, e.msg)]
  targets = []
  for node in ast.walk(tree):
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
            node.func.id in PY_RULES):
      continue
    kwargs = {kw.arg: kw.value for kw in node.keywords if kw.arg}
    name_node = kwargs.get("name")
    if not (isinstance(name_node, ast.Constant) and
            isinstance(name_node.value, str)):
      errors.append("%s:%d: %s without a literal name" %
                    (path, node.lineno, node.func.id))
      continue
    name = name_node.value
    srcs = []
    if "srcs" in kwargs:
      srcs = _string_list(kwargs["srcs"])
      if srcs is None:
        errors.append("%s:%d: %s %r: srcs must be a literal list of file "
                      "names (no glob) so that it can be checked" %
                      (path, node.lineno, node.func.id, name))
        srcs = []
    main = None
    if "main" in kwargs:
      main_node = kwargs["main"]
      if isinstance(main_node, ast.Constant) and isinstance(
          main_node.value, str):
        main = _src_path(main_node.value, package)
      else:
        errors.append("%s:%d: %s %r: main must be a literal string" %
                      (path, node.lineno, node.func.id, name))
    deps = []
    for attr in ("deps", "data"):
      if attr not in kwargs:
        continue
      dep_list = _string_list(kwargs[attr])
      if dep_list is None:
        if attr == "deps":
          errors.append("%s:%d: %s %r: deps must be a literal list of labels" %
                        (path, node.lineno, node.func.id, name))
        dep_list = []
      deps.extend(
          d for d in (_normalize_label(l, package) for l in dep_list) if d)
    targets.append(
        Target(package, node.func.id, name,
               [_src_path(s, package) for s in srcs if s.endswith(".py")],
               main, deps, node.lineno))
  return targets, errors


def _ignore_patterns(root):
  """Top-level folder name patterns of .bazelignore and .gitignore."""
  patterns = []
  for name in (".bazelignore", ".gitignore"):
    path = os.path.join(root, name)
    if not os.path.isfile(path):
      continue
    with open(path, encoding="utf-8") as f:
      for line in f:
        line = line.strip()
        if not line or line.startswith(("#", "!")):
          continue
        line = line.strip("/")
        if line and "/" not in line:
          patterns.append(line)
  return patterns


def find_package_dirs(root):
  """The top-level folders of `root` that hold `*.py` or BUILD files (sorted).

  Skips hidden folders, symbolic links (Bazel's bazel-* output links) and
  the folders that .bazelignore or .gitignore name.
  """
  patterns = _ignore_patterns(root)
  found = []
  for name in sorted(os.listdir(root)):
    path = os.path.join(root, name)
    if (name.startswith(".") or name in _SKIP_DIRS or os.path.islink(path) or
        not os.path.isdir(path) or
        any(fnmatch.fnmatch(name, p) for p in patterns)):
      continue
    for dirpath, dirnames, filenames in os.walk(path):
      dirnames[:] = [d for d in dirnames
                     if d not in _SKIP_DIRS and not d.startswith(".")]
      if any(f.endswith(".py") or f in ("BUILD", "BUILD.bazel")
             for f in filenames):
        found.append(name)
        break
  return tuple(found)


def find_modules(root, package_dirs=None):
  """All `*.py` files below the package folders, relative to `root`."""
  if package_dirs is None:
    package_dirs = find_package_dirs(root)
  modules = []
  for top in package_dirs:
    top_path = os.path.join(root, top)
    if not os.path.isdir(top_path):
      continue
    for dirpath, dirnames, filenames in os.walk(top_path):
      dirnames[:] = sorted(d for d in dirnames
                           if d not in _SKIP_DIRS and not d.startswith("."))
      for filename in sorted(filenames):
        if filename.endswith(".py"):
          modules.append(
              os.path.relpath(os.path.join(dirpath, filename),
                              root).replace(os.sep, "/"))
  return modules


def _build_file_in(directory):
  for name in ("BUILD", "BUILD.bazel"):
    path = os.path.join(directory, name)
    if os.path.isfile(path):
      return path
  return None


def _owning_package(root, module):
  """The package ("layers", "layers/sub") whose BUILD file covers `module`."""
  parts = module.split("/")[:-1]
  while len(parts) > 1 and not _build_file_in(os.path.join(root, *parts)):
    parts.pop()
  return "/".join(parts)


def _imports(path, root, package_dirs):
  """(level, module, imported names) triples of the imports of a file.

  A string constant that is a dotted first-party module name, such as the
  "trainers.siamese_cbow" of `subprocess.run([sys.executable, "-m",
  "trainers.siamese_cbow"])`, counts as an import of that module: the target
  needs it at run time (in `deps` or `data`).
  """
  with open(path, encoding="utf-8") as f:
    source = f.read()
  try:
    tree = ast.parse(source, filename=path)
  except SyntaxError:
    return None
  found = []
  for node in ast.walk(tree):
    if (isinstance(node, ast.Constant) and isinstance(node.value, str) and
        _DOTTED_NAME.match(node.value) and
        node.value.split(".")[0] in package_dirs):
      rel = os.path.join(root, *node.value.split("."))
      if os.path.isfile(rel + ".py") or os.path.isdir(rel):
        found.append((0, node.value, ()))
    elif isinstance(node, ast.Import):
      for alias in node.names:
        found.append((0, alias.name, ()))
    elif isinstance(node, ast.ImportFrom):
      found.append((node.level, node.module or "",
                    tuple(alias.name for alias in node.names)))
  return found


def _first_party_files(root, level, module, names, importer, package_dirs):
  """Repo files that an import statement loads; None if not first-party."""
  if level:
    base = importer.split("/")[:-1]
    if level > 1:
      base = base[:-(level - 1)]
    parts = base + (module.split(".") if module else [])
  else:
    parts = module.split(".")
    linked = os.path.join(root, UMBRELLA, parts[1]) if len(parts) > 1 else ""
    if (len(parts) > 1 and parts[0] == UMBRELLA and parts[1] in package_dirs
        and (not os.path.exists(linked) or os.path.islink(linked))):
      # `from sentzoo.inputs import tokenizer` loads sentzoo/__init__.py and
      # then inputs/tokenizer.py (sentzoo/__init__.py adds the repository
      # root to the package's search path, or sentzoo/inputs links to it).
      inner = _first_party_files(root, 0, ".".join(parts[1:]), names,
                                 importer, package_dirs)
      return sorted(set(inner + [UMBRELLA + "/__init__.py"]))
    if not parts or parts[0] not in package_dirs:
      return None
  rel = "/".join(parts)
  files = []
  if os.path.isfile(os.path.join(root, rel + ".py")):
    return [rel + ".py"]
  if not os.path.isdir(os.path.join(root, rel)):
    return [rel + ".py"]  # A missing module: reported as unresolved.
  prefix = rel + "/" if rel else ""
  for name in names:
    if os.path.isfile(os.path.join(root, rel, name + ".py")):
      files.append(prefix + name + ".py")
    elif os.path.isfile(os.path.join(root, rel, name, "__init__.py")):
      files.append(prefix + name + "/__init__.py")
    elif _defines(os.path.join(root, rel, "__init__.py"), name):
      files.append(prefix + "__init__.py")
    else:
      files.append(prefix + name + ".py")  # Missing: reported as unresolved.
  if not names and os.path.isfile(os.path.join(root, rel, "__init__.py")):
    files.append(rel + "/__init__.py")
  return sorted(set(files))


def _defines(init_path, name):
  """Whether the package's `__init__.py` may define `name`."""
  if not os.path.isfile(init_path):
    return False
  with open(init_path, encoding="utf-8") as f:
    try:
      tree = ast.parse(f.read(), filename=init_path)
    except SyntaxError:
      return True
  for node in tree.body:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
      if node.name in (name, "__getattr__"):
        return True
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
      for alias in node.names:
        if alias.name == "*" or (alias.asname or
                                 alias.name.split(".")[0]) == name:
          return True
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
      targets = node.targets if isinstance(node, ast.Assign) else [node.target]
      for target in targets:
        for sub in ast.walk(target):
          if isinstance(sub, ast.Name) and sub.id == name:
            return True
    elif not isinstance(node, ast.Expr):
      return True  # if/try/for blocks: assume they may define it.
  return False


def _stdlib_names():
  names = set(getattr(sys, "stdlib_module_names", ()))
  names.update(sys.builtin_module_names)
  names.add("__future__")
  return names


def check(root, package_dirs=None, deps_check=True):
  """Returns the list of problems found below `root` (empty if none).

  Args:
    root: the repository root.
    package_dirs: top-level folders to check; default: find_package_dirs.
    deps_check: whether to compare each target's imports with its deps.
  """
  if package_dirs is None:
    package_dirs = find_package_dirs(root)
  problems = []
  modules = find_modules(root, package_dirs)

  # Parse every BUILD file in (and below) the package folders.
  targets = []
  for top in package_dirs:
    top_path = os.path.join(root, top)
    if not os.path.isdir(top_path):
      continue
    for dirpath, dirnames, _ in os.walk(top_path):
      dirnames[:] = sorted(d for d in dirnames
                           if d not in _SKIP_DIRS and not d.startswith("."))
      build = _build_file_in(dirpath)
      if build:
        package = os.path.relpath(dirpath, root).replace(os.sep, "/")
        found, errors = parse_build_file(build, package)
        targets.extend(found)
        problems.extend(errors)

  # Files named in BUILD files must exist.
  for target in targets:
    for src in target.srcs + ([target.main] if target.main else []):
      if not os.path.isfile(os.path.join(root, src)):
        problems.append("%s: names %s, which does not exist" %
                        (target.label, src))
    if target.main and target.main not in target.srcs:
      problems.append("%s: main %s is not in srcs" % (target.label,
                                                      target.main))

  # Every module must be named by a target of its own package.
  by_file = {}
  for target in targets:
    for src in target.srcs:
      by_file.setdefault(src, []).append(target)
  packages_without_build = set()
  for module in modules:
    package = _owning_package(root, module)
    if not _build_file_in(os.path.join(root, package)):
      packages_without_build.add(package)
      continue
    owners = [t for t in by_file.get(module, []) if t.package == package]
    if module.endswith("_test.py"):
      if not any(t.kind == "py_test" for t in owners):
        problems.append("%s: no py_test in %s/BUILD names it" %
                        (module, package))
    elif not any(t.kind in ("py_library", "py_binary") for t in owners):
      problems.append("%s: no py_library in %s/BUILD names it" %
                      (module, package))
  for package in sorted(packages_without_build):
    problems.append("%s/: has Python modules but no BUILD file" % package)
  for module in modules:
    if module.endswith("_test.py"):
      problems.extend(_definitions_after_main(root, module))

  if deps_check:
    problems.extend(_check_deps(root, targets, by_file, package_dirs))
  return problems


def _definitions_after_main(root, module):
  """Classes and functions defined below a test's `if __name__ ==
  "__main__":` block: Bazel runs the file as its main, which starts the
  tests before Python reaches them, so they never run there."""
  with open(os.path.join(root, module)) as f:
    body = ast.parse(f.read(), module).body
  main = next((i for i, node in enumerate(body)
               if isinstance(node, ast.If)
               and "__main__" in ast.unparse(node.test)), None)
  if main is None:
    return []
  return ["%s:%d: %s is defined after the `if __name__ == \"__main__\":` "
          "block, so the py_test (which runs the file) never runs it" %
          (module, node.lineno, node.name) for node in body[main + 1:]
          if isinstance(node, (ast.ClassDef, ast.FunctionDef))]


def _check_deps(root, targets, by_file, package_dirs):
  """Imports that a target's `deps` do not cover."""
  problems = []
  stdlib = _stdlib_names()
  # What the umbrella package itself depends on cannot depend on it (a
  # cycle): their own `sentzoo.` imports run once it is loaded.
  umbrella_deps = {dep for t in targets
                   if t.label == "//%s:%s" % (UMBRELLA, UMBRELLA)
                   for dep in t.deps}
  for target in targets:
    own = set(target.srcs)
    deps = set(target.deps)
    for src in target.srcs:
      path = os.path.join(root, src)
      if not os.path.isfile(path):
        continue
      imports = _imports(path, root, package_dirs)
      if imports is None:
        problems.append("%s: cannot parse it to read its imports" % src)
        continue
      for level, module, names in imports:
        files = _first_party_files(root, level, module, names, src,
                                   package_dirs)
        if files is None:
          top = module.split(".")[0]
          if top in stdlib:
            continue
          sentinel = THIRD_PARTY_SENTINELS.get(top)
          if sentinel is None:
            problems.append(
                "%s: %s imports %r, which has no sentinel target: add "
                "//:expect_%s_installed to the top-level BUILD and to "
                "THIRD_PARTY_SENTINELS in tools/check_build_targets.py" %
                (target.label, src, top, top))
          elif sentinel not in deps:
            problems.append("%s: %s imports %s but deps lack %s" %
                            (target.label, src, top, sentinel))
          continue
        for dep_file in files:
          if dep_file in own or (dep_file == UMBRELLA + "/__init__.py" and
                                 target.label in umbrella_deps):
            continue
          libraries = [t for t in by_file.get(dep_file, [])
                       if t.kind == "py_library"]
          if not libraries:
            if not os.path.isfile(os.path.join(root, dep_file)):
              problems.append("%s: %s imports %s, which does not exist" %
                              (target.label, src, dep_file[:-3].replace(
                                  "/", ".")))
            # Otherwise it is reported above as a module without a target.
            continue
          if not any(lib.label in deps for lib in libraries):
            problems.append("%s: %s imports %s but deps lack %s" %
                            (target.label, src, dep_file,
                             " or ".join(lib.label for lib in libraries)))
  return problems


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument(
      "--root",
      default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
      help="repository root (default: the parent of tools/)")
  parser.add_argument("--no_deps_check", action="store_true",
                      help="do not compare imports with deps")
  args = parser.parse_args(argv)
  problems = check(args.root, deps_check=not args.no_deps_check)
  if problems:
    print("check_build_targets: %d problem(s) in %s:" %
          (len(problems), args.root))
    for problem in problems:
      print("  " + problem)
    return 1
  print("check_build_targets: OK: %d modules under %s are covered by BUILD "
        "targets" % (len(find_modules(args.root)), args.root))
  return 0


if __name__ == "__main__":
  sys.exit(main())
