"""Helpers of the fault tests: builds, byte snapshots of a build directory, the invariants a
crashed or failed build must keep."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pyarrow.parquet as pq

from entbench import api
from entbench.engine.inspect import verify_build
from tests.conftest import SAMPLES_CONFIG

REPO = Path(__file__).resolve().parents[2]
KILLER = Path(__file__).resolve().parent / "killer.py"
#: The multi-shard build the faults hit: 4 map tasks (1 MB blocks of the decompressed fixture
#: dump), then 4 shards of 5 tables each.
WIKIDATA_ARGS = ("--chunk-mb", "1", "--config", str(SAMPLES_CONFIG))
LAYERS = ("normalized", "derived", "benchmarks")


def quiet_build(
    target: str,
    out: Path,
    *,
    workers: int = 1,
    log: list[str] | None = None,
    params: Sequence[str] = (),
) -> dict[str, Path]:
    """`api.build` on the bundled fixtures with 1 MB map blocks, no progress bars, no card."""
    return api.build(
        target,
        config=SAMPLES_CONFIG,
        params=params,
        out=out,
        workers=workers,
        chunk_mb=1,
        progress=False,
        log=(log.append if log is not None else lambda _m: None),
        card=False,
    )


def snapshot(out: Path) -> dict[str, str]:
    """sha256 of every file of the build's stage directories and target listings, by relative path.

    `_RUN.json` (timings) is left out: it is the one file meant to differ between runs.
    """
    files: dict[str, str] = {}
    for layer in (*LAYERS, "targets"):
        for path in sorted((out / layer).rglob("*")):
            if path.is_file() and path.name != "_RUN.json":
                files[str(path.relative_to(out))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def run_killed(
    spec: str, out: Path, target: str, *extra: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`entbench build TARGET --out OUT` in a subprocess killed at `spec` (see `killer.py`)."""
    args = [
        sys.executable,
        str(KILLER),
        spec,
        "build",
        target,
        "--out",
        str(out),
        "--no-progress",
        *WIKIDATA_ARGS,
        *extra,
    ]
    return subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False)


def assert_nothing_half_done_looks_complete(out: Path, stages: Sequence[str] = ()) -> None:
    """After a crash: every complete-looking stage directory verifies, every shard marker of an
    unfinished stage matches its shard, and no temp file sits under a final name."""
    if any(p.parent.name.startswith("v") for p in out.glob("*/*/v*/_MANIFEST.json")):
        report = verify_build(out)
        assert not report.problem, report.problem
    for work in out.glob("*/*/.incomplete/v*"):
        for marker in sorted((work / "_shards").glob("part-*.json")):
            record = json.loads(marker.read_text())
            for entry in record["tables"].values():
                shard = work / entry["file"]
                assert shard.stat().st_size == entry["bytes"], shard
                assert hashlib.sha256(shard.read_bytes()).hexdigest() == entry["sha256"], shard
        for shard in work.rglob("part-*.parquet"):
            pq.read_metadata(shard)  # a shard under its final name is always a whole Parquet file
    for stage in stages:
        for final in out.glob(f"*/{stage}/v*"):
            assert (final / "_MANIFEST.json").is_file(), final
