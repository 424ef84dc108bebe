# The two commands of the README:
#   make demo   sets up .venv (sentzoo with every extra, editable), trains the demo config on the
#               real corpus, evaluates on STS/SICK, exports, and prints where the export is.
#   make test   sets up .venv, checks the imports (mypy) and runs the test suite (pytest).
#   make docs   writes every generated page again from the committed records.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DATA_DIR ?= $(or $(SENTZOO_DATA_DIR),../shared/data)
RUN_DIR ?= runs/siamese_cbow_demo
# pytest workers (pytest-xdist), one per core of the CI machine.
TEST_WORKERS ?= 2
# The commands keep TensorFlow's INFO logging quiet themselves (common/console.py);
# SENTZOO_VERBOSE=1 make demo shows it.

.PHONY: setup demo zoo docs test typecheck bazel-check clean

# The checkout installed in editable mode (`import sentzoo` works from any
# folder, and the checkout's files are what runs) with every extra
# (pyproject.toml: train, serve, hub, plots, test), at the versions CI tests
# (requirements.txt, as pip constraints).
$(VENV)/.installed: requirements.txt pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c requirements.txt -e '.[test]'
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(PY) -m trainers.siamese_cbow --flagfile=configs/siamese_cbow_demo.flags \
	    --data_dir=$(DATA_DIR) --model_dir=$(RUN_DIR)

# Every model of the catalogue (sentzoo/catalogue.py), each trained resumably
# (rerun to resume) and installed in the store, $SENTZOO_HOME (default
# ~/.cache/sentzoo); `sentzoo models` lists them. Days on 2 CPU cores: the
# book-corpus Sent2Vec models take most of it.
zoo: setup
	SENTZOO_DATA_DIR=$(DATA_DIR) $(PY) -m sentzoo.cli train --all

# Every generated page of docs/ (and the README's table) written again from
# the committed records, docs/records/ (lab/docs.py): nothing is trained or
# evaluated. lab/docs_test.py checks that the committed pages are what this
# writes.
docs: setup
	SENTZOO_DATA_DIR=$(DATA_DIR) $(PY) -m lab.docs

test: typecheck
	SENTZOO_DATA_DIR=$(DATA_DIR) $(PY) -m pytest -q -n $(TEST_WORKERS) --durations=30

# Every import of the library resolves (pyproject.toml's [tool.mypy]).
typecheck: setup
	$(PY) -m mypy -p sentzoo

# The Bazel build graph, as CI checks it: every target builds
# (`bazel build //...`), and one test target per folder runs under Bazel
# (the whole suite runs under pytest in `make test`: running every test
# file twice would double CI's time). Then `bazel shutdown`, so that no
# Bazel server stays behind. The shared folder is the parent of
# SENTZOO_DATA_DIR (baselines/).
BAZEL_TESTS := //common:cli_test //docs:pages_test \
    //evaluation:sts_data_test //export:signature_info_test \
    //inputs:vocabulary_test //layers:masked_average_test \
    //models:paraphrase_margin_loss_test //sentzoo:catalogue_test \
    //tests:layer_test_case_test //tools:check_build_targets_test \
    //trainers:config_test
bazel-check: setup
	status=0; \
	PATH=$(abspath $(VENV))/bin:$$PATH SENTZOO_DATA_DIR=$(abspath $(DATA_DIR)) \
	    bazel build //... && \
	PATH=$(abspath $(VENV))/bin:$$PATH SENTZOO_DATA_DIR=$(abspath $(DATA_DIR)) \
	    bazel test $(BAZEL_TESTS) || status=$$?; \
	bazel shutdown; \
	exit $$status

clean:
	rm -rf $(VENV) runs .mypy_cache
