"""The row order of a table sorted by its key columns, computed as one integer per row.

Arrow's `sort_indices` on several key columns compares strings row against row (a shard's
subject ids, properties, languages, sites). Keys repeat: a Wikidata shard of 100k claims has
10k subjects and 50 properties. So each string key column is dictionary-encoded, its few distinct
values are sorted once (with Arrow, so byte order is Arrow's own), and each row gets its value's
rank; integer keys are their offset from the column's minimum. The ranks combine into one int64
per row (most significant key first), which numpy sorts stably: the same order as
`pc.sort_indices` with ascending keys and nulls last, in about half its time (a 100k-row claims
shard: 44 -> 22 ms, duplicate check included). A string column whose values hardly repeat (the
ids of a table keyed by id) has as many distinct values as rows: its dictionary costs more than it
saves, so it is ranked by Arrow's dense rank instead. Other key types, or ranks too wide for one
int64, take Arrow's sort.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: The combined key of a row must fit an int64.
_MAX_SPAN = (1 << 63) - 1
#: Up to this many rows a table's keys are sorted as Python values (`_small_order_and_duplicates`).
_SMALL_ROWS = 32
#: Rows of a string key column whose distinct values decide how it is ranked (`_string_ranks`):
#: a column longer than this whose sample is mostly distinct is ranked by sorting its rows
#: (`_sorted_ranks`), others through their dictionary.
_CARDINALITY_SAMPLE = 4096


def sort_indices(table: pa.Table, sort_by: Sequence[str]) -> pa.Array:
    """`pc.sort_indices(table, [(key, "ascending"), ...])`: the same stable order, nulls last."""
    key = combined_key(table, sort_by)
    if key is None:
        return pc.sort_indices(table, sort_keys=[(column, "ascending") for column in sort_by])
    return pa.array(np.argsort(key, kind="stable"))


def order_and_duplicates(table: pa.Table, sort_by: Sequence[str]) -> tuple[pa.Array, int]:
    """`sort_indices` and how many rows equal their predecessor in that order on every key."""
    if table.num_rows <= _SMALL_ROWS:
        small = _small_order_and_duplicates(table, sort_by)
        if small is not None:
            return small
    key = combined_key(table, sort_by)
    if key is None:
        order = pc.sort_indices(table, sort_keys=[(column, "ascending") for column in sort_by])
        return order, adjacent_duplicates(table.select(list(sort_by)).take(order), sort_by)
    positions = np.argsort(key, kind="stable")
    ordered = key[positions]
    return pa.array(positions), int(np.count_nonzero(ordered[1:] == ordered[:-1]))


def _small_order_and_duplicates(table: pa.Table, sort_by: Sequence[str]) -> tuple[pa.Array, int] | None:
    """`order_and_duplicates` of a few rows, sorted as Python values: Arrow's per-call overhead
    (four calls per key column) outweighs the sort there (a scan of one line makes many such
    shards), in `value_sort_key`'s order. None for the key types `_ranks` does not rank either."""
    columns = []
    for name in sort_by:
        column = table.column(name)
        kind = column.type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind)):
            return None
        columns.append([value_sort_key(value) for value in column.to_pylist()])
    rows = list(zip(*columns, strict=True)) if columns else [()] * table.num_rows
    positions = sorted(range(len(rows)), key=rows.__getitem__)  # stable, as Arrow's sort
    duplicates = sum(rows[a] == rows[b] for a, b in itertools.pairwise(positions))
    return pa.array(positions, pa.int64()), duplicates  # as `np.argsort` gives below


def value_sort_key(value: Any, floating: bool = False) -> tuple[int, Any]:
    """A key column's value as a Python key that orders as Arrow's ascending sort places it: values
    first, then (in a float column) NaN, then null. Strings compare by code point in Python and by
    UTF-8 byte in Arrow: the same order."""
    if value is None:
        return (2, 0)
    if floating and math.isnan(value):
        return (1, 0)
    return (0, value)


def combined_key(table: pa.Table, sort_by: Sequence[str]) -> np.ndarray | None:
    """One int64 per row ordered as the rows' keys are (equal only for equal keys, nulls equal to
    each other and after every value), or None when a key column's type or width does not allow."""
    key: np.ndarray | None = None
    span = 1
    for name in sort_by:
        ranked = _ranks(table.column(name))
        if ranked is None:
            return None
        ranks, size = ranked
        span *= size
        if span > _MAX_SPAN:
            return None
        key = ranks if key is None else key * size + ranks
    return key if key is not None else np.zeros(table.num_rows, dtype=np.int64)


def _ranks(column: pa.ChunkedArray) -> tuple[np.ndarray, int] | None:
    """Each row's rank among the column's distinct values (nulls: one past the largest) and the
    number of ranks; None for a type this module does not rank."""
    values = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    kind = values.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return _string_ranks(values)
    if pa.types.is_integer(kind) and not pa.types.is_uint64(kind):
        return _integer_ranks(values)
    return None


def _string_ranks(values: pa.Array) -> tuple[np.ndarray, int]:
    if len(values) > _CARDINALITY_SAMPLE and _mostly_distinct(values):
        return _sorted_ranks(values)
    encoded = values.dictionary_encode()
    distinct = encoded.dictionary
    by_value = np.empty(len(distinct) + 1, dtype=np.int64)
    by_value[pc.sort_indices(distinct).to_numpy()] = np.arange(len(distinct), dtype=np.int64)
    by_value[len(distinct)] = len(distinct)  # nulls, after every value
    codes = pc.fill_null(encoded.indices, len(distinct)).to_numpy()
    return by_value[codes], len(distinct) + 1


def _mostly_distinct(values: pa.Array) -> bool:
    """Whether the first `_CARDINALITY_SAMPLE` values of a string column are mostly distinct (a
    guess at the whole column: it only picks how the ranks are computed, never what they are)."""
    sample = values.slice(0, _CARDINALITY_SAMPLE)
    return 2 * int(pc.count_distinct(sample, mode="all").as_py()) > len(sample)


def _sorted_ranks(values: pa.Array) -> tuple[np.ndarray, int]:
    """`_string_ranks` of a column whose values hardly repeat (ids): Arrow's dense rank, by the
    same byte order, nulls after every value. Dictionary-encoding such a column built a hash table
    and a dictionary as large as the column itself, ~90 bytes a row at their peak (a reducer
    sorting 512k kept ids grew by ~45 MiB there, ~11 MiB at 128k), and sorting the dictionary then
    cost more CPU than ranking the rows."""
    ranks = pc.rank(values, sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.int64)
    ranks -= 1  # Arrow's ranks count from 1
    return ranks, int(ranks.max()) + 1 if len(ranks) else 1


def _integer_ranks(values: pa.Array) -> tuple[np.ndarray, int] | None:
    bounds = pc.min_max(values)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low is None:  # every value null (or no rows)
        return np.zeros(len(values), dtype=np.int64), 1
    size = high - low + 2  # the values, then nulls
    if size > _MAX_SPAN:
        return None
    ranks = pc.fill_null(values, low).to_numpy().astype(np.int64) - low
    if values.null_count:
        ranks[~values.is_valid().to_numpy(zero_copy_only=False)] = size - 1
    return ranks, size


def adjacent_duplicates(table: pa.Table, keys: Sequence[str]) -> int:
    """Rows equal to their predecessor on every key column (the table is sorted by `keys`)."""
    n = table.num_rows
    if n < 2:
        return 0
    same: pa.Array | None = None
    for key in keys:
        column = table.column(key)
        current, previous = column.slice(1), column.slice(0, n - 1)
        # Null keys compare equal to null keys (as a sort would group them), unequal to values.
        equal = pc.fill_null(pc.equal(current, previous), False)
        both_null = pc.and_(pc.is_null(current), pc.is_null(previous))
        equal = pc.or_(equal, both_null)
        same = equal if same is None else pc.and_(same, equal)
    assert same is not None
    return int(pc.sum(same).as_py() or 0)
