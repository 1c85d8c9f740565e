# Two entry points for a fresh machine (Python 3.11 + pip): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.berth-installed

MIN_VENV := .venv-minimum
# A subset of the suite that exercises every dependency (YAML, CLI, terminal output, numpy scheduling, the official
# client against the embedded cluster, certificates, metrics) at the lowest versions pyproject.toml allows.
MIN_TESTS := tests/kube tests/test_cli_errors.py tests/cluster/test_client_python.py \
	tests/cluster/test_client_kubeconfig.py tests/schedule/test_config.py tests/schedule/live/test_cli.py \
	tests/schedule/live/test_two_profiles_live.py tests/install/live/test_apply.py

.PHONY: setup demo test test-minimum lint typecheck unit clean

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
	$(BIN)/ruff check src tests benchmarks scripts setup.py
	$(BIN)/ruff format --check src tests benchmarks scripts setup.py
	$(BIN)/lint-imports

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/python -m pytest -n 2 -q

test: lint typecheck unit

# The same code against constraints/minimum.txt in a second venv (CI runs it after `make test`).
test-minimum: setup
	rm -rf $(MIN_VENV)
	$(PYTHON) -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(MIN_VENV)/bin/python -m pip install --quiet -c constraints/minimum.txt -e '.[dev]'
	$(MIN_VENV)/bin/python -m pip check
	BERTH_HELM=$$($(BIN)/berth tools path helm 2>/dev/null) BERTH_KUBECTL=$$($(BIN)/berth tools path kubectl 2>/dev/null) \
		$(MIN_VENV)/bin/python -m pytest -n 2 -q -p no:cacheprovider $(MIN_TESTS)

clean:
	rm -rf $(VENV) $(MIN_VENV) .berth build dist *.egg-info src/*.egg-info
