"""The one DuckDB connection policy, for every stage and the cards.

Every connection is in memory and gets, from the build's `--workers` and the number of tasks of
its kind (`tasks`: a stage's map tasks, or its shards), a share of the machine: at most
`min(workers, tasks)` such connections run at once, so each gets `workers // that many` threads
(a stage's single global query uses every worker's core; a task running beside others, one) and
that share of DuckDB's own default memory limit (80% of the memory it sees), so N connections
spill before they overcommit. Spill files go to a `duckdb/` directory the caller names: inside the
stage's scratch directory for a stage (removed when the stage completes), a temporary directory
for a card.

Thread count and spilling change how fast rows come out and in which order, never which rows: the
framework sorts every shard, and queries whose order matters say ORDER BY. A caller that never
reads rows in the order they were scanned passes `ordered=False`, so DuckDB need not keep that
order (less memory on big results).

Upstream shard files reach SQL as values, never spliced into the text: a prepared parameter
(`read_parquet(?)`, with the list of files) or a view over them (`parquet_view`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from entbench.engine.stage import StageContext

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

#: The sub-directory of a stage's (or a card's) scratch directory DuckDB spills into.
SPILL_DIR = "duckdb"
_UNITS = {
    "bytes": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
}


def connect(*, scratch: Path, workers: int, tasks: int, ordered: bool = True) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with its share of `workers` (see the module docstring), spilling
    into `scratch/duckdb/`."""
    running = max(1, min(workers, tasks))
    spill = scratch / SPILL_DIR
    spill.mkdir(parents=True, exist_ok=True)
    import duckdb

    con = duckdb.connect(
        ":memory:",
        config={
            "threads": max(1, workers // running),
            "temp_directory": str(spill),
            "preserve_insertion_order": ordered,
        },
    )
    if running > 1:
        limit = _bytes(str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]))
        con.execute(f"SET memory_limit = '{max(1, limit // running // (1 << 20))}MiB'")
    return con


def stage_connection(ctx: StageContext, *, tasks: int, ordered: bool = True) -> duckdb.DuckDBPyConnection:
    """The connection of one task of a stage (one of `tasks` alike), spilling into the stage's
    scratch directory. The caller closes it (`with` closes it too)."""
    return connect(scratch=ctx.scratch, workers=ctx.options.workers, tasks=tasks, ordered=ordered)


def cap_memory(con: duckdb.DuckDBPyConnection, limit: int) -> str:
    """Lower the connection's memory limit to `limit` bytes (if it is higher): past it DuckDB
    spills into the connection's temp directory. For one query whose state would otherwise grow
    with the dump (a global aggregate), at the cost of the spill. Returns the limit it replaced
    (`SET memory_limit = '…'` restores it)."""
    current = str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
    if limit < _bytes(current):
        con.execute(f"SET memory_limit = '{max(1, limit >> 20)}MiB'")
    return current


def parquet_view(con: duckdb.DuckDBPyConnection, name: str, files: Sequence[str]) -> None:
    """Register `files` (Parquet shards of one table) as the view `name`."""
    if not files:
        raise RuntimeError(f"view {name}: no shard files")
    con.read_parquet(list(files)).create_view(name, replace=True)


def _bytes(setting: str) -> int:
    """Bytes of a DuckDB size setting such as `18.8 GiB`."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]+)\s*", setting)
    if match is None or match.group(2).lower() not in _UNITS:
        raise ValueError(f"unexpected DuckDB size {setting!r}")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])
