"""The undamaged builds the fault tests compare against, built once per test process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.faults.fault_support import quiet_build


@pytest.fixture(scope="session")
def solo_build(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """`solo_build(TARGET)`: the `--out` of one uninterrupted `quiet_build(TARGET)`, made on first
    use and shared by every fault module (kill/resume, disk full, corruption, concurrent builds all
    compare with the same bytes). Read it or copy it; never write into it."""
    built: dict[str, Path] = {}

    def build(target: str) -> Path:
        if target not in built:
            out = tmp_path_factory.mktemp(f"solo-{target}")
            quiet_build(target, out)
            built[target] = out
        return built[target]

    return build
