"""Writing a shard table too large to sort in memory: sorted runs on disk, merged a window at a time.

A reducer that keeps a mapped table as it is (`Stage.reduce` leaves it out of its result) used to
read all of the shard's rows into memory, copy them into one chunk, sort and write them: about
twice the table at once, so a stage's peak memory grew with its shard. Past its stage's
`Stage.sort_memory_bytes` of spilled rows (`SORT_MEMORY_BYTES` unless the stage says otherwise),
the table is written by `write_sorted`:

1. the rows are read in batches and cut into *runs* of about that many bytes; each run is
   cast to the output schema, sorted by the table's key and written to a scratch file (Arrow IPC
   stream) in that order, in batches of at most `RUN_BATCH_ROWS` rows and about `RUN_BATCH_BYTES`.
   The last run, still in memory when the rows end, stays there sorted instead of going to disk
   and back: a shard of a few runs (a 20k-entity dump's claims: two) spent a tenth of its external
   sort on that round trip;
2. the runs are merged k ways, a *window* at a time (`_RunMerger`): each run holds its current
   batch; the smallest of the batches' last keys is the frontier, and every row up to it in every
   run's batch (a prefix of each, found by bisection) is the shard's next rows: a later batch of
   any run starts past its run's last key, which is at least the frontier. The rows of one run
   need no sort (a dump's runs are mostly disjoint ranges of keys: a Wikipedia scan's page ids);
   rows of several are sorted together, stably in run order;
3. the merged rows are cut into row groups of the size the whole shard gives and written.

Memory is about a batch per run plus a row group, whatever the shard's size: the shard's key
columns were once sorted together here, and that sort (~50 bytes a row: `links` at 1.7M rows a
shard) was what still grew with the shard.
The keys are unique (checked as the rows stream by: sorted, equal keys are adjacent), so there is
one sorted order: the rows, their order, the row groups and the dictionary choice are those of
`shards.write_parquet` on the whole table, and so are the bytes. A repeated key raises the
in-memory path's `DuplicateKeyError`, with the same count, once every row was seen.
"""

from __future__ import annotations

import bisect
import contextlib
import math
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from entbench.engine.key_order import adjacent_duplicates, order_and_duplicates, sort_indices, value_sort_key
from entbench.engine.row_groups import content_bytes, rows_per_group
from entbench.engine.shards import WrittenShard, cast_rows, duplicate_key_error, write_row_groups

#: The default of `Stage.sort_memory_bytes`: a kept table whose spilled rows exceed this many bytes
#: is sorted through runs on disk, and a run is about this size. At 32 MB every Wikipedia scan's
#: reducer held ~40 MiB more at 256 MB and at 1 GB of XML, and `wikireading_triples`' shards sorted
#: in memory at 1 GB as at 256 MB (peak RSS 1.12x for 4x the data, against 0.97x at 16 MB); a
#: stage whose shards gain from a larger limit declares it (the Wikidata scan:
#: `builders.wikidata.stages.scan`).
SORT_MEMORY_BYTES = 16 << 20
#: Rows per batch of a run file at most: the unit a run is read back and merged in (a window of
#: several runs costs a sort and a take whatever its size: at 4096 rows, 2M rows of interleaved
#: claims took 20% more CPU than the whole shard's sort; at 16k, the same)...
RUN_BATCH_ROWS = 16_384
#: ...and about the bytes of one (4096 rows of a Wikipedia scan's pages are ~10 MB of text): the
#: merge holds a batch of every run at once.
RUN_BATCH_BYTES = 1 << 20


def write_sorted(
    batches: Iterable[pa.RecordBatch],
    path: Path,
    *,
    schema: pa.Schema,
    metadata: dict[str, str],
    sort_by: Sequence[str],
    scratch: Path,
    run_bytes: int,
) -> WrittenShard:
    """Write the rows of `batches` (mapped rows, cast here to `schema`) sorted by `sort_by`, as
    `shards.write_parquet` would, holding about a run (`run_bytes` of spilled rows) and a batch of
    every run at a time; run files go to `scratch` (created, and emptied of them again). The bytes
    written are the same whatever `run_bytes`."""
    tables = (pa.Table.from_batches([batch]) for batch in batches)
    with _merged_runs(tables, schema, sort_by, scratch, run_bytes) as (runs, merged):
        groups = row_groups_of(merged, rows_per_group(runs.rows, runs.content))
        return write_row_groups(
            groups, path, schema=schema, metadata=metadata, sort_by=sort_by, rows=runs.rows
        )


def iter_sorted(
    tables: Iterable[pa.Table], *, schema: pa.Schema, sort_by: Sequence[str], scratch: Path, run_bytes: int
) -> Iterator[pa.Table]:
    """The rows of `tables` (cast to `schema`) sorted by `sort_by`, a window at a time, holding
    about a run (`run_bytes` of rows) and a batch of every run at a time: `write_sorted` for a
    caller that writes something else than a shard. The keys must be unique (`DuplicateKeyError`
    after the last rows otherwise); run files go to `scratch` and are removed when the rows end or
    the iterator is closed."""
    with _merged_runs(tables, schema, sort_by, scratch, run_bytes) as (_runs, merged):
        yield from merged


@contextlib.contextmanager
def _merged_runs(
    tables: Iterable[pa.Table], schema: pa.Schema, sort_by: Sequence[str], scratch: Path, run_bytes: int
) -> Iterator[tuple[_RunWriter, Iterator[pa.Table]]]:
    """The runs of `tables` written, and their merged rows; the merge's files closed and the runs
    removed when the block ends, however it ends."""
    if not sort_by:
        raise ValueError("an external sort needs a sort key")
    runs = _RunWriter(scratch, schema, sort_by, run_bytes)
    try:
        for table in tables:
            runs.add(table)
        merger = runs.merger()
        try:
            yield runs, merger.merged()
        finally:
            merger.close()
    finally:
        runs.remove()


def row_groups_of(pieces: Iterator[pa.Table], size: int) -> Iterator[pa.Table]:
    """The rows of `pieces`, in order, as tables of `size` rows (the last one fewer)."""
    held: list[pa.Table] = []
    count = 0
    for piece in pieces:
        start = 0
        while start < piece.num_rows:
            part = piece.slice(start, size - count)
            start += part.num_rows
            held.append(part)
            count += part.num_rows
            if count == size:
                yield pa.concat_tables(held)
                held.clear()
                count = 0
    if held:
        yield pa.concat_tables(held)


class _RunWriter:
    """Collects rows; every `run_bytes` of them, casts and sorts them and writes them as one run."""

    def __init__(self, scratch: Path, schema: pa.Schema, sort_by: Sequence[str], run_bytes: int) -> None:
        self.scratch = scratch
        self.schema = schema
        self.sort_by = list(sort_by)
        self.run_bytes = run_bytes
        self.paths: list[Path] = []
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
        if self._pending_bytes >= self.run_bytes:
            self.flush()

    def sorted_pending(self) -> pa.Table | None:
        """What is pending as one run, cast and sorted (None when nothing is); the caller keeps it
        in memory instead of a run file."""
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
        return table.take(sort_indices(table, self.sort_by))

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
            for batch in run_batches(table):
                writer.write_batch(batch)

    def merger(self) -> _RunMerger:
        """The runs merged: the files written and what is pending, sorted, kept in memory as the
        last run (freed when the merger closes)."""
        last = self.sorted_pending()
        return _RunMerger([*self.paths, *([] if last is None else [last])], self.schema, self.sort_by)

    def remove(self) -> None:
        """Delete the run files."""
        for path in self.paths:
            path.unlink(missing_ok=True)


def run_batches(run: pa.Table) -> list[pa.RecordBatch]:
    """A sorted run as the batches it is merged in: `RUN_BATCH_ROWS` rows, fewer when they would
    hold much more than `RUN_BATCH_BYTES` (slices of the run: no copy)."""
    rows = run.num_rows
    per_batch = RUN_BATCH_ROWS
    if rows and run.nbytes > RUN_BATCH_BYTES:
        per_batch = max(1, min(per_batch, math.ceil(rows * RUN_BATCH_BYTES / run.nbytes)))
    return [batch for batch in run.to_batches(max_chunksize=per_batch) if batch.num_rows]


#: A row's key as Python values that compare as Arrow's ascending sort with nulls last orders rows
#: (`_row_key`, `key_order.value_sort_key`).
Key = tuple[tuple[int, Any], ...]


class _RunCursor:
    """One run, read front to back a batch at a time: a run file, or the sorted run kept in memory
    (its batches are slices of its buffers, so it is held until the merge ends). `batch` holds the
    rows of the current batch not yet merged (None once the run is done), `first` and `last` their
    first and last key."""

    def __init__(self, run: Path | pa.Table, sort_by: Sequence[str]) -> None:
        self._sort_by = list(sort_by)
        self._file: pa.NativeFile | None = None
        self._batches: list[pa.RecordBatch] = []
        if isinstance(run, pa.Table):
            self._batches = run_batches(run)
            self._batches.reverse()  # popped from the end, in order
        else:
            self._file = pa.OSFile(str(run), "rb")
            self._reader = pa.ipc.open_stream(self._file)
        self.batch: pa.RecordBatch | None = None
        self.first: Key = ()
        self.last: Key = ()
        self._set(self._read())

    def _read(self) -> pa.RecordBatch | None:
        while True:
            if self._file is not None:
                try:
                    batch = self._reader.read_next_batch()
                except StopIteration:
                    return None
            elif self._batches:
                batch = self._batches.pop()
            else:
                return None
            if batch.num_rows:
                return batch

    def _set(self, batch: pa.RecordBatch | None) -> None:
        self.batch = batch
        if batch is not None:
            self.first = _row_key(batch, 0, self._sort_by)
            self.last = _row_key(batch, batch.num_rows - 1, self._sort_by)

    def rows_through(self, frontier: Key) -> int:
        """How many rows of the current batch have a key at most `frontier` (the batch is sorted)."""
        batch = self.batch
        assert batch is not None
        return bisect.bisect_right(
            range(batch.num_rows), frontier, key=lambda row: _row_key(batch, row, self._sort_by)
        )

    def take(self, count: int) -> pa.RecordBatch:
        """The current batch's first `count` rows; the next batch is read once it is all taken
        (a finished run holds nothing: every finished run's last batch, kept to the end, once made
        a shard's merge grow with its number of runs)."""
        batch = self.batch
        assert batch is not None
        self._set(self._read() if count == batch.num_rows else batch.slice(count))
        return batch.slice(0, count)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        self._batches.clear()
        self.batch = None


class _RunMerger:
    """The sorted runs (files, and the last one in memory), merged k ways a window at a time."""

    def __init__(self, runs: Sequence[Path | pa.Table], schema: pa.Schema, sort_by: Sequence[str]) -> None:
        self.schema = schema
        self.sort_by = list(sort_by)
        self._cursors = [_RunCursor(run, sort_by) for run in runs]

    def merged(self) -> Iterator[pa.Table]:
        """The runs' rows in key order, a window at a time; raises `DuplicateKeyError` after the
        last rows when a key repeats (counted as the in-memory path counts them)."""
        duplicates = 0
        previous: Key | None = None
        while True:
            active = [cursor for cursor in self._cursors if cursor.batch is not None]
            if not active:
                break
            frontier = min(cursor.last for cursor in active)
            # Every other run's rows past its current batch come after its `last`, so after the
            # frontier; in run order, so that equal keys (refused below) would keep run order.
            taking = [cursor for cursor in active if cursor.first <= frontier]
            if len(taking) == 1:
                cursor = taking[0]  # the frontier's own run: all of its batch
                assert cursor.batch is not None
                first, last = cursor.first, cursor.last
                window = pa.Table.from_batches([cursor.take(cursor.batch.num_rows)])
                duplicates += adjacent_duplicates(window, self.sort_by)
            else:
                parts = [cursor.take(cursor.rows_through(frontier)) for cursor in taking]
                window = pa.Table.from_batches([part for part in parts if part.num_rows], self.schema)
                order, repeated = order_and_duplicates(window, self.sort_by)
                window = window.take(order)
                duplicates += repeated
                first = _row_key(window, 0, self.sort_by)
                last = _row_key(window, window.num_rows - 1, self.sort_by)
            if previous is not None and previous == first:
                duplicates += 1
            previous = last
            yield window
        if duplicates:
            raise duplicate_key_error(duplicates, self.sort_by)

    def close(self) -> None:
        for cursor in self._cursors:
            cursor.close()


def _row_key(rows: pa.Table | pa.RecordBatch, row: int, sort_by: Sequence[str]) -> Key:
    """The key of row `row` of `rows`."""
    schema = rows.schema
    return tuple(
        value_sort_key(rows.column(name)[row].as_py(), pa.types.is_floating(schema.field(name).type))
        for name in sort_by
    )
