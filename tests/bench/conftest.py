"""Fixtures for the benchmark's tests: the `bench/` scripts, imported as modules."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"


def _bench_module(name: str) -> ModuleType:
    # bench/ holds scripts, not a package: they import each other as top-level modules.
    if str(BENCH_DIR) not in sys.path:
        sys.path.insert(0, str(BENCH_DIR))
    return importlib.import_module(name)


@pytest.fixture(scope="session")
def gen() -> ModuleType:
    """`bench/gen_wikidata.py`."""
    return _bench_module("gen_wikidata")


@pytest.fixture(scope="session")
def scanners() -> ModuleType:
    """`bench/scanners.py`."""
    return _bench_module("scanners")


@pytest.fixture(scope="session")
def text_holes() -> ModuleType:
    """`bench/text_holes.py`."""
    return _bench_module("text_holes")
