"""SIGKILL a real `entbench build` at many points of a multi-shard build, resume, compare bytes.

The reference is an uninterrupted build of the same target; after each kill the next build must
produce exactly its files (shards, manifests, extra files, target listings), and between the two
nothing half-written may look complete.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import SAMPLES_CONFIG
from tests.faults.fault_support import (
    REPO,
    assert_nothing_half_done_looks_complete,
    quiet_build,
    run_killed,
    snapshot,
)

#: (when, file name part, n): the n-th rename of a file whose name contains the part.
WIKIDATA_POINTS = [
    "before:done.json:1",  # map task 0 spilled its rows, its completion record not in place
    "after:done.json:2",  # two of four map tasks done
    "before:_TASKS.json:1",  # every map task done, the map phase not yet recorded
    "after:.parquet:3",  # shard 0: three of its six tables written, no shard marker
    "after:part-00001.json:1",  # shards 0 and 1 complete
    "before:_MANIFEST.json:1",  # every shard done, no manifest
    "after:_MANIFEST.json:1",  # manifest written, not yet renamed into place
    "after:_shards:1",  # half-way through promotion (work files moved aside)
    "after:v3-:1",  # stage in place, target listing not written, trash not deleted
]
KB_POINTS = [
    "after:v3-:1",  # the first of the two scans finished
    "after:.parquet:30",  # inside the second scan's shards (4 shards x 6 tables each)
    "before:_MANIFEST.json:4",  # the first DuckDB stage's shards written
]


#: 70 shards: past 64 the map spills by pairs of shards and a merge pass regroups them by shard.
MERGED = ("wikidata.num_shards=70",)
MERGE_POINTS = [
    "after:g00003.done.json:1",  # four of 35 groups merged, the map's spills still needed
    "after:part-00009.json:1",  # ten shards written from the merged spills, the map's deleted
]


@pytest.fixture(scope="module")
def reference(solo_build: Callable[[str], Path]) -> dict[str, dict[str, str]]:
    return {target: snapshot(solo_build(target)) for target in ("wikidata", "kb")}


def kill_then_resume(
    tmp_path: Path,
    target: str,
    point: str,
    reference: dict[str, str],
    workers: int,
    params: tuple[str, ...] = (),
) -> None:
    out = tmp_path / "out"
    killed = run_killed(point, out, target, *(arg for param in params for arg in ("--param", param)))
    assert killed.returncode == -signal.SIGKILL, (point, killed.returncode, killed.stderr[-2000:])
    assert_nothing_half_done_looks_complete(out)
    assert snapshot(out) != reference  # the kill happened before the end
    log: list[str] = []
    quiet_build(target, out, workers=workers, log=log, params=params)
    assert snapshot(out) == reference
    assert not list(out.glob("*/*/.incomplete")), "resume left unfinished work behind"


@pytest.mark.parametrize("point", WIKIDATA_POINTS)
def test_kill_wikidata_build_then_resume(
    point: str, tmp_path: Path, reference: dict[str, dict[str, str]]
) -> None:
    workers = 2 if point == "after:part-00001.json:1" else 1
    kill_then_resume(tmp_path, "wikidata", point, reference["wikidata"], workers)


@pytest.fixture(scope="module")
def merged_reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("ref-merged")
    quiet_build("wikidata", out, params=MERGED)
    return snapshot(out)


@pytest.mark.parametrize("point", MERGE_POINTS)
def test_kill_in_the_merge_pass_then_resume(
    point: str, tmp_path: Path, merged_reference: dict[str, str]
) -> None:
    kill_then_resume(tmp_path, "wikidata", point, merged_reference, 2, MERGED)


@pytest.mark.parametrize("point", KB_POINTS)
def test_kill_multi_stage_kb_build_then_resume(
    point: str, tmp_path: Path, reference: dict[str, dict[str, str]]
) -> None:
    kill_then_resume(tmp_path, "kb", point, reference["kb"], 1)


def test_sigkill_of_the_process_group_with_two_workers(
    tmp_path: Path, reference: dict[str, dict[str, str]]
) -> None:
    """An outside SIGKILL of the build and its worker processes, as soon as map work is done."""
    out = tmp_path / "out"
    entry = "from entbench.cli.main import main; main()"
    args = [sys.executable, "-c", entry, "build", "wikidata", "--out", str(out)]
    args += ["--no-progress", "--chunk-mb", "1", "--workers", "2", "--config", str(SAMPLES_CONFIG)]
    proc = subprocess.Popen(
        args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if any(out.glob("normalized/wikidata/.incomplete/v*/_map/*.done.json")):
                break
            time.sleep(0.005)
        assert proc.poll() is None, "the build finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert_nothing_half_done_looks_complete(out)
    quiet_build("wikidata", out, workers=1)
    assert snapshot(out) == reference["wikidata"]
