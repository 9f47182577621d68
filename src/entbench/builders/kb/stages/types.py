"""Stages `type_closure` and `coarse_types` (Hansel §3.1 "Wikidata Type system", Table 2; spec §2.3).

`type_closure` walks P279 downward from the root classes in each dump (a recursive query, exact
on cycles; see `typesys.closure`). `coarse_types` then joins the truthy P31 values of every KB
entity against that closure: E_known entities are typed in the old dump (the KB the models are
trained on), E_new entities in the new dump (the only one they exist in).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from msgspec import Meta

from entbench.builders.kb.stages.query import (
    SNAPSHOT_STAGES,
    QueryStage,
    count,
    count_by,
    register_snapshots,
)
from entbench.engine.duck import parquet_view
from entbench.engine.stage import Output, Params, StageContext
from entbench.engine.stats import Stats
from entbench.errors import UserError
from entbench.schemas import kb as schema
from entbench.typesys import closure as tc
from entbench.typesys.coarse import (
    DEFAULT_PRECEDENCE,
    LABEL_PATTERN,
    OTHER,
    coarse_case_sql,
    combination_sql,
    parse_precedence,
)
from entbench.typesys.qids import check_qids, qid_number_sql, sql_string, sql_string_list

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

DEFAULT_ROOTS: tuple[str, ...] = tuple(spec.partition("=")[2] for spec in DEFAULT_PRECEDENCE)


@dataclass(frozen=True)
class TypeClosureParams(Params):
    """The root classes to close P279 downward from (default: Hansel Table 2's four roots)."""

    roots: Annotated[
        tuple[str, ...],
        Meta(min_length=1, description="person, geographical feature, organization, event (Hansel Table 2)"),
    ] = DEFAULT_ROOTS
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 64 MB of the two scans' `entities`"),
    ] = 0

    def __post_init__(self) -> None:
        check_qids(self.roots, "roots")
        super().__post_init__()


class TypeClosure(QueryStage[TypeClosureParams]):
    """Per dump, every class that is a root or a transitive P279-subclass of one."""

    name = "type_closure"
    version = 1
    inputs = ("wikidata_old", "wikidata_new")
    shard_key = "class"
    description = "P279 closed downward from the coarse-type roots, per dump"

    def outputs(self, params: TypeClosureParams) -> list[Output]:
        """`(snapshot, root, class)` rows."""
        return [Output("type_closure", schema.TYPE_CLOSURE, ("snapshot", "root", "class"))]

    def run_queries(
        self, con: duckdb.DuckDBPyConnection, ctx: StageContext[TypeClosureParams]
    ) -> tuple[dict[str, str], Stats]:
        """One recursive query per dump."""
        params = ctx.params
        register_snapshots(con, ctx, ("claims",))
        stats = Stats()
        parts = []
        for snapshot in SNAPSHOT_STAGES:
            con.execute(f"CREATE TEMP TABLE {snapshot}_p279 AS {tc.p279_edges_sql(f'{snapshot}_claims')}")
            con.execute(
                f"CREATE TEMP TABLE {snapshot}_closure AS "
                f"{tc.downward_closure_sql(f'{snapshot}_p279', params.roots)}"
            )
            stats.add(f"{snapshot}_p279_edges", count(con, f"SELECT count(*) FROM {snapshot}_p279"))
            per_root = count_by(con, f"SELECT root, count(*) FROM {snapshot}_closure GROUP BY root")
            for root in params.roots:
                stats.add(f"{snapshot}_classes_under_{root}", per_root.get(root, 0))
            parts.append(f'SELECT {sql_string(snapshot)} AS snapshot, root, "class" FROM {snapshot}_closure')
        con.execute("CREATE TEMP TABLE type_closure AS " + " UNION ALL ".join(parts))
        return {"type_closure": "type_closure"}, stats


@dataclass(frozen=True)
class CoarseTypesParams(Params):
    """`precedence`: `LABEL=QID` items, highest first (spec §2.3); `other`: the fallback label."""

    precedence: Annotated[
        tuple[str, ...],
        Meta(
            description=(
                "labels and their root classes, highest precedence first (LOC before ORG keeps "
                "countries and cities LOC)"
            )
        ),
    ] = DEFAULT_PRECEDENCE
    other: Annotated[
        str,
        Meta(description="the label of an entity reaching no root"),
    ] = OTHER
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 64 MB of `entity_diff.kb_entities`"),
    ] = 0

    def __post_init__(self) -> None:
        if not LABEL_PATTERN.fullmatch(self.other):
            raise ValueError(f"other must be an upper-case label such as OTHER, got {self.other!r}")
        parse_precedence(self.precedence, self.other)
        super().__post_init__()


class CoarseTypes(QueryStage[CoarseTypesParams]):
    """One coarse type per KB entity, by precedence over the roots it reaches."""

    name = "coarse_types"
    version = 1
    inputs = ("entity_diff", "type_closure", "wikidata_old", "wikidata_new")
    description = "coarse types PER/LOC/ORG/EVENT/OTHER of E_known and E_new"

    def outputs(self, params: CoarseTypesParams) -> list[Output]:
        """`(qid, coarse, roots)` rows."""
        return [Output("coarse_types", schema.COARSE_TYPES, ("qid",))]

    def check_upstream(self, ctx: StageContext[CoarseTypesParams]) -> None:
        """Every root of the precedence must have been closed by `type_closure`."""
        closed = ctx.inputs["type_closure"].params["roots"]
        missing = [r.qid for r in parse_precedence(ctx.params.precedence) if r.qid not in closed]
        if missing:
            raise UserError(
                f"coarse_types.precedence names roots {missing} that type_closure did not close "
                f"(its roots are {closed}); add them with --param type_closure.roots=…"
            )

    def run_queries(
        self, con: duckdb.DuckDBPyConnection, ctx: StageContext[CoarseTypesParams]
    ) -> tuple[dict[str, str], Stats]:
        """Reach roots through P31 + closure in each entity's own dump, then apply the precedence."""
        params = ctx.params
        precedence = parse_precedence(params.precedence, params.other)
        register_snapshots(con, ctx, ("claims",))
        parquet_view(con, "kb_entities", ctx.inputs["entity_diff"].files("kb_entities"))
        parquet_view(con, "type_closure", ctx.inputs["type_closure"].files("type_closure"))
        con.execute(
            "CREATE TEMP TABLE kb AS SELECT qid, CASE WHEN in_known THEN 'old' ELSE 'new' END AS snapshot "
            "FROM kb_entities"
        )
        roots = sql_string_list(r.qid for r in precedence)
        reached = []
        for snapshot in SNAPSHOT_STAGES:
            con.execute(
                f'CREATE TEMP TABLE {snapshot}_instances AS SELECT p.entity, p."class" '
                f"FROM ({tc.p31_pairs_sql(f'{snapshot}_claims')}) AS p "
                f"SEMI JOIN kb ON kb.qid = p.entity AND kb.snapshot = {sql_string(snapshot)}"
            )
            con.execute(
                f'CREATE TEMP TABLE {snapshot}_closure AS SELECT root, "class" FROM type_closure '
                f"WHERE snapshot = {sql_string(snapshot)} AND list_contains({roots}, root)"
            )
            reached.append(tc.instance_roots_sql(f"{snapshot}_instances", f"{snapshot}_closure"))
        con.execute(
            "CREATE TEMP TABLE reached AS SELECT entity AS qid, "
            f"list(root ORDER BY {qid_number_sql('root')}) AS roots "
            f"FROM ({' UNION ALL '.join(reached)}) GROUP BY entity"
        )
        con.execute(
            "CREATE TEMP TABLE coarse_types AS "
            f"SELECT qid, {coarse_case_sql('roots', precedence, params.other)} AS coarse, roots FROM ("
            "SELECT kb.qid, coalesce(r.roots, []::VARCHAR[]) AS roots "
            "FROM kb LEFT JOIN reached AS r USING (qid))"
        )
        stats = Stats()
        for label, n in count_by(con, "SELECT coarse, count(*) FROM coarse_types GROUP BY coarse").items():
            stats.add(f"coarse_{label}", n)
        stats.add("conflicts", count(con, "SELECT count(*) FROM coarse_types WHERE len(roots) > 1"))
        combos = count_by(
            con,
            f"SELECT {combination_sql('roots', precedence)}, count(*) FROM coarse_types "
            "WHERE len(roots) > 1 GROUP BY ALL",
        )
        for combo, n in combos.items():
            stats.add(f"conflict_{combo}", n)
        return {"coarse_types": "coarse_types"}, stats
