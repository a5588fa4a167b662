# The front door. `make generate` and `make test` are the two commands a fresh machine needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
EXTRAS := codegen,test,dev,bench,fuzz,postgresql,integrations
SOURCES := $(wildcard src tests codegen bench)
TESTS ?=

.PHONY: venv generate check-generated lint reformat test bench bench-reference fuzz fuzz-short conformance clean

# The venv is rebuilt only when pyproject.toml changes.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]'
	touch $(STAMP)

venv: $(STAMP)

## generate: verify the schema pins, regenerate generated/, print the conformance summary
generate: $(STAMP)
	$(BIN)/python codegen/generate.py
	$(BIN)/python tests/conformance/summary.py

## check-generated: regenerate into a temporary folder and fail on any drift
check-generated: $(STAMP)
	$(BIN)/python codegen/generate.py --check

## lint: ruff, black --check, mypy --strict on src/ and generated/
lint: $(STAMP)
	$(BIN)/ruff check $(SOURCES)
	$(BIN)/black --check --quiet $(SOURCES)
	$(BIN)/mypy

reformat: $(STAMP)
	$(BIN)/ruff check --fix $(SOURCES)
	$(BIN)/black --quiet $(SOURCES)

## test: everything (TESTS=expr narrows the pytest run with -x -k and skips the fuzz pass);
##       the fuzz pass's verdict is repeated at the end of pytest's summary
FUZZ_LOG := .cache/fuzz/make-test.log
test: $(STAMP) check-generated lint $(if $(TESTS),,fuzz-short)
	$(if $(TESTS),,CONDUIT_FUZZ_VERDICT=$(FUZZ_LOG).verdict) $(BIN)/pytest $(if $(TESTS),-x -k "$(TESTS)",)

## fuzz-short: the bounded fuzz pass make test runs (30 s over all targets): one verdict line,
##             libFuzzer's own output in .cache/fuzz/make-test.log
fuzz-short: $(STAMP)
	$(BIN)/python tests/fuzz/run.py --seconds 30 --target all --log $(FUZZ_LOG)

## fuzz: coverage-guided fuzzing of the JSON-bytes entry points with atheris, FUZZ_SECONDS in all
##       (default 60, split over the targets); a crash lands in tests/fuzz/crashes/ (replayed by make test)
FUZZ_SECONDS ?= 60
fuzz: $(STAMP)
	$(BIN)/python tests/fuzz/run.py --seconds $(FUZZ_SECONDS) --target all

## conformance: the official MCP conformance suite's client scenarios (installs Node 22 and the suite under .cache/)
conformance: $(STAMP)
	$(BIN)/python -m tests.conformance.client.runner

## bench: side-by-side benchmark against the peers (~2 minutes); writes .cache/bench/results.json
##        (untracked); prints the load average and calls no row met under load > 1.5
bench: $(STAMP)
	$(BIN)/python bench/run.py

## bench-reference: the same run, on purpose also rewriting the committed bench/results.json
bench-reference: $(STAMP)
	$(BIN)/python bench/run.py --reference

clean:
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache .hypothesis
