# Set-up on a fresh machine: `make demo` (solve + report the default small variant), `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast bench reports clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/pyramids solve override --preset 3x3
	$(BIN)/pyramids report override --preset 3x3

test: $(STAMP)
	$(BIN)/pytest -q

test-fast: $(STAMP)
	$(BIN)/pytest -q -m "not slow"

bench: $(STAMP)
	$(BIN)/python -m solver.bench

reports: $(STAMP)
	$(BIN)/python -m analysis.shipped

clean:
	rm -rf tables .pytest_cache
