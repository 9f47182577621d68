"""Stage `series_new`: each period's E_new with coarse types, and every id's first dump.

Hansel's E_new (§3.1: entities of the new dump "that do not exist in E_known"; spec §2.2 reads
it as ids the old dump does not hold at all) applied to each consecutive pair of a series of
dumps. Period `i` lies between dumps `i-1` and `i`; its E_new are the entities dump `i` keeps
(`series_filter`) whose id

* no earlier dump holds, as an entity or a redirect stub (`new_means = first-seen`, default): each
  entity is new in one period at most, the one it first appeared in, so the periods' E_new are
  disjoint and an id deleted and later restored is not new twice;
* dump `i-1` does not hold (`new_means = not-in-previous-dump`): the `kb` target's rule applied to
  each pair on its own.

Each entity is typed (spec §2.3: P31 then P279 closed downward from the `precedence` roots) and
labelled in the dump of its period, the only one that is sure to hold it. `first_dump` lists every
id any dump holds: the first dump holding it, the first whose filter kept it, the last holding it
as an entity.

Stats: `period_<i>_new_entities`, `period_<i>_kept` (what dump `i` keeps), the kept ids that are not
new (`period_<i>_kept_dropped_seen_before` or `…_dropped_in_previous_dump`), `period_<i>_coarse_<T>`;
over the series, `union_new_entities` (distinct ids new in some period) against
`last_dump_new_since_first` (ids the newest dump keeps and the oldest lacks), with the ids in one
and not the other (`union_not_new_since_first`: deleted, redirected or filtered out since;
`new_since_first_not_in_union`: first kept in a dump after the one they appeared in).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from msgspec import Meta

from entbench.builders.kb.stages.query import count, count_by, kb_params_check
from entbench.builders.kb_series.series import dump_index, require_dump_params
from entbench.builders.kb_series.stages.filter import SeriesQueryStage, register_dumps
from entbench.engine.duck import parquet_view
from entbench.engine.stage import Output, Params, StageContext
from entbench.engine.stats import Stats
from entbench.schemas import kb_series as schema
from entbench.schemas.base import column_suffix
from entbench.typesys import closure as tc
from entbench.typesys.coarse import (
    DEFAULT_PRECEDENCE,
    LABEL_PATTERN,
    OTHER,
    coarse_case_sql,
    parse_precedence,
)
from entbench.typesys.qids import qid_number_sql

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

FIRST_SEEN = "first-seen"
NOT_IN_PREVIOUS_DUMP = "not-in-previous-dump"


@dataclass(frozen=True)
class SeriesNewParams(Params):
    """What makes an entity new (`new_means`), the label languages, and the coarse-type precedence
    (`LABEL=QID` items, highest first; `other` for entities reaching no root)."""

    new_means: Annotated[
        str,
        Meta(description="`first-seen` or `not-in-previous-dump` (above)"),
    ] = FIRST_SEEN
    languages: Annotated[
        tuple[str, ...],
        Meta(description="languages of the labels and descriptions (every scan must keep them)"),
    ] = ("en", "zh")
    precedence: Annotated[
        tuple[str, ...],
        Meta(description="coarse-type labels and their root classes, highest precedence first"),
    ] = DEFAULT_PRECEDENCE
    other: Annotated[
        str,
        Meta(description="the label of an entity reaching no root"),
    ] = OTHER
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 64 MB of the scans' `entities`"),
    ] = 0

    def __post_init__(self) -> None:
        kb_params_check(self, {"new_means": (FIRST_SEEN, NOT_IN_PREVIOUS_DUMP)})
        if len(set(self.languages)) != len(self.languages):
            raise ValueError(f"languages repeat: {list(self.languages)}")
        if not LABEL_PATTERN.fullmatch(self.other):
            raise ValueError(f"other must be an upper-case label such as OTHER, got {self.other!r}")
        parse_precedence(self.precedence, self.other)
        super().__post_init__()


class SeriesNew(SeriesQueryStage[SeriesNewParams]):
    """E_new of every period (`new_entities`) and every id's first dump (`first_dump`)."""

    name = "series_new"
    version = 1
    layer = "benchmarks"
    description = "E_new of each consecutive pair of dumps, with coarse types; every id's first dump"

    extra_inputs = ("series_filter",)

    def outputs(self, params: SeriesNewParams) -> list[Output]:
        """`new_entities` (labels in the configured languages) and `first_dump`."""
        return [
            Output("new_entities", schema.new_entities_schema(params.languages), ("period", "qid")),
            Output("first_dump", schema.FIRST_DUMP, ("qid",)),
        ]

    def check_upstream(self, ctx: StageContext[SeriesNewParams]) -> None:
        """Every scan must have kept the requested label languages."""
        require_dump_params(ctx, self.dumps[1:], "languages", ctx.params.languages)

    def run_queries(
        self, con: duckdb.DuckDBPyConnection, ctx: StageContext[SeriesNewParams]
    ) -> tuple[dict[str, str], Stats]:
        """First dumps, each period's E_new, their coarse types and labels, and the series' counts."""
        params = ctx.params
        register_dumps(con, ctx, self.dumps, ("entities", "claims", "redirects"))
        parquet_view(con, "kept", ctx.inputs["series_filter"].files("kept"))
        # Every (id, dump) the dumps hold, streamed once into `first_dump`: the one table over
        # all dumps' ids (a full dump holds ~10^8), the rest reads one dump at a time.
        occurs = " UNION ALL ".join(
            f"SELECT id AS qid, {i} AS dump, true AS entity FROM d{i}_entities "
            f"UNION ALL SELECT from_id AS qid, {i} AS dump, false AS entity FROM d{i}_redirects"
            for i in self._indices()
        )
        con.execute(
            "CREATE TEMP TABLE first_dump AS "
            "SELECT o.qid, min(o.dump)::INTEGER AS first_dump, f.first_kept::INTEGER AS first_kept, "
            "(max(o.dump) FILTER (WHERE o.entity))::INTEGER AS last_dump "
            f"FROM ({occurs}) AS o "
            "LEFT JOIN (SELECT qid, min(dump) AS first_kept FROM kept GROUP BY qid) AS f USING (qid) "
            "GROUP BY o.qid, f.first_kept"
        )
        stats = Stats()
        stats.add("dumps", len(self.dumps))
        periods = self._indices()[1:]
        new_sets = []
        reason = "seen_before" if params.new_means == FIRST_SEEN else "in_previous_dump"
        for i in periods:
            if params.new_means == FIRST_SEEN:
                excluded = f"SELECT qid FROM first_dump WHERE first_dump < {i}"
            else:
                excluded = held_sql(i - 1)
            con.execute(
                f"CREATE TEMP TABLE new_{i} AS SELECT {i}::INTEGER AS period, qid "
                f"FROM (SELECT qid FROM kept WHERE dump = {i}) ANTI JOIN ({excluded}) USING (qid)"
            )
            kept = count(con, f"SELECT count(*) FROM kept WHERE dump = {i}")
            new = count(con, f"SELECT count(*) FROM new_{i}")
            stats.add(f"period_{i}_kept", kept)
            stats.add(f"period_{i}_kept_dropped_{reason}", kept - new)
            stats.add(f"period_{i}_new_entities", new)
            new_sets.append(f"SELECT period, qid FROM new_{i}")
        con.execute("CREATE TEMP TABLE new_set AS " + " UNION ALL ".join(new_sets))
        self._type_and_label(con, params, periods)
        for (period, coarse), n in _count_pairs(
            con, "SELECT period, coarse, count(*) FROM new_entities GROUP BY ALL"
        ).items():
            stats.add(f"period_{period}_coarse_{coarse}", n)
        stats.add("conflicts", count(con, "SELECT count(*) FROM new_entities WHERE len(roots) > 1"))
        stats.merge(_series_counts(con, first=self._indices()[0], last=self._indices()[-1]))
        return {"new_entities": "new_entities", "first_dump": "first_dump"}, stats

    def _indices(self) -> list[int]:
        return [dump_index(dump) for dump in self.dumps]

    def _type_and_label(
        self, con: duckdb.DuckDBPyConnection, params: SeriesNewParams, periods: list[int]
    ) -> None:
        """`new_entities`: each period's entities with the roots they reach and their labels, both
        read in the period's dump."""
        precedence = parse_precedence(params.precedence, params.other)
        roots = [root.qid for root in precedence]
        columns = [
            f"{k}_{column_suffix(lang)}" for k in ("label", "description") for lang in params.languages
        ]
        reached, labels = [], []
        for i in periods:
            con.execute(f"CREATE TEMP TABLE d{i}_p279 AS {tc.p279_edges_sql(f'd{i}_claims')}")
            con.execute(f"CREATE TEMP TABLE d{i}_types AS {tc.downward_closure_sql(f'd{i}_p279', roots)}")
            con.execute(
                f'CREATE TEMP TABLE d{i}_instances AS SELECT p.entity, p."class" '
                f"FROM ({tc.p31_pairs_sql(f'd{i}_claims')}) AS p SEMI JOIN new_{i} AS n ON n.qid = p.entity"
            )
            reached.append(
                f"SELECT {i} AS period, entity, root FROM "
                f"({tc.instance_roots_sql(f'd{i}_instances', f'd{i}_types')})"
            )
            picked = "".join(f", e.{c}" for c in columns)
            labels.append(
                f"SELECT {i} AS period, e.id AS qid{picked} FROM d{i}_entities AS e "
                f"SEMI JOIN new_{i} AS n ON n.qid = e.id"
            )
        con.execute(
            "CREATE TEMP TABLE reached AS SELECT period, entity AS qid, "
            f"list(root ORDER BY {qid_number_sql('root')}) AS roots "
            f"FROM ({' UNION ALL '.join(reached)}) GROUP BY period, entity"
        )
        con.execute(f"CREATE TEMP TABLE labels AS {' UNION ALL '.join(labels)}")
        selected = "".join(f", l.{c}" for c in columns)
        con.execute(
            "CREATE TEMP TABLE new_entities AS "
            f"SELECT n.period, n.qid, {coarse_case_sql('roots', precedence, params.other)} AS coarse, "
            f"roots{selected} FROM ("
            "SELECT n.period, n.qid, coalesce(r.roots, []::VARCHAR[]) AS roots FROM new_set AS n "
            "LEFT JOIN reached AS r USING (period, qid)) AS n "
            "LEFT JOIN labels AS l USING (period, qid)"
        )


def held_sql(dump: int) -> str:
    """`(qid)` of every id dump `dump` holds: its entities and its redirect stubs."""
    return f"SELECT id AS qid FROM d{dump}_entities UNION SELECT from_id AS qid FROM d{dump}_redirects"


def _count_pairs(con: duckdb.DuckDBPyConnection, sql: str) -> dict[tuple[int, str], int]:
    """`{(period, key): n}` from a query returning `(period, key, n)` rows."""
    return {(int(p), str(k)): int(n) for p, k, n in con.execute(sql).fetchall()}


def _series_counts(con: duckdb.DuckDBPyConnection, *, first: int, last: int) -> Stats:
    """The union of the periods' E_new against the ids the newest dump keeps and the oldest lacks."""
    con.execute("CREATE TEMP TABLE union_new AS SELECT DISTINCT qid FROM new_set")
    con.execute(
        f"CREATE TEMP TABLE new_since_first AS SELECT qid FROM (SELECT qid FROM kept WHERE dump = {last}) "
        f"ANTI JOIN ({held_sql(first)}) USING (qid)"
    )
    stats = Stats()
    stats.add("union_new_entities", count(con, "SELECT count(*) FROM union_new"))
    stats.add("last_dump_new_since_first", count(con, "SELECT count(*) FROM new_since_first"))
    stats.add(
        "union_not_new_since_first",
        count(con, "SELECT count(*) FROM union_new ANTI JOIN new_since_first USING (qid)"),
    )
    stats.add(
        "new_since_first_not_in_union",
        count(con, "SELECT count(*) FROM new_since_first ANTI JOIN union_new USING (qid)"),
    )
    stats.add("first_dump_ids", count(con, "SELECT count(*) FROM first_dump"))
    for dump, n in count_by(con, "SELECT first_dump, count(*) FROM first_dump GROUP BY first_dump").items():
        stats.add(f"dump_{dump}_first_seen_ids", n)
    return stats
