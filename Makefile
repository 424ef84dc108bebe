# The two commands of the README:
#   make demo   sets up .venv (pip install -e '.[test]'), trains the demo config on the real corpus,
#               evaluates on STS/SICK, exports, and prints where the export is.
#   make test   sets up .venv and runs the test suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DATA_DIR ?= $(or $(SENTZOO_DATA_DIR),../shared/data)
RUN_DIR ?= runs/siamese_cbow_demo
# The commands keep TensorFlow's INFO logging quiet themselves (common/console.py);
# SENTZOO_VERBOSE=1 make demo shows it.

.PHONY: setup demo zoo test bazel-test clean

# The project installs itself (pyproject.toml) in editable mode, with its
# dependencies (requirements.txt) and pytest: `import sentzoo` then works
# from any folder, and the checkout's files are what runs.
$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
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

test: setup
	SENTZOO_DATA_DIR=$(DATA_DIR) $(PY) -m pytest -q

# `bazel test //...` (about 10-20 min on 2 cores from a cold cache), then
# `bazel shutdown` so that no Bazel server stays behind; exits with the test
# status. The shared folder is the parent of SENTZOO_DATA_DIR (baselines/).
bazel-test: setup
	status=0; \
	PATH=$(abspath $(VENV))/bin:$$PATH SENTZOO_DATA_DIR=$(abspath $(DATA_DIR)) \
	    bazel test //... --test_output=errors || status=$$?; \
	bazel shutdown; \
	exit $$status

clean:
	rm -rf $(VENV) runs
