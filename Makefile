# Two commands on a fresh machine: `make run` (every target on the bundled demo world) and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
OUT ?= entbench-out
# The targets `make run` builds; by default every registered one (the bundled demo world builds
# them all), in the order `entbench targets` prints, where each reuses the stages of those before.
RUN_TARGETS ?=
# The test runs (test-quick, pytest, sanitize) set PYTHONDONTWRITEBYTECODE empty, which Python reads
# as unset: they cache compiled modules (__pycache__/, ignored by git) even where the environment
# says not to, as many container images do. Otherwise multiprocessing starts every build worker with
# -B, and each one compiled entbench again before its first task (a file of 12 build tests,
# tests/builders/wikidata/test_compressed_dumps.py: 72 CPU s with it set, 36 without).

.PHONY: install native run test checks test-quick lint typecheck pytest sanitize-build sanitize fixtures fixtures-check bench hansel wikireading clean

install: $(VENV)/.installed

# The native extensions are compiled by the install (hatch_build.py); editing any of them reinstalls.
# --no-compile: pip would compile every module of every package, one file at a time (half the
# install's time, mostly for the test tools' packages); scripts/compile_bytecode.py compiles
# entbench's and its run-time dependencies' on every core, and the rest compile as first imported.
$(VENV)/.installed: pyproject.toml constraints.txt hatch_build.py scripts/compile_bytecode.py $(wildcard src/entbench/_native/*.c)
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	ENTBENCH_REQUIRE_NATIVE=1 $(BIN)/python -m pip install -q --no-compile -c constraints.txt -e '.[dev,dask]'
	$(BIN)/python scripts/compile_bytecode.py
	touch $@

# Recompile the native extensions in place after editing src/entbench/_native/*.c.
native: install
	$(BIN)/python hatch_build.py

# Every target on the demo world (no --config, no --source), then one screen of what was made. One
# `entbench build` builds them all in turn, with what a command per target would print, without
# ~0.8 CPU s of interpreter start-up and imports per target (13 s of a `make run` with every stage
# already done, as in tests/test_readme.py, is then ~3 s).
run: install
	@targets="$(RUN_TARGETS)"; [ -n "$$targets" ] || targets="$$($(BIN)/entbench targets)" || exit 1; \
	$(BIN)/entbench build $$targets --out $(OUT)
	@$(BIN)/entbench summary --from $(OUT)

# The full suite (what CI runs). The golden-shard check is a test of its own there
# (tests/test_golden.py), on the one build of the demo world every test reading it shares.
test: install checks pytest sanitize

# The steps before the tests, side by side: ruff, mypy and the sanitizer build each keep about one
# core busy (mypy ~10 s, the compiler ~5 s), where one after the other they left the other one idle.
checks: install
	$(MAKE) --no-print-directory -j3 --output-sync=target lint typecheck sanitize-build

# The quicker tier for local work: lint, types and the tests not marked slow (no demo-world build,
# no README run, no whole-world rebuilds through other code paths). `make test` before a merge.
test-quick: install lint typecheck
	PYTHONDONTWRITEBYTECODE= ENTBENCH_REQUIRE_NATIVE=1 $(BIN)/python -m pytest -n 2 --dist worksteal -q -m "not slow"

lint: install
	$(BIN)/ruff check src tests bench fixtures/scripts scripts hatch_build.py
	$(BIN)/ruff format --check src tests bench fixtures/scripts scripts hatch_build.py
	$(BIN)/lint-imports --no-logo

typecheck: install
	$(BIN)/mypy

# worksteal: each worker starts on its own contiguous half of the tests (module fixtures built once)
# and an idle worker takes over the other's queue, so no long test ends the run alone.
pytest: install
	PYTHONDONTWRITEBYTECODE= ENTBENCH_REQUIRE_NATIVE=1 $(BIN)/python -m pytest -n 2 --dist worksteal -q || [ $$? -eq 5 ]  # 5 = no tests collected

# The tests of the C extensions against their Python references (differential and fuzz), again on
# builds with AddressSanitizer and UndefinedBehaviorSanitizer (build/sanitize/, beside the normal
# builds, which stay as they are): any memory error or undefined operation aborts the run. The
# sanitizer runtimes must be preloaded into Python; CPython keeps memory to the end by design, so no
# leak check; PYTHONMALLOC=malloc lets ASan see the small allocations Python's allocator would pool;
# --capture=sys leaves the C-level stderr alone, so a report is printed even though it aborts.
# malloc_context_size=0: ASan records no call stack at each malloc and free (by default 30 frames,
# unwound on every one of Python's allocations: a fifth of this step's CPU time). Errors are found
# and reported the same, with the stack of the bad access, only without where the block was
# allocated or freed: `make sanitize SANITIZE_ASAN_OPTIONS=detect_leaks=0` shows those. The fuzz
# tests try 15% of their examples (tests/fuzz/budget.py; the plain run has compared all of
# them): each costs ~2.5x here. Every native test still runs, on every fixture it runs on there.
SANITIZE_FUZZ_SCALE ?= 0.15
SANITIZE_ASAN_OPTIONS ?= detect_leaks=0:malloc_context_size=0
NATIVE_TESTS := tests/builders/wikidata/test_native.py tests/builders/wikidata/test_native_threads.py \
	tests/readers/test_wikitext_native.py tests/fuzz/test_native_fuzz.py tests/builders/alias/test_matching_native.py
sanitize-build: install
	ENTBENCH_SANITIZE=1 $(BIN)/python hatch_build.py

sanitize: sanitize-build
	preload="$$($(BIN)/python hatch_build.py --sanitizer-preload)" && \
	PYTHONDONTWRITEBYTECODE= ENTBENCH_SANITIZE=1 ENTBENCH_REQUIRE_NATIVE=1 ENTBENCH_FUZZ_SCALE=$(SANITIZE_FUZZ_SCALE) \
		PYTHONMALLOC=malloc ASAN_OPTIONS=$(SANITIZE_ASAN_OPTIONS) UBSAN_OPTIONS=print_stacktrace=1 LD_PRELOAD="$$preload" \
		$(BIN)/python -m pytest -n 2 -q --capture=sys $(NATIVE_TESTS)

fixtures: install
	$(BIN)/python -m entbench.golden regenerate

# The golden check alone, on a build from scratch (make test checks the same on its shared build).
fixtures-check: install
	$(BIN)/python -m entbench.golden check

bench: install
	$(BIN)/python bench/run.py
	$(BIN)/python bench/pipelines/run.py

wikireading: install
	$(BIN)/entbench build wikireading --out $(OUT)

# The four Hansel targets on the demo world (its zhwiki dump, corpus and Wikidata pair), then the
# training set, the entity KB and the demo's annotated test sets as release jsonl (the four builds
# in one process, as `make run`'s).
hansel: install
	$(BIN)/entbench build hansel-train hansel-fewshot hansel-zeroshot hansel-kb --out $(OUT)
	$(BIN)/entbench export hansel-train --from $(OUT) --format jsonl --out $(OUT)/export/hansel
	$(BIN)/entbench export hansel-kb --from $(OUT) --format jsonl --out $(OUT)/export/hansel
	$(BIN)/entbench export hansel-test --from $(OUT) --annotations fixtures/hansel/annotations.jsonl \
		--out $(OUT)/export/hansel

clean:
	rm -rf $(OUT) .pytest_cache .mypy_cache .ruff_cache
