"""Sizing work from upstream outputs: automatic shard counts, map tasks bounded by bytes, streaming.

A downstream stage whose `num_shards` is 0 gets a shard count from the bytes of the upstream
tables it reads (`Stage.shard_inputs`, `Stage.shard_input_bytes`), so a reducer holds about the
same amount whatever the size of the dump: a fixture world gets one shard, a full Wikipedia or
Wikidata dump hundreds or thousands, as the scans size theirs from the dump. The sizes come from
the upstream manifests (`UpstreamOutput.sizes`), so planning reads no data file.

Map tasks over an upstream table are spans of consecutive row groups of one shard file whose
uncompressed bytes stay under a budget (`row_group_spans`; the writer bounds row groups by bytes,
`row_groups.ROW_GROUP_BYTES`), and a task reads its span in small batches (`iter_span`) with
Parquet's buffered stream, so it holds a batch and a page, not its row groups' column chunks.
A task that reads only some columns of a span, and the rows of a companion table in the same key
range (a scan's `links` beside its `pages`), sizes its spans by those bytes (`spans_reading`).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from entbench.engine.shards import column_shards
from entbench.engine.stage import MapTask, UpstreamOutput

#: Read buffer of a streamed Parquet file: reads go through it a page or so at a time.
STREAM_BUFFER_BYTES = 1 << 20
#: Uncompressed bytes of an upstream table one map task reads: about one row group of a table of
#: long rows (`row_groups.ROW_GROUP_BYTES`), so a Wikipedia scan's shard is several tasks.
SPAN_BYTES = 8 << 20


def auto_num_shards(total_bytes: int, bytes_per_shard: int) -> int:
    """About one shard per `bytes_per_shard` of input, at least one."""
    return max(1, math.ceil(total_bytes / max(1, bytes_per_shard)))


def upstream_bytes(upstream: Mapping[str, UpstreamOutput], tables: Iterable[tuple[str, str]]) -> int:
    """Bytes on disk of the named upstream tables ((stage, table) pairs), from their manifests."""
    return sum(sum(upstream[stage].sizes.get(table, ())) for stage, table in tables)


@dataclass(frozen=True)
class Span:
    """Consecutive row groups of one shard file: the unit of a map task over an upstream table.

    `first` and `last` are the smallest and largest value of the file's sort key in the span (from
    the row groups' statistics), so a task can also read the matching rows of a table sorted by the
    same key (a scan's `links` beside its `pages`) by that range alone. A key that repeats (a
    subject's statements) may run on into the next span's first row group: `after`, the previous
    span's `last` in the same file, makes the spans' key ranges `(after, last]` disjoint, so each
    key's rows are read by exactly one task (`key_filters`)."""

    file: int  # index of the file in the table's shard list
    row_groups: tuple[int, ...]
    rows: int
    bytes: int  # uncompressed, from the file's metadata
    first: Any = None
    last: Any = None
    after: Any = None

    @property
    def task_id(self) -> str:
        """A stable, unique name for the span (its file and first row group)."""
        first = self.row_groups[0] if self.row_groups else 0
        return f"f{self.file:05d}-g{first:05d}"

    def meta(self) -> dict[str, Any]:
        """The span as JSON-able `MapTask.meta`."""
        return {
            "file": self.file,
            "row_groups": list(self.row_groups),
            "first": self.first,
            "last": self.last,
            "after": self.after,
        }

    @staticmethod
    def from_meta(meta: Mapping[str, Any]) -> Span:
        """The span of a task's `meta` (rows and bytes are not carried)."""
        groups = tuple(int(g) for g in meta["row_groups"])
        return Span(int(meta["file"]), groups, 0, 0, meta["first"], meta["last"], meta.get("after"))

    def key_filters(self, key: str) -> list[tuple[str, str, Any]]:
        """pyarrow `filters` selecting the rows of the span's key range `(after, last]` in its file."""
        filters: list[tuple[str, str, Any]] = [(key, "<=", self.last)]
        if self.after is not None:
            filters.append((key, ">", self.after))
        return filters


def row_group_spans(
    files: Sequence[str],
    max_bytes: int | None = None,
    key: str | None = None,
    columns: Sequence[str] | None = None,
) -> list[Span]:
    """The row groups of `files`, in order, cut into spans of at most `max_bytes` uncompressed
    (default `SPAN_BYTES`; a larger row group is a span of its own); files without rows give no
    span. With `key`, a column the files are sorted by and carry statistics for, each span records
    its key range. With `columns`, only those columns' bytes count (what the task reads)."""
    if max_bytes is None:
        max_bytes = SPAN_BYTES
    spans: list[Span] = []
    for index, path in enumerate(files):
        current: list[tuple[int, int, int, Any, Any]] = []  # (group, rows, bytes, min, max)
        previous: Span | None = None
        for group in _row_groups(path, key, columns):
            if current and sum(g[2] for g in current) + group[2] > max_bytes:
                previous = _span(index, current, previous)
                spans.append(previous)
                current = []
            current.append(group)
        if current:
            spans.append(_span(index, current, previous))
    return spans


def span_tasks(
    files: Sequence[str],
    max_bytes: int | None = None,
    key: str | None = None,
    columns: Sequence[str] | None = None,
) -> list[MapTask]:
    """One map task per span of `files` (`row_group_spans`), its meta the span's plus `tasks`, how
    many tasks the stage has (a DuckDB task divides the stage's threads by it)."""
    spans = row_group_spans(files, max_bytes, key, columns)
    return [MapTask(span.task_id, {**span.meta(), "tasks": len(spans)}) for span in spans]


def spans_reading(
    files: Sequence[str],
    columns: Sequence[str],
    companion: tuple[Sequence[str], Sequence[str]],
    key: str,
) -> list[MapTask]:
    """`span_tasks` over `files` for a task that reads `columns` of its span and the `companion`
    (files, columns) rows of the same key range: a span's share of both is about `SPAN_BYTES`.

    A scan's `pages` are mostly text: a stage that reads only their titles, and their links beside
    them, got a task per 8 MB of text it never read (13 tasks of ~2.4 MB of links on the 256 MB
    zhwiki world of `bench/pipelines`; now 5 of ~6.5 MB), and every task pays for its look-ups in
    the stage's global tables (`hansel_links` reads the titles it names from the whole table of
    titles). The companion's bytes are shared out in proportion to the spans' own, which holds
    where both tables come from the same pages (a scan's shards)."""
    own = columns_bytes(files, columns)
    other = columns_bytes(*companion)
    budget = max(1, SPAN_BYTES * own // max(1, own + other))
    return span_tasks(files, budget, key, columns)


def columns_bytes(files: Sequence[str], columns: Sequence[str]) -> int:
    """Uncompressed bytes of `columns` (nested ones with every leaf) in `files`, from their metadata."""
    return sum(group[2] for path in files for group in _row_groups(path, None, columns))


def _row_groups(
    path: str, key: str | None, columns: Sequence[str] | None = None
) -> list[tuple[int, int, int, Any, Any]]:
    """(index, rows, uncompressed bytes, key min, key max) of every row group of a Parquet file;
    with `columns`, the bytes of those columns only."""
    metadata = pq.ParquetFile(path).metadata
    column = None if key is None else metadata.schema.to_arrow_schema().get_field_index(key)
    wanted = None if columns is None else set(columns)
    out = []
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        low = high = None
        if column is not None:
            stats = group.column(column).statistics
            if stats is None or not stats.has_min_max:
                raise ValueError(f"{path}: row group {g} has no statistics for {key}")
            low, high = stats.min, stats.max
        size = group.total_byte_size
        if wanted is not None:
            size = sum(
                group.column(c).total_uncompressed_size
                for c in range(group.num_columns)
                if group.column(c).path_in_schema.split(".")[0] in wanted
            )
        out.append((g, group.num_rows, size, low, high))
    return out


def _span(index: int, groups: Sequence[tuple[int, int, int, Any, Any]], previous: Span | None) -> Span:
    return Span(
        index,
        tuple(g[0] for g in groups),
        sum(g[1] for g in groups),
        sum(g[2] for g in groups),
        groups[0][3],
        groups[-1][4],
        None if previous is None else previous.last,
    )


def iter_span(
    path: str, row_groups: Sequence[int], columns: Sequence[str] | None = None, batch_rows: int = 1024
) -> Iterator[pa.RecordBatch]:
    """The rows of `row_groups` of one Parquet file, in order, `batch_rows` at a time, read through
    a small buffer (the default reader loads whole column chunks first)."""
    if not row_groups:
        return
    parquet = pq.ParquetFile(path, buffer_size=STREAM_BUFFER_BYTES, pre_buffer=False)
    yield from parquet.iter_batches(
        batch_size=batch_rows, row_groups=list(row_groups), columns=None if columns is None else list(columns)
    )


def partitions_for(upstream_shards: int, wanted: int) -> int:
    """A partition count for a repartition join against a table of `upstream_shards` shards routed
    by the join key: `wanted` rounded up to a multiple of it, so each partition lies in one of its
    shards (`read_partition`)."""
    shards = max(1, upstream_shards)
    return shards * max(1, math.ceil(wanted / shards))


def read_partition(
    upstream: UpstreamOutput, table: str, key: str, partition: int, partitions: int, columns: Sequence[str]
) -> pa.Table:
    """The `columns` of the rows of an upstream `table` routed by `key` (`shards.shard_of`) whose
    `shard_of(key, partitions)` is `partition`.

    A key's hash modulo a number is its hash modulo any multiple of that number, modulo the number.
    So when the table's shard count is a multiple of `partitions`, the partition is the shards
    `partition`, `partition + partitions`, …, read whole; when `partitions` is a multiple of the
    shard count (`partitions_for`), its rows all lie in shard `partition % shards`, which holds
    `partitions / shards` partitions; otherwise every shard holds some of them. A shard holding
    several partitions is read again for each, but its keys are hashed once per process
    (`_partition_ids`): hashing every key of the shard for every partition made a join's reads
    grow with the square of the dump while its shards were few."""
    files = upstream.files(table)
    shards = len(files)
    if shards % partitions == 0:
        parts = [pq.read_table(files[i], columns=list(columns)) for i in range(partition, shards, partitions)]
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    holding = [files[partition % shards]] if partitions % shards == 0 else files
    parts = []
    for path in holding:
        rows = pq.read_table(path, columns=list(columns))
        parts.append(rows.filter(pa.array(_partition_ids(path, _stamp(path), key, partitions) == partition)))
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def _stamp(path: str) -> tuple[int, int]:
    """What tells one version of a file from another for `_partition_ids`' cache."""
    stat = os.stat(path)
    return stat.st_size, stat.st_mtime_ns


@functools.lru_cache(maxsize=8)
def _partition_ids(path: str, stamp: tuple[int, int], key: str, partitions: int) -> np.ndarray:
    """`shard_of(key, partitions)` of every row of one shard file, in row order (cached: the
    reducers of a repartition join ask for it once per partition the shard holds). Four bytes a
    row, for at most eight files."""
    return column_shards(pq.read_table(path, columns=[key]).column(key), partitions).astype(np.int32)


def read_span(path: str, row_groups: Sequence[int], columns: Sequence[str] | None = None) -> pa.Table:
    """The rows of `row_groups` of one Parquet file as one table (an empty table of the file's
    schema, or of `columns`, when there are none)."""
    parquet = pq.ParquetFile(path, buffer_size=STREAM_BUFFER_BYTES, pre_buffer=False)
    if not row_groups:
        schema = parquet.schema_arrow
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        return schema.empty_table()
    return parquet.read_row_groups(list(row_groups), columns=None if columns is None else list(columns))
