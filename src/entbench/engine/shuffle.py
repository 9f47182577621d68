"""The shuffle between a stage's map and reduce: spill files, their index, and the merge pass.

A map task appends its rows in batches to one spill file (`<task>.spill`: encapsulated Arrow IPC
messages one after another, no schema and no footer, the stage's map schemas being known); its
index (`<task>.done.json`, written last and atomically) says where each batch of each table lies
and which spill group it holds. A task without its `.done.json` did not finish: its file is
overwritten when it runs again.

With few output shards every shard is its own group and a reducer reads its batches straight from
every map task's file (`shard_inputs`). That costs tasks x shards batches, reads and index
entries: ~10^8 of each for a full Wikidata dump (~23k tasks x ~6k shards), and at 400 shards the
merge pass below is already faster (README, Performance). So past `BuildOptions.shuffle_groups`
shards the map spills by *group* of consecutive shards, each row tagged with its shard
(`SHARD_COLUMN`), and a merge pass (`merge_group`, one task per group) reads the group's batches
from every map task in task order and re-spills them by shard, a bounded buffer at a time. A
reducer then reads one file per merge group. The rows a reducer gathers, and their order (map task, then
batch, then emit order), are the same either way, so the output shards are byte-identical.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from entbench.engine.shards import atomic_write_text, split_by_shard_ids
from entbench.engine.stage import BucketSink
from entbench.engine.stats import Stats

#: Rows buffered per (table, spill group) before a batch is written...
FLUSH_ROWS = 32_768
#: ...or fewer when they hold this many bytes: 32k rows of a Wikipedia scan's pages are ~80 MB of
#: text, so a map task's buffered rows followed its size (the task's other buffers are bounded).
FLUSH_BYTES = 8 << 20
#: Rows buffered over all (table, spill group) pairs before the largest buffers are written: with
#: several spill groups each pair stayed under `FLUSH_BYTES` for most of a large task, so a map
#: task held up to groups x tables x `FLUSH_BYTES` (measured: +25 MiB for a 53 MB Wikidata range
#: task over 3 shards against one over 1). A pair's rows keep their order, so reducers gather the same rows.
SINK_BUFFER_BYTES = 16 << 20
#: The column that tags each spilled row with its shard when a spill group holds several shards.
SHARD_COLUMN = "__entbench_shard"
#: Bytes a merge task buffers before it sorts and writes them (its memory bound: about twice this).
MERGE_BUFFER_BYTES = 64 << 20
#: Bytes buffered per open spill file before they are written.
SPILL_WRITE_BUFFER = 1 << 20


@dataclass(frozen=True)
class ShuffleLayout:
    """How map output is grouped: `shards_per_group` consecutive shards per spill group."""

    num_shards: int
    shards_per_group: int

    @property
    def merged(self) -> bool:
        """True when groups hold several shards, so a merge pass regroups the spills by shard."""
        return self.shards_per_group > 1

    @property
    def num_groups(self) -> int:
        """The number of spill groups (none of them empty)."""
        return math.ceil(self.num_shards / self.shards_per_group)

    def group(self, shard: int) -> int:
        """The spill group holding `shard`."""
        return shard // self.shards_per_group

    def to_json(self) -> dict[str, int]:
        """What a map phase records about its spills (a resumed run must spill the same way)."""
        return {"num_shards": self.num_shards, "shards_per_group": self.shards_per_group}


def shuffle_layout(num_shards: int, max_groups: int) -> ShuffleLayout:
    """Every shard its own group up to `max_groups` shards; past that, `max_groups` groups or fewer."""
    if max_groups < 1:
        raise ValueError(f"max_groups must be >= 1, got {max_groups}")
    return ShuffleLayout(num_shards, max(1, math.ceil(num_shards / max_groups)))


#: The spill file layout `<task>.done.json` records describe; a record of another layout (an
#: unfinished build of an older entbench) counts as unfinished, so its task runs again.
SPILL_FORMAT = 2


def spill_path(directory: Path, task_id: str) -> Path:
    """The spill file of a map or merge task."""
    return directory / f"{task_id}.spill"


def spill_schemas(schemas: Mapping[str, pa.Schema], layout: ShuffleLayout) -> dict[str, pa.Schema]:
    """The schemas of a map task's spilled tables: each row tagged with its shard when a spill
    group holds several shards (`SHARD_COLUMN`)."""
    tag = pa.field(SHARD_COLUMN, pa.int32())
    return {name: schema.append(tag) if layout.merged else schema for name, schema in schemas.items()}


#: Where one batch lies in a spill file: (offset, length) of its IPC message.
Span = tuple[int, int]


class _SpillFile:
    """A task's spill file and its index, which its completion record `<task>.done.json` keeps:
    per table, batch i -> [key, offset, length], the key being its spill group (a map task's) or
    shard (a merge task's). `shard_inputs` and `merge_group` read both kinds.

    One file per task rather than one Arrow IPC file per table: each file is a create and a delete,
    and a reader opening an IPC file parses its footer and schema (~80 us for the nested claim
    tables), which for every reducer of every task was a tenth of the reduce at 17 shards."""

    def __init__(self, directory: Path, task_id: str, schemas: Mapping[str, pa.Schema]) -> None:
        self.directory = directory
        self.task_id = task_id
        for name, schema in schemas.items():
            if any(pa.types.is_dictionary(field.type) for field in schema):
                raise ValueError(f"spilled table {name!r} has a dictionary column (spills hold none)")
        self._sink: pa.NativeFile | None = None
        self._index: dict[str, list[list[int]]] = {}

    def write(self, table: str, rows: pa.Table, key: int) -> None:
        """Append `rows` of `table` as contiguous batches, each indexed under `key`."""
        if self._sink is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            # Buffered: written unbuffered, each batch cost a system call per column buffer.
            self._sink = pa.BufferedOutputStream(
                pa.OSFile(str(spill_path(self.directory, self.task_id)), "wb"), SPILL_WRITE_BUFFER
            )
        for batch in rows.combine_chunks().to_batches():
            message = batch.serialize()
            offset = self._sink.tell()
            self._sink.write(message)
            self._index.setdefault(table, []).append([key, offset, message.size])

    def close(self, stats: Stats, task_digest: str = "") -> None:
        """Close the file, then write the completion record (last, atomically); `task_digest`: a
        map task's `MapTask.digest`."""
        if self._sink is not None:
            self._sink.close()
        done = {
            "task": self.task_id,
            "task_digest": task_digest,
            "spill_format": SPILL_FORMAT,
            "stats": stats.sorted(),
            "batches": dict(sorted(self._index.items())),
        }
        # Not fsynced: the spill file it indexes never was (a power cut can damage the spill
        # whatever the record says), and a build's map wrote one per task, 5-10 ms of a disk's
        # flush each: a tenth of a 20k-entity Wikidata scan's time. Once renamed, the record is whole
        # for every process; one a power cut left empty reads as absent (`read_done`): the task runs again.
        atomic_write_text(
            self.directory / f"{self.task_id}.done.json", json.dumps(done, sort_keys=True), durable=False
        )


def read_spilled(
    directory: Path, task_id: str, spans: Sequence[Span], schema: pa.Schema
) -> list[pa.RecordBatch]:
    """The batches of `schema` at `spans` of a task's spill file (the file is closed again)."""
    with pa.OSFile(str(spill_path(directory, task_id)), "rb") as source:
        return [pa.ipc.read_record_batch(source.read_at(length, offset), schema) for offset, length in spans]


def iter_spilled(
    directory: Path, task_id: str, spans: Sequence[Span], schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """`read_spilled`, a batch at a time (the file is open until the last one is read)."""
    with pa.OSFile(str(spill_path(directory, task_id)), "rb") as source:
        for offset, length in spans:
            yield pa.ipc.read_record_batch(source.read_at(length, offset), schema)


class FileBucketSink(BucketSink):
    """Collects one task's rows and spills them as batches, each holding one spill group."""

    def __init__(
        self,
        directory: Path,
        task_id: str,
        schemas: Mapping[str, pa.Schema],
        layout: ShuffleLayout,
        task_digest: str = "",
    ) -> None:
        self.directory = directory
        self.task_id = task_id
        self.task_digest = task_digest
        self.schemas = dict(schemas)
        self.layout = layout
        self.shards_per_group = layout.shards_per_group
        self._spill_schemas = spill_schemas(self.schemas, layout)
        self._pending: dict[tuple[str, int], list[pa.RecordBatch]] = {}
        self._pending_rows: dict[tuple[str, int], int] = {}
        self._pending_bytes: dict[tuple[str, int], int] = {}
        self._buffered = 0  # bytes of every pending buffer
        self._files = _SpillFile(directory, task_id, self._spill_schemas)

    def emit(self, table: str, shard: int, batch: pa.RecordBatch | pa.Table) -> None:
        """Buffer rows of `table` for `shard`; batches are written once enough rows have gathered."""
        if not 0 <= shard < self.layout.num_shards:
            raise ValueError(f"shard {shard} out of range for {self.layout.num_shards} shards")
        rows = self._conform(table, batch)
        if self.layout.merged:
            rows = rows.append_column(SHARD_COLUMN, pa.array(np.full(rows.num_rows, shard, dtype=np.int32)))
        self._add((table, self.layout.group(shard)), rows)

    def emit_sharded(self, table: str, rows: pa.Table, shards: np.ndarray) -> None:
        """Buffer rows of `table`, row i for shard `shards[i]`, conformed once for the whole table;
        when groups hold several shards, tagged once and split by group only (a split per shard is
        left to the merge pass, which does it for many tasks at once)."""
        if len(shards) and not (shards.min() >= 0 and shards.max() < self.layout.num_shards):
            raise ValueError(f"shards out of range for {self.layout.num_shards} shards")
        rows = self._conform(table, rows)
        if self.layout.merged:
            rows = rows.append_column(SHARD_COLUMN, pa.array(shards.astype(np.int32)))
        parts = split_by_shard_ids(rows, shards // self.shards_per_group)
        # The table's bytes counted once and shared among its parts by rows: a slice's own `nbytes`
        # walks every column (~70 us), and a task's parts are as many as the stage's spill groups,
        # so counting each part grew with tasks x groups, faster than the rows (WikiReading's
        # split stage: 18 -> 69 parts a task from 6 to 23 shards). The counts only decide when a
        # buffer is written; what a buffer holds in all is still the table's bytes.
        total_bytes, total_rows = rows.nbytes, max(rows.num_rows, 1)
        counted_rows = counted_bytes = 0
        for group, part in parts:
            counted_rows += part.num_rows
            part_bytes = total_bytes * counted_rows // total_rows - counted_bytes
            counted_bytes += part_bytes
            self._add((table, group), part, part_bytes)

    def _conform(self, table: str, batch: pa.RecordBatch | pa.Table) -> pa.Table:
        schema = self.schemas[table]
        rows = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
        return rows if rows.schema == schema else rows.cast(schema)

    def _add(self, key: tuple[str, int], rows: pa.Table, nbytes: int | None = None) -> None:
        if not rows.num_rows:
            return
        if nbytes is None:
            nbytes = rows.nbytes
        self._pending.setdefault(key, []).extend(b for b in rows.to_batches() if b.num_rows)
        self._pending_rows[key] = self._pending_rows.get(key, 0) + rows.num_rows
        self._pending_bytes[key] = self._pending_bytes.get(key, 0) + nbytes
        self._buffered += nbytes
        if self._pending_rows[key] >= FLUSH_ROWS or self._pending_bytes[key] >= FLUSH_BYTES:
            self._flush(key)
        if self._buffered >= SINK_BUFFER_BYTES:
            # Every buffer, not only the largest: the rows an emit splits by group are slices of one
            # table, whose buffers stay held until the last of its slices is written.
            for pending in sorted(self._pending):
                self._flush(pending)

    def _flush(self, key: tuple[str, int]) -> None:
        batches = self._pending.pop(key, [])
        self._pending_rows.pop(key, None)
        self._buffered -= self._pending_bytes.pop(key, 0)
        if not batches:
            return
        table, group = key
        self._files.write(table, pa.Table.from_batches(batches, self._spill_schemas[table]), group)

    def close(self, stats: Stats) -> None:
        """Flush everything and mark the task done (the index file is the completion marker)."""
        for key in sorted(self._pending):
            self._flush(key)
        self._files.close(stats, self.task_digest)


def read_done(directory: Path, task_id: str) -> dict[str, Any] | None:
    """The completion record of a map (or merge) task, or None if it did not finish."""
    path = directory / f"{task_id}.done.json"
    if not path.exists():
        return None
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:  # a record a power cut left empty or cut (it is written without an fsync)
        return None
    return result if isinstance(result, dict) and result.get("spill_format") == SPILL_FORMAT else None


#: What one reduce task reads: (spill task id, {table: spans of the batches routed to its shard}).
ShardInput = tuple[str, dict[str, list[Span]]]


def shard_inputs(
    directory: Path, task_ids: Iterable[str], shards: Sequence[int]
) -> dict[int, list[ShardInput]]:
    """For each of `shards`, the finished tasks in `directory` holding its rows and where their
    batches lie, in task id order (each task's spills grouped one shard per group).

    Computed once by the coordinator, one record at a time: every reduce task re-reading every
    record would cost shards x tasks file reads."""
    wanted = set(shards)
    result: dict[int, dict[str, dict[str, list[Span]]]] = {shard: {} for shard in shards}
    for task_id in sorted(task_ids):
        done = read_done(directory, task_id)
        if done is None:
            raise RuntimeError(f"spill record {task_id} missing in {directory}")
        for table, batches in sorted(done["batches"].items()):
            for shard, offset, length in batches:
                if shard in wanted:
                    result[shard].setdefault(task_id, {}).setdefault(table, []).append((offset, length))
    return {shard: sorted(tasks.items()) for shard, tasks in result.items()}


def merge_task_id(group: int) -> str:
    """The id of the merge task (and of its spill files) for spill group `group`."""
    return f"g{group:05d}"


def merge_group(
    map_dir: Path,
    merge_dir: Path,
    task_ids: Sequence[str],
    group: int,
    layout: ShuffleLayout,
    schemas: Mapping[str, pa.Schema],
) -> None:
    """Re-spill group `group` of every map task by shard, in task id order, into `merge_dir`.

    The group's tagged batches are gathered as they are (no per-shard work per map task: a task
    holds about one row per shard of a full dump's) until `MERGE_BUFFER_BYTES`, then sorted by
    shard at once, stably (a shard's rows keep their task and emit order), and written as one
    batch per shard. Memory stays bounded whatever the dump size; each map spill file is opened,
    read and closed in turn."""
    writer = _ShardRunWriter(merge_dir, merge_task_id(group), schemas)
    tagged = spill_schemas(schemas, layout)
    for task_id in sorted(task_ids):
        done = read_done(map_dir, task_id)
        if done is None:
            raise RuntimeError(f"map record {task_id} missing in {map_dir}")
        for table, batches in sorted(done["batches"].items()):
            spans = [(offset, length) for g, offset, length in batches if g == group]
            for batch in read_spilled(map_dir, task_id, spans, tagged[table]) if spans else ():
                writer.add(table, batch)
    writer.close()


class _ShardRunWriter:
    """A merge task's output: per table, sorted runs written as one batch per shard, indexed like
    a map task's spills (`<id>.done.json`: batch i -> shard) so `shard_inputs` reads both."""

    def __init__(self, directory: Path, task_id: str, schemas: Mapping[str, pa.Schema]) -> None:
        self.schemas = dict(schemas)
        self._pending: dict[str, list[pa.RecordBatch]] = {}
        self._pending_bytes = 0
        self._files = _SpillFile(directory, task_id, schemas)

    def add(self, table: str, batch: pa.RecordBatch) -> None:
        self._pending.setdefault(table, []).append(batch)
        self._pending_bytes += batch.nbytes
        if self._pending_bytes > MERGE_BUFFER_BYTES:
            for name in sorted(self._pending):
                self._flush(name)
            self._pending_bytes = 0

    def _flush(self, table: str) -> None:
        batches = self._pending.pop(table, [])
        if not batches:
            return
        tagged = pa.Table.from_batches(batches)
        shards = tagged.column(SHARD_COLUMN).to_numpy()
        rows = tagged.drop_columns([SHARD_COLUMN]).cast(self.schemas[table])
        for shard, run in split_by_shard_ids(rows, shards):
            self._files.write(table, run, shard)

    def close(self) -> None:
        """Write what is buffered and the index (the completion marker, last)."""
        for name in sorted(self._pending):
            self._flush(name)
        self._files.close(Stats())


def gather_bucket(directory: Path, inputs: Sequence[ShardInput], table: str, schema: pa.Schema) -> pa.Table:
    """All rows of `table` in the given tasks' batches (one shard's `shard_inputs`).

    Each spill file is read and closed in turn: keeping thousands of them memory-mapped at once
    would exhaust the process's map count (vm.max_map_count) on a big dump.

    The rows come back as one chunk per column: every `take` on a chunked string or list column
    (the reduce's sort, its dictionary sample, each row group written) concatenates all its
    chunks first, so a shard of ten row groups was copied ten more times."""
    batches: list[pa.RecordBatch] = []
    for task_id, tables in inputs:
        spans = tables.get(table)
        if spans:
            batches.extend(read_spilled(directory, task_id, spans, schema))
    if not batches:
        return schema.empty_table()
    return pa.Table.from_batches(batches, schema).combine_chunks()


class GatheredTables(Mapping[str, pa.Table]):
    """One shard's map tables, each read from the spills when first asked for.

    A reduce that reads only some tables (or none) never holds the others: the runner `take`s
    each output it did not return straight from the spills as it writes it, so a shard's peak is
    about its largest table, not all of them at once."""

    def __init__(self, directory: Path, inputs: Sequence[ShardInput], schemas: Mapping[str, pa.Schema]):
        self._directory = directory
        self._inputs = inputs
        self._schemas = dict(schemas)
        self._loaded: dict[str, pa.Table] = {}

    def __getitem__(self, name: str) -> pa.Table:
        if name not in self._loaded:
            self._loaded[name] = gather_bucket(self._directory, self._inputs, name, self._schemas[name])
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._schemas  # Mapping's default would read the table to find out

    def __iter__(self) -> Iterator[str]:
        return iter(self._schemas)

    def __len__(self) -> int:
        return len(self._schemas)

    def spilled_bytes(self, name: str) -> int:
        """Bytes of table `name`'s spilled batches (their IPC messages), read from the index only."""
        return sum(length for _, tables in self._inputs for _, length in tables.get(name, ()))

    def batches(self, name: str) -> Iterator[pa.RecordBatch]:
        """Table `name`'s rows as they were spilled, one batch at a time: a map task's whole
        bucket grew with the task (a Wikipedia scan's 64 MB of XML: ~40 MB of pages)."""
        for task_id, tables in self._inputs:
            spans = tables.get(name)
            if spans:
                yield from iter_spilled(self._directory, task_id, spans, self._schemas[name])

    def take(self, name: str) -> pa.Table:
        """Table `name`, no longer held here (read now unless the reduce already read it)."""
        table = self._loaded.pop(name, None)
        return (
            gather_bucket(self._directory, self._inputs, name, self._schemas[name])
            if table is None
            else table
        )

    def forget(self) -> None:
        """Drop the tables read so far (what the reduce still needs, its result holds)."""
        self._loaded.clear()
