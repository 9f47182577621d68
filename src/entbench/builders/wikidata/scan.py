"""The Wikidata scan's own logic: the JSON dump's size ratios, the pieces the native scanner reads,
and which revision of a duplicated entity id is kept
(`stages/scan.py` runs it; planning, progress and rejects are `engine.dump_scan`'s).
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

#: Decompressed/compressed size ratio when a dump's own cannot be measured (`DumpScan.expansion_of`
#: measures it on the dump's start: latest-all.json.gz ~10-12x, the benchmark's generated dumps ~14x).
EXPANSION = {"none": 1, "gzip": 7, "bz2": 9}
#: Map spill bytes per byte of JSON, rounded up from the 20% measured on the benchmark dump.
SPILL_SHARE = 0.25
#: Target decompressed JSON bytes per output shard when `num_shards` is 0 (auto). Small enough that
#: a shard's reduce (its `entities` whole, to drop superseded revisions; the other tables' keys, their
#: rows being sorted through runs on disk, `engine.external_sort`) stays well inside a worker's memory
#: budget and that a dump of a few hundred MB already has shards for two workers to reduce in parallel.
AUTO_SHARD_INPUT_BYTES = 256 << 20


def pieces(block: bytes | bytearray, size: int) -> Iterator[tuple[int, int]]:
    """[start, end) spans of `block` of about `size` bytes, each ending after a newline (or at the end)."""
    start, n = 0, len(block)
    while start < n:
        cut = block.find(b"\n", min(start + size, n) - 1)
        end = n if cut < 0 else cut + 1
        yield start, end
        start = end


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
