"""The Wikidata scan's own logic: how a dump is cut into map tasks, rejected lines and their files,
and which revision of a duplicated entity id is kept (`stages/scan.py` runs it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from entbench.engine.shards import atomic_write_text
from entbench.engine.stage import StageContext

#: Aim for at least this many map tasks (`task_bytes`), so that workers finish together...
MIN_TASKS = 8
#: ...but never tasks smaller than this.
MIN_TASK_BYTES = 8 << 20
#: Estimated decompressed/compressed size ratio, for choosing a shard count before reading.
EXPANSION = {"none": 1, "gzip": 7, "bz2": 9}
#: Map spill bytes per byte of JSON, rounded up from the 20% measured on the benchmark dump.
SPILL_SHARE = 0.25
#: Target decompressed JSON bytes per output shard when `num_shards` is 0 (auto). Small enough that
#: a shard's reduce (its `entities` whole, to drop superseded revisions; the other tables' keys, their
#: rows being sorted through runs on disk, `engine.external_sort`) stays well inside a worker's memory
#: budget and that a dump of a few hundred MB already has shards for two workers to reduce in parallel.
AUTO_SHARD_INPUT_BYTES = 256 << 20
#: Bytes of a rejected line kept in its reject record.
HEAD_BYTES = 200


def task_bytes(ctx: StageContext, input_bytes: int) -> int:
    """Bytes of JSON per map task: `--chunk-mb`, but small enough that a dump has `MIN_TASKS`.

    In 64 MB tasks a dump of a few hundred MB leaves one of two workers idle for most of a task
    at the end. The size depends on the input only, never on `--workers`: a build resumed with
    another worker count must find the same tasks (their ids name their spills and rejects).
    """
    return min(ctx.options.chunk_bytes, max(MIN_TASK_BYTES, input_bytes // MIN_TASKS))


def pieces(block: bytes | bytearray, size: int) -> Iterator[tuple[int, int]]:
    """[start, end) spans of `block` of about `size` bytes, each ending after a newline (or at the end)."""
    start, n = 0, len(block)
    while start < n:
        cut = block.find(b"\n", min(start + size, n) - 1)
        end = n if cut < 0 else cut + 1
        yield start, end
        start = end


#: Reasons a line that runs to the end of the stream without a newline is taken for a cut tail.
TRUNCATION_REASONS = frozenset({"malformed_json", "invalid_utf8"})


def runs_to_the_end(start: int, line: bytes, block: bytes | bytearray) -> bool:
    """Whether the line at `start` of `block` has no newline after it. Blocks and byte ranges end
    after a newline except the stream's very last one, so such a line is the dump's last."""
    return start + len(line) >= len(block) and not block.endswith(b"\n")


def reject_record(label: str, offset: int, reason: str, detail: str, line: bytes) -> dict[str, Any]:
    """One line of `_rejects.jsonl`: the file, the line's offset, why, and the line's head."""
    return {
        "file": label,
        "offset": offset,
        "reason": reason,
        "detail": detail[:500],
        "head": line[:HEAD_BYTES].decode("utf-8", "backslashreplace"),
    }


def write_rejects(path: Path, rejects: list[dict[str, Any]]) -> None:
    """Write reject records as JSON lines (atomically)."""
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rejects)
    atomic_write_text(path, text)


def write_task_rejects(path: Path, rejects: list[dict[str, Any]]) -> None:
    """A map task's rejects; none means no file (a full dump has ~23k tasks, nearly all clean)."""
    if rejects:
        write_rejects(path, rejects)
    else:
        path.unlink(missing_ok=True)


def first_reject(map_dir: Path) -> dict[str, Any] | None:
    """The reject of lowest offset among the map tasks' reject files, if any."""
    first: dict[str, Any] | None = None
    for path in map_dir.glob("*.rejects.jsonl"):
        with open(path, encoding="utf-8") as f:
            for line in f:
                record = json.loads(line)
                if first is None or record["offset"] < first["offset"]:
                    first = record
                break  # each file is in offset order
    return first


def dedupe_entities(entities: pa.Table) -> tuple[pa.Table, list[tuple[str, int, int]]]:
    """Keep the best revision per id; returns the kept rows and (id, dropped offset, kept offset)."""
    ids = entities.column("id").to_pylist()
    revs = entities.column("lastrevid").to_pylist()
    offs = entities.column("source_offset").to_pylist()
    best: dict[str, int] = {}
    for i, ident in enumerate(ids):
        j = best.get(ident)
        if j is None or ((revs[i] or -1), offs[i]) > ((revs[j] or -1), offs[j]):
            best[ident] = i
    keep = sorted(best.values())
    dropped = [(ids[i], offs[i], offs[best[ids[i]]]) for i in range(len(ids)) if best[ids[i]] != i]
    return entities.take(pa.array(keep, pa.int64())), sorted(dropped, key=lambda d: d[1])
