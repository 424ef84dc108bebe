"""Repository tools (run from the repository root, e.g. `python tools/check_build_targets.py`).

Not part of the `sentzoo` package, nor of its wheel.
"""
