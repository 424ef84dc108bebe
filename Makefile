# The two commands of the README:
#   make demo   sets up .venv, trains the demo config on the real corpus,
#               evaluates on STS/SICK, exports, and prints where the export is.
#   make test   sets up .venv and runs the test suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DATA_DIR ?= $(or $(SENTZOO_DATA_DIR),../shared/data)
RUN_DIR ?= runs/siamese_cbow_demo
export TF_CPP_MIN_LOG_LEVEL ?= 2

.PHONY: setup demo test bazel-test clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(PY) -m trainers.siamese_cbow --flagfile=configs/siamese_cbow_demo.flags \
	    --data_dir=$(DATA_DIR) --model_dir=$(RUN_DIR)

test: setup
	SENTZOO_DATA_DIR=$(DATA_DIR) $(PY) -m pytest -q

bazel-test: setup
	PATH=$(abspath $(VENV))/bin:$$PATH SENTZOO_DATA_DIR=$(abspath $(DATA_DIR)) \
	    bazel test //... --test_output=errors

clean:
	rm -rf $(VENV) runs
