"""The demo world (`fixtures/entbench.toml`, no --config, no --source), every target built once
per test session and shared by the tests that read a whole world build (cards, loaders, the README
commands, the issue thresholds).

Under pytest-xdist each worker is its own session, so the build goes to one directory all workers
share (next to their own base temporary directories): the first worker to take the lock builds
every target, the others wait for it and then read the same build.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from entbench.golden import GOLDEN_TARGETS  # every target of the demo world, in build order
from tests.cards.card_support import build

DONE = "world-built.json"


def build_world(out: Path) -> None:
    """Build every world target into `out` (cards included) unless a finished build is there."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f"{out.name}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if (out / DONE).is_file():
            return
        for target in GOLDEN_TARGETS:
            build(target, out, config=None)  # no config, no source: the bundled demo world
        (out / DONE).write_text(json.dumps(list(GOLDEN_TARGETS)) + "\n", encoding="utf-8")


def shared_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build directory of the demo world, every target built (read it, never write to it)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = shared / "world-cards"
    build_world(out)
    return out
