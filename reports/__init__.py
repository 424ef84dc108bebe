"""Results pages, tables and the papers' numbers, built on `evaluation/`
(which never imports this package: tools/import_graph_test.py checks it)."""

# One module per file, and the folder's own path (sentzoo/__init__.py).
import sentzoo  # pylint: disable=g-bad-import-order
__path__ = sentzoo._subpackage_path(__name__, __path__)  # pylint: disable=protected-access
