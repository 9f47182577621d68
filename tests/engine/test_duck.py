"""The one DuckDB connection policy: threads shared out from --workers, a fixed memory cap per thread,
spills in scratch; and spilling past the cap gives the rows of an uncapped run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench.engine import duck
from entbench.engine.duck import connect, parquet_view


def settings(con: duckdb.DuckDBPyConnection) -> tuple[int, str, str]:
    row = con.execute(
        "SELECT current_setting('threads'), current_setting('memory_limit'), "
        "current_setting('temp_directory')"
    ).fetchall()[0]
    return int(row[0]), str(row[1]), str(row[2])


def test_threads_are_the_workers_share_and_memory_a_fixed_cap_per_thread(tmp_path: Path) -> None:
    alone = connect(scratch=tmp_path, workers=4, tasks=1)
    threads, limit, spill = settings(alone)
    assert threads == 4  # a stage's one global task gets every worker's core
    assert duck._bytes(limit) == 4 * duck.MEMORY_PER_THREAD  # not 80% of the machine's memory
    assert Path(spill) == tmp_path / "duckdb" and Path(spill).is_dir()
    side_by_side = connect(scratch=tmp_path, workers=4, tasks=10)
    threads, limit, _ = settings(side_by_side)
    assert threads == 1  # four of the ten tasks run at once, one core each
    assert duck._bytes(limit) == duck.MEMORY_PER_THREAD
    three = connect(scratch=tmp_path, workers=8, tasks=3)
    assert settings(three)[0] == 2
    one_worker = connect(scratch=tmp_path, workers=1, tasks=1)
    assert settings(one_worker)[0] == 1
    assert duck._bytes(settings(one_worker)[1]) == duck.MEMORY_PER_THREAD
    for con in (alone, side_by_side, three, one_worker):
        con.close()


def test_the_cap_never_exceeds_the_share_of_duckdbs_own_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with duckdb.connect(":memory:") as plain:
        default = duck._bytes(str(plain.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]))
    monkeypatch.setattr(duck, "MEMORY_PER_THREAD", 1 << 50)  # more than any machine has
    with connect(scratch=tmp_path, workers=4, tasks=10) as con:
        # a quarter of DuckDB's default (four connections at once), to the MiB it is set in
        assert abs(duck._bytes(settings(con)[1]) - default // 4) <= 0.01 * default


def _join_and_count(con: duckdb.DuckDBPyConnection) -> tuple[int, list[tuple[object, ...]]]:
    """Temporary tables of ~16 MB and a join over them; (bytes DuckDB spilled, the join's rows)."""
    con.execute(
        "CREATE TEMP TABLE e AS SELECT 'Q' || i AS id, "
        "CASE WHEN i % 50 = 0 THEN 'property' ELSE 'item' END AS type FROM range(1000000) r(i)"
    )
    con.execute("CREATE TEMP TABLE s AS SELECT 'Q' || (i * 3) AS qid FROM range(200000) r(i)")
    spilled = int(con.execute("SELECT sum(temporary_storage_bytes) FROM duckdb_memory()").fetchall()[0][0])
    rows = con.execute(
        "SELECT e.type, s.qid IS NOT NULL AS site, count(*), min(e.id), max(e.id), "
        "bit_xor(hash(e.id)) FROM e LEFT JOIN s ON s.qid = e.id GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    return spilled, rows


def test_past_the_cap_duckdb_spills_into_scratch_and_the_rows_do_not_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with connect(scratch=tmp_path / "whole", workers=1, tasks=1, ordered=False) as con:
        spilled, whole = _join_and_count(con)
    assert spilled == 0  # the default cap holds it all
    monkeypatch.setattr(duck, "MEMORY_PER_THREAD", 16 << 20)
    with connect(scratch=tmp_path / "capped", workers=1, tasks=1, ordered=False) as con:
        spilled, capped = _join_and_count(con)
    assert spilled > 1 << 20  # the tables went to disk...
    assert capped == whole  # ...and the join read them back whole
    assert len(whole) == 4 and sum(int(row[2]) for row in whole) == 1_000_000  # type: ignore[call-overload]


def test_file_lists_reach_sql_as_values_quotes_and_all(tmp_path: Path) -> None:
    odd = tmp_path / "it's a shard.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3]}), odd)
    pq.write_table(pa.table({"x": [4]}), tmp_path / "plain.parquet")
    with connect(scratch=tmp_path, workers=1, tasks=1) as con:
        parquet_view(con, "t", [str(odd), str(tmp_path / "plain.parquet")])
        assert con.execute("SELECT sum(x) FROM t").fetchall() == [(10,)]
        rows = con.execute("SELECT count(*) FROM read_parquet($files)", {"files": [str(odd)]}).fetchall()
        assert rows == [(3,)]


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The arguments of every `duckdb.connect` call from here on: one per database opened."""
    calls: list[str] = []
    real_connect = duckdb.connect

    def counted(*args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        calls.append(str(args))
        return real_connect(*args, **kwargs)

    monkeypatch.setattr(duckdb, "connect", counted)
    return calls


def test_a_closed_connections_database_is_reused_as_a_new_one(tmp_path: Path, opened: list[str]) -> None:
    with duckdb.connect(":memory:") as new:
        default_limit = settings(new)[1]
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
        threads, limit, spill = settings(second)
        assert (threads, spill) == (4, str(tmp_path / "second" / "duckdb"))
        assert duck._bytes(limit) == 4 * duck.MEMORY_PER_THREAD  # the first one's limit did not stay
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


def test_releasing_the_idle_database_closes_it_and_the_next_connection_opens_a_new_one(
    tmp_path: Path, opened: list[str]
) -> None:
    with connect(scratch=tmp_path / "first", workers=1, tasks=1) as first:
        assert not duck.release_idle_database()  # a connection of it is open: kept
        assert first.execute("SELECT 42").fetchall() == [(42,)]
    before = len(opened)
    assert duck.release_idle_database()
    assert not duck.release_idle_database()  # nothing left to close
    with connect(scratch=tmp_path / "second", workers=1, tasks=1) as second:
        assert len(opened) == before + 1  # a new database
        assert second.execute("SELECT 43").fetchall() == [(43,)]
