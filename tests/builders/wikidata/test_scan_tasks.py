"""How the Wikidata scan cuts a dump into map tasks."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from entbench.builders.wikidata.stages import scan as wikidata_scan
from entbench.engine.manifest import load_manifest
from tests import builds as samples
from tests.builders.kb.support import shard_hashes

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


def test_map_task_size_depends_on_the_input_only() -> None:
    """Small dumps get MIN_TASKS tasks (workers finish together); the size never depends on
    --workers, so a build resumed with another worker count finds the same task ids."""
    from types import SimpleNamespace
    from typing import Any, cast

    from entbench.engine.dump_scan import MIN_TASK_BYTES, MIN_TASKS, task_bytes

    def size(input_bytes: int, workers: int, chunk_mb: int = 64) -> int:
        ctx = SimpleNamespace(options=SimpleNamespace(chunk_bytes=chunk_mb << 20, workers=workers))
        return task_bytes(cast(Any, ctx), input_bytes)

    for workers in (1, 2, 8):
        assert size(320 << 20, workers) == (320 << 20) // MIN_TASKS
        assert size(100 << 30, workers) == 64 << 20  # --chunk-mb caps big dumps
        assert size(1 << 20, workers) == MIN_TASK_BYTES
    assert size(100 << 30, 2, chunk_mb=16) == 16 << 20


@pytest.mark.parametrize("compressed", [True, False], ids=["gz-blocks", "plain-ranges"])
def test_a_map_task_emits_its_rows_a_piece_at_a_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, compressed: bool
) -> None:
    """A task's rows reach the sink every `EMIT_BYTES` of its input (its memory is that input's rows,
    whatever the task's size), and the shards, rejects and stats are those of a build in pieces of
    the default size: a block handed to the task (`.gz`) and a range it reads itself (plain)."""
    data = gzip.decompress((FIXTURES / "wikidata/kgtk-arnold.hierarchy.json.gz").read_bytes())
    source = tmp_path / ("dump.json.gz" if compressed else "dump.json")
    source.write_bytes(gzip.compress(data, 1) if compressed else data)
    longest = max(len(line) + 1 for line in data.split(b"\n"))

    def build(out: str) -> Path:
        dirs = samples.build(
            "wikidata",
            sources=[f"wikidata={source}"],
            params=["wikidata.num_shards=2"],
            out=tmp_path / out,
            workers=1,  # the map runs in this process, so the patches below reach it
            progress=False,
            log=lambda _msg: None,
            card=False,
            chunk_mb=2,
        )
        return dirs["wikidata"]

    spans: list[int] = []
    emit = wikidata_scan.emit_tables

    def recorded(sink: Any, parts: Any) -> None:
        tables = [part["entities"][0] for part in parts if "entities" in part]
        offsets = [o for table in tables for o in table.column("source_offset").to_pylist()]
        if offsets:
            spans.append(max(offsets) - min(offsets))
        emit(sink, parts)

    whole = build("default-pieces")
    monkeypatch.setattr(wikidata_scan, "emit_tables", recorded)
    monkeypatch.setattr(wikidata_scan, "NATIVE_PIECE_BYTES", 64 << 10)
    monkeypatch.setattr(wikidata_scan, "EMIT_BYTES", 128 << 10)  # every two pieces
    pieces = build("small-pieces")
    assert shard_hashes(pieces) == shard_hashes(whole)
    assert (pieces / "_rejects.jsonl").read_bytes() == (whole / "_rejects.jsonl").read_bytes()
    assert load_manifest(pieces)["stats"] == load_manifest(whole)["stats"]
    assert load_manifest(pieces)["stats"]["entities_written"] == 8_931
    assert len(spans) >= len(data) // (256 << 10)  # an emit every two pieces, not one per task
    # Each emit holds the lines of EMIT_BYTES and at most one piece more (a piece of a range read in
    # 64 KB reads ends at its last whole line, so two can fall just short of 128 KB).
    assert max(spans) < (128 << 10) + (64 << 10) + longest
