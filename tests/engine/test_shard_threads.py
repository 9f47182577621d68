"""A shard task writes its tables side by side when its stage has fewer shards than workers
(`tasks.writer_threads`) and its tables hold enough to be worth it: the other workers would idle
through the reduce. The bytes must be those of one table after another."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from entbench.engine import tasks
from entbench.engine.stage import BuildOptions, Params, StageContext
from entbench.engine.tasks import writer_threads
from tests.builders.kb.support import shard_hashes
from tests.builders.wikidata.test_wikidata_build import FIXTURES, build


def context(workers: int, shards: int) -> StageContext:
    return StageContext(
        stage="s",
        params=Params(),
        num_shards=shards,
        sources={},
        inputs={},
        workdir="/nonexistent",
        options=BuildOptions(workers=workers),
    )


@pytest.mark.parametrize(
    ("workers", "shards", "tables", "threads"),
    [
        (1, 1, 6, 1),  # one worker: tables in turn
        (2, 1, 6, 2),  # one shard, two workers: the idle one's core writes a second table
        (2, 1, 1, 1),  # ...but a single table has nothing to share
        (8, 1, 6, 6),  # at most one thread per table
        (8, 2, 6, 4),  # two shards at once leave four cores each
        (2, 2, 6, 1),  # as many shards as workers: every core already has a shard
        (4, 7, 2, 1),
    ],
)
def test_threads_are_the_cores_the_shards_leave_idle(
    workers: int, shards: int, tables: int, threads: int
) -> None:
    assert writer_threads(context(workers, shards), tables) == threads


def test_one_shard_written_by_two_workers_has_the_bytes_of_one_worker(tmp_path: Path) -> None:
    source = FIXTURES / "entities-new.json.bz2"
    one = build(tmp_path / "w1", source, "wikidata.num_shards=1", workers=1)
    two = build(tmp_path / "w2", source, "wikidata.num_shards=1", workers=2)
    hashes = shard_hashes(one, files=True)
    assert len(hashes) >= 4  # every table of the scan, each its own file
    assert shard_hashes(two, files=True) == hashes


def test_tables_written_side_by_side_have_the_bytes_of_one_after_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The threaded path, run here (a one-worker build told it has two cores to fill, whatever
    its tables hold): every file as the one-table-at-a-time build writes it."""
    source = FIXTURES / "entities-new.json.bz2"
    reference = shard_hashes(build(tmp_path / "one", source, "wikidata.num_shards=1"), files=True)
    writers: set[str] = set()
    original = tasks.write_parquet

    def recording(*args: Any, **kwargs: Any) -> Any:
        writers.add(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(tasks, "THREADED_WRITE_MIN_BYTES", 0)
    monkeypatch.setattr(tasks, "writer_threads", lambda ctx, tables: 2)
    monkeypatch.setattr(tasks, "write_parquet", recording)
    side_by_side = build(tmp_path / "two", source, "wikidata.num_shards=1")
    assert shard_hashes(side_by_side, files=True) == reference
    assert writers and all(name.startswith("entbench-shard") for name in writers)


def test_a_shard_task_that_left_its_process_much_larger_trims_the_heap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The next shard in the same process would otherwise start above the first (`trim_if_grown`)."""
    trims: list[int] = []
    monkeypatch.setattr(tasks, "trim_heap", lambda: trims.append(1))
    now = tasks.resident_bytes()
    assert now is not None  # Linux: /proc/self/statm
    tasks.trim_if_grown(now - tasks.TRIM_GROWTH_BYTES - (1 << 20))
    assert trims == [1]
    tasks.trim_if_grown(now)  # a shard that gave back what it took
    tasks.trim_if_grown(None)  # nothing measured when it started (off Linux)
    assert trims == [1]
