"""The shard writer's per-table choices: dictionary pages where values repeat, statistics on sort keys."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from entbench.engine.parquet_options import dictionary_columns
from entbench.engine.row_groups import ROW_GROUP_SIZE
from entbench.engine.shards import prepare_rows, sort_order, write_parquet
from entbench.schemas import wikidata as schema

ROWS = 5_000


def claims_like() -> pa.Table:
    """Rows shaped like truthy_claims: a handful of properties and ranks, unique statement ids."""
    subjects = [f"Q{i // 3}" for i in range(ROWS)]
    qualifier = [{"property": "P580", "time": "+2001-01-01T00:00:00Z", "snaktype": "value"}]
    return pa.table(
        {
            "subject": pa.array(subjects, pa.string()),
            "property": pa.array([f"P{31 + i % 4}" for i in range(ROWS)], pa.string()),
            "statement_id": pa.array([f"Q{i}$0F{i:08X}" for i in range(ROWS)], pa.string()),
            "time_precision": pa.array([9 + i % 3 for i in range(ROWS)], pa.int8()),
            "latitude": pa.array([i / 7 for i in range(ROWS)], pa.float64()),
            "qualifiers": pa.array(
                [qualifier if i % 2 else None for i in range(ROWS)],
                pa.list_(
                    pa.struct([("property", pa.string()), ("time", pa.string()), ("snaktype", pa.string())])
                ),
            ),
            "badges": pa.array([[] if i % 5 else ["Q17437796"] for i in range(ROWS)], pa.list_(pa.string())),
        }
    )


def test_dictionary_only_for_repeating_leaves_nested_ones_included() -> None:
    chosen = dictionary_columns(claims_like())
    assert "property" in chosen and "time_precision" in chosen
    # nested leaves by their Parquet paths (three-level lists)
    assert "qualifiers.list.element.property" in chosen
    assert "badges.list.element" in chosen
    # unique per row (ids), or floats: no dictionary attempted
    assert "statement_id" not in chosen and "latitude" not in chosen
    assert "subject" not in chosen  # ~1 distinct per 3 rows: above the 1-in-10 threshold
    assert dictionary_columns(claims_like().slice(0, 0)) == []


def test_written_shard_has_statistics_on_sort_keys_only_and_dictionaries_where_chosen(tmp_path: Path) -> None:
    table = claims_like()
    written = write_parquet(
        table, tmp_path / "part.parquet", schema=table.schema, metadata={}, sort_by=("subject", "property")
    )
    assert written.rows == ROWS
    meta = pq.ParquetFile(tmp_path / "part.parquet").metadata
    columns = {
        meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i)
        for i in range(meta.num_columns)
    }
    with_stats = {path for path, col in columns.items() if col.is_stats_set}
    assert with_stats == {"subject", "property"}
    dictionary_encoded = {path for path, col in columns.items() if col.dictionary_page_offset is not None}
    assert dictionary_encoded == set(dictionary_columns(table))
    assert pq.read_table(tmp_path / "part.parquet").equals(table)


def test_without_sort_keys_every_column_keeps_statistics(tmp_path: Path) -> None:
    table = pa.table({"id": ["Q1", "Q2"], "site": ["enwiki", "enwiki"]})
    write_parquet(table, tmp_path / "p.parquet", schema=table.schema, metadata={})
    meta = pq.ParquetFile(tmp_path / "p.parquet").metadata
    assert all(meta.row_group(0).column(i).is_stats_set for i in range(meta.num_columns))


def test_scan_output_tables_get_dictionaries_for_their_vocabulary_columns() -> None:
    """On the real claims schema: rank, snaktype and property are dictionary columns, ids are not."""
    n = 3_000
    columns = {
        f.name: pa.nulls(n, f.type)
        for f in schema.TRUTHY_CLAIMS
        if f.name not in ("subject", "property", "rank")
    }
    table = pa.table(
        {
            "subject": [f"Q{i}" for i in range(n)],
            "property": ["P31" if i % 2 else "P279" for i in range(n)],
            "rank": ["normal"] * n,
            **columns,
        }
    ).select(schema.TRUTHY_CLAIMS.names)
    chosen = dictionary_columns(table)
    assert {"property", "rank"} <= set(chosen)
    assert "subject" not in chosen
    # all-null columns have nothing to encode
    assert "statement_id" not in chosen


def test_rows_taken_in_order_a_row_group_at_a_time_write_the_bytes_of_a_sorted_table(
    tmp_path: Path,
) -> None:
    """The reduce writes a shard in sorted order one row group at a time (never holding a sorted
    copy of it); the file must be byte-identical to writing the whole sorted table, across several
    row groups and from a table in several chunks."""
    rows = claims_like()
    big = pa.concat_tables(
        [
            rows.set_column(
                2,
                "statement_id",
                pc.binary_join_element_wise(rows.column("statement_id"), pa.scalar(f"-{k}"), ""),
            )
            for k in range(ROW_GROUP_SIZE * 2 // ROWS + 1)
        ]
    )  # > 2 row groups, one chunk per copy
    shuffled = big.take(pa.array(random.Random(3).sample(range(big.num_rows), big.num_rows)))
    keys = ("subject", "statement_id")
    meta = {"entbench.table": "truthy_claims"}

    whole = prepare_rows(shuffled, shuffled.schema, keys)
    by_table = write_parquet(
        whole, tmp_path / "whole.parquet", schema=big.schema, metadata=meta, sort_by=keys
    )
    order = sort_order(shuffled, keys)
    assert order is not None
    by_groups = write_parquet(
        shuffled, tmp_path / "groups.parquet", schema=big.schema, metadata=meta, sort_by=keys, order=order
    )
    assert pq.ParquetFile(tmp_path / "groups.parquet").metadata.num_row_groups == 3
    assert by_groups.sha256 == by_table.sha256 and by_groups.rows == big.num_rows
    assert (tmp_path / "groups.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()
