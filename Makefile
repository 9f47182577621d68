# Two commands on a fresh machine: `make run` (build the bundled fixture dumps) and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
OUT ?= entbench-out

.PHONY: install run test lint typecheck pytest fixtures fixtures-check bench hansel wikireading clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev,dask]'
	touch $@

run: install
	$(BIN)/entbench build wikidata --out $(OUT)

test: install lint typecheck pytest fixtures-check

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: install
	$(BIN)/mypy

pytest: install
	$(BIN)/python -m pytest -n 2 -q

fixtures: install
	$(BIN)/python -m entbench.builders.golden regenerate

fixtures-check: install
	$(BIN)/python -m entbench.builders.golden check

bench: install
	$(BIN)/python bench/run.py

wikireading: install
	$(BIN)/entbench build wikireading --out $(OUT)

clean:
	rm -rf $(OUT) .pytest_cache .mypy_cache .ruff_cache
