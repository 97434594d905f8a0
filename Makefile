# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
MONITOR := $(VENV)/bin/monitor
# Pinned dependencies (pip-tools): the image installs the runtime lock, CI the development one.
RUNTIME_LOCK := requirements/runtime.txt
DEV_LOCK := requirements/dev.txt
SOURCES := monitor tests bench examples
# Extra pytest arguments, e.g. make test PYTEST_ARGS='tests/test_cli.py -x'.
PYTEST_ARGS ?=

.PHONY: demo test lint typecheck services examples bench lock clean

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	touch $@

## What the demo needs: the runtime lock and the package (no dev extra).
$(VENV)/.runtime: $(VENV)/.created pyproject.toml $(RUNTIME_LOCK)
	$(PY) -m pip install -q -r $(RUNTIME_LOCK)
	$(PY) -m pip install -q --no-deps -e .
	touch $@

## What the tests need besides: the development lock (the dev extra, pinned).
$(VENV)/.dev: $(VENV)/.runtime $(DEV_LOCK)
	$(PY) -m pip install -q -r $(DEV_LOCK)
	touch $@

## Run the main job on the bundled examples with the embedded default (no servers: ./monitor.db).
## Exit status 3 means "finished, some lines skipped": the examples hold two bad lines on purpose.
demo: $(VENV)/.runtime
	$(MONITOR) replay examples/sessions.jsonl.gz || test $$? -eq 3
	$(MONITOR) sessions --limit 5
	@echo
	@echo "The flags are in ./monitor.db. Try next (the command is $(MONITOR);"
	@echo "'. $(VENV)/bin/activate' puts it on PATH as plain 'monitor'):"
	@echo "  $(MONITOR) flags --session ex-0001-a3882a8a"
	@echo "  $(MONITOR) flags --compactor sum-v2.0-rc1 --signal repeated_tool_call --limit 5"
	@echo "  $(MONITOR) sessions --agent codex-cli --limit 5"
	@echo "  $(MONITOR) sample --week 2026-W48"
	@echo "  $(MONITOR) --help          (the README's 'After make demo' lists these too)"

## Install what the tests need, start the services they use, lint, type-check, run the suite.
test: $(VENV)/.dev services
	$(VENV)/bin/ruff check $(SOURCES)
	$(VENV)/bin/ruff format --check $(SOURCES)
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest -q $(PYTEST_ARGS)

services:
	bash .ci/services

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check $(SOURCES)
	$(VENV)/bin/ruff format --check $(SOURCES)

typecheck: $(VENV)/.dev
	$(VENV)/bin/mypy

examples: $(VENV)/.runtime
	$(PY) examples/generate.py --out examples/sessions.jsonl.gz

## Re-resolve both locks from pyproject.toml (pip-tools, installed on demand). The runtime lock
## is constrained by the development one, so the two never disagree on a version.
lock: $(VENV)/.created
	$(PY) -m pip install -q pip-tools
	$(VENV)/bin/pip-compile -q --extra dev --extra semantic --strip-extras --no-emit-index-url \
		--no-emit-find-links -o $(DEV_LOCK) pyproject.toml
	$(VENV)/bin/pip-compile -q --strip-extras --no-emit-index-url --no-emit-find-links \
		-c $(DEV_LOCK) -o $(RUNTIME_LOCK) pyproject.toml

clean:
	rm -rf $(VENV) demo.db monitor.db .pytest_cache .mypy_cache .ruff_cache
