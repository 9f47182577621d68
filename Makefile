# Two commands on a fresh machine: `make run` (build the bundled fixture dumps) and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
OUT ?= entbench-out
# Targets `make run` builds on the bundled fixture dumps.
RUN_TARGETS ?= wikidata kb alias-table wikireading

.PHONY: install native run test lint typecheck pytest fixtures fixtures-check bench hansel wikireading clean

install: $(VENV)/.installed

# The native scanner is compiled by the install (hatch_build.py); editing it reinstalls.
$(VENV)/.installed: pyproject.toml constraints.txt hatch_build.py src/entbench/_native/wdscan.c
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	ENTBENCH_REQUIRE_NATIVE=1 $(BIN)/python -m pip install -q -c constraints.txt -e '.[dev,dask]'
	touch $@

# Recompile the native scanner in place after editing src/entbench/_native/wdscan.c.
native: install
	$(BIN)/python hatch_build.py

run: install
	@for target in $(RUN_TARGETS); do \
		$(BIN)/entbench build $$target --out $(OUT) || exit 1; \
	done

test: install lint typecheck pytest fixtures-check

lint: install
	$(BIN)/ruff check src tests bench hatch_build.py
	$(BIN)/ruff format --check src tests bench hatch_build.py
	$(BIN)/lint-imports --no-logo

typecheck: install
	$(BIN)/mypy

pytest: install
	ENTBENCH_REQUIRE_NATIVE=1 $(BIN)/python -m pytest -n 2 -q || [ $$? -eq 5 ]  # 5 = no tests collected

fixtures: install
	$(BIN)/python -m entbench.golden regenerate

fixtures-check: install
	$(BIN)/python -m entbench.golden check

bench: install
	$(BIN)/python bench/run.py
	$(BIN)/python bench/pipelines/run.py

wikireading: install
	$(BIN)/entbench build wikireading --out $(OUT)

# The three Hansel targets on the zhwiki fixture world (fixtures/hansel/PROVENANCE.md: a Wikidata
# pair giving QIDs to its pages' titles and link targets), then the training set as official jsonl.
HANSEL_SOURCES := --source wikidata_old=fixtures/hansel/wikidata-old.json.gz \
	--source wikidata_new=fixtures/hansel/wikidata-new.json.gz
hansel: install
	$(BIN)/entbench build hansel-train $(HANSEL_SOURCES) --out $(OUT)
	$(BIN)/entbench build hansel-fewshot $(HANSEL_SOURCES) --out $(OUT)
	$(BIN)/entbench build hansel-zeroshot $(HANSEL_SOURCES) --out $(OUT)
	$(BIN)/entbench export hansel-train --from $(OUT) --format jsonl --out $(OUT)/export/hansel

clean:
	rm -rf $(OUT) .pytest_cache .mypy_cache .ruff_cache
