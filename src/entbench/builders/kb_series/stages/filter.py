"""Stage `series_filter`: the Wikimedia-internal filter and site constraint on every dump of a series.

The `kb` target's `internal_filter` (spec §2.1), with its parameters, for N dumps instead of two:
each dump's entities get a decision from `filters.internal`, class membership read from that
dump's own P31/P279 statements. The site constraint looks at the newest dump's sitelinks for every
dump (`site_from = new`, as Hansel uses one Wikipedia for both its dumps) or at each dump's own
(`site_from = own`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, ClassVar

from entbench.builders.kb.stages.filter import InternalFilterParams, decision_stats
from entbench.builders.kb.stages.query import NORMALIZED_VIEWS, QueryStage
from entbench.builders.kb_series.series import dump_index
from entbench.engine.duck import parquet_view
from entbench.engine.stage import Output, P, StageContext
from entbench.engine.stats import Stats
from entbench.errors import UserError
from entbench.filters import internal
from entbench.schemas import kb_series as schema
from entbench.typesys.closure import downward_closure_sql, p279_edges_sql, roots_sql

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb


def register_dumps(
    con: duckdb.DuckDBPyConnection, ctx: StageContext, dumps: Sequence[str], tables: Sequence[str]
) -> None:
    """Views `d<i>_entities`, `d<i>_claims`, … over the normalized shards of every dump."""
    for dump in dumps:
        upstream = ctx.inputs[dump]
        for short in tables:
            parquet_view(con, f"d{dump_index(dump)}_{short}", upstream.files(NORMALIZED_VIEWS[short]))


@dataclass(eq=False)
class SeriesQueryStage(QueryStage[P]):
    """A kb-style query stage over every dump of a series (`dumps`, oldest first: their order is
    identity, where the input fingerprints alone are keyed by name, unordered)."""

    #: Upstream stages a subclass reads besides the dumps.
    extra_inputs: ClassVar[tuple[str, ...]] = ()

    dumps: tuple[str, ...]
    _: KW_ONLY
    stage_name: str = ""

    def __post_init__(self) -> None:
        self.stage_name = self.stage_name or self.name
        self.inputs = (*self.extra_inputs, *self.dumps)

    def shard_inputs(self, params: P) -> tuple[tuple[str, str], ...]:
        """Sized from the entities of every dump."""
        return tuple((dump, "entities") for dump in self.dumps)


class SeriesFilter(SeriesQueryStage[InternalFilterParams]):
    """Decide, for every dump of the series, which entities are KB entities (spec §2.1)."""

    name = "series_filter"
    version = 1
    description = "Wikimedia-internal filter + site constraint on every dump of the series"

    def outputs(self, params: InternalFilterParams) -> list[Output]:
        """Kept entities and class-based removals, per dump."""
        return [
            Output("kept", schema.KEPT, ("dump", "qid")),
            Output("removed", schema.REMOVED, ("dump", "qid")),
        ]

    def check_upstream(self, ctx: StageContext[InternalFilterParams]) -> None:
        """The scans the site constraint reads must have kept that site's sitelinks."""
        params = ctx.params
        if not params.site:
            return
        for dump in self._site_dumps(params):
            sites = list(ctx.inputs[dump].params.get("sites", []))
            glob = internal.site_is_glob(params.site)
            if "*" in sites or (not glob and params.site in sites):
                continue
            fix = "*" if glob else ",".join([*sites, params.site])
            raise UserError(
                f"series_filter.site={params.site!r} needs "
                f"{'every sitelink' if glob else f'the {params.site} sitelinks'}, but {dump} kept only "
                f"{sites}; rebuild it with --param {dump}.sites={fix}"
            )

    def _site_dumps(self, params: InternalFilterParams) -> tuple[str, ...]:
        """The dumps whose sitelinks the site constraint reads."""
        return self.dumps[-1:] if params.site_from == "new" else self.dumps

    def run_queries(
        self, con: duckdb.DuckDBPyConnection, ctx: StageContext[InternalFilterParams]
    ) -> tuple[dict[str, str], Stats]:
        """Each dump's decisions; kept rows and class-based removals as two tables."""
        params = ctx.params
        views = ("entities", "claims", "sitelinks") + (("outranked",) if params.ranks == "all" else ())
        register_dumps(con, ctx, self.dumps, views)
        newest = f"d{dump_index(self.dumps[-1])}"
        stats = Stats()
        for dump in self.dumps:
            d = f"d{dump_index(dump)}"
            type_claims = (
                f"SELECT subject, property, item FROM {d}_claims "
                "WHERE property IN ('P31', 'P279') AND item IS NOT NULL"
            )
            if params.ranks == "all":
                type_claims += (
                    f" UNION ALL SELECT subject, property, item FROM {d}_outranked WHERE item IS NOT NULL"
                )
            con.execute(f"CREATE TEMP TABLE {d}_type_claims AS {type_claims}")
            if params.transitive:
                con.execute(f"CREATE TEMP TABLE {d}_p279 AS {p279_edges_sql(f'{d}_type_claims')}")
                closure = downward_closure_sql(f"{d}_p279", params.classes)
            else:
                closure = roots_sql(params.classes)
            con.execute(f"CREATE TEMP TABLE {d}_closure AS {closure}")
            con.execute(
                f"CREATE TEMP TABLE {d}_hits AS "
                f"{internal.internal_hits_sql(f'{d}_type_claims', f'{d}_closure')}"
            )
            site_ok: str | None = None
            if params.site:
                sitelinks = f"{newest if params.site_from == 'new' else d}_sitelinks"
                site_ok = f"{d}_site_ok"
                con.execute(f"CREATE TEMP TABLE {site_ok} AS {internal.site_ok_sql(sitelinks, params.site)}")
            con.execute(
                f"CREATE TEMP TABLE {d}_decisions AS "
                f"{internal.decisions_sql(f'{d}_entities', f'{d}_hits', site_ok)}"
            )
            stats.merge(decision_stats(con, d, f"dump_{dump_index(dump)}"))
            # Keep what the outputs need and free the rest before the next dump: a full dump's
            # decisions and type claims are each ~10^8 rows.
            no_site = internal.Reason.NO_SITE.value
            con.execute(
                f"CREATE TEMP TABLE {d}_kept AS SELECT {dump_index(dump)}::INTEGER AS dump, qid "
                f"FROM {d}_decisions WHERE reason IS NULL"
            )
            con.execute(
                f"CREATE TEMP TABLE {d}_removed AS SELECT {dump_index(dump)}::INTEGER AS dump, qid, reason, "
                f"classes FROM {d}_decisions WHERE reason IS NOT NULL AND reason <> '{no_site}'"
            )
            for table in ("decisions", "hits", "closure", "type_claims", "p279", "site_ok"):
                con.execute(f"DROP TABLE IF EXISTS {d}_{table}")
        for table in ("kept", "removed"):
            parts = " UNION ALL ".join(f"SELECT * FROM d{dump_index(dump)}_{table}" for dump in self.dumps)
            con.execute(f"CREATE TEMP TABLE {table} AS {parts}")
        return {"kept": "kept", "removed": "removed"}, stats
