"""How many rows a shard's row group holds: `ROW_GROUP_SIZE`, fewer when its values are long, so
that a downstream task can be given one row group of a Wikipedia scan's text at a time."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROW_GROUP_SIZE = 65_536
#: A row group also holds at most about this many bytes of values (`content_bytes`): a shard of
#: long texts (a Wikipedia scan's `pages`) is cut into row groups a downstream task can read, and
#: be given, one at a time (`engine.inputs`). Smaller shards (every fixture's) keep one group per
#: `ROW_GROUP_SIZE` rows.
ROW_GROUP_BYTES = 8 << 20


def row_group_rows(table: pa.Table) -> int:
    """Rows per row group of `table` (`rows_per_group`).

    An upper bound of its values' bytes comes first (`content_bytes(bound=True)`, two offsets read
    per string column): a shard that fits `ROW_GROUP_SIZE`-row groups even by the bound, as most
    do, needs no exact count, which measured the length of every string (11 of the 12 ms this
    took in the reduce of a 20k-entity Wikidata scan pinned to one CPU, ~0.7% of its stage)."""
    if rows_per_group(table.num_rows, content_bytes(table, bound=True)) == ROW_GROUP_SIZE:
        return ROW_GROUP_SIZE  # the exact bytes, no more than the bound, give the same
    return rows_per_group(table.num_rows, content_bytes(table))


def rows_per_group(rows: int, value_bytes: int) -> int:
    """Rows per row group of a shard of `rows` rows holding `value_bytes` (`content_bytes`):
    `ROW_GROUP_SIZE`, unless that would put more than `ROW_GROUP_BYTES` of values in a group on
    average; then as many rows as make groups of about that size, all of one shard's groups but
    the last of equal row counts. Shards of small rows are cut as before.

    It depends on the rows' values only, never on how their buffers are chunked, so every worker
    count cuts a shard the same way."""
    by_bytes = math.ceil(value_bytes / ROW_GROUP_BYTES)
    if by_bytes <= math.ceil(rows / ROW_GROUP_SIZE):
        return ROW_GROUP_SIZE
    return max(1, math.ceil(rows / by_bytes))


def content_bytes(table: pa.Table, *, bound: bool = False) -> int:
    """About how many bytes a table's values take: the lengths of its strings and binaries
    (nested ones included) plus 8 bytes per other value; nulls count as nothing.

    `bound`: at least that, without measuring each string: a string column counts the bytes
    between its first and last offsets, its nulls' included."""
    return sum(_value_bytes(column.type, column, bound) for column in table.columns)


def _value_bytes(kind: pa.DataType, values: pa.ChunkedArray | pa.Array, bound: bool = False) -> int:
    if (
        pa.types.is_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_large_binary(kind)
    ):
        if bound:  # every value's bytes, a null's included (Arrow's nulls hold none, as a rule)
            chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
            return sum(_offsets_span(chunk) for chunk in chunks)
        return int(pc.sum(pc.binary_length(values)).as_py() or 0)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _value_bytes(kind.value_type, pc.list_flatten(values), bound)
    if pa.types.is_struct(kind):
        # `flatten` gives the children with the parent's nulls, so values under a null are not counted
        return sum(_value_bytes(child.type, child, bound) for child in values.flatten())
    return 8 * (len(values) - int(values.null_count))


def _offsets_span(values: pa.Array) -> int:
    """Bytes from a string or binary array's first value to the end of its last (its offsets
    buffer read at both ends, where the array's own slice of it begins and ends)."""
    if not len(values):
        return 0
    wide = pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64 if wide else np.int32)
    return int(offsets[values.offset + len(values)]) - int(offsets[values.offset])
