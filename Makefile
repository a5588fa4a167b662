# The front door. `make generate` and `make test` are the two commands a fresh machine needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# A complete dev venv: every extra, at the versions of constraints-dev.txt.
EXTRAS := cli,mcp,fastmcp,pydantic-ai,postgresql,proxy,console,auth,otel,openai-agents,agent-framework,codegen,test,release,dev,bench,fuzz
SOURCES := $(wildcard src tests codegen bench)
TESTS ?=

.PHONY: venv generate check-generated bump lint reformat test test-slow test-all test-sdk-matrix \
	test-frameworks test-mcp1 bench \
	bench-reference fuzz fuzz-short conformance clean

# The venv is rebuilt only when pyproject.toml or constraints-dev.txt changes.
$(STAMP): pyproject.toml constraints-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]' \
		-c constraints-dev.txt
	touch $(STAMP)

venv: $(STAMP)

## generate: verify the schema pins, regenerate generated/, print the conformance summary
generate: $(STAMP)
	$(BIN)/python codegen/generate.py
	$(BIN)/python tests/conformance/summary.py

## check-generated: regenerate into a temporary folder and fail on any drift
check-generated: $(STAMP)
	$(BIN)/python codegen/generate.py --check

## bump: add a spec version in one step (schema/README.md): VERSION=YYYY-MM-DD SCHEMA=path/schema.json
##       [EXAMPLES=path/examples/] [SOURCE_COMMIT=sha]; vendors, pins, regenerates, records the
##       intake digests, prints the conformance summary and the checklist of what a person decides
bump: $(STAMP)
	$(BIN)/python codegen/bump.py --version "$(VERSION)" --schema "$(SCHEMA)" \
		$(if $(EXAMPLES),--examples "$(EXAMPLES)") \
		$(if $(SOURCE_COMMIT),--source-commit "$(SOURCE_COMMIT)")

## lint: ruff, black --check, mypy --strict on src/ and generated/
lint: $(STAMP)
	$(BIN)/ruff check $(SOURCES)
	$(BIN)/black --check --quiet $(SOURCES)
	$(BIN)/mypy

reformat: $(STAMP)
	$(BIN)/ruff check --fix $(SOURCES)
	$(BIN)/black --quiet $(SOURCES)

## test: drift check, lint, the short fuzz pass, then every test not marked `slow` on all cores
##       (pytest-xdist, a worker more than cores; whole-tool runs are `slow`). TESTS=expr narrows
##       the pytest run with -x -k (in one process, slow tests included) and skips the fuzz pass. The run ends with one
##       summary: the 10 slowest tests, the fuzz verdict, the wall time since make started against
##       the budget (CONTRIBUTING.md "The test budget") with the load average, pytest's counts.
FUZZ_LOG := .cache/fuzz/make-test.log
MAKE_STARTED := $(shell date +%s)
# One xdist worker more than the cores: many tests wait (on a server's start, a proxy's timers),
# and a third worker fills those waits (2 cores, 2026-12-02, a warm checkout: pytest 278 s with 3
# workers, 387 s with 2, 323 s with 4; a clean clone in CI, 3 workers: 394 s). Tests sharing
# one expensive fixture share a group (--dist loadgroup).
PYTEST_PARALLEL := -n $(shell echo $$(( $$(nproc) + 1 ))) --dist loadgroup
# The whole run's budget in seconds of wall time on 2 idle cores (the summary compares).
TEST_BUDGET := 300
# Bytecode is cached as Python does by default, whatever the caller's environment says: with
# PYTHONDONTWRITEBYTECODE set (as on the shared VM) every proxy, server and CLI process the
# suite starts compiled conduit_mcp again, and each xdist worker rewrote every test module's
# asserts (~5 s of CPU a worker). The caches are __pycache__ folders, git-ignored.
test test-slow: export PYTHONDONTWRITEBYTECODE :=
# The checks before pytest are single-threaded: they run side by side (-j3), each one's output
# kept together (--output-sync); any failure stops make test there.
test: $(STAMP)
	@$(MAKE) --no-print-directory -j3 --output-sync=target check-generated lint \
		$(if $(TESTS),,fuzz-short)
	$(if $(TESTS),,CONDUIT_FUZZ_VERDICT=$(FUZZ_LOG).verdict) CONDUIT_MAKE_STARTED=$(MAKE_STARTED) \
		$(if $(TESTS),,CONDUIT_TEST_BUDGET=$(TEST_BUDGET)) \
		$(BIN)/pytest $(if $(TESTS),-x -k "$(TESTS)",$(PYTEST_PARALLEL) -m "not slow" --durations=10)

## test-slow: only the tests marked `slow`: whole-tool runs (the build, twine check and a fresh venv
##            installing the wheel; the official conformance suite; mypy and pyright over the
##            user script) and long scenarios; and every hypothesis test again, with the
##            `thorough` profile (the full example counts; make test runs `quick`, a quarter:
##            tests/property/profiles.py), or the profile HYPOTHESIS_PROFILE names
test-slow: $(STAMP)
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-thorough} CONDUIT_MAKE_STARTED=$(MAKE_STARTED) \
		$(BIN)/pytest $(PYTEST_PARALLEL) -m "slow or hypothesis"

## test-all: make test, then the `slow` tests (CI runs both)
test-all: test test-slow

## test-sdk-matrix: tests/guard on the lowest and the newest SDK releases pyproject.toml allows,
##                  each in its own venv under .cache/sdk-matrix (tests/sdk_matrix.py)
test-sdk-matrix: $(STAMP)
	$(BIN)/python tests/sdk_matrix.py

## test-frameworks: tests/integrations with every agent framework installed (langchain and
##                  llama-index are heavy: their own venv under .cache/venv-frameworks)
FRAMEWORK_EXTRAS := langchain,llamaindex
FRAMEWORK_VENV := .cache/venv-frameworks
test-frameworks: $(STAMP)
	test -x $(FRAMEWORK_VENV)/bin/python || $(PYTHON) -m venv $(FRAMEWORK_VENV)
	$(FRAMEWORK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
		-e '.[test,mcp,fastmcp,openai-agents,agent-framework,$(FRAMEWORK_EXTRAS)]'
	$(FRAMEWORK_VENV)/bin/pytest -p no:cacheprovider tests/integrations

## test-mcp1: mcp 1.x clients under the guard (in process: ClientSession(*guard.wrap_streams(...));
##            and through conduit-mcp proxy), mcp 1.24.0 and 1.30.0 each in its own venv under
##            .cache/mcp1 (tests/integrations/test_mcp1.py; about 1 minute once the venvs exist)
test-mcp1: $(STAMP)
	$(BIN)/pytest -p no:cacheprovider -m mcp1 tests/integrations/test_mcp1.py

## fuzz-short: the bounded fuzz pass make test runs (5 s for each of the 6 targets, two
##             targets at a time): one verdict line, libFuzzer's own output in .cache/fuzz/make-test.log
fuzz-short: $(STAMP)
	$(BIN)/python tests/fuzz/run.py --seconds 30 --target all --log $(FUZZ_LOG) --jobs 2

## fuzz: coverage-guided fuzzing of the JSON-bytes entry points with atheris, FUZZ_SECONDS in all
##       (default 60, split over the targets); a crash lands in tests/fuzz/crashes/ (replayed by make test)
FUZZ_SECONDS ?= 60
fuzz: $(STAMP)
	$(BIN)/python tests/fuzz/run.py --seconds $(FUZZ_SECONDS) --target all

## conformance: the official MCP conformance suite's client scenarios (installs Node 22 and the suite under .cache/)
conformance: $(STAMP)
	$(BIN)/python -m tests.conformance.client.runner

## bench: side-by-side benchmark against the peers (~2 minutes), then the side rows (the stdio
##        proxy, bench/proxy.py, ~1 minute; the HTTP proxy, bench/proxy_http.py; the proxy
##        against peer proxies, bench/peers.py, ~4 minutes, installing the peers under
##        .cache/bench-peers/ on first use); writes .cache/bench/results.json (untracked);
##        prints the load average and calls no row met under load > 1.5
bench: $(STAMP)
	$(BIN)/python bench/run.py

## bench-reference: the same run, on purpose also rewriting the committed bench/results.json
bench-reference: $(STAMP)
	$(BIN)/python bench/run.py --reference

clean:
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache .hypothesis dist
