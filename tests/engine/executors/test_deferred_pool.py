"""A local pool starts when a build has a stage to run: a build that finds every stage done (a
re-run, `make run` after `make run`) starts no fork server and no worker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from entbench.engine.executors import local
from tests.builds import build


def test_a_pool_starts_for_a_build_with_work_and_not_for_a_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[int] = []

    class Counted(local.ProcessPoolTaskExecutor):
        def __init__(self, workers: int, *args: Any, **kwargs: Any) -> None:
            started.append(workers)
            super().__init__(workers, *args, **kwargs)

    monkeypatch.setattr(local, "ProcessPoolTaskExecutor", Counted)
    lines: list[str] = []
    first = build("wikidata", out=tmp_path, workers=2, progress=False, log=lines.append, card=False)
    assert started == [2]
    assert any(line.startswith("wikidata: wrote ") for line in lines), lines
    lines.clear()
    again = build("wikidata", out=tmp_path, workers=2, progress=False, log=lines.append, card=False)
    assert again == first
    assert started == [2]  # no second pool
    assert any(line.startswith("wikidata: up to date (") for line in lines), lines
