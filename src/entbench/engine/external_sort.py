"""Writing a shard table too large to sort in memory: sorted runs on disk, merged a row group at a time.

A reducer that keeps a mapped table as it is (`Stage.reduce` leaves it out of its result) used to
read all of the shard's rows into memory, copy them into one chunk, sort and write them: about
twice the table at once, so a stage's peak memory grew with its shard. Past `SORT_MEMORY_BYTES`
of spilled rows (`write_sorted`):

1. the rows are read in batches, cast to the output schema, and cut into *runs* of about
   `SORT_MEMORY_BYTES`; each run is sorted by the table's key and written to a scratch file
   (Arrow IPC stream) in that order, and only its sorted key columns stay in memory;
2. the key columns of every run are sorted together: the shard's order, and for each output row
   the run it comes from. Within a run the rows come out in the run's own order, so every run is
   read once, front to back;
3. each row group takes its rows from the runs' read positions and is written, then freed.

Memory is the key columns of the shard plus about two runs' worth, whatever the shard's size.
The keys are unique (checked, as on the in-memory path), so there is one sorted order: the rows,
their order, the row groups and the dictionary choice are those of `shards.write_parquet` on the
whole table, and so are the bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from entbench.engine.shards import (
    WrittenShard,
    cast_rows,
    content_bytes,
    rows_per_group,
    sort_order,
    write_row_groups,
)

#: A kept table whose spilled rows exceed this many bytes is sorted through runs on disk; also the
#: size of a run. About what a Wikidata scan's map task holds (8 MB of JSON becomes ~9 MB of rows),
#: so a reducer's peak stays near a mapper's.
SORT_MEMORY_BYTES = 16 << 20
#: Rows per batch of a run file: the unit a run is read back in during the merge.
RUN_BATCH_ROWS = 4_096


def write_sorted(
    batches: Iterable[pa.RecordBatch],
    path: Path,
    *,
    schema: pa.Schema,
    metadata: dict[str, str],
    sort_by: Sequence[str],
    scratch: Path,
) -> WrittenShard:
    """Write the rows of `batches` (mapped rows, cast here to `schema`) sorted by `sort_by`, as
    `shards.write_parquet` would, holding about two runs at a time; run files go to `scratch`
    (created, and emptied of them again)."""
    if not sort_by:
        raise ValueError("an external sort needs a sort key")
    runs = _RunWriter(scratch, schema, sort_by)
    try:
        for batch in batches:
            runs.add(cast_rows(pa.Table.from_batches([batch]), schema))
        runs.flush()
        keys = pa.concat_tables(runs.keys) if runs.keys else schema.empty_table().select(list(sort_by))
        run_ids = np.repeat(np.arange(len(runs.keys), dtype=np.int32), [k.num_rows for k in runs.keys])
        runs.keys.clear()
        order = sort_order(keys, sort_by)  # raises DuplicateKeyError as the in-memory path does
        del keys
        run_of = run_ids if order is None else run_ids[order.to_numpy()]
        del run_ids, order
        size = rows_per_group(runs.rows, runs.content)
        merger = _RunMerger(runs.paths, schema)
        try:
            groups = (merger.group(run_of[start : start + size]) for start in range(0, runs.rows, size))
            return write_row_groups(
                groups, path, schema=schema, metadata=metadata, sort_by=sort_by, rows=runs.rows
            )
        finally:
            merger.close()
    finally:
        runs.remove()


class _RunWriter:
    """Collects cast rows; every `SORT_MEMORY_BYTES`, sorts them and writes them as one run."""

    def __init__(self, scratch: Path, schema: pa.Schema, sort_by: Sequence[str]) -> None:
        self.scratch = scratch
        self.schema = schema
        self.sort_keys = [(column, "ascending") for column in sort_by]
        self.sort_by = list(sort_by)
        self.paths: list[Path] = []
        self.keys: list[pa.Table] = []
        self.rows = 0
        self.content = 0
        self._pending: list[pa.Table] = []
        self._pending_bytes = 0

    def add(self, rows: pa.Table) -> None:
        if not rows.num_rows:
            return
        self.rows += rows.num_rows
        self._pending.append(rows)
        self._pending_bytes += rows.nbytes
        if self._pending_bytes >= SORT_MEMORY_BYTES:
            self.flush()

    def flush(self) -> None:
        """Sort what is pending and write it as the next run."""
        if not self._pending:
            return
        table = pa.concat_tables(self._pending).combine_chunks()
        # Counted once a run rather than once a spilled batch: the same sum, in a tenth of the
        # compute calls (a nested claim table's leaves are ~30 of them per count).
        self.content += content_bytes(table)
        self._pending.clear()
        self._pending_bytes = 0
        # One take of the whole run, then written a batch at a time as slices of it: a take per
        # batch paid the nested claim columns' per-call cost ~15 times a run (0.07 -> 0.03 s CPU
        # a 16 MB run of truthy claims), for one run's worth of memory more at the moment of the take.
        table = table.take(pc.sort_indices(table, sort_keys=self.sort_keys))
        # The key columns are buffers of their own in the taken table: kept, they hold nothing else.
        self.keys.append(table.select(self.sort_by))
        self.scratch.mkdir(parents=True, exist_ok=True)
        path = self.scratch / f"run-{len(self.paths):05d}.arrows"
        # Listed before it is written, so that a failed write is removed too.
        self.paths.append(path)
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, self.schema) as writer:
            for batch in table.to_batches(max_chunksize=RUN_BATCH_ROWS):
                writer.write_batch(batch)

    def remove(self) -> None:
        """Delete the run files."""
        for path in self.paths:
            path.unlink(missing_ok=True)


class _RunCursor:
    """One run file, read front to back as rows are taken from it."""

    def __init__(self, path: Path) -> None:
        self._file = pa.OSFile(str(path), "rb")
        self._reader = pa.ipc.open_stream(self._file)
        self._batch: pa.RecordBatch | None = None
        self._position = 0

    def take(self, count: int) -> Iterator[pa.RecordBatch]:
        """The run's next `count` rows, as slices of its batches."""
        while count:
            if self._batch is None or self._position == self._batch.num_rows:
                self._batch = self._reader.read_next_batch()
                self._position = 0
            n = min(count, self._batch.num_rows - self._position)
            yield self._batch.slice(self._position, n)
            self._position += n
            count -= n

    def close(self) -> None:
        self._file.close()


class _RunMerger:
    """The sorted runs, merged one row group at a time."""

    def __init__(self, paths: Sequence[Path], schema: pa.Schema) -> None:
        self.schema = schema
        self._cursors = [_RunCursor(path) for path in paths]

    def group(self, run_of: np.ndarray) -> pa.Table:
        """The next `len(run_of)` rows of the shard, row i from run `run_of[i]`."""
        counts = np.bincount(run_of, minlength=len(self._cursors))
        pieces: list[pa.RecordBatch] = []
        for run in np.flatnonzero(counts):
            pieces.extend(self._cursors[run].take(int(counts[run])))
        gathered = pa.Table.from_batches(pieces, self.schema)  # run by run, each in its own order
        # Row i is the k-th row of its run in this group, which sits at that run's offset + k in
        # `gathered`: a stable sort of the run ids lists the rows in `gathered`'s order.
        by_run = np.argsort(run_of, kind="stable")
        position = np.empty_like(by_run)
        position[by_run] = np.arange(len(by_run))
        return gathered.take(pa.array(position))

    def close(self) -> None:
        for cursor in self._cursors:
            cursor.close()
