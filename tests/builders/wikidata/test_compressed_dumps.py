"""Compressed Wikidata dumps on several workers: the `.gz` seek index (built once, reused, never
trusted when stale), rapidgzip's parallel bz2 reader, and damaged streams, all writing the bytes
of the sequential single-worker path. Dumps are real fixture lines recompressed in tmp dirs."""

from __future__ import annotations

import bz2
import gzip
import itertools
import os
from pathlib import Path
from typing import Any

import pytest

from entbench.engine import registry
from entbench.engine.config import load_config
from entbench.engine.manifest import load_manifest
from entbench.engine.runner import Builder
from entbench.engine.sources import identify_source
from entbench.engine.stage import BuildOptions
from entbench.errors import DataError
from entbench.readers.compressed.gzip_index import (
    INDEX_SUFFIX,
    GzipIndex,
    iter_indexed_range,
    load_gzip_index,
    save_gzip_index,
)
from tests import builds as samples
from tests.builders.kb.support import shard_hashes

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "wikidata"
TABLES = ("entities", "aliases", "truthy_claims", "outranked_type_claims", "sitelinks", "redirects")


def read_indexed_range(dump_path: str, task: dict[str, Any]) -> tuple[int, bytes]:
    """`iter_indexed_range`'s lines in one block, and the offset of the first (`end` when none)."""
    parts: list[bytes] = []
    first = int(task["end"])
    for offset, buffer, length in iter_indexed_range(dump_path, task, 4 << 20):
        if not parts:
            first = offset
        parts.append(bytes(buffer[:length]))
    return first, b"".join(parts)


@pytest.fixture(scope="module")
def dump_bytes() -> bytes:
    """The decompressed `entities-new` fixture (~4 MB of real entity lines)."""
    return bz2.decompress((FIXTURES / "entities-new.json.bz2").read_bytes())


@pytest.fixture(scope="module")
def gz_bytes(dump_bytes: bytes) -> bytes:
    """`dump_bytes` as one `.gz` stream (level 6, no mtime): each test writes it where it likes."""
    return gzip.compress(dump_bytes, 6, mtime=0)


@pytest.fixture(scope="module")
def bz2_bytes(dump_bytes: bytes) -> bytes:
    """`dump_bytes` as one `.bz2` stream."""
    return bz2.compress(dump_bytes)


@pytest.fixture(scope="module")
def sequential_hashes(tmp_path_factory: pytest.TempPathFactory, gz_bytes: bytes) -> dict[str, str]:
    """Shard hashes of the single-worker build of `gz_bytes` (no index is read or written): the
    reference the several-worker builds must equal. Made once for the module, since a source enters
    fingerprints by its content, not its path, so a dump of these bytes anywhere has these shards."""
    tmp = tmp_path_factory.mktemp("sequential")
    gz = tmp / "dump.json.gz"
    gz.write_bytes(gz_bytes)
    return shard_hashes(build(tmp / "w1", gz, workers=1))


def build(out: Path, source: Path, **kwargs: Any) -> Path:
    dirs = samples.build(
        "wikidata",
        sources=[f"wikidata={source}"],
        params=["wikidata.num_shards=4"],
        out=out,
        progress=False,
        log=lambda _msg: None,
        card=False,
        chunk_mb=1,
        **kwargs,
    )
    return dirs["wikidata"]


def table_rows(stage_dir: Path) -> dict[str, list[dict[str, Any]]]:
    import pyarrow.parquet as pq

    return {
        table: [
            row
            for f in sorted((stage_dir / table).glob("part-*.parquet"))
            for row in pq.read_table(f).to_pylist()
        ]
        for table in TABLES
    }


def planned_task_ids(tmp: Path, source: Path, workers: int) -> list[str]:
    """The map tasks a build would run (the stage's plan, nothing executed)."""
    cfg = load_config(None, [f"wikidata={source}"], ["wikidata.num_shards=4"])
    options = BuildOptions(workers=workers, chunk_bytes=1 << 20, progress=False)
    builder = Builder(tmp / "plan", cfg, options, log=lambda _msg: None)
    plan = builder.plan(registry.get_stage("wikidata"), {})
    return [task.task_id for task in plan.stage.map_tasks(plan.ctx)]


def range_task(index: GzipIndex, start: int, end: int) -> dict[str, Any]:
    """What a map task over [start, end) of an indexed `.gz` carries (as the scan plans it)."""
    return {
        "start": start,
        "end": end,
        "index": index.path,
        "index_offset": index.data_offset,
        "points": index.task_points(start, end),
        "trailer": index.trailer.hex(),
    }


def sha256_of(path: Path) -> str:
    return identify_source(
        "wikidata", str(path), str(path), cache_dir=path.parent / ".cache", progress=False
    ).sha256


def test_gz_index_is_built_once_and_reused_with_identical_bytes(
    tmp_path: Path, dump_bytes: bytes, gz_bytes: bytes
) -> None:
    gz = tmp_path / "dump.json.gz"
    gz.write_bytes(gz_bytes)
    index_file = Path(str(gz) + INDEX_SUFFIX)
    sequential = build(tmp_path / "w1", gz, workers=1)
    assert not index_file.exists()  # one worker: isal, no index
    first = build(tmp_path / "w2-first", gz, workers=2)  # sequential read that leaves the index
    assert index_file.exists()
    tasks = planned_task_ids(tmp_path, gz, workers=2)
    assert len(tasks) >= 3 and all(t.startswith("g") for t in tasks)  # ranges of the stream
    assert all(t.startswith("b") for t in planned_task_ids(tmp_path, gz, workers=1))
    stamp = index_file.stat().st_mtime_ns
    indexed = build(tmp_path / "w2-indexed", gz, workers=2)
    assert index_file.stat().st_mtime_ns == stamp  # reused, not rewritten
    assert shard_hashes(sequential) == shard_hashes(first) == shard_hashes(indexed)
    assert (sequential / "_rejects.jsonl").read_bytes() == (indexed / "_rejects.jsonl").read_bytes()
    stats_1, stats_2 = load_manifest(sequential)["stats"], load_manifest(indexed)["stats"]
    assert stats_1 == stats_2  # progress bytes too: ranges carry their compressed sizes
    # The plain JSON (other source, so other fingerprint bytes) gives the same rows.
    plain = tmp_path / "dump.json"
    plain.write_bytes(dump_bytes)
    assert table_rows(build(tmp_path / "plain", plain, workers=2)) == table_rows(indexed)


def test_indexed_ranges_read_every_line_once(tmp_path: Path, dump_bytes: bytes, gz_bytes: bytes) -> None:
    gz = tmp_path / "dump.json.gz"
    gz.write_bytes(gz_bytes)
    build(tmp_path / "out", gz, workers=2)
    index = load_gzip_index(str(gz), sha256_of(gz))
    assert index is not None and index.decompressed_size == len(dump_bytes)
    for target in (1, 1 << 20, 1 << 30):
        ranges = index.ranges(gz.stat().st_size, target)
        assert sum(c for _s, _e, c in ranges) == gz.stat().st_size
        pieces = [read_indexed_range(str(gz), range_task(index, s, e)) for s, e, _c in ranges]
        assert b"".join(data for _begin, data in pieces) == dump_bytes
        for begin, data in pieces:
            assert dump_bytes[begin : begin + len(data)] == data
    # Ranges need not start on checkpoints: cut anywhere, even mid-line, every line comes once.
    cuts = [0, 1, 2, 777, 100_000, 1_234_567, 1_234_568, 3_000_001, len(dump_bytes)]
    pieces = [read_indexed_range(str(gz), range_task(index, s, e)) for s, e in itertools.pairwise(cuts)]
    assert b"".join(data for _begin, data in pieces) == dump_bytes
    # A map task decompresses its range a piece at a time: the same lines, each piece whole lines.
    longest = max(len(line) + 1 for line in dump_bytes.split(b"\n"))
    for (start, end), (begin, data) in zip(itertools.pairwise(cuts), pieces, strict=True):
        parts = []
        for offset, buffer, length in iter_indexed_range(str(gz), range_task(index, start, end), 50_000):
            part = bytes(buffer[:length])
            assert offset == begin + sum(map(len, parts)) and part.endswith(b"\n")
            assert length <= 50_000 + longest  # a piece and at most one line more
            parts.append(part)
        assert b"".join(parts) == data
        assert len(parts) >= len(data) // (50_000 + longest)


def test_thinned_index_keeps_far_checkpoints_and_reads_the_same(
    tmp_path: Path, dump_bytes: bytes, gz_bytes: bytes
) -> None:
    import rapidgzip

    gz = tmp_path / "dump.json.gz"
    gz.write_bytes(gz_bytes)
    digest = sha256_of(gz)
    with rapidgzip.RapidgzipFile(str(gz), parallelization=1, chunk_size=256 << 10) as reader:
        assert len(reader.read()) == len(dump_bytes)
        dense = sorted(reader.block_offsets().values())
        saved = save_gzip_index(reader, str(gz), digest, len(dump_bytes), spacing=1_500_000)
    assert saved == Path(str(gz) + INDEX_SUFFIX)
    index = load_gzip_index(str(gz), digest)
    assert index is not None
    kept = [d for _bits, d in index.checkpoints]
    assert kept[0] == 0 and set(kept) < set(dense) and len(kept) >= 2
    assert all(b - a >= 1_500_000 for a, b in itertools.pairwise(kept))
    ranges = index.ranges(gz.stat().st_size, 1)
    assert [s for s, _e, _c in ranges] == kept
    pieces = [read_indexed_range(str(gz), range_task(index, s, e)) for s, e, _c in ranges]
    assert b"".join(data for _begin, data in pieces) == dump_bytes


def test_stale_or_damaged_index_is_never_trusted(
    tmp_path: Path, gz_bytes: bytes, sequential_hashes: dict[str, str]
) -> None:
    gz = tmp_path / "dump.json.gz"
    gz.write_bytes(gz_bytes)
    reference = sequential_hashes
    assert shard_hashes(build(tmp_path / "first", gz, workers=2)) == reference
    digest = sha256_of(gz)
    index_file = Path(str(gz) + INDEX_SUFFIX)
    good = index_file.read_bytes()
    assert load_gzip_index(str(gz), digest) is not None
    # The dump was touched: its mtime no longer matches the one recorded.
    st = gz.stat()
    os.utime(gz, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert load_gzip_index(str(gz), digest) is None
    assert all(t.startswith("b") for t in planned_task_ids(tmp_path, gz, workers=2))
    assert shard_hashes(build(tmp_path / "rebuilt", gz, workers=2)) == reference
    assert load_gzip_index(str(gz), digest) is not None  # rewritten by that full read
    # A cut index file (rapidgzip cannot import it) and a foreign one (other content) are ignored.
    index_file.write_bytes(index_file.read_bytes()[: len(good) // 2])
    assert load_gzip_index(str(gz), digest) is None
    index_file.write_bytes(good.replace(digest.encode(), b"0" * 64))
    assert load_gzip_index(str(gz), digest) is None
    assert shard_hashes(build(tmp_path / "again", gz, workers=2)) == reference


def test_index_goes_to_the_cache_when_it_cannot_sit_beside_the_dump(
    tmp_path: Path, gz_bytes: bytes, sequential_hashes: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("ENTBENCH_CACHE_DIR", str(cache))
    gz = tmp_path / "dump.json.gz"
    gz.write_bytes(gz_bytes)
    # Tests run as root, for whom a read-only directory is writable: block the name instead.
    Path(str(gz) + INDEX_SUFFIX).mkdir()
    reference = sequential_hashes
    assert shard_hashes(build(tmp_path / "first", gz, workers=2)) == reference
    digest = sha256_of(gz)
    cached = cache / "rapidgzip-index" / f"{digest}{INDEX_SUFFIX}"
    assert cached.is_file()
    index = load_gzip_index(str(gz), digest)
    assert index is not None and index.path == str(cached)
    assert all(t.startswith("g") for t in planned_task_ids(tmp_path, gz, workers=2))
    assert shard_hashes(build(tmp_path / "indexed", gz, workers=2)) == reference


def test_multistream_bz2_on_two_workers_writes_the_same_bytes(tmp_path: Path, dump_bytes: bytes) -> None:
    cut = dump_bytes.index(b"\n", len(dump_bytes) // 2) + 1
    multi = tmp_path / "multi.json.bz2"
    multi.write_bytes(bz2.compress(dump_bytes[:cut]) + bz2.compress(dump_bytes[cut:]))
    one = build(tmp_path / "w1", multi, workers=1)
    two = build(tmp_path / "w2", multi, workers=2)
    assert shard_hashes(one) == shard_hashes(two)
    assert load_manifest(one)["stats"] == load_manifest(two)["stats"]
    single = build(tmp_path / "single", FIXTURES / "entities-new.json.bz2", workers=2)
    assert table_rows(single) == table_rows(two)


@pytest.mark.parametrize("suffix", [".json.gz", ".json.bz2"])
@pytest.mark.parametrize("fraction", [0.5, 0.97])
def test_damaged_stream_is_the_same_error_on_any_worker_count(
    tmp_path: Path, gz_bytes: bytes, bz2_bytes: bytes, suffix: str, fraction: float
) -> None:
    compressed = gz_bytes if suffix == ".json.gz" else bz2_bytes
    dump = tmp_path / f"cut{suffix}"
    dump.write_bytes(compressed[: int(len(compressed) * fraction)])
    errors = []
    for workers in (1, 2):
        with pytest.raises(DataError) as info:
            build(tmp_path / f"w{workers}", dump, workers=workers, max_bad_lines=5)
        errors.append(str(info.value))
        assert not list((tmp_path / f"w{workers}" / "normalized" / "wikidata").glob("v*"))
    assert errors[0] == errors[1]
    assert f"{dump} at byte offset" in errors[0] and "compressed stream ends early" in errors[0]
    assert "of the decompressed stream: " in errors[0]  # the offset is not one of the file's bytes
    assert not Path(str(dump) + INDEX_SUFFIX).exists()  # a damaged stream leaves no index


def test_dask_workers_read_indexed_gz_ranges_with_local_bytes(
    tmp_path: Path, gz_bytes: bytes, sequential_hashes: dict[str, str]
) -> None:
    pytest.importorskip("distributed")
    gz = tmp_path / "dump.json.gz"
    gz.write_bytes(gz_bytes)
    reference = sequential_hashes
    first = build(tmp_path / "dask-first", gz, workers=2, executor="dask")  # leaves the index
    assert all(t.startswith("g") for t in planned_task_ids(tmp_path, gz, workers=2))
    indexed = build(tmp_path / "dask-indexed", gz, workers=2, executor="dask")
    assert shard_hashes(first) == shard_hashes(indexed) == reference


def test_single_cpu_reads_blocks_inline_with_identical_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one usable CPU the decompressed blocks are read without the prefetch thread (it
    would only take turns with the parser); the shards must not change."""
    from entbench.engine import dump_scan

    source = FIXTURES / "kgtk-arnold.hierarchy.json.gz"
    threaded = _build_quiet(tmp_path / "threaded", source)
    monkeypatch.setattr(dump_scan, "usable_cpus", lambda: 1)
    monkeypatch.setattr(dump_scan, "Prefetched", None)  # must not be used
    inline = _build_quiet(tmp_path / "inline", source)
    assert shard_hashes(inline) == shard_hashes(threaded)


def _build_quiet(out: Path, source: Path) -> Path:
    from tests import builds as samples

    dirs = samples.build(
        "wikidata", sources=[f"wikidata={source}"], out=out, workers=1, progress=False, log=lambda _m: None
    )
    return dirs["wikidata"]
