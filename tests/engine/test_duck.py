"""The one DuckDB connection policy: threads and memory shared out from --workers, spills in scratch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench.engine.duck import connect, parquet_view


def settings(con: duckdb.DuckDBPyConnection) -> tuple[int, str, str]:
    row = con.execute(
        "SELECT current_setting('threads'), current_setting('memory_limit'), "
        "current_setting('temp_directory')"
    ).fetchall()[0]
    return int(row[0]), str(row[1]), str(row[2])


def test_threads_and_memory_are_the_workers_share_among_the_tasks_that_run_at_once(tmp_path: Path) -> None:
    alone = connect(scratch=tmp_path, workers=4, tasks=1)
    threads, whole, spill = settings(alone)
    assert threads == 4  # a stage's one global task gets every worker's core
    assert Path(spill) == tmp_path / "duckdb" and Path(spill).is_dir()
    side_by_side = connect(scratch=tmp_path, workers=4, tasks=10)
    threads, quarter, _ = settings(side_by_side)
    assert threads == 1  # four of the ten tasks run at once, one core each
    assert quarter != whole
    three = connect(scratch=tmp_path, workers=8, tasks=3)
    assert settings(three)[0] == 2
    one_worker = connect(scratch=tmp_path, workers=1, tasks=1)
    assert settings(one_worker)[:2] == (1, whole)  # DuckDB's own memory limit when nothing shares it
    for con in (alone, side_by_side, three, one_worker):
        con.close()


def test_file_lists_reach_sql_as_values_quotes_and_all(tmp_path: Path) -> None:
    odd = tmp_path / "it's a shard.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3]}), odd)
    pq.write_table(pa.table({"x": [4]}), tmp_path / "plain.parquet")
    with connect(scratch=tmp_path, workers=1, tasks=1) as con:
        parquet_view(con, "t", [str(odd), str(tmp_path / "plain.parquet")])
        assert con.execute("SELECT sum(x) FROM t").fetchall() == [(10,)]
        rows = con.execute("SELECT count(*) FROM read_parquet($files)", {"files": [str(odd)]}).fetchall()
        assert rows == [(3,)]


def test_a_closed_connections_database_is_reused_as_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with duckdb.connect(":memory:") as new:
        default_limit = settings(new)[1]
    opened: list[str] = []
    real_connect = duckdb.connect

    def counted(*args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        opened.append(str(args))
        return real_connect(*args, **kwargs)

    monkeypatch.setattr(duckdb, "connect", counted)
    with connect(scratch=tmp_path / "first", workers=4, tasks=10, ordered=False) as first:
        first.execute("CREATE VIEW left_view AS SELECT 1 AS x")
        first.execute('CREATE TABLE "left ""table""" AS SELECT 1 AS x')
        first.execute("CREATE TEMP TABLE scratch_rows AS SELECT 1 AS x")
        threads, quarter, _ = settings(first)
        assert threads == 1 and quarter != default_limit
    assert len(opened) <= 1  # the process's database, unless an earlier test had opened it
    before = len(opened)
    with connect(scratch=tmp_path / "second", workers=4, tasks=1) as second:
        assert len(opened) == before  # the same database again
        assert settings(second) == (4, default_limit, str(tmp_path / "second" / "duckdb"))
        ordered = second.execute("SELECT current_setting('preserve_insertion_order')").fetchall()
        assert ordered == [(True,)]
        assert second.execute("SELECT table_name FROM duckdb_tables()").fetchall() == []
        assert second.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall() == []


def test_two_open_connections_never_share_a_database(tmp_path: Path) -> None:
    with (
        connect(scratch=tmp_path / "a", workers=2, tasks=1) as a,
        connect(scratch=tmp_path / "b", workers=1, tasks=1) as b,
    ):
        a.execute("CREATE TABLE only_in_a AS SELECT 1 AS x")
        assert b.execute("SELECT count(*) FROM duckdb_tables()").fetchall() == [(0,)]
        assert settings(a)[0] == 2 and settings(b)[0] == 1


def test_after_a_spill_the_next_connection_spills_into_its_own_scratch(tmp_path: Path) -> None:
    for name in ("first", "second"):  # DuckDB cannot move a spill directory once used
        with connect(scratch=tmp_path / name, workers=1, tasks=1) as con:
            assert Path(settings(con)[2]) == tmp_path / name / "duckdb"
            con.execute("SET memory_limit = '4MiB'")
            con.execute("CREATE TEMP TABLE big AS SELECT range AS x FROM range(2000000)")  # 16 MB
            assert con.execute("SELECT sum(x) FROM big").fetchall() == [(1_999_999_000_000,)]
            assert any((tmp_path / name / "duckdb").iterdir())  # it did spill, there
