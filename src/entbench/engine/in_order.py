"""Writing a shard whose rows a reduce produces already in order, a piece at a time (`InOrder`).

A reduce whose output grows with its shard (a memorisation audit's decisions: every evaluation row
of its span keys, and a WikiReading question has a sixth of a split) need not hold the whole table:
it gives the pieces in the output's `sort_by` order, and they are written with the bytes
`shards.write_parquet` gives their concatenation. The row group size depends on every row
(`row_groups.rows_per_group`), so the pieces go to an Arrow file in scratch first, and are read back
one at a time and cut into row groups: about a piece and a row group are held at a time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from entbench.engine.executors.base import trim_heap
from entbench.engine.external_sort import row_groups_of
from entbench.engine.key_order import value_sort_key
from entbench.engine.row_groups import content_bytes, rows_per_group
from entbench.engine.shards import WrittenShard, cast_rows, sort_order, write_row_groups

#: The scratch file the pieces wait in.
SPILL_FILE = "in-order.arrow"


def write_in_order(
    pieces: Iterable[pa.Table],
    path: Path,
    *,
    schema: pa.Schema,
    metadata: dict[str, str],
    sort_by: Sequence[str],
    scratch: Path,
) -> WrittenShard:
    """Write the rows of `pieces` (cast here to `schema`), which must come in `sort_by` order with
    no key twice (`ValueError` otherwise), as `write_parquet` writes them in one table."""
    scratch.mkdir(parents=True, exist_ok=True)
    spill = scratch / SPILL_FILE
    rows = content = 0
    last: tuple[Any, ...] | None = None
    try:
        with pa.OSFile(str(spill), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
            for given in pieces:
                piece = cast_rows(given, schema)
                del given
                if not piece.num_rows:
                    continue
                first = _key(piece, sort_by, 0)
                if sort_order(piece, sort_by) is not None or (last is not None and first <= last):
                    raise ValueError(f"pieces given in order are not in order of {list(sort_by)}")
                last = _key(piece, sort_by, piece.num_rows - 1)
                rows += piece.num_rows
                content += content_bytes(piece)
                writer.write_table(piece)
                del piece
        # The producer is done: what the reduce built to make the pieces (its gathered rows, an
        # index, each slice's Python objects) is freed, but as gaps in malloc's heap that the
        # row groups read back below do not fit (they are larger and of other sizes), so the read
        # back took new pages on top. Handed back first (a WikiReading audit's shard of one
        # question at 16S: 175 -> 164 MiB), the read back reuses them.
        trim_heap()
        with pa.OSFile(str(spill), "rb") as source:
            reader = pa.ipc.open_file(source)
            groups = _trimmed(row_groups_of(_tables(reader), rows_per_group(rows, content)))
            return write_row_groups(
                groups, path, schema=schema, metadata=metadata, sort_by=sort_by, rows=rows
            )
    finally:
        with contextlib.suppress(FileNotFoundError):
            spill.unlink()


def _trimmed(groups: Iterator[pa.Table]) -> Iterator[pa.Table]:
    """`groups`, the heap handed back after each is written: a group's pieces (read from the
    spill) and its combined copy (made by the writer) interleave in the heap, and the next
    group's did not fit the gaps they left (at 16S a shard's 4 groups of 7 MiB left 17 MiB of gaps
    in the heap, 194 MiB against 174 after the first). A few ms a row group, of 8 MiB at most."""
    for group in groups:
        yield group
        del group  # written, and let go of by the writer: freed here
        trim_heap()


def _tables(reader: pa.ipc.RecordBatchFileReader) -> Iterator[pa.Table]:
    """The spilled pieces, one batch at a time (read into memory, not mapped)."""
    for i in range(reader.num_record_batches):
        yield pa.Table.from_batches([reader.get_batch(i)])


def _key(table: pa.Table, sort_by: Sequence[str], row: int) -> tuple[Any, ...]:
    """Row `row`'s sort key as Python values ordered as Arrow's ascending sort orders them."""
    return tuple(
        value_sort_key(table.column(name)[row].as_py(), pa.types.is_floating(table.schema.field(name).type))
        for name in sort_by
    )
