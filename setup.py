"""The one packaging rule pyproject.toml cannot state: the wheel leaves out
the tests, the `*_test.py` files beside the modules they test."""

import setuptools
from setuptools.command import build_py


class BuildPyWithoutTests(build_py.build_py):

  def find_package_modules(self, package, package_dir):
    return [(pkg, module, path) for pkg, module, path
            in super().find_package_modules(package, package_dir)
            if not module.endswith("_test")]


setuptools.setup(cmdclass={"build_py": BuildPyWithoutTests})
