"""Tests for common.resources."""

import importlib
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import textwrap

from absl.testing import absltest
import numpy as np

from sentzoo.common import resources


class ResourcesTest(absltest.TestCase):

  def test_status_fields(self):
    with tempfile.NamedTemporaryFile("w", suffix="status", delete=False) as f:
      f.write("Name:\tpython\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n")
    self.addCleanup(os.remove, f.name)
    self.assertEqual(resources.status_mb("VmHWM", f.name), 200.0)
    self.assertEqual(resources.status_mb("VmRSS", f.name), 100.0)
    self.assertIsNone(resources.status_mb("VmSwap", f.name))
    self.assertIsNone(resources.status_mb("VmRSS", f.name + ".absent"))

  def test_cpu_model(self):
    folder = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, folder)
    cpuinfo = os.path.join(folder, "cpuinfo")
    with open(cpuinfo, "w") as f:
      f.write("processor\t: 0\nvendor_id\t: X\n"
              "model name\t: Some CPU @ 2.00GHz \nflags\t\t: a b\n")
    self.assertEqual(resources.cpu_model(cpuinfo), "Some CPU @ 2.00GHz")
    self.assertEqual(resources.cpu_model(os.path.join(folder, "none")),
                     platform.machine())
    self.assertTrue(resources.cpu_model())

  def test_peak_follows_an_allocation(self):
    if resources.current_rss_mb() is None:
      self.skipTest("no /proc/self/status")
    resources.reset_peak_rss()
    before = resources.peak_rss_mb()
    block = np.ones(64 << 20, np.uint8)  # 64 MB, touched
    grown = resources.peak_rss_mb()
    self.assertGreater(grown - before, 50)
    self.assertGreaterEqual(grown, resources.current_rss_mb())
    del block
    if resources.reset_peak_rss():
      self.assertLess(resources.peak_rss_mb(), grown - 50)


# Eight threads that malloc at the same time, then the number of glibc
# arenas (malloc_info's <heap> elements) printed.
_COUNT_ARENAS = textwrap.dedent("""
    import ctypes, os, sys, tempfile, threading
    from sentzoo.common import resources
    if sys.argv[1] == "limit":
      print(resources.limit_malloc_arenas(2))
    barrier = threading.Barrier(8)
    def work():
      barrier.wait()
      blocks = [bytearray(200_000) for _ in range(20)]
      barrier.wait()
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    libc = ctypes.CDLL("libc.so.6")
    libc.fopen.restype = ctypes.c_void_p
    path = tempfile.mktemp()
    f = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(f))
    libc.fclose(ctypes.c_void_p(f))
    print(open(path).read().count("<heap nr="))
    os.remove(path)
""")


class MallocArenasTest(absltest.TestCase):

  def _arenas(self, mode, **environ):
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run(
        [sys.executable, "-c", _COUNT_ARENAS, mode], capture_output=True,
        text=True, timeout=120, cwd=repo,
        env=dict(env, PYTHONPATH=repo, **environ), check=True)
    return done.stdout.split()

  def test_threads_share_the_capped_arenas(self):
    if not sys.platform.startswith("linux"):
      self.skipTest("glibc only")
    (default,) = self._arenas("default")
    if int(default) <= 2:
      self.skipTest(f"{default} arenas without the cap: nothing to show")
    self.assertEqual(self._arenas("limit"), ["True", "2"])

  def test_the_users_setting_wins(self):
    self.assertEqual(self._arenas("limit", MALLOC_ARENA_MAX="4")[0], "False")


  def test_freed_memory_between_live_blocks_goes_back(self):
    if resources.current_rss_mb() is None or not sys.platform.startswith(
        "linux"):
      self.skipTest("glibc and /proc only")
    code = textwrap.dedent("""
        from sentzoo.common import resources
        blocks = []
        for _ in range(1000):  # 100 MB, each block below a small live one
          blocks += [bytearray(100_000), bytearray(600)]
        small = blocks[1::2]
        del blocks
        before = resources.current_rss_mb()
        print(resources.release_free_memory(),
              before - resources.current_rss_mb())
    """)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    released, dropped_mb = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True,
        timeout=120, cwd=repo, env=dict(os.environ, PYTHONPATH=repo),
        check=True).stdout.split()
    self.assertEqual(released, "True")
    self.assertGreater(float(dropped_mb), 50)


# Packages for the finder's test: pkg_a's modules import opt_b if they can;
# other.py imports it too.
_IMPORTER_FILES = {
    "pkg_a/__init__.py": "from pkg_a import inner\n",
    "pkg_a/inner.py": ("try:\n  import opt_b\nexcept ImportError:\n"
                       "  opt_b = None\n"),
    "opt_b/__init__.py": "VALUE = 1\n",
    "other.py": "import opt_b\n",
}
_IMPORT_PKG_A = textwrap.dedent("""
    import inspect, sys
    from sentzoo.common import resources
    if sys.argv[1] == "opt_b_first":
      import opt_b
    resources.skip_unused_optional_imports({"pkg_a": ("opt_b",)})
    resources.skip_unused_optional_imports({"pkg_a": ()})  # changes nothing
    import pkg_a
    print(pkg_a.inner.opt_b is None, "opt_b" in sys.modules,
          "opt_b = None" in inspect.getsource(pkg_a.inner))
    import other
    print(other.opt_b.VALUE)
""")


class SkipUnusedOptionalImportsTest(absltest.TestCase):

  def _run(self, *args, code=None, pythonpath=()):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run(
        [sys.executable, *(["-c", code] if code else []), *args],
        capture_output=True, text=True, timeout=300, cwd=repo, check=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join((repo, *pythonpath)))
    ).stdout.split()

  def test_hidden_from_the_importers_modules_only(self):
    packages = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, packages)
    for name, text in _IMPORTER_FILES.items():
      os.makedirs(os.path.dirname(os.path.join(packages, name)), exist_ok=True)
      with open(os.path.join(packages, name), "w") as f:
        f.write(text)
    self.assertEqual(
        self._run("hide", code=_IMPORT_PKG_A, pythonpath=[packages]),
        ["True", "False", "True", "1"])
    self.assertEqual(
        self._run("opt_b_first", code=_IMPORT_PKG_A, pythonpath=[packages]),
        ["False", "True", "True", "1"])

  def test_a_sentzoo_command_loads_keras_without_them(self):
    optional = sorted({name for names in
                       resources.UNUSED_OPTIONAL_IMPORTS.values()
                       for name in names})
    missing = [name for name in optional
               if importlib.util.find_spec(name) is None]
    if missing:
      self.skipTest(f"not installed: {missing}")
    # `python -m sentzoo.x` runs sentzoo/__init__.py's set-up for commands.
    self.assertEqual(
        self._run("-m", "sentzoo.common.resources_test", "import_keras",
                  *optional),
        ["False"] * len(optional) + ["True"] * len(optional))


def _import_keras(optional):
  """Imports keras, then prints whether each package of `optional` was
  imported by it, and whether it imports after."""
  import keras  # pylint: disable=g-import-not-at-top,unused-import
  loaded = [name in sys.modules for name in optional]
  for name in optional:
    importlib.import_module(name)
  print(*loaded, *[name in sys.modules for name in optional])


if __name__ == "__main__":
  if sys.argv[1:2] == ["import_keras"]:
    _import_keras(sys.argv[2:])
  else:
    absltest.main()
