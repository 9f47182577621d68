"""The one DuckDB connection policy: threads and memory shared out from --workers, spills in scratch."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

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
