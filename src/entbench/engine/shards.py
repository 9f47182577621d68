"""Routing rows to shards and writing shards with fixed, deterministic writer options."""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# pyarrow looks numpy.ma up at the first pa.array(ndarray), and numpy imports it lazily (~0.1 s):
# imported with the rest, not inside the first task that converts an array.
import numpy.ma
import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

from entbench.engine.key_order import order_and_duplicates
from entbench.engine.parquet_options import DICTIONARY_SAMPLE_ROWS, parquet_options
from entbench.engine.row_groups import row_group_rows
from entbench.errors import UserError
from entbench.native_ext import extension_function
from entbench.schemas.base import schema_hash, schema_to_json


def shard_of(key: str, num_shards: int) -> int:
    """The shard a key belongs to: xxh64 of its UTF-8 bytes modulo `num_shards` (stable everywhere)."""
    if num_shards == 1:
        return 0
    return xxhash.xxh64_intdigest(key.encode("utf-8")) % num_shards


def shards_of(keys: Sequence[str | None], num_shards: int) -> np.ndarray:
    """`shard_of` for many keys at once (null keys go to shard 0)."""
    if num_shards == 1:
        return np.zeros(len(keys), dtype=np.int64)
    digest = xxhash.xxh64_intdigest
    return np.fromiter(
        (0 if k is None else digest(k.encode("utf-8")) % num_shards for k in keys), dtype=np.int64
    )


#: `_wdscan.string_shards`: `shards_of` of an Arrow string array, hashed in C from its buffers (None
#: without the extension). In Python, a string and a call per key were ~0.3 us a row, and the rows
#: a map routes can grow faster than the dump: a span's distinct link targets (`title_qid`'s
#: `titles` phase) were 77k of 420k links on the 256 MB zhwiki world, 221k of 430k on the 1 GB one.
_string_shards = extension_function("_wdscan", "string_shards")


def column_shards(column: pa.Array | pa.ChunkedArray, num_shards: int) -> np.ndarray:
    """`shards_of(column.to_pylist(), num_shards)`, hashed in C for a string column (any other
    type, or no extension: the Python path)."""
    if num_shards == 1:
        return np.zeros(len(column), dtype=np.int64)
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    if _string_shards is None or not all(pa.types.is_string(chunk.type) for chunk in chunks):
        return shards_of(column.to_pylist(), num_shards)
    parts = [_chunk_shards(chunk, num_shards) for chunk in chunks if len(chunk)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _chunk_shards(chunk: pa.Array, num_shards: int) -> np.ndarray:
    """`column_shards` of one non-empty string array (a slice's offsets start at its `offset`;
    null keys go to shard 0, as in `shards_of`)."""
    _validity, offsets, data = chunk.buffers()
    offsets = offsets.slice(chunk.offset * 4, (len(chunk) + 1) * 4)
    routed = _string_shards(offsets, b"" if data is None else data, len(chunk), num_shards)
    shards = np.frombuffer(routed, dtype=np.int64)
    if chunk.null_count:
        return np.where(chunk.is_valid().to_numpy(zero_copy_only=False), shards, 0)
    return shards


def split_by_shard(table: pa.Table, key_column: str, num_shards: int) -> dict[int, pa.Table]:
    """Split `table` into per-shard tables by the stable hash of `key_column` (nonempty shards only)."""
    if table.num_rows == 0:
        return {}
    if num_shards == 1:
        return {0: table}
    return dict(split_by_shard_ids(table, column_shards(table.column(key_column), num_shards)))


def split_by_shard_ids(table: pa.Table, shards: np.ndarray) -> list[tuple[int, pa.Table]]:
    """Non-empty (shard, rows) slices of `table` by row `shards`, in shard order; rows keep their
    order within a shard."""
    if len(shards) == 0:
        return []
    if (shards == shards[0]).all():
        return [(int(shards[0]), table)]
    if (shards[1:] >= shards[:-1]).all():
        # Already grouped (the native scan routes rows by shard group): slices, no copy.
        sorted_ids, taken = shards, table
    else:
        order = np.argsort(shards, kind="stable")
        sorted_ids = shards[order]
        taken = table.take(pa.array(order))
    bounds = [0, *(np.flatnonzero(np.diff(sorted_ids)) + 1).tolist(), len(sorted_ids)]
    return [(int(sorted_ids[a]), taken.slice(a, b - a)) for a, b in itertools.pairwise(bounds)]


def shard_file_name(shard: int, num_shards: int) -> str:
    """`part-SSSSS-of-NNNNN.parquet`, as in Hugging Face datasets' naming."""
    return f"part-{shard:05d}-of-{num_shards:05d}.parquet"


@dataclass(frozen=True)
class WrittenShard:
    """What the manifest records about one written shard file."""

    file: str
    rows: int
    bytes: int
    sha256: str

    def to_json(self) -> dict[str, object]:
        """Manifest form."""
        return {"file": self.file, "rows": self.rows, "bytes": self.bytes, "sha256": self.sha256}


class DuplicateKeyError(ValueError):
    """A shard's rows are not unique under the table's `sort_by`: its order would be arbitrary."""


def prepare_rows(table: pa.Table, schema: pa.Schema, sort_by: Sequence[str]) -> pa.Table:
    """Cast `table` to the declared schema (never inferred), sort it by `sort_by` and check uniqueness."""
    table = cast_rows(table, schema)
    order = sort_order(table, sort_by)
    return (table if order is None else table.take(order)).combine_chunks()


def cast_rows(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` with exactly the declared columns, in order, cast to their declared types."""
    present = set(table.column_names)  # a new list at each access: once, not once per column
    missing = [name for name in schema.names if name not in present]
    if missing:
        raise ValueError(f"rows lack declared columns {missing}")
    return table.select(schema.names).cast(schema)


def sort_order(table: pa.Table, sort_by: Sequence[str]) -> pa.Array | None:
    """The row order sorted by `sort_by` (None when there is nothing to sort, or the rows are in
    that order already); raises `DuplicateKeyError` if two rows share the key, as their order
    would then be arbitrary.

    Only the key columns are copied in sorted order: writers take the rest one row group at a
    time (`write_parquet(order=…)`), so a shard is never held twice. Rows already in order (a
    reduce that decides its rows in key order) are written as they are: a take would first join
    the chunks of a table built in parts, a copy of the whole shard."""
    if table.num_rows <= 1 or not sort_by:
        return None
    order, duplicates = order_and_duplicates(table, sort_by)
    if duplicates:
        raise duplicate_key_error(duplicates, sort_by)
    positions = order.to_numpy()
    # A permutation is the identity iff it increases: no second array of positions (8 bytes a
    # row, as `np.arange` would be) beside the order.
    if bool((positions[1:] > positions[:-1]).all()):
        return None
    return order


def duplicate_key_error(duplicates: int, sort_by: Sequence[str]) -> DuplicateKeyError:
    """The error for a shard whose rows repeat `duplicates` keys (rows equal to their predecessor)."""
    return DuplicateKeyError(f"{duplicates} rows share a key on {list(sort_by)}; the sort key must be unique")


def write_parquet(
    table: pa.Table,
    path: Path | str,
    *,
    schema: pa.Schema,
    metadata: dict[str, str],
    sort_by: Sequence[str] = (),
    order: pa.Array | None = None,
) -> WrittenShard:
    """Write `table` atomically (temp file, fsync, rename) with the fixed options and key-value metadata.

    Min/max statistics are written for the `sort_by` columns (the table's order, so the only
    columns whose row-group ranges let a reader skip), or for every column when none is given.
    With `order` (`sort_order`) the rows are written in that order, taken a row group at a time.

    `path` may also be an fsspec URL (`file://…`, `memory://…`, `s3://…` with its fsspec driver
    installed): the shard is then written through fsspec under a temp name and moved into place,
    with the same bytes as a local write.
    """
    if order is not None and any(column.num_chunks > 1 for column in table.columns):
        # A take from a chunked column concatenates its chunks first, on every call: once here
        # instead of once per row group.
        table = table.combine_chunks()
    size = row_group_rows(table)
    groups = (
        table.slice(start, size) if order is None else table.take(order.slice(start, size))
        for start in range(0, table.num_rows, size)
    )
    return write_row_groups(
        groups, path, schema=schema, metadata=metadata, sort_by=sort_by, rows=table.num_rows
    )


def write_row_groups(
    groups: Iterable[pa.Table],
    path: Path | str,
    *,
    schema: pa.Schema,
    metadata: dict[str, str],
    sort_by: Sequence[str] = (),
    rows: int,
) -> WrittenShard:
    """Write a shard of `rows` rows given as its row groups, in order (each cut by
    `row_groups.rows_per_group`, as `write_parquet` cuts a table), atomically and with the same options.

    The dictionary columns are chosen from the first groups' rows, so a shard written from groups
    produced one at a time (`engine.external_sort`) has the bytes of the same rows written whole.
    """
    schema_with_meta = schema.with_metadata(
        {
            **metadata,
            "entbench.schema_hash": schema_hash(schema),
            "entbench.schema": json.dumps(schema_to_json(schema), sort_keys=True),
        }
    )
    head, groups = _peek_rows(iter(groups), DICTIONARY_SAMPLE_ROWS, schema)
    options = parquet_options(head, sort_by)
    del head
    if is_url(path):
        return _write_parquet_fsspec(groups, rows, str(path), schema_with_meta, options)
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    handed_over = False  # to the background thread, which then removes it if it must
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with pq.ParquetWriter(str(tmp), schema_with_meta, **options) as writer:
            _write_groups(writer, groups)
        written = WrittenShard(file=path.name, rows=rows, bytes=tmp.stat().st_size, sha256=file_sha256(tmp))
        background: _Background | None = getattr(_THREAD, "background", None)
        if background is not None:
            background.futures.append(background.pool.submit(_move_into_place, tmp, path))
            handed_over = True
        else:
            _move_into_place(tmp, path)
    finally:
        if not handed_over and tmp.exists():
            tmp.unlink()
    return written


@dataclass
class _Background:
    pool: ThreadPoolExecutor
    futures: list[Future[None]]


_THREAD = threading.local()


@contextlib.contextmanager
def durable_in_background() -> Iterator[None]:
    """Within it, each local shard this thread writes is fsynced and renamed into place by a
    background thread, while this one goes on to the next table; on leaving, every one is in place,
    or the first error is raised (and the temp files are gone).

    An fsync waits for the disk's flush (5-10 ms a file here, with the CPU idle): a reduce writing a
    Wikidata scan's six tables a shard spent a twentieth of its time there."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="entbench-fsync")
    futures: list[Future[None]] = []
    previous = getattr(_THREAD, "background", None)
    _THREAD.background = _Background(pool, futures)
    try:
        yield
    finally:
        _THREAD.background = previous
        pool.shutdown(wait=True)
    for future in futures:
        future.result()


def _move_into_place(tmp: Path, path: Path) -> None:
    """fsync a written temp file, then rename it to `path` (removed instead if either fails)."""
    try:
        _fsync(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _peek_rows(
    groups: Iterator[pa.Table], rows: int, schema: pa.Schema
) -> tuple[pa.Table, Iterator[pa.Table]]:
    """The first `rows` rows of `groups` (fewer if there are fewer), and `groups` still whole."""
    taken: list[pa.Table] = []
    count = 0
    for group in groups:
        taken.append(group)
        count += group.num_rows
        if count >= rows:
            break
    head = pa.concat_tables(taken).slice(0, rows) if taken else schema.empty_table()
    return head, _handed_on(taken, groups)


def _handed_on(taken: list[pa.Table], rest: Iterator[pa.Table]) -> Iterator[pa.Table]:
    """`taken`, then `rest`, each group let go of as it is handed on: a chain over the list kept
    the first group (and the buffers it slices) until the shard's last one was written, 7 MiB at
    16S in a WikiReading audit's shard of four row groups."""
    taken.reverse()
    while taken:
        yield taken.pop()
    yield from rest


def is_url(path: Path | str) -> bool:
    """Whether `path` is a URL with a scheme (`file://`, `s3://`, …) rather than a local path."""
    return isinstance(path, str) and "://" in path


class _HashingSink:
    """A write-only file object that hashes and counts what passes through it."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._hash = hashlib.sha256()
        self.size = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        self._hash.update(data)
        self.size += len(data)
        self._raw.write(data)
        return len(data)

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        self._raw.flush()

    def close(self) -> None:
        self.closed = True

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def _write_groups(writer: pq.ParquetWriter, groups: Iterable[pa.Table]) -> None:
    """Each of `groups` as one row group.

    An empty shard is a footer with the schema and no row group: a zero-row row group breaks
    readers that size batches by the first row group (Hugging Face `datasets`: "BatchSize must
    be greater than 0")."""
    for rows in groups:
        if rows.num_rows:
            writer.write_table(rows.combine_chunks(), row_group_size=rows.num_rows)
        # Not held while the next group is made: groups produced one at a time (read back from a
        # spill, merged from sorted runs) would otherwise cost two groups at a time, not one.
        del rows


def _write_parquet_fsspec(
    groups: Iterable[pa.Table], rows: int, url: str, schema_with_meta: pa.Schema, options: dict[str, Any]
) -> WrittenShard:
    try:
        from fsspec.core import url_to_fs
    except ImportError as exc:  # fsspec comes with the dask extra
        raise UserError(f"writing to {url} needs fsspec: pip install 'entbench[dask]'") from exc
    fs, target = url_to_fs(url)
    parent, _, name = target.rpartition("/")
    fs.makedirs(parent, exist_ok=True)
    tmp = f"{parent}/.{name}.tmp-{os.getpid()}"
    try:
        with fs.open(tmp, "wb") as raw:
            sink = _HashingSink(raw)
            with pq.ParquetWriter(sink, schema_with_meta, **options) as writer:
                _write_groups(writer, groups)
            raw.flush()
            fileno = getattr(raw, "fileno", None)
            if fileno is not None:  # a local file: make it durable before the rename
                with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
                    os.fsync(fileno())
        # A rename on file systems; object stores copy then delete, and the object only ever
        # appears whole under its final name.
        fs.mv(tmp, target)
    finally:
        if fs.exists(tmp):
            fs.rm(tmp)
    return WrittenShard(file=name, rows=rows, bytes=sink.size, sha256=sink.hexdigest())


def file_sha256(path: Path | str, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes, read `chunk` bytes at a time (1 MiB: as fast as 4 MiB, and a
    shard's reducer, which hashes its file last, at its peak, then holds 3 MiB less)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    """Write a small text file atomically (temp file + fsync + rename); with `durable` false, without
    the fsync: the file appears whole or not at all to any process, but a power cut may leave it
    empty (for records whose reader treats that as absent)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
