"""Results pages, tables and paper numbers, built on `sentzoo.evaluation`.

The report generators (`python -m reports.results_page`, `reports.sts_tables`,
`reports.senteval_tables`, `reports.charagram_results`,
`reports.hybrid_table`, `reports.siamese_cbow_ablation`,
`reports.word_norms`) and what only they need: the papers' numbers
(`paper_numbers`), baseline result pages (`baselines`), comparisons with
reference columns. The metrics, data readers and evaluators they call live in
`evaluation/`, which never imports this package
(tools/import_graph_test.py checks the direction).
"""

# One module per file, and the folder's own path (sentzoo/__init__.py).
import sentzoo  # pylint: disable=g-bad-import-order
__path__ = sentzoo._subpackage_path(__name__, __path__)  # pylint: disable=protected-access
