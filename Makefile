# Set-up on a fresh machine: `make demo` (solve + report the default small variant), `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-all test-fast bench bench-cluster reports clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,cluster]'
	touch $(STAMP)

# the demo's report goes to demo-reports/ (ignored by git): the shipped copy in reports/ stays as shipped
demo: $(STAMP)
	$(BIN)/pyramids solve override --preset 3x3
	$(BIN)/pyramids report override --preset 3x3 --reports demo-reports

# the suite CI runs: everything but the checks marked slow, the test files shared out over both
# cores (pytest-xdist; a file's tests stay in one process, so its module fixtures are built once).
# Measured on this project's 2-core machine: see the README, "Tests"
test: $(STAMP)
	$(BIN)/pytest -q -m "not slow" -n 2 --dist loadfile

test-fast: test

# also the slow checks (every preset through every command, every README command, the larger
# agreement checks): about 40 minutes on 2 cores, one test at a time (the larger checks use both
# cores and up to several GB each)
test-all: $(STAMP)
	$(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/python -m solver.bench
	$(BIN)/python -m solver.bench_players

# the task layer on a local 2-worker Dask cluster (see the README, "More than one machine")
bench-cluster: $(STAMP)
	$(BIN)/python -m solver.bench_cluster

reports: $(STAMP)
	$(BIN)/python -m analysis.shipped

clean:
	rm -rf tables .pytest_cache
