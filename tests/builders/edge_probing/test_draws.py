"""`write_draws` under its DuckDB memory cap: the same draws, and a pass DuckDB cannot run within
the cap runs again with the connection's own limit rather than failing the build."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench.builders.edge_probing import draws
from entbench.engine.duck import connect


def tables(directory: Path) -> tuple[list[str], list[str]]:
    """A train and an evaluation table: 40k train rows over 3k mentions, ties and unseen labels."""
    train = pa.table(
        {
            "mention": [f"m{i % 3000}" for i in range(40_000)],
            "gold": [f"Q{i % 7 + i % 3000}" for i in range(40_000)],
        }
    )
    evaluation = pa.table(
        {
            "mention": [f"m{i % 3500}" for i in range(9_000)],
            "gold": [f"Q{i % 11 + i % 3000}" for i in range(9_000)],
        }
    )
    pq.write_table(train, directory / "train.parquet")
    pq.write_table(evaluation, directory / "eval.parquet")
    return [str(directory / "train.parquet")], [str(directory / "eval.parquet")]


def draw(directory: Path, name: str, train: list[str], evaluation: list[str]) -> pa.Table:
    with connect(scratch=directory / name, workers=2, tasks=1) as con:
        rows = draws.write_draws(
            con,
            directory / f"{name}.arrow",
            train=(train, ("mention",), "gold"),
            evaluation=(evaluation, ("mention",), "gold"),
            seed=30,
        )
        # The pass runs on one thread; the connection gets its own thread count back after it.
        assert con.execute("SELECT current_setting('threads')").fetchall()[0][0] == 2
    table = pa.ipc.open_file(pa.memory_map(str(directory / f"{name}.arrow"))).read_all()
    assert rows == table.num_rows == 9_000
    return table


def test_a_pass_over_its_cap_runs_again_uncapped_with_the_same_draws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    train, evaluation = tables(tmp_path)
    capped = draw(tmp_path, "capped", train, evaluation)  # 32 MiB, one thread: within it
    runs: list[int] = []
    inner = draws._write_draws

    def counted(*args: object, **kwargs: object) -> int:
        runs.append(1)
        return inner(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(draws, "_write_draws", counted)
    monkeypatch.setattr(draws, "MEMORY_PER_THREAD", 1 << 19)  # 0.5 MiB for its one thread: too little
    again = draw(tmp_path, "again", train, evaluation)
    assert len(runs) == 2  # out of memory under the cap, then run with the connection's limit
    assert again.equals(capped)
    assert capped.column("x_freq").null_count < capped.num_rows  # ties drew
    assert not all(capped.column("kept").to_pylist())  # some labels unseen in train


def test_a_pass_that_ran_out_of_memory_midway_runs_again_without_its_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of memory after the train index was made: the rerun starts without those tables (it
    would fail on "already exists" otherwise) and draws what a pass that never failed draws."""
    import duckdb

    train, evaluation = tables(tmp_path)
    whole = draw(tmp_path, "whole", train, evaluation)
    index = draws._index_train
    failures: list[int] = []

    def index_then_run_out(*args: object, **kwargs: object) -> None:
        index(*args, **kwargs)  # type: ignore[arg-type]
        if not failures:
            failures.append(1)
            raise duckdb.OutOfMemoryException("out of memory after the index")

    monkeypatch.setattr(draws, "_index_train", index_then_run_out)
    again = draw(tmp_path, "again", train, evaluation)
    assert failures == [1] and again.equals(whole)
