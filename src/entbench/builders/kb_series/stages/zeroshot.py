"""Stage `series_zeroshot`: a zero-shot annotation pool for each period of a series (Hansel §3.4).

The `hansel_zeroshot` pool drawn from each period's E_new (`series_new.new_entities`) in turn:
`size` entities per period, half uniformly and half balanced over the coarse types
(`hansel.zeroshot.sample_pool`), period `i` drawing with seed `seed + i`. Each row carries what
annotators are given, read in the period's dump: the page title on `site`, label and description
in `language`, and the Wikidata aliases in `language` (dump order). Rows are in period, then draw
order. A series reads no Wikipedia dump, so `site` '' is the series filter's site constraint
(`series_filter.site`, zhwiki by default or when the filter has none) and `language` '' that
site's language (zhwiki: zh).

Stats per period: `period_<i>_e_new_entities`, `period_<i>_pool`, `period_<i>_pool_short` (how many
fewer than `size` the period's E_new allowed) and `period_<i>_drawn_<criterion>_<TYPE>`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from entbench.builders.hansel.stages.zeroshot import HanselZeroshotParams, coarse_labels
from entbench.builders.hansel.zeroshot import sample_pool
from entbench.builders.kb_series.series import dump_index, require_dump_params
from entbench.engine.duck import stage_connection
from entbench.engine.stage import Output, Stage, StageContext
from entbench.engine.stats import Stats
from entbench.errors import UserError
from entbench.schemas import kb_series as schema
from entbench.schemas.base import column_suffix

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb


@dataclasses.dataclass(eq=False)
class SeriesZeroshot(Stage[HanselZeroshotParams]):
    """Each period's type-balanced sample of E_new with what annotators need."""

    name = "series_zeroshot"
    version = 1
    layer = "benchmarks"
    default_num_shards = 1
    description = "zero-shot pool of each period: E_new, 50% uniform + 50% balanced over coarse types"
    progress_items = "entities"

    #: The dumps in date order.
    dumps: tuple[str, ...]
    _: dataclasses.KW_ONLY
    stage_name: str = ""

    def __post_init__(self) -> None:
        self.stage_name = self.stage_name or self.name
        self.inputs = ("series_new", "series_filter", *self.dumps[1:])

    def outputs(self, params: HanselZeroshotParams) -> list[Output]:
        """One table, `zeroshot_pool`."""
        return [Output("zeroshot_pool", schema.ZEROSHOT, ("period", "pool_index"))]

    def shard(self, ctx: StageContext[HanselZeroshotParams], shard: int) -> tuple[dict[str, pa.Table], Stats]:
        """Draw every period's pool and look up what annotators see."""
        params = ctx.params
        params = series_site(ctx, params)
        # Titles and aliases come from the scans: one that dropped them would leave them empty.
        require_dump_params(ctx, self.dumps[1:], "sites", [params.site])
        require_dump_params(ctx, self.dumps[1:], "languages", [params.language])
        new = ctx.inputs["series_new"]
        labels = coarse_labels(new.params)
        files = new.files("new_entities")
        columns = pq.read_schema(files[0]).names
        suffix = column_suffix(params.language)
        label = f"label_{suffix}" if f"label_{suffix}" in columns else "NULL"
        description = f"description_{suffix}" if f"description_{suffix}" in columns else "NULL"
        stats = Stats()
        rows: list[tuple[object, ...]] = []
        con = stage_connection(ctx, tasks=1, ordered=False)  # one global task: the draws are global
        try:
            con.execute(
                f"CREATE TEMP TABLE new AS SELECT period, qid, {label} AS label, "
                f"{description} AS description, coarse FROM read_parquet($files)",
                {"files": files},
            )
            for dump in self.dumps[1:]:
                period = dump_index(dump)
                coarse = dict(
                    con.execute("SELECT qid, coarse FROM new WHERE period = $p", {"p": period}).fetchall()
                )
                pool = sample_pool(coarse, params.size, labels, params.seed + period)
                wikidata = ctx.inputs[dump]
                rows += _pool_rows(
                    con, period, pool.draws, wikidata.files("sitelinks"), wikidata.files("aliases"), params
                )
                stats.add(f"period_{period}_e_new_entities", len(coarse))
                stats.add(f"period_{period}_pool", len(pool.draws))
                stats.add(f"period_{period}_pool_short", params.size - len(pool.draws))
                for qid, criterion in pool.draws:
                    stats.add(f"period_{period}_drawn_{criterion}_{coarse[qid]}")
        finally:
            con.close()
        names = schema.ZEROSHOT.names
        table = pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in rows], schema=schema.ZEROSHOT)
        return {"zeroshot_pool": table}, stats


def series_site(ctx: StageContext, params: HanselZeroshotParams) -> HanselZeroshotParams:
    """`params` with `site` and `language` resolved: '' takes the series filter's site (a site id,
    not a pattern such as `*wiki`; zhwiki when the filter has none) and that Wikipedia's language
    (`zhwiki` -> `zh`)."""
    # No site constraint at all: the pool shows the published setting's wiki.
    site = params.site or str(ctx.inputs["series_filter"].params.get("site", "")) or "zhwiki"
    if not site.endswith("wiki") or any(c in site for c in "*?["):
        raise UserError(
            f"{ctx.stage}: the series filter keeps the items of {site!r}, not one Wikipedia; "
            f"pass --param {ctx.stage}.site=SITE (e.g. zhwiki)"
        )
    language = params.language or site.removesuffix("wiki").replace("_", "-")
    return dataclasses.replace(params, site=site, language=language)


def _pool_rows(
    con: duckdb.DuckDBPyConnection,
    period: int,
    draws: list[tuple[str, str]],
    sitelinks: list[str],
    aliases: list[str],
    params: HanselZeroshotParams,
) -> list[tuple[object, ...]]:
    """The rows of one period's draws, in draw order, with title and aliases from its dump."""
    con.register(
        "draws",
        pa.table(
            {
                "pool_index": pa.array(range(len(draws)), pa.int64()),
                "qid": pa.array([q for q, _ in draws], pa.string()),
                "criterion": pa.array([c for _, c in draws], pa.string()),
            }
        ),
    )
    try:
        return con.execute(
            "SELECT $period::INTEGER, d.pool_index, d.qid, s.title, n.label, n.description, "
            "coalesce(a.aliases, []::VARCHAR[]), n.coarse, d.criterion "
            "FROM draws d JOIN (SELECT * FROM new WHERE period = $period) n USING (qid) "
            # Only the drawn ids' sitelinks and aliases are grouped (a full dump has ~10^8 ids).
            "LEFT JOIN (SELECT id, min(title) AS title FROM read_parquet($sitelinks) "
            "WHERE site = $site AND id IN (SELECT qid FROM draws) GROUP BY id) s ON s.id = d.qid "
            "LEFT JOIN (SELECT id, list(alias ORDER BY ordinal) AS aliases FROM read_parquet($aliases) "
            "WHERE language = $language AND id IN (SELECT qid FROM draws) GROUP BY id) a ON a.id = d.qid "
            "ORDER BY d.pool_index",
            {
                "period": period,
                "sitelinks": sitelinks,
                "site": params.site,
                "aliases": aliases,
                "language": params.language,
            },
        ).fetchall()
    finally:
        con.unregister("draws")
