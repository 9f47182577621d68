"""Disk full (ENOSPC injected into the writers): the build fails cleanly, nothing it left looks
complete, and once there is room again the next build finishes with the bytes of an undisturbed one.

The OSError is raised by the real writers at chosen calls: the Parquet shard writer mid-shard, the
fsync that precedes every rename (shards, markers, manifests), the rename of a map task's record
(written without an fsync), and the map-side spill files.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import Result

from entbench.engine import shuffle as buckets
from tests.faults.fault_support import assert_nothing_half_done_looks_complete, quiet_build, snapshot

CLI = Callable[[list[str]], Result]


def disk_full() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.fixture(scope="module")
def reference(solo_build: Callable[[str], Path]) -> dict[str, str]:
    return snapshot(solo_build("kb"))


class FullParquetWriter(pq.ParquetWriter):
    """A ParquetWriter whose `write_table` fails once `budget` tables have been written."""

    budget = 0

    def write_table(self, table: pa.Table, row_group_size: int | None = None) -> None:
        if FullParquetWriter.budget <= 0:
            # half a row group reaches the file first, as when a disk fills mid-write
            super().write_table(table.slice(0, table.num_rows // 2), row_group_size=row_group_size)
            raise disk_full()
        FullParquetWriter.budget -= 1
        super().write_table(table, row_group_size=row_group_size)


def inject_parquet(monkeypatch: pytest.MonkeyPatch, tables_before_failure: int) -> None:
    FullParquetWriter.budget = tables_before_failure
    monkeypatch.setattr(pq, "ParquetWriter", FullParquetWriter)


def inject_fsync(monkeypatch: pytest.MonkeyPatch, name: str, n: int) -> None:
    """Fail the n-th fsync of a file whose name contains `name` (every write is fsynced before
    its rename, so this is the last moment a full disk can show)."""
    real = os.fsync
    calls = 0

    def fsync(fd: int) -> None:
        nonlocal calls
        if name in os.path.basename(os.readlink(f"/proc/self/fd/{fd}")):
            calls += 1
            if calls >= n:
                raise disk_full()
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def inject_replace(monkeypatch: pytest.MonkeyPatch, name: str, n: int) -> None:
    """Fail the n-th rename of a file whose name contains `name`: for a record written without an
    fsync, the last moment a full disk can show (its buffered text is written as the file closes)."""
    real = os.replace
    calls = 0

    def replace(src: Any, dst: Any) -> None:
        nonlocal calls
        if name in os.path.basename(os.fspath(src)):
            calls += 1
            if calls >= n:
                raise disk_full()
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)


_BUFFERED_OUTPUT_STREAM = pa.BufferedOutputStream


class _FillingStream:
    """A spill file's output stream whose writes fail with ENOSPC from the `n`-th write on (of
    all spill streams opened in the build)."""

    writes = 0
    fail_from = 0

    def __init__(self, raw: pa.NativeFile, buffer_size: int) -> None:
        self._stream = _BUFFERED_OUTPUT_STREAM(raw, buffer_size)

    def write(self, data: Any) -> int:
        _FillingStream.writes += 1
        if _FillingStream.writes >= _FillingStream.fail_from:
            raise disk_full()
        return int(self._stream.write(data))

    def tell(self) -> int:
        return int(self._stream.tell())

    def close(self) -> None:
        self._stream.close()


def inject_spill(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    _FillingStream.writes, _FillingStream.fail_from = 0, n
    monkeypatch.setattr(buckets.pa, "BufferedOutputStream", _FillingStream)


INJECTIONS: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "parquet-mid-shard": lambda mp: inject_parquet(mp, 7),  # wikidata_new, shard 1, third table
    "parquet-later-stage": lambda mp: inject_parquet(mp, 45),  # a DuckDB stage after both scans
    "map-record": lambda mp: inject_replace(mp, ".done.json.tmp", 2),
    # a shard file's fsync runs on the reduce's background thread (`shards.durable_in_background`)
    "fsync-parquet-shard": lambda mp: inject_fsync(mp, ".parquet.tmp", 3),
    "fsync-shard-marker": lambda mp: inject_fsync(mp, ".part-00001.json.tmp", 1),
    "fsync-manifest": lambda mp: inject_fsync(mp, "._MANIFEST.json.tmp", 3),
    "map-spill": lambda mp: inject_spill(mp, 40),
}


@pytest.fixture(params=sorted(INJECTIONS))
def injection(request: pytest.FixtureRequest) -> Iterator[str]:
    yield str(request.param)


def test_disk_full_leaves_nothing_complete_looking_and_resumes(
    injection: str, tmp_path: Path, reference: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        INJECTIONS[injection](patch)
        with pytest.raises(OSError) as info:
            quiet_build("kb", out)
    assert info.value.errno == errno.ENOSPC
    assert_nothing_half_done_looks_complete(out)
    leftovers = list(out.rglob("*.parquet.tmp-*"))
    assert not leftovers, leftovers  # the shard writer removes its own temp file
    partial = snapshot(out)
    assert partial != reference
    quiet_build("kb", out)
    assert snapshot(out) == reference


def test_cli_reports_disk_full_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: CLI
) -> None:
    inject_parquet(monkeypatch, 2)
    result = run_cli(["build", "wikidata", "--out", str(tmp_path), "--no-progress"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == "entbench: error: No space left on device"
