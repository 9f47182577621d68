"""Sorting by integer ranks gives exactly Arrow's order: stable, ascending, nulls last, and the same
duplicate count; key types it does not rank take Arrow's own sort."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from entbench.engine.key_order import adjacent_duplicates, combined_key, order_and_duplicates, sort_indices
from entbench.engine.shards import DuplicateKeyError, sort_order

# Few distinct values, so keys repeat as ids and properties do; non-ASCII and prefixes of each other
# test byte order; nulls test their place after every value.
_TEXT = st.sampled_from(["", "Q1", "Q10", "Q2", "Q10-F1", "P31", "é", "é2", "\U0001f600", "zh-hant", None])


def _int_strategy(bits: int) -> st.SearchStrategy[int | None]:
    bound = 1 << (bits - 1)
    return st.one_of(st.none(), st.integers(-bound, bound - 1), st.sampled_from([-bound, bound - 1, 0]))


_COLUMNS = {
    "text": (pa.string(), _TEXT),
    "large_text": (pa.large_string(), _TEXT),
    "i8": (pa.int8(), _int_strategy(8)),
    "i32": (pa.int32(), _int_strategy(32)),
    "i64": (pa.int64(), _int_strategy(64)),
    "u32": (pa.uint32(), st.one_of(st.none(), st.integers(0, (1 << 32) - 1))),
}


def _arrow_order(table: pa.Table, keys: list[str]) -> tuple[list[int], int]:
    order = pc.sort_indices(table, sort_keys=[(key, "ascending") for key in keys])
    return order.to_pylist(), adjacent_duplicates(table.select(keys).take(order), keys)


@st.composite
def _tables(draw: st.DrawFn) -> tuple[pa.Table, list[str]]:
    keys = draw(st.lists(st.sampled_from(sorted(_COLUMNS)), min_size=1, max_size=3, unique=True))
    rows = draw(st.integers(0, 80))  # either side of key_order._SMALL_ROWS
    arrays = {}
    for key in keys:
        kind, values = _COLUMNS[key]
        arrays[key] = pa.array(draw(st.lists(values, min_size=rows, max_size=rows)), kind)
    table = pa.table(arrays)
    cut = draw(st.integers(0, rows))  # several chunks, as spilled batches come
    return pa.concat_tables([table.slice(0, cut), table.slice(cut)]), keys


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_tables())
def test_the_order_and_duplicates_are_arrows(case: tuple[pa.Table, list[str]]) -> None:
    table, keys = case
    order, duplicates = order_and_duplicates(table, keys)
    assert (order.to_pylist(), duplicates) == _arrow_order(table, keys)
    assert sort_indices(table, keys).to_pylist() == order.to_pylist()


def test_wide_int64_keys_fall_back_to_arrows_sort() -> None:
    big = (1 << 62) + 5
    wide = pa.array([big, -big, 0, None], pa.int64())
    table = pa.table({"a": wide, "b": pa.array([3, 1, 2, 2], pa.int64())})
    assert combined_key(table, ["a"]) is None  # a range wider than an int64 holds
    assert combined_key(table, ["b"]) is not None
    assert order_and_duplicates(table, ["a", "b"])[0].to_pylist() == _arrow_order(table, ["a", "b"])[0]


def test_keys_of_other_types_fall_back_to_arrows_sort() -> None:
    table = pa.table({"x": pa.array([2.5, None, float("nan"), -1.0]), "s": ["b", "a", "a", "c"]})
    assert combined_key(table, ["x", "s"]) is None
    order, duplicates = order_and_duplicates(table, ["x", "s"])
    assert (order.to_pylist(), duplicates) == _arrow_order(table, ["x", "s"])


def test_a_claims_like_table_sorts_by_rank_and_duplicates_raise() -> None:
    rng = np.random.default_rng(7)
    subjects = [f"Q{i}" for i in rng.integers(1, 500, 3000)]
    properties = [f"P{i}" for i in rng.integers(1, 40, 3000)]
    ordinals = np.arange(3000, dtype=np.int32)  # unique rows
    table = pa.table({"subject": subjects, "property": properties, "ordinal": ordinals})
    keys = ["subject", "property", "ordinal"]
    assert combined_key(table, keys) is not None
    order = sort_order(table, keys)
    assert order is not None and order.to_pylist() == _arrow_order(table, keys)[0]
    doubled = pa.concat_tables([table, table.slice(10, 3)])
    with pytest.raises(DuplicateKeyError, match="3 rows share a key"):
        sort_order(doubled, keys)


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_a_column_of_mostly_distinct_ids_ranks_as_arrow_orders_it(kind: pa.DataType) -> None:
    # Past the sample size and mostly distinct: ranked by Arrow's dense rank, not a dictionary.
    # Some ids repeat and some are null (the sample decides the method, never the order).
    rng = np.random.default_rng(7)
    ids: list[str | None] = [f"Q{n}" for n in rng.integers(0, 40_000, 12_000)]
    for row in rng.integers(0, len(ids), 300):
        ids[row] = None
    ids += ["é", "\U0001f600", "Q1", ""]
    table = pa.table({"snapshot": pa.array(rng.choice(["old", "new"], len(ids))), "qid": pa.array(ids, kind)})
    for keys in (["qid"], ["snapshot", "qid"]):
        order, duplicates = order_and_duplicates(table, keys)
        expected_order, expected_duplicates = _arrow_order(table, keys)
        assert order.to_pylist() == expected_order
        assert duplicates == expected_duplicates > 0
