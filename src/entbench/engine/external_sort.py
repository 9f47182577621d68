"""Writing a shard table too large to sort in memory: sorted runs on disk, merged a row group at a time.

A reducer that keeps a mapped table as it is (`Stage.reduce` leaves it out of its result) used to
read all of the shard's rows into memory, copy them into one chunk, sort and write them: about
twice the table at once, so a stage's peak memory grew with its shard. Past `SORT_MEMORY_BYTES`
of spilled rows (`write_sorted`):

1. the rows are read in batches and cut into *runs* of about `SORT_MEMORY_BYTES`; each run is
   cast to the output schema, sorted by the table's key and written to a scratch file (Arrow IPC
   stream) in that order, and only its sorted key columns stay in memory. The last run, still in
   memory when the rows end, stays there sorted instead of going to disk and back: a shard of a
   few runs (a 20k-entity dump's claims: two) spent a tenth of its external sort on that round trip;
2. the key columns of every run are sorted together: the shard's order, and for each output row
   the run it comes from. Within a run the rows come out in the run's own order, so every run is
   read once, front to back;
3. each row group takes its rows from the runs' read positions and is written, then freed.

Memory is the key columns of the shard plus about two runs' worth, whatever the shard's size
(while merging: the last run and the row group being gathered).
The keys are unique (checked, as on the in-memory path), so there is one sorted order: the rows,
their order, the row groups and the dictionary choice are those of `shards.write_parquet` on the
whole table, and so are the bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from entbench.engine.key_order import sort_indices
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
            runs.add(pa.Table.from_batches([batch]))
        last = runs.sorted_pending()
        sources: list[Path | pa.Table] = [*runs.paths, *([] if last is None else [last])]
        del last
        keys = pa.concat_tables(runs.keys) if runs.keys else schema.empty_table().select(list(sort_by))
        run_ids = np.repeat(np.arange(len(runs.keys), dtype=np.int32), [k.num_rows for k in runs.keys])
        runs.keys.clear()
        order = sort_order(keys, sort_by)  # raises DuplicateKeyError as the in-memory path does
        del keys
        run_of = run_ids if order is None else run_ids[order.to_numpy()]
        del run_ids, order
        size = rows_per_group(runs.rows, runs.content)
        merger = _RunMerger(sources, schema)
        del sources  # the in-memory run is the merger's now, freed when it closes
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
    """Collects rows; every `SORT_MEMORY_BYTES`, casts and sorts them and writes them as one run."""

    def __init__(self, scratch: Path, schema: pa.Schema, sort_by: Sequence[str]) -> None:
        self.scratch = scratch
        self.schema = schema
        self.sort_by = list(sort_by)
        self.paths: list[Path] = []
        self.keys: list[pa.Table] = []
        self.rows = 0
        self.content = 0
        self._pending: list[pa.Table] = []
        self._pending_bytes = 0

    def add(self, rows: pa.Table) -> None:
        """Mapped rows (the output's columns and maybe others, which the cast drops)."""
        if not rows.num_rows:
            return
        rows = rows.select(self.schema.names)  # what the run will hold (no copy)
        self.rows += rows.num_rows
        self._pending.append(rows)
        self._pending_bytes += rows.nbytes
        if self._pending_bytes >= SORT_MEMORY_BYTES:
            self.flush()

    def sorted_pending(self) -> pa.Table | None:
        """What is pending as one run, cast and sorted, its keys recorded like a written run's
        (None when nothing is); the caller keeps it in memory instead of a run file."""
        if not self._pending:
            return None
        # Cast once a run rather than once a spilled batch: the same rows, a fraction of the calls.
        # Not combined into one chunk first: Arrow's take gathers from the batches themselves and
        # gives one chunk (a copy of the run less: 0.055 -> 0.049 s CPU a 55k-row run of claims).
        table = cast_rows(pa.concat_tables(self._pending), self.schema)
        # Counted once a run rather than once a spilled batch: the same sum, in a tenth of the
        # compute calls (a nested claim table's leaves are ~30 of them per count).
        self.content += content_bytes(table)
        self._pending.clear()
        self._pending_bytes = 0
        # One take of the whole run, then read a batch at a time as slices of it: a take per
        # batch paid the nested claim columns' per-call cost ~15 times a run (0.07 -> 0.03 s CPU
        # a 16 MB run of truthy claims), for one run's worth of memory more at the moment of the take.
        table = table.take(sort_indices(table, self.sort_by))
        # The key columns are buffers of their own in the taken table: kept, they hold nothing else.
        self.keys.append(table.select(self.sort_by))
        return table

    def flush(self) -> None:
        """Sort what is pending and write it as the next run."""
        table = self.sorted_pending()
        if table is None:
            return
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
    """One run, read front to back as rows are taken from it: a run file, or the sorted run kept
    in memory (its batches are slices of its buffers, so it is held until the merge ends)."""

    def __init__(self, run: Path | pa.Table) -> None:
        self._file: pa.NativeFile | None = None
        self._batches: list[pa.RecordBatch] = []
        if isinstance(run, pa.Table):
            self._batches = run.to_batches(max_chunksize=RUN_BATCH_ROWS)
            self._batches.reverse()  # popped from the end, in order
        else:
            self._file = pa.OSFile(str(run), "rb")
            self._reader = pa.ipc.open_stream(self._file)
        self._batch: pa.RecordBatch | None = None
        self._position = 0

    def _next_batch(self) -> pa.RecordBatch:
        return self._reader.read_next_batch() if self._file is not None else self._batches.pop()

    def take(self, count: int) -> Iterator[pa.RecordBatch]:
        """The run's next `count` rows, as slices of its batches."""
        while count:
            if self._batch is None or self._position == self._batch.num_rows:
                self._batch = self._next_batch()
                self._position = 0
            n = min(count, self._batch.num_rows - self._position)
            yield self._batch.slice(self._position, n)
            self._position += n
            count -= n
            if self._position == self._batch.num_rows:
                # Not kept until the next take: a run taken to its end is never taken from again,
                # and every finished run held its last batch (a few MB of pages' text each) to the
                # end of the merge, so a shard's merge grew with its number of runs.
                self._batch = None

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        self._batches.clear()


class _RunMerger:
    """The sorted runs (files, and the last one in memory), merged one row group at a time."""

    def __init__(self, runs: Sequence[Path | pa.Table], schema: pa.Schema) -> None:
        self.schema = schema
        self._cursors = [_RunCursor(run) for run in runs]

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
