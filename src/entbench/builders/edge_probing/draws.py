"""The ordered pass of a sharded strict audit: which evaluation items are tested, and their draws.

Strict-mode decisions (`filters.memorization`) depend on an item's span key's train label counts,
on whether train has every one of its labels, and on the random numbers its heuristics draw:
Mem-Freq and Mem-Uniform each draw from their own `random.Random(seed)`, in evaluation order, and
only for some items (Mem-Freq when the key's most frequent train labels tie, Mem-Uniform whenever
train has the key). Counting is done per key in shards (`stages.mem_audit`); the draws cannot be,
since the k-th number goes to the k-th item that draws. So this pass, over the whole evaluation
split in order, works out from the counts alone (DuckDB, which spills: memory does not grow with
the splits) which items draw, draws their numbers as the unsharded audit would, and writes one row
per evaluation row, by `eval_index`, to an Arrow file the reducers memory-map:

    kept       the item is tested (a span and a label, every label seen in train)
    x_freq     Mem-Freq's number for it, null when it does not draw
    x_uniform  Mem-Uniform's number for it, null when it does not draw
    unseen     its labels train never has, in its order (the selection's drops)

The reducers replay these numbers (`Replay`) through the heuristics' own code and check that each
item drew exactly when this pass said it would.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from entbench.engine.duck import cap_memory

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

DRAWS = pa.schema(
    [
        pa.field("kept", pa.bool_(), nullable=False),
        pa.field("x_freq", pa.float64()),
        pa.field("x_uniform", pa.float64()),
        pa.field("unseen", pa.list_(pa.string()), nullable=False),
    ]
)
FETCH_ROWS = 1 << 16
#: DuckDB memory per thread of the pass. Its count of train's (span key, label) pairs grows with
#: the dump (a Hansel world of 4x 256 MB: 23 MiB over the connection's start; of 4x 1 GB, 491k
#: pairs: 62 MiB); past this it spills into the stage's scratch, so the pass stays flat (28 MiB
#: there), for 0.5 s more CPU in 3.3 s.
MEMORY_PER_THREAD = 32 << 20


class Replay:
    """A `RandomSource` handing out given numbers in order (and counting what is left)."""

    def __init__(self, numbers: Sequence[float]) -> None:
        self._numbers = numbers
        self.used = 0

    def random(self) -> float:
        """The next given number (`IndexError` past the last: a draw the ordered pass did not foresee)."""
        value = self._numbers[self.used]
        self.used += 1
        return value

    def check_consumed(self, what: str) -> None:
        """Raise unless every number was drawn (else the ordered pass and the heuristics disagree)."""
        if self.used != len(self._numbers):
            raise RuntimeError(f"{what}: {len(self._numbers) - self.used} draws foreseen but not made")


def item_sql(files: Sequence[str], span_columns: Sequence[str], label_column: str) -> tuple[str, str, str]:
    """SQL expressions of an item read from one table: its spans (a list of strings), its labels (a
    list, from a string or a list column) and whether it is an item at all (`MemAuditStage._item`:
    every span set, at least one label, no null label)."""
    label_type = pq.read_schema(files[0]).field(label_column).type
    label = f'"{label_column}"'
    if pa.types.is_list(label_type) or pa.types.is_large_list(label_type):
        labels = f"coalesce(CAST({label} AS VARCHAR[]), []::VARCHAR[])"
    else:
        labels = f"CASE WHEN {label} IS NULL THEN []::VARCHAR[] ELSE [CAST({label} AS VARCHAR)] END"
    spans = "[" + ", ".join(f'CAST("{c}" AS VARCHAR)' for c in span_columns) + "]"
    valid = " AND ".join(
        [
            *(f'"{c}" IS NOT NULL' for c in span_columns),
            f"len({labels}) > 0",
            f"list_count({labels}) = len({labels})",
        ]
    )
    return spans, labels, f"({valid})"


def _index_train(
    con: duckdb.DuckDBPyConnection,
    train: tuple[Sequence[str], Sequence[str], str],
    evaluation: tuple[Sequence[str], Sequence[str], str],
) -> None:
    """`keys`: the train span keys the evaluation split has, with how many labels tie for each
    one's most frequent; `seen`: the evaluation split's labels that train has. Only what the
    evaluation split asks about is kept (train streams past it), so memory follows that split."""
    files, span_columns, label_column = evaluation
    spans, labels, valid = item_sql(files, span_columns, label_column)
    con.execute(
        f"CREATE TEMP TABLE wanted AS SELECT DISTINCT {spans} AS spans FROM read_parquet($files) "
        f"WHERE {valid}",
        {"files": list(files)},
    )
    con.execute(
        f"CREATE TEMP TABLE asked AS SELECT DISTINCT unnest({labels}) AS label FROM read_parquet($files) "
        f"WHERE {valid}",
        {"files": list(files)},
    )
    files, span_columns, label_column = train
    spans, labels, valid = item_sql(files, span_columns, label_column)
    con.execute(
        f"CREATE TEMP TABLE keys AS SELECT spans, count(*) FILTER (WHERE n = top) AS tied FROM ("
        f"  SELECT spans, n, max(n) OVER (PARTITION BY spans) AS top FROM ("
        f"    SELECT {spans} AS spans, list_sort({labels}) AS label, count(*) AS n "
        f"    FROM read_parquet($files) WHERE {valid} AND {spans} IN (SELECT spans FROM wanted) "
        f"    GROUP BY ALL)) GROUP BY spans",
        {"files": list(files)},
    )
    con.execute(
        f"CREATE TEMP TABLE seen AS SELECT DISTINCT label FROM ("
        f"  SELECT unnest({labels}) AS label FROM read_parquet($files) WHERE {valid}"
        f") WHERE label IN (SELECT label FROM asked)",
        {"files": list(files)},
    )


def write_draws(
    con: duckdb.DuckDBPyConnection,  # one that keeps insertion order (`ordered=True`)
    path: Path,
    *,
    train: tuple[Sequence[str], Sequence[str], str],
    evaluation: tuple[Sequence[str], Sequence[str], str],
    seed: int,
) -> int:
    """Write the draws of every evaluation row (see the module docstring); returns the row count.

    `train` and `evaluation` are (shard files in order, span columns, label column)."""
    import duckdb  # imported already: `con` is open

    # One thread, under one thread's cap, whatever the build's workers: the pass runs in the
    # building process before the map tasks, and with `--workers 2` its connection had two threads
    # and twice the cap, which the 1 GB Hansel world's count reaches (62 MiB): that process's peak
    # in `hansel_mem_audit` was +38 MiB over its start on the 256 MB world and +72 on the 1 GB one
    # (4S -> 16S 1.166). The pool's workers wait for the pass either way; one thread costs it ~1 s
    # there.
    threads = str(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    con.execute("SET threads = 1")
    previous = cap_memory(con, MEMORY_PER_THREAD)
    before = _temp_tables(con)
    try:
        return _write_draws(con, path, train=train, evaluation=evaluation, seed=seed)
    except duckdb.OutOfMemoryException:
        # The cap bounds the pass's memory, it is not a requirement: a pass DuckDB cannot run
        # within it runs again with the connection's limit, without the tables it had made.
        for table in sorted(_temp_tables(con) - before):
            con.execute(f'DROP TABLE "{table}"')
        con.execute(f"SET memory_limit = '{previous}'")
        return _write_draws(con, path, train=train, evaluation=evaluation, seed=seed)
    finally:
        con.execute(f"SET threads = {int(threads)}")


def _temp_tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    tables = con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()
    return {name for (name,) in tables}


def _write_draws(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    *,
    train: tuple[Sequence[str], Sequence[str], str],
    evaluation: tuple[Sequence[str], Sequence[str], str],
    seed: int,
) -> int:
    """`write_draws` within the connection's memory limit as it is."""
    if not train[0] or not evaluation[0]:  # nothing is seen, nothing is in train
        con.execute("CREATE TEMP TABLE keys (spans VARCHAR[], tied BIGINT)")
        con.execute("CREATE TEMP TABLE seen (label VARCHAR)")
    else:
        _index_train(con, train, evaluation)
    eval_files, eval_spans, eval_label = evaluation
    spans, labels, valid = item_sql(eval_files, eval_spans, eval_label) if eval_files else ("", "", "")
    freq, uniform = random.Random(seed), random.Random(seed)
    rows = 0
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with pa.ipc.new_file(str(tmp), DRAWS) as writer:
        for file in eval_files:
            reader: pa.RecordBatchReader = con.sql(
                f"""
                WITH e AS (
                    SELECT file_row_number AS r, {spans} AS spans, {labels} AS labels, {valid} AS valid
                    FROM read_parquet($file, file_row_number = true)
                ), x AS (
                    SELECT r, unnest(labels) AS l, generate_subscripts(labels, 1) AS pos FROM e WHERE valid
                ), u AS (
                    SELECT x.r, list(x.l ORDER BY x.pos) AS unseen FROM x ANTI JOIN seen s ON s.label = x.l
                    GROUP BY x.r
                )
                SELECT e.valid, coalesce(u.unseen, []::VARCHAR[]) AS unseen, k.spans IS NOT NULL AS in_train,
                       coalesce(k.tied, 0) > 1 AS tie, e.r
                FROM e LEFT JOIN u ON u.r = e.r LEFT JOIN keys k ON k.spans = e.spans ORDER BY e.r
                """,
                params={"file": file},
            ).to_arrow_reader(FETCH_ROWS)
            expected = 0
            for batch in reader:
                kept, x_freq, x_uniform = [], [], []
                order = batch.column(4).to_numpy()
                # The draws follow evaluation order: a reader that lost the ORDER BY (DuckDB's Arrow
                # stream does, on a connection that need not keep insertion order) must not pass.
                if not (order == np.arange(expected, expected + len(order))).all():
                    raise RuntimeError(f"{file}: evaluation rows out of order in the ordered pass")
                expected += len(order)
                for is_valid, unseen, in_train, tie in zip(
                    *(batch.column(i).to_pylist() for i in range(4)), strict=True
                ):
                    tested = bool(is_valid) and not unseen
                    kept.append(tested)
                    x_freq.append(freq.random() if tested and in_train and tie else None)
                    x_uniform.append(uniform.random() if tested and in_train else None)
                writer.write_batch(
                    pa.record_batch(
                        [
                            pa.array(kept, pa.bool_()),
                            pa.array(x_freq, pa.float64()),
                            pa.array(x_uniform, pa.float64()),
                            batch.column(1).cast(pa.list_(pa.string())),
                        ],
                        schema=DRAWS,
                    )
                )
                rows += batch.num_rows
    os.replace(tmp, path)
    return rows
