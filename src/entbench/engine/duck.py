"""The one DuckDB connection policy, for every stage and the cards.

Every connection is in memory and gets, from the build's `--workers` and the number of tasks of
its kind (`tasks`: a stage's map tasks, or its shards), a share of the machine: at most
`min(workers, tasks)` such connections run at once, so each gets `workers // that many` threads
(a stage's single global query uses every worker's core; a task running beside others, one).

Memory: `MEMORY_PER_THREAD` for each of those threads, and never more than that share of DuckDB's
own default limit (80% of the memory it sees). A fixed amount, not the machine's share: a global
query over a full dump's table (`internal_filter`'s joins over every entity) could otherwise take
up to 80% of the machine before it spilled, so a stage's memory grew with the dump; capped, DuckDB
spills its temporary tables, hash joins, aggregates and sorts to disk past the cap, and a worker's
DuckDB memory stays near `MEMORY_PER_THREAD` as far as its queries spill (below). Past the cap a
query slows down (spill I/O), its rows do not change (`tests/engine/test_duck.py` runs queries and a stage
under a small cap and compares the results). Not every query spills all it holds: a pipeline
probing two hash tables keeps both whole, so its floor grows with the dump (`internal_filter`'s
decisions query did: it ran under no less than 20 MiB per thread on the harness's 256 MB world
and 32 MiB on its 1 GB one; joining one table per query, `filters.internal.sited_entities_sql`,
both kb stages run under 24 MiB there). `entity_diff`'s labelled-entity queries still probe two
hash tables each (its `id_changes` is built by statements joining one dump's ids each). Spill
files go to a `duckdb/` directory the caller names: inside the stage's scratch directory for a
stage (removed when the stage completes), a temporary directory for a card.

Thread count and spilling change how fast rows come out and in which order, never which rows: the
framework sorts every shard, and queries whose order matters say ORDER BY. A caller that never
reads rows in the order they were scanned passes `ordered=False`, so DuckDB need not keep that
order (less memory on big results).

Upstream shard files reach SQL as values, never spliced into the text: a prepared parameter
(`read_parquet(?)`, with the list of files) or a view over them (`parquet_view`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from entbench.engine.stage import StageContext

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

#: The sub-directory of a stage's (or a card's) scratch directory DuckDB spills into.
SPILL_DIR = "duckdb"
#: DuckDB's memory limit per thread of a connection (the module docstring says why a fixed one).
#: Queries of the harness's 1 GB worlds stay under it (a 16S `internal_filter` ~40 MiB, spilling
#: nothing); its kb stages run, with the same bytes, under 32 MiB (spilling ~20 MB) and 24 MiB.
MEMORY_PER_THREAD = 256 << 20
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
    into `scratch/duckdb/`. The caller closes it (`with` closes it too).

    It is a cursor of the process's one idle database when there is one (`_SharedDatabase`):
    opening a DuckDB database registers every built-in function again (~23 ms of CPU), about a
    hundred times in a demo build, while a cursor costs nothing."""
    running = max(1, min(workers, tasks))
    threads = max(1, workers // running)
    spill = scratch / SPILL_DIR
    spill.mkdir(parents=True, exist_ok=True)
    con = _SHARED.checkout(threads=threads, spill=spill, ordered=ordered)
    if con is None:
        import duckdb

        con = duckdb.connect(
            ":memory:",
            config={"threads": threads, "temp_directory": str(spill), "preserve_insertion_order": ordered},
        )
    share = _bytes(str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])) // running
    limit = min(share, threads * MEMORY_PER_THREAD)
    con.execute(f"SET memory_limit = '{max(1, limit // (1 << 20))}MiB'")
    return con


class _SharedDatabase:
    """The process's reusable in-memory database, handed out one cursor at a time.

    A cursor is handed out only while no earlier one is open (DuckDB counts the database's open
    connections: its own, never handed out, and the cursors not yet closed), so no two users ever
    see each other's settings; and only once the database is what a new one would be: every setting
    `connect` gives (threads, spill directory, insertion order, DuckDB's default memory limit) set
    again, and the tables and views a closed cursor left in the database's own schema dropped (its
    temporary ones and registered tables went with it). A database that has spilled cannot move its
    spill directory (DuckDB refuses): it is closed and a new one opened. Local files are never
    cached across queries (`cache_local_files` is off by default), so a reused database reads what
    is on disk now, as a new one would."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._database: duckdb.DuckDBPyConnection | None = None

    def checkout(self, *, threads: int, spill: Path, ordered: bool) -> duckdb.DuckDBPyConnection | None:
        """A cursor of the shared database set up as a new connection would be, or None when an
        earlier cursor is still open (the caller then opens a database of its own)."""
        import duckdb

        with self._lock:
            if self._database is not None and self._open_cursors() > 0:
                return None
            cursor = self._reset(threads=threads, spill=spill, ordered=ordered)
            if cursor is None:  # none yet, or it spilled elsewhere: start again with a new one
                if self._database is not None:
                    self._database.close()
                self._database = duckdb.connect(":memory:")
                cursor = self._reset(threads=threads, spill=spill, ordered=ordered)
                assert cursor is not None, "a new database takes any spill directory"
            return cursor

    def close_idle(self) -> bool:
        """Close the database if no cursor of it is open (the next `checkout` opens a new one);
        whether it did."""
        with self._lock:
            if self._database is None or self._open_cursors() > 0:
                return False
            self._database.close()
            self._database = None
            return True

    def _open_cursors(self) -> int:
        assert self._database is not None
        (count,) = self._database.execute("SELECT * FROM duckdb_connection_count()").fetchall()[0]
        return int(count) - 1  # the database's own connection

    def _reset(self, *, threads: int, spill: Path, ordered: bool) -> duckdb.DuckDBPyConnection | None:
        import duckdb

        if self._database is None:
            return None
        cursor = self._database.cursor()
        try:
            cursor.execute(f"SET temp_directory = {_sql_string(str(spill))}")
        except duckdb.NotImplementedException:  # "cannot switch ... after the current one has been used"
            cursor.close()
            return None
        cursor.execute(f"SET threads = {threads}")
        cursor.execute(f"SET preserve_insertion_order = {str(ordered).lower()}")
        cursor.execute("RESET memory_limit")
        left = cursor.execute(
            "SELECT 'VIEW', view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary "
            "UNION ALL SELECT 'TABLE', table_name FROM duckdb_tables() WHERE NOT temporary"
        ).fetchall()
        for kind, name in left:
            cursor.execute(f'DROP {kind} IF EXISTS "{str(name).replace(chr(34), chr(34) * 2)}"')
        return cursor


_SHARED = _SharedDatabase()


def release_idle_database() -> bool:
    """Close the process's shared database if no connection of it is open; whether it did.

    An idle database keeps what its last queries' allocations left resident, beyond what DuckDB
    counts as used (`duckdb_memory()` shows nothing held): after `internal_filter`'s queries on the
    harness's 1 GB world, 12 MiB that closing it gave back (6 MiB at 256 MB), which the stage's
    reduce and the next stages otherwise started from. The next connection opens a new database
    (~23 ms of CPU: see `connect`), so a caller whose queries were large releases it, not one per task.
    """
    return _SHARED.close_idle()


def _sql_string(text: str) -> str:
    """`text` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


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
