"""`write_in_order`: a shard given as pieces in key order has the bytes of the same rows written whole."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from entbench.engine import row_groups
from entbench.engine.in_order import write_in_order
from entbench.engine.shards import write_parquet

SCHEMA = pa.schema(
    [
        pa.field("eval_index", pa.int64(), nullable=False),
        pa.field("detail", pa.string()),
        pa.field("labels", pa.list_(pa.string())),
    ]
)


def rows(start: int, stop: int) -> pa.Table:
    return pa.table(
        {
            "eval_index": list(range(start, stop)),
            "detail": [f"train labels Q{i % 97}:{i % 7}" * (1 + i % 5) for i in range(start, stop)],
            "labels": [[f"Q{i}", f"Q{i + 1}"] if i % 3 else [] for i in range(start, stop)],
        },
        schema=SCHEMA,
    )


def test_pieces_in_order_write_the_bytes_of_the_whole_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small row groups, so that pieces of 700 rows straddle several of them.
    monkeypatch.setattr(row_groups, "ROW_GROUP_BYTES", 16 << 10)
    whole = rows(0, 5000)
    args = {"schema": SCHEMA, "metadata": {"entbench.table": "t"}, "sort_by": ("eval_index",)}
    expected = write_parquet(whole, tmp_path / "whole.parquet", **args)
    pieces = [rows(start, min(start + 700, 5000)) for start in range(0, 5000, 700)]
    written = write_in_order(iter(pieces), tmp_path / "pieces.parquet", scratch=tmp_path / "scratch", **args)
    assert (tmp_path / "pieces.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()
    assert (written.rows, written.sha256) == (expected.rows, expected.sha256)
    assert not any((tmp_path / "scratch").iterdir())  # the spilled pieces are gone
    empty = write_in_order(iter([]), tmp_path / "empty.parquet", scratch=tmp_path / "scratch", **args)
    assert empty.sha256 == write_parquet(SCHEMA.empty_table(), tmp_path / "e.parquet", **args).sha256


@pytest.mark.parametrize("pieces", [[(0, 10), (5, 20)], [(0, 10), (9, 20)], [(10, 20), (0, 10)]])
def test_pieces_out_of_order_are_refused(tmp_path: Path, pieces: list[tuple[int, int]]) -> None:
    with pytest.raises(ValueError, match="not in order"):
        write_in_order(
            (rows(a, b) for a, b in pieces),
            tmp_path / "x.parquet",
            schema=SCHEMA,
            metadata={},
            sort_by=("eval_index",),
            scratch=tmp_path / "scratch",
        )
    assert not (tmp_path / "x.parquet").exists()
