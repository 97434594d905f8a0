# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck services examples bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

## Run the main job on the bundled examples with the embedded default (no servers: SQLite file).
demo: $(STAMP)
	rm -f demo.db
	$(VENV)/bin/monitor replay examples/sessions.jsonl.gz --db sqlite:///demo.db
	$(VENV)/bin/monitor sessions --db sqlite:///demo.db --limit 5

## Install what the tests need, start the services they use, lint, type-check, run the suite.
test: $(STAMP) services
	$(VENV)/bin/ruff check monitor tests bench examples
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest -q

services:
	bash .ci/services

lint: $(STAMP)
	$(VENV)/bin/ruff check monitor tests bench examples
	$(VENV)/bin/ruff format --check monitor tests bench examples

typecheck: $(STAMP)
	$(VENV)/bin/mypy

examples: $(STAMP)
	$(PY) examples/generate.py --out examples/sessions.jsonl.gz

clean:
	rm -rf $(VENV) demo.db monitor.db .pytest_cache .mypy_cache .ruff_cache
