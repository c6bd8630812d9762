# Attention, Measured: the two commands are `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.requirements-installed
NOTEBOOKS := $(sort $(wildcard chapters/*/*.ipynb))
PORT   ?= 8000

.PHONY: book test test-lib test-notebooks test-build test-browser bench serve lab refresh clean

# The virtual environment, made on first use and again whenever the pins change.
$(READY): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

book: $(READY)
	$(BIN)/jupyter-book build .
	@echo "The book is in _build/html: open _build/html/index.html, or run 'make serve'."

test: test-lib test-notebooks test-build test-browser

test-lib: $(READY)
	$(BIN)/python -m pytest tests --ignore=tests/browser

# nbval re-runs every notebook and compares its printed outputs with the stored ones.
test-notebooks: $(READY)
	$(BIN)/python -m pytest -p no:cacheprovider --nbval --nbval-current-env \
	    --nbval-sanitize-with nbval_sanitize.cfg $(NOTEBOOKS)

# A strict build from scratch: warnings are errors, and no cached or stale page hides one.
test-build: $(READY)
	rm -rf _build/.doctrees _build/html
	$(BIN)/jupyter-book build -W -n --keep-going --all .

# Every built page in headless Chromium (Debian's `chromium`, or $$CHROMIUM), offline.
test-browser: $(READY)
	$(BIN)/python -m pytest tests/browser

bench: $(READY)
	$(BIN)/python bench/bench_lesson.py
	$(BIN)/python bench/bench_udhr.py
	$(BIN)/python bench/bench_taxonomy.py

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
