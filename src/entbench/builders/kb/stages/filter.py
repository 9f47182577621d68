"""Stage `internal_filter`: the Wikimedia-internal filter and site constraint on both dumps (spec §2.1).

For each dump (`old` = `wikidata_old`, `new` = `wikidata_new`) every entity gets a decision from
`filters.internal`: kept, or dropped for a reason. Class membership uses that dump's own P31/P279
statements (its hierarchy is closed downward from the filter classes when `transitive`); the
site constraint looks at the new dump's sitelinks for both dumps by default (spec §2.2: Hansel
uses one 2021 Wikipedia for both), or at each dump's own (`site_from = own`, mGENRE).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from msgspec import Meta

from entbench.builders.kb.stages.query import (
    SNAPSHOT_STAGES,
    QueryStage,
    count,
    count_by,
    id_ranges,
    in_range_sql,
    kb_params_check,
    register_snapshots,
)
from entbench.engine.stage import Output, Params, StageContext
from entbench.engine.stats import Stats, counted
from entbench.errors import UserError
from entbench.filters import internal
from entbench.schemas import kb as schema
from entbench.typesys.closure import downward_closure_sql, p279_edges_sql, roots_sql
from entbench.typesys.qids import check_qids, sql_string

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb


@dataclass(frozen=True)
class InternalFilterParams(Params):
    """Parameters of `internal_filter` (spec §2.1); `preset=hansel|mgenre` sets several at once.

    `site`: a site id, a glob over site ids (`*wiki`: any key ending in "wiki", as mGENRE), or ''
    for no site constraint. `site_from`: `new` (the new dump's sitelinks for both dumps) or `own`.
    `ranks`: `truthy` (P31/P279 truthy statements) or `all` (every rank, as mGENRE).
    """

    PRESETS: ClassVar[dict[str, dict[str, object]]] = internal.PRESETS

    preset: Annotated[
        str,
        Meta(
            description=(
                "`hansel` (the defaults below), `mgenre` (mGENRE's 14 classes, direct P31/P279 of any"
                " rank, any site ending in `wiki`) or `table7` (the defaults below with the classes "
                "of the Hansel paper's Table 7 instead, see below)"
            )
        ),
    ] = "hansel"
    classes: Annotated[
        tuple[str, ...],
        Meta(
            description=(
                "the filter classes; by default mGENRE's 14 internal classes + Q4167410 "
                "(disambiguation page) + Q13406463 (list article)"
            )
        ),
    ] = internal.HANSEL_CLASSES
    transitive: Annotated[
        bool,
        Meta(description="also drop instances of subclasses of the filter classes"),
    ] = True
    site: Annotated[
        str,
        Meta(
            description=(
                'required sitelink: a site, a glob such as `*wiki`, or `""` for none (a Hansel build '
                "on another wiki needs that wiki's, e.g. `enwiki`: the Hansel stages check it)"
            )
        ),
    ] = "zhwiki"
    site_from: Annotated[
        str,
        Meta(description="`new`: the newest dump's sitelinks decide for every dump; `own`: each dump's own"),
    ] = "new"
    ranks: Annotated[
        str,
        Meta(description="which P31/P279 statements count: `truthy` or `all` ranks"),
    ] = "truthy"
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 64 MB of the two scans' `entities`"),
    ] = 0

    def __post_init__(self) -> None:
        kb_params_check(
            self,
            {"preset": tuple(internal.PRESETS), "site_from": internal.SITE_FROM, "ranks": internal.RANKS},
        )
        check_qids(self.classes, "classes")
        internal.check_site(self.site)
        super().__post_init__()


class InternalFilter(QueryStage[InternalFilterParams]):
    """Decide, per dump, which entities are KB entities (spec §2.1)."""

    name = "internal_filter"
    version = 2  # 2: stats say, per filter class, whether the dump has it and how it is used
    inputs = ("wikidata_old", "wikidata_new")
    description = "Wikimedia-internal filter + site constraint on both dumps"

    def coverage(self, stats: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """How many entities of the newer dump the KB keeps, and why the others were let go."""
        return (
            f"{counted(stats, 'new_kept'):,} of the {counted(stats, 'new_entities'):,} entities of the newer "
            f"dump are KB entities ({counted(stats, 'new_dropped_no_site'):,} without a "
            f"{params.get('site', 'zhwiki')} sitelink, {counted(stats, 'new_dropped_not_item'):,} not items)"
        )

    def outputs(self, params: InternalFilterParams) -> list[Output]:
        """Kept entities and class-based removals, per snapshot."""
        return [
            Output("kept", schema.KEPT, ("snapshot", "qid")),
            Output("removed", schema.REMOVED, ("snapshot", "qid")),
        ]

    def check_upstream(self, ctx: StageContext[InternalFilterParams]) -> None:
        """The scans must have kept the sitelinks the site constraint looks at."""
        params = ctx.params
        if not params.site:
            return
        snapshots = [schema.NEW] if params.site_from == "new" else list(SNAPSHOT_STAGES)
        for snapshot in snapshots:
            stage = SNAPSHOT_STAGES[snapshot]
            sites = ctx.inputs[stage].params.get("sites", [])
            if "*" in sites or (not internal.site_is_glob(params.site) and params.site in sites):
                continue
            glob = internal.site_is_glob(params.site)
            fix = "*" if glob else ",".join([*sites, params.site])
            need = "every sitelink" if glob else f"the {params.site} sitelinks"
            raise UserError(
                f"internal_filter.site={params.site!r} needs {need}, but {stage} kept only {sites}; "
                f"rebuild it with --param {stage}.sites={fix}"
            )

    def run_queries(
        self, con: duckdb.DuckDBPyConnection, ctx: StageContext[InternalFilterParams]
    ) -> tuple[Iterator[tuple[str, str]], Stats]:
        """Decisions for both dumps, range of ids by range; kept rows and class-based removals."""
        params = ctx.params
        views = ("entities", "claims", "sitelinks") + (("outranked",) if params.ranks == "all" else ())
        register_snapshots(con, ctx, views)
        stats = Stats()
        files = {snapshot: ctx.inputs[stage].files("entities") for snapshot, stage in SNAPSHOT_STAGES.items()}
        return self._decide(con, params, files, stats), stats

    def _decide(
        self,
        con: duckdb.DuckDBPyConnection,
        params: InternalFilterParams,
        files: Mapping[str, Sequence[str]],
        stats: Stats,
    ) -> Iterator[tuple[str, str]]:
        """Per dump: the closure of the filter classes and the statements that reach it (global,
        small: classes, and a few rows per internal entity), then each range of ids' decisions
        (`query.id_ranges`), its kept rows and removals streamed out before the next range's are
        built, so no table holds a row per entity of the dump."""
        for snapshot in SNAPSHOT_STAGES:
            # P31/P279 item values, read as they stream by (never held: see `hits` below).
            type_claims = (
                f"SELECT subject, property, item FROM {snapshot}_claims "
                "WHERE property IN ('P31', 'P279') AND item IS NOT NULL"
            )
            if params.ranks == "all":
                type_claims += (
                    f" UNION ALL SELECT subject, property, item FROM {snapshot}_outranked "
                    "WHERE item IS NOT NULL"
                )
            if params.transitive:
                con.execute(f"CREATE TEMP TABLE {snapshot}_p279 AS {p279_edges_sql(f'({type_claims})')}")
                closure = downward_closure_sql(f"{snapshot}_p279", params.classes)
            else:
                closure = roots_sql(params.classes)
            con.execute(f"CREATE TEMP TABLE {snapshot}_closure AS {closure}")
            con.execute(f"DROP TABLE IF EXISTS {snapshot}_p279")
            stats.add(
                f"{snapshot}_filter_closure_classes",
                count(con, f'SELECT count(DISTINCT "class") FROM {snapshot}_closure'),
            )
            # The statements naming a filter class or one of its subclasses (`hits`: a few per
            # internal entity), in one pass whose join builds on the closure alone; each range then
            # reads its own hits, and no table holds a P31/P279 statement per entity (the old
            # `type_claims`, ~14 MiB of DuckDB's memory on the 1 GB world).
            claims = f"({type_claims})"
            uses = _class_uses(con, claims, params.classes)
            all_hits = f"{snapshot}_hits"
            con.execute(
                f"CREATE TEMP TABLE {all_hits} AS {internal.internal_hits_sql(claims, f'{snapshot}_closure')}"
            )
            entities = f"{snapshot}_entities"
            rows = count(con, f"SELECT count(*) FROM {entities}")
            for ids in id_ranges(con, f"SELECT id FROM {entities}", rows, files[snapshot]):
                hits = f"(SELECT * FROM {all_hits} WHERE {in_range_sql('qid', ids)})"
                part = f"(SELECT * FROM {entities} WHERE {in_range_sql('id', ids)})"
                site_ok: str | None = None
                if params.site:
                    source = schema.NEW if params.site_from == "new" else snapshot
                    site_ok = f"{snapshot}_site_ok"
                    sitelinks = f"(SELECT * FROM {source}_sitelinks WHERE {in_range_sql('id', ids)})"
                    con.execute(
                        f"CREATE TEMP TABLE {site_ok} AS {internal.site_ok_sql(sitelinks, params.site)}"
                    )
                    # A join of its own (`filters.internal.sited_entities_sql` says why).
                    con.execute(
                        f"CREATE TEMP TABLE {snapshot}_sited AS {internal.sited_entities_sql(part, site_ok)}"
                    )
                    con.execute(f"DROP TABLE {site_ok}")
                    part = f"{snapshot}_sited"
                decisions = internal.decisions_sql(part, hits, site_ok, sited=site_ok is not None)
                con.execute(f"CREATE TEMP TABLE {snapshot}_decisions AS {decisions}")
                con.execute(f"DROP TABLE IF EXISTS {snapshot}_sited")
                stats.merge(decision_stats(con, snapshot, snapshot))
                label = sql_string(snapshot)
                no_site = sql_string(internal.Reason.NO_SITE)
                con.execute(
                    f"CREATE OR REPLACE TEMP VIEW kept AS SELECT {label} AS snapshot, qid "
                    f"FROM {snapshot}_decisions WHERE reason IS NULL"
                )
                con.execute(
                    f"CREATE OR REPLACE TEMP VIEW removed AS SELECT {label} AS snapshot, qid, reason, "
                    f"classes FROM {snapshot}_decisions WHERE reason IS NOT NULL AND reason <> {no_site}"
                )
                yield "kept", "kept"
                yield "removed", "removed"
                con.execute("DROP VIEW kept")
                con.execute("DROP VIEW removed")
                con.execute(f"DROP TABLE {snapshot}_decisions")
            stats.merge(_class_stats(con, snapshot, params.classes, uses))
            con.execute(f"DROP TABLE {all_hits}")
            con.execute(f"DROP TABLE {snapshot}_closure")


def decision_stats(con: duckdb.DuckDBPyConnection, view: str, prefix: str) -> Stats:
    """Counts of the decisions table `{view}_decisions` under `prefix`: entities, kept, drops per
    reason and per filter class (an entity reaching several classes counts under each). Shared
    with kb_series' filter, which counts each dump of a series the same way."""
    stats = Stats()
    table = f"{view}_decisions"
    stats.add(f"{prefix}_entities", count(con, f"SELECT count(*) FROM {table}"))
    stats.add(f"{prefix}_kept", count(con, f"SELECT count(*) FROM {table} WHERE reason IS NULL"))
    for reason, n in count_by(con, f"SELECT reason, count(*) FROM {table} GROUP BY reason").items():
        stats.add(f"{prefix}_dropped_{reason}", n)
    per_class = count_by(
        con,
        f"SELECT c, count(*) FROM (SELECT unnest(classes) AS c FROM {table} "
        "WHERE classes IS NOT NULL AND reason IS NOT NULL) GROUP BY c",
    )
    for qid, n in per_class.items():
        stats.add(f"{prefix}_dropped_class_{qid}", n)
    return stats


def _class_uses(con: duckdb.DuckDBPyConnection, claims: str, classes: tuple[str, ...]) -> dict[str, int]:
    """How many of the P31/P279 statements `claims` name each filter class directly."""
    if not classes:
        return {}
    listed = ", ".join(sql_string(c) for c in classes)
    return count_by(con, f"SELECT item, count(*) FROM {claims} WHERE item IN ({listed}) GROUP BY item")


def _class_stats(
    con: duckdb.DuckDBPyConnection, snapshot: str, classes: tuple[str, ...], uses: Mapping[str, int]
) -> Stats:
    """Per filter class: whether the dump has its item (`…_class_<QID>_item`), how many P31/P279
    statements name it directly (`…_statements`, `uses`: `_class_uses`) and
    how many classes lie under it in the closure the filter used (`…_subclasses`), so a card can say
    which classes of a preset occur."""
    stats = Stats()
    if not classes:
        return stats
    listed = ", ".join(sql_string(c) for c in classes)
    present = {
        str(q)
        for (q,) in con.execute(f"SELECT id FROM {snapshot}_entities WHERE id IN ({listed})").fetchall()
    }
    under = count_by(
        con,
        f'SELECT root, count(DISTINCT "class") FROM {snapshot}_closure WHERE "class" <> root GROUP BY root',
    )
    for qid in classes:
        stats.add(f"{snapshot}_class_{qid}_item", int(qid in present))
        stats.add(f"{snapshot}_class_{qid}_statements", uses.get(qid, 0))
        stats.add(f"{snapshot}_class_{qid}_subclasses", under.get(qid, 0))
    return stats
