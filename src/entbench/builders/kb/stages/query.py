"""Shared machinery of the knowledge-base stages: DuckDB over upstream shards, one global query task.

The kb stages (spec §2) are relational and global: a P279 closure or a top-K needs every shard of
the normalized tables at once. So each runs as a map/reduce stage with a single map task that
opens one DuckDB connection (`engine.duck`), registers the upstream Parquet shards as views, runs
its queries into temporary tables, and streams each result table into the output shards, routed by
`shard_of(qid)`. The framework's reducers then sort and write every shard, so the bytes do not
depend on `--workers` (DuckDB's own thread count changes the order rows come out, never the rows).

The per-entity part of a query runs per range of ids (`id_ranges`), one range after another, so
DuckDB holds one range's hash tables and temporary tables at a time, not every id of the dump's:
the ranges are sized to about `PARTITION_ROWS` entities each, so that memory stays about the
same from a small dump to a large one. The scans write every shard sorted by id, and each range
is a filter `lo <= id < hi` on that string, so DuckDB skips the row groups outside it (min/max
statistics). But the scans shard ids by hash, so a range's ids lie in every shard: P ranges over S
shard files of G row groups in all read about G + P*S row groups. The ranges are therefore never
more than `MAX_READS_PER_ROW_GROUP` reads a row group allow: on the harness's worlds (a few
shards of one or two row groups) that is every range `PARTITION_ROWS` asks for; on a full dump
(thousands of shards) it is a few ranges, whose queries hold more and spill past DuckDB's cap
(`engine.duck`), rather than every shard read thousands of times. Which rows land in which range
never changes a result row or a count (every count is a sum over the ranges), only how much is
held at once.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from entbench.engine.duck import parquet_view, release_idle_database, stage_connection
from entbench.engine.stage import BucketSink, MapTask, P, Params, ProgressFn, Stage, StageContext
from entbench.engine.stats import Stats
from entbench.errors import UserError
from entbench.schemas.kb import NEW, OLD
from entbench.typesys.qids import sql_string

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

#: The scan stage each snapshot's normalized tables come from.
SNAPSHOT_STAGES: dict[str, str] = {OLD: "wikidata_old", NEW: "wikidata_new"}
#: The normalized tables a kb stage may read, registered as views `<snapshot>_<short name>`.
NORMALIZED_VIEWS: dict[str, str] = {
    "entities": "entities",
    "claims": "truthy_claims",
    "outranked": "outranked_type_claims",
    "sitelinks": "sitelinks",
    "redirects": "redirects",
}
#: Rows per Arrow batch fetched from DuckDB and routed to shards: a batch, its keys as Python
#: strings (`emit_by_key`) and its routed copy are held at once, so a small batch keeps this part of
#: the stage flat (131k rows: `entity_diff`'s labelled entities took +13 MiB from the 256 MB world
#: to the 1 GB one; 16k: +0, for the same CPU).
FETCH_ROWS = 1 << 14
#: Entities per range of ids the per-entity queries run over (`id_ranges`), times the caller's
#: `scale`. A range still reads every row group it overlaps in every scan shard (65,536 rows each,
#: hash-sharded ids): cheap for `internal_filter`'s id, type and sitelink columns (32k ids a range:
#: the 256 MB world three ranges a dump, the 1 GB one ten), not for `entity_diff`'s texts, read
#: once per range (32k: 5x its time from 256 MB to 1 GB; it uses 4x).
PARTITION_ROWS = 1 << 15
#: The most reads of each row group the ranges of one query may cost on average (the module
#: docstring): linear time whatever the dump, memory flat only where that allows several ranges.
MAX_READS_PER_ROW_GROUP = 5
#: Ids sampled to place the ranges' bounds: a reservoir of a fixed size, whatever the dump's.
BOUND_SAMPLE_ROWS = 1 << 12
#: A range of ids `[lo, hi)` in string order; None: unbounded on that side.
IdRange = tuple[str | None, str | None]


def register_snapshots(
    con: duckdb.DuckDBPyConnection, ctx: StageContext, tables: Iterable[str] = tuple(NORMALIZED_VIEWS)
) -> None:
    """Views `old_entities`, `new_claims`, … over the normalized shards of both dumps."""
    for snapshot, stage in SNAPSHOT_STAGES.items():
        upstream = ctx.inputs[stage]
        for short in tables:
            parquet_view(con, f"{snapshot}_{short}", upstream.files(NORMALIZED_VIEWS[short]))


def id_ranges(
    con: duckdb.DuckDBPyConnection, ids_sql: str, rows: int, files: Sequence[str], *, scale: int = 1
) -> list[IdRange]:
    """Ranges of ids covering every string, in order, each holding about `scale * PARTITION_ROWS`
    of the `rows` ids that `ids_sql` (a query of one `id` column) returns, and no more ranges than
    `MAX_READS_PER_ROW_GROUP` allows over the shard `files` the ranges filter.

    The bounds are quantiles of a reservoir sample: a range may come out larger or smaller than
    planned (the sample is random), never wrong, since the ranges cover every id whatever the bounds.
    """
    parts = min(-(-rows // (scale * PARTITION_ROWS)), max_ranges(files))
    if parts <= 1:
        return [(None, None)]
    sample = sorted(
        str(i)
        for (i,) in con.execute(
            f"SELECT id FROM ({ids_sql}) USING SAMPLE reservoir({BOUND_SAMPLE_ROWS} ROWS)"
        ).fetchall()
        if i is not None
    )
    bounds = sorted({sample[len(sample) * k // parts] for k in range(1, parts)} if sample else set())
    edges: list[str | None] = [None, *bounds, None]
    return list(itertools.pairwise(edges))


def max_ranges(files: Sequence[str]) -> int:
    """The most ranges a query filtering these shard files may run (the module docstring): P ranges
    read about G + P*S of their G row groups in S files, so P <= (MAX_READS_PER_ROW_GROUP - 1) * G / S."""
    if not files:
        return 1
    groups = sum(int(pq.ParquetFile(path).metadata.num_row_groups) for path in files)
    return max(1, (MAX_READS_PER_ROW_GROUP - 1) * groups // len(files))


def in_range_sql(column: str, ids: IdRange) -> str:
    """A SQL predicate: `column` lies in the range `ids` (TRUE for the unbounded range)."""
    lo, hi = ids
    terms = ([f"{column} >= {sql_string(lo)}"] if lo is not None else []) + (
        [f"{column} < {sql_string(hi)}"] if hi is not None else []
    )
    return " AND ".join(terms) or "TRUE"


def count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    """The single integer a `SELECT count(*) …` query returns."""
    rows = con.execute(sql).fetchall()  # fetch to the end: DuckDB 2 refuses new work on a half-read result
    return int(rows[0][0]) if rows and rows[0][0] is not None else 0


def count_by(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, int]:
    """`{key: n}` from a query returning `(key, n)` rows (NULL keys skipped)."""
    return {str(k): int(n) for k, n in con.execute(sql).fetchall() if k is not None}


class QueryStage(Stage[P]):
    """A derived stage whose rows come from DuckDB queries run once over all upstream shards.

    Subclasses implement `run_queries`, which leaves each output table's rows in a DuckDB
    relation and returns the relation names and the stage's stats; or returns the stats and an
    iterator of `(table, relation)` pairs, each relation streamed into the shards before the
    iterator is advanced (so it can drop one range's tables before it builds the next's) and the
    stats complete once it is exhausted. Rows are routed to shards by
    the column `route_by[table]` (default `shard_key`); a table routed by None goes to shard 0
    (small global tables such as the TopSnaks list).
    """

    layer = "derived"
    default_num_shards = 0
    shard_key = "qid"
    progress_unit = "query"
    route_by: ClassVar[Mapping[str, str | None]] = {}
    #: Automatic shard counts: about one shard per 64 MB of the entities read (rows per entity are
    #: few and narrow here): a fixture or a small dump gives one shard, a full dump ~100.
    shard_input_bytes = 64 << 20
    #: The reducer's in-memory sort limit, below the default: these tables are narrow (ids, a few
    #: flags and labels), so sorting a shard costs several times its rows' bytes (the key's ranks,
    #: the order, its check), and the default 16 MB let a 1 GB world's `kept` (10 MB, 512k ids)
    #: sort whole: +11 MiB over the 256 MB world's. Runs of 4 MB hold what a small dump's shard
    #: held; the bytes written are the same (`engine.external_sort`).
    sort_memory_bytes = 4 << 20

    def shard_inputs(self, params: P) -> tuple[tuple[str, str], ...]:
        """Sized from the KB's entities when the stage reads them, else from both dumps' entities."""
        if "entity_diff" in self.inputs:
            return (("entity_diff", "kb_entities"),)
        return tuple((stage, "entities") for stage in SNAPSHOT_STAGES.values() if stage in self.inputs)

    def map_tasks(self, ctx: StageContext[P]) -> list[MapTask]:
        """One task: the queries are global."""
        return [MapTask("query")]

    def run_queries(
        self, con: duckdb.DuckDBPyConnection, ctx: StageContext[P]
    ) -> tuple[Mapping[str, str | tuple[str, ...]] | Iterator[tuple[str, str]], Stats]:
        """Compute the outputs; returns (output table -> the DuckDB relation holding its rows, or
        several whose rows together are the table's; or `(table, relation)` pairs one at a time,
        stats)."""
        raise NotImplementedError

    def check_upstream(self, ctx: StageContext[P]) -> None:
        """Raise `UserError` if the upstream stages were built in a way this stage cannot use."""

    def map(self, ctx: StageContext[P], task: MapTask, sink: BucketSink, progress: ProgressFn) -> Stats:
        """Run the queries and route every result row to its shard."""
        self.check_upstream(ctx)
        schemas = self.map_schemas(ctx.params)
        rows = 0
        # A new database, not the idle one an earlier stage of this process left (a title_qid's, in a
        # one-worker Hansel build): its queries' leftovers would sit under this stage's peak.
        release_idle_database()
        # The one task of the stage: every worker's share of the machine; spills under `_scratch`,
        # which the runner deletes when the stage completes. Rows are sorted by the framework.
        with stage_connection(ctx, tasks=1, ordered=False) as con:
            relations, stats = self.run_queries(con, ctx)
            for table, relation in _pairs(relations):
                schema = schemas[table]
                columns = ", ".join(f'"{name}"' for name in schema.names)
                key = self.route_by.get(table, self.shard_key)
                reader: pa.RecordBatchReader = con.sql(f"SELECT {columns} FROM {relation}").to_arrow_reader(
                    FETCH_ROWS
                )
                for batch in reader:
                    part = pa.Table.from_batches([batch]).cast(schema)
                    rows += part.num_rows
                    if key is None:
                        sink.emit(table, 0, part)
                        continue
                    sink.emit_by_key(table, part, key, ctx.num_shards)
        # What the queries left resident goes now, not after the reduce and the stages after this one.
        release_idle_database()
        progress(1, rows)
        return stats


def _pairs(
    relations: Mapping[str, str | tuple[str, ...]] | Iterator[tuple[str, str]],
) -> Iterator[tuple[str, str]]:
    """`(table, relation)` in the order they are read. Several relations of one table are read one
    after another, never as one UNION ALL: DuckDB would build the hash tables of every part's joins
    before the first row."""
    if not isinstance(relations, Mapping):
        yield from relations
        return
    for table, names in sorted(relations.items()):
        for relation in (names,) if isinstance(names, str) else names:
            yield table, relation


def kb_params_check(params: Params, fields: Mapping[str, Sequence[str]]) -> None:
    """ValueError unless each named string field of `params` is one of its allowed values."""
    for name, allowed in fields.items():
        value = getattr(params, name)
        if value not in allowed:
            raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")


def require_languages(ctx: StageContext, languages: Sequence[str]) -> None:
    """UserError unless both scans kept labels in every one of `languages`."""
    for stage in SNAPSHOT_STAGES.values():
        kept = ctx.inputs[stage].params.get("languages", [])
        missing = [lang for lang in languages if lang not in kept]
        if missing:
            raise UserError(
                f"{ctx.stage}: languages {missing} are not in {stage}'s scan (it kept {kept}); "
                f"add them with --param {stage}.languages=… or drop them from {ctx.stage}.languages"
            )
