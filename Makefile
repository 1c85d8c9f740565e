# Two entry points for a fresh machine (Python 3.11 + pip): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.berth-installed

.PHONY: setup demo test lint typecheck unit clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/berth tools install
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/berth demo

lint: setup
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/python -m pytest -n 2 -q

test: lint typecheck unit

clean:
	rm -rf $(VENV) .berth build *.egg-info src/*.egg-info
