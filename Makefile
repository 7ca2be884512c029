# The two quick-start commands are `make run` and `make test`; both install what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test lint proto bench bench-quick clean

$(STAMP): pyproject.toml proto/pyproject.toml worker_sdk/pyproject.toml cli/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ./proto -e ./worker_sdk -e ./cli -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## Start the server; with no TASKQUEUE_DATABASE_URL it runs on an embedded PostgreSQL.
run: install
	$(BIN)/taskqueue serve

## The whole test suite, against a real PostgreSQL (see tests/support/databases.py for which).
test: install
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

## The side-by-side benchmark (several minutes; see bench/README.md), and its seconds-long CI mode.
bench: install
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python -m bench.run --out bench/results/latest.json

bench-quick: install
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python -m bench.run --quick

## Regenerate the protobuf code after editing proto/**/*.proto.
proto: install
	$(BIN)/python proto/generate.py

clean:
	rm -rf $(VENV)
