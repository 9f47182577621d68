"""Stage `top_snaks`: Hansel's fine types (Hansel §3.1 "Fine Types", appendix C; spec §2.4).

The TopSnaks are counted over E_known in the old dump ("TopSnaks generated on the 2018 Wikidata
dump", Hansel §3.1); each KB entity then lists the TopSnaks it has, E_known entities with their
old-dump statements and E_new entities with their new-dump statements. Coverage, the share of
E_new having at least one TopSnak ("covers about 90% of E_new", Hansel §3.1), is in the stats.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from msgspec import Meta

from entbench.builders.kb.stages.query import QueryStage, count, register_snapshots
from entbench.engine.duck import parquet_view
from entbench.engine.stage import Output, Params, StageContext
from entbench.engine.stats import Stats
from entbench.schemas import kb as schema
from entbench.typesys import snaks as ts

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

DEFAULT_K = 10_000


@dataclass(frozen=True)
class TopSnaksParams(Params):
    """`k`: how many (property, item value) snaks to keep (Hansel: 10,000)."""

    k: Annotated[
        int,
        Meta(ge=1, description="how many snaks to keep"),
    ] = DEFAULT_K
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 64 MB of `entity_diff.kb_entities`"),
    ] = 0


class TopSnaks(QueryStage[TopSnaksParams]):
    """The K most frequent snaks over E_known, and each KB entity's TopSnak ranks."""

    name = "top_snaks"
    version = 1
    inputs = ("entity_diff", "wikidata_old", "wikidata_new")
    description = "TopSnaks fine types over E_known, per-entity indices, E_new coverage"
    #: The TopSnaks list is small and global: all of it goes to shard 0, in rank order.
    route_by: ClassVar[dict[str, str | None]] = {"top_snaks": None}

    def outputs(self, params: TopSnaksParams) -> list[Output]:
        """`top_snaks` (rank, property, value, entity_count) and `entity_snaks` (qid, snaks)."""
        return [
            Output("top_snaks", schema.TOP_SNAKS, ("rank",)),
            Output("entity_snaks", schema.ENTITY_SNAKS, ("qid",)),
        ]

    def run_queries(
        self, con: duckdb.DuckDBPyConnection, ctx: StageContext[TopSnaksParams]
    ) -> tuple[dict[str, str], Stats]:
        """Count snaks over E_known, keep the top K, index every KB entity."""
        params = ctx.params
        register_snapshots(con, ctx, ("claims",))
        parquet_view(con, "kb_entities", ctx.inputs["entity_diff"].files("kb_entities"))
        con.execute("CREATE TEMP TABLE known AS SELECT qid FROM kb_entities WHERE in_known")
        con.execute("CREATE TEMP TABLE new_set AS SELECT qid FROM kb_entities WHERE in_new")
        con.execute(f"CREATE TEMP TABLE known_snaks AS {ts.entity_snaks_sql('old_claims', 'known')}")
        con.execute(f"CREATE TEMP TABLE new_snaks AS {ts.entity_snaks_sql('new_claims', 'new_set')}")
        con.execute(f"CREATE TEMP TABLE frequencies AS {ts.snak_frequencies_sql('known_snaks')}")
        con.execute(f"CREATE TEMP TABLE top AS {ts.top_snaks_sql('frequencies', params.k)}")
        con.execute(
            "CREATE TEMP TABLE entity_snaks AS "
            f"{ts.entity_top_snaks_sql('known_snaks', 'top', 'known')} UNION ALL "
            f"{ts.entity_top_snaks_sql('new_snaks', 'top', 'new_set')}"
        )
        stats = Stats()
        stats.add("distinct_snaks_known", count(con, "SELECT count(*) FROM frequencies"))
        stats.add("top_snaks", count(con, "SELECT count(*) FROM top"))
        stats.add("top_snaks_min_entity_count", count(con, "SELECT min(entity_count) FROM top"))
        for name, table in (("known", "known"), ("new", "new_set")):
            stats.add(f"{name}_entities", count(con, f"SELECT count(*) FROM {table}"))
            stats.add(
                f"{name}_with_top_snak",
                count(
                    con,
                    f"SELECT count(*) FROM entity_snaks SEMI JOIN {table} USING (qid) WHERE len(snaks) > 0",
                ),
            )
        return {"top_snaks": "top", "entity_snaks": "entity_snaks"}, stats

    def finalize(self, ctx: StageContext[TopSnaksParams], directory: Path, stats: Stats) -> dict[str, Any]:
        """Coverage shares (spec §2.4: Hansel reports ~90% of E_new)."""
        extra: dict[str, Any] = {}
        for name in ("known", "new"):
            total = stats.get(f"{name}_entities", 0)
            covered = stats.get(f"{name}_with_top_snak", 0)
            extra[f"coverage_{name}"] = round(covered / total, 6) if total else None
        return extra
