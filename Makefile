# One entry point for set-up, demos, tests and benchmarks.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q -c requirements/constraints.txt
STAMP := $(VENV)/.installed

.PHONY: env demo test test-slow bench lint clean clean-kernels

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml requirements/constraints.txt
	$(PIP) torch==2.13.0
	$(PIP) -e ".[dev,progress,topology,fast]"
	touch $(STAMP)

env: $(STAMP)

## Run the main demos on their defaults; figures and numbers go to results/.
demo: $(STAMP)
	$(BIN)/python demos/run_all.py --out results

## The default test suite (slow acceptance checks excluded), on two processes (a file per
## process at a time, so each module's fixtures are built once).
test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

## The slow acceptance checks.
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow -n 2 --dist loadfile

## Benchmarks (the flows one compares with TorchCFM from the optional bench extra).
bench: $(STAMP)
	$(PIP) -e ".[bench]"
	$(BIN)/python bench/run_all.py --out results/bench

lint: $(STAMP)
	$(BIN)/ruff check neurodyn flows demos tests bench

clean: clean-kernels
	rm -rf $(VENV) results

## numba's cached kernels (a kernel's cache does not notice edits to the helpers it calls).
clean-kernels:
	find neurodyn flows -name '*.nbi' -delete -o -name '*.nbc' -delete
