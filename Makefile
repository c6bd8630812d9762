# Attention, Measured: the two commands are `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.requirements-installed
# A second environment with only what a reader installs (the package and a kernel), as on Colab.
READER := .venv-reader
READER_READY := $(READER)/.requirements-installed
# The package as the reader's environment last installed it, from these files. Their list is kept
# in _build/package-files.txt, rewritten only when it changes, so that a module added to lib or
# deleted from it reinstalls the package too (Python's __pycache__ folders do not count).
READER_PACKAGE := $(READER)/.package-installed
PACKAGE_LIST := $(sort $(shell find lib -type f -not -path '*/__pycache__/*' -not -path '*.egg-info/*'))
$(shell mkdir -p _build && echo '$(PACKAGE_LIST)' | cmp -s - _build/package-files.txt \
    || echo '$(PACKAGE_LIST)' > _build/package-files.txt)
PACKAGE_FILES := pyproject.toml $(PACKAGE_LIST) _build/package-files.txt
NOTEBOOKS := intro.ipynb $(sort $(wildcard chapters/*/*.ipynb))
PORT   ?= 8000
# Trained models are kept here between runs, filed under the hash of the code and the arithmetic.
export ATTENTION_MEASURED_CACHE ?= $(CURDIR)/_build/cache
# The two other processors of `make test-cpus`: OpenBLAS's SSE-only kernels with numpy without
# AVX2 on one thread (Nehalem), and AMD's AVX2 kernels with numpy without AVX-512 (Zen).
NEHALEM := OPENBLAS_CORETYPE=Nehalem NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR" \
           OPENBLAS_NUM_THREADS=1 ATTENTION_MEASURED_CACHE=$(CURDIR)/_build/cache-nehalem
ZEN     := OPENBLAS_CORETYPE=Zen NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" \
           ATTENTION_MEASURED_CACHE=$(CURDIR)/_build/cache-zen

.PHONY: book test test-lib test-js test-notebooks test-cpus test-nudged test-build test-browser bench probe serve lab refresh clean

# The virtual environment, made on first use and again whenever the pins change. --no-compile:
# Python compiles a module when it is first imported and keeps its bytecode, so pip need not
# compile every file of every package in advance (the install takes 25 s instead of 41 here).
# That keeping is why PYTHONDONTWRITEBYTECODE, which many containers set, is unset for every
# command here: with it, each process compiles again every module it imports (matplotlib's pyplot
# takes 1.5 s to import instead of 0.4, in each of nbval's 28 kernels).
unexport PYTHONDONTWRITEBYTECODE
$(READY): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile -r requirements.txt
	@touch $@

# The reader's environment: numpy, matplotlib, ipywidgets, a kernel and the package with its own
# dependencies, at the versions requirements.txt pins, and nothing else.
$(READER_READY): requirements.txt pyproject.toml
	@test -x $(READER)/bin/python || $(PYTHON) -m venv $(READER)
	@mkdir -p _build && sed '/^-e/d' requirements.txt > _build/constraints.txt
	$(READER)/bin/python -m pip install --quiet --disable-pip-version-check --no-compile \
	    -c _build/constraints.txt \
	    numpy matplotlib ipywidgets ipykernel setuptools
	$(READER)/bin/python -m ipykernel install --sys-prefix --name attention-measured-reader \
	    --display-name "attention-measured (reader)" > /dev/null
	@touch $@

book: $(READY)
	$(BIN)/jupyter-book build .
	@echo "The book is in _build/html: open _build/html/index.html, or run 'make serve'."

# On a first run the two environments install side by side (pip waits on the disk as much as on
# a core), with the package in the reader's; then every check runs in turn.
test:
	@$(MAKE) --no-print-directory -j2 $(READY) $(READER_PACKAGE)
	@$(MAKE) --no-print-directory test-lib test-js test-notebooks test-browser

# Lint and format checks, then pytest for the library (every backward pass by finite differences).
test-lib: $(READY)
	$(BIN)/ruff check lib tests bench tools _ext
	$(BIN)/ruff format --check lib tests bench tools _ext
	$(BIN)/python -m pytest -n 2 tests --ignore=tests/browser

# The JavaScript twins of the book's models (lib/attention_measured/book/js) against the library:
# the library writes what they must reproduce, then Node's own test runner checks it.
test-js: $(READY)
	@command -v node > /dev/null || { echo "test-js needs Node.js 18 or later (node) on the PATH"; exit 1; }
	rm -rf _build/js-fixtures && $(BIN)/python tools/js_fixtures.py _build/js-fixtures
	ATTENTION_JS_FIXTURES=$(CURDIR)/_build/js-fixtures node --test tests/js/

# nbval re-runs every notebook and compares its printed outputs with the stored ones. Each notebook
# runs alone in an empty folder, in the reader's environment, with the package installed from this
# checkout as pip installs it (never editable, so no `lib` folder is on the path). A kernel that dies
# while starting is started again, with what it printed shown (tools/nbval_kernel.py).
test-notebooks: $(READY) $(READER_PACKAGE)
	rm -rf _build/alone && $(BIN)/python tools/alone.py _build/alone $(NOTEBOOKS)
	JUPYTER_PATH=$(CURDIR)/$(READER)/share/jupyter $(BIN)/python -m pytest -p no:cacheprovider -n 2 \
	    --dist loadscope -p tools.nbval_kernel --nbval --nbval-kernel-name attention-measured-reader \
	    --nbval-sanitize-with nbval_sanitize.cfg _build/alone

# The same check on two other processors' arithmetic (a job of its own in the GitHub workflow).
test-cpus: $(READER_READY)
	$(MAKE) test-notebooks $(NEHALEM)
	$(MAKE) test-notebooks $(ZEN)

# The same check with every model's initial weights nudged by a relative 1e-12 (params.initialiser),
# twice: an output that survives is a property of the model, not of one processor's last bits.
test-nudged: $(READER_READY)
	$(MAKE) test-notebooks ATTENTION_MEASURED_NUDGE=1
	$(MAKE) test-notebooks ATTENTION_MEASURED_NUDGE=2

# A strict build from scratch: warnings are errors, and no cached or stale page hides one.
test-build: $(READY)
	rm -rf _build/.doctrees _build/html
	$(BIN)/jupyter-book build -W -n --keep-going --all .

# Every page of the build just made, in headless Chromium, offline; the browser is installed
# when this machine has none (tools/browser.py says how).
test-browser: test-build
	CHROMIUM="$$($(BIN)/python tools/browser.py)" $(BIN)/python -m pytest -n 2 tests/browser

# The package installed into the reader's environment as pip installs it, again whenever a file of
# it changes.
$(READER_PACKAGE): $(READER_READY) $(PACKAGE_FILES)
	@rm -rf build  # setuptools' staging folder would carry modules since deleted from lib
	$(READER)/bin/python -m pip uninstall --quiet --yes attention-measured 2>/dev/null || true
	$(READER)/bin/python -m pip install --quiet --disable-pip-version-check --no-compile \
	    --no-build-isolation -c _build/constraints.txt .
	@touch $@

# The argument probe (tools/probe.py): the tests run once while every public callable's first
# valid call is recorded, then each is called again with one bad argument at a time; the counts
# print at the end and every call that was not refused by name goes to _build/probe.json.
probe: $(READY)
	PYTHONPATH=tools $(BIN)/python -m pytest -p probe tests --ignore=tests/browser -q -n 0 \
		--probe-report=_build/probe.json

bench: $(READY)
	$(BIN)/python bench/bench_lesson.py
	$(BIN)/python bench/bench_udhr.py
	$(BIN)/python bench/bench_taxonomy.py
	$(BIN)/python bench/bench_allocator.py
	$(BIN)/python bench/bench_seq2seq.py
	$(BIN)/python bench/bench_explanations.py
	$(BIN)/python bench/bench_twins.py
	$(BIN)/python bench/bench_torch.py
	test -f _build/js-fixtures/translators.json || $(BIN)/python tools/js_fixtures.py _build/js-fixtures
	node bench/bench_js.mjs

serve:
	@test -d _build/html || { echo "No built book yet: run 'make book' first."; exit 1; }
	@echo "Serving the book at http://127.0.0.1:$(PORT)/ (Ctrl-C to stop)"
	$(PYTHON) -m http.server --bind 127.0.0.1 --directory _build/html $(PORT)

lab: $(READY)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-lab.txt
	$(BIN)/jupyter lab chapters

# Re-execute every notebook in place, top to bottom, storing outputs and widget state.
refresh: $(READY)
	$(BIN)/python tools/refresh.py $(NOTEBOOKS)

clean:
	rm -rf _build
