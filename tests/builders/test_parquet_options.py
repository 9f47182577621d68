"""The shard writer's per-table choices: dictionary pages where values repeat, statistics on sort keys."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from entbench.builders.shards import dictionary_columns, write_parquet
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
