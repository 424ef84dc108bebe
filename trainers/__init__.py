"""Trainers (`python -m trainers.<model>`) and their train steps."""

# One module per file, and the folder's own path (sentzoo/__init__.py).
import sentzoo  # pylint: disable=g-bad-import-order
__path__ = sentzoo._subpackage_path(__name__, __path__)  # pylint: disable=protected-access
