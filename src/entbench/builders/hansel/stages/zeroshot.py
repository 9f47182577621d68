"""Stage `hansel_zeroshot`: the E_new entities given to zero-shot annotators (spec §5; Hansel §3.4).

"For each entity in E_new, annotators are given its title, description and Wikidata aliases. They
are asked to search the Internet for a corresponding mention of the entity" (Hansel §3.4).

E_new is `entity_diff.kb_entities` (`in_new`), with the coarse types of `coarse_types`; the pool
is `size` entities drawn half uniformly and half balanced over the coarse types
(`hansel.zeroshot`; the types are the `coarse_types` stage's own labels, in its precedence order,
then its fallback label), with one seeded generator (`seed`). Each row (`hansel-zeroshot-N`, N the
`pool_index`) carries the entity's page title on `site` (its sitelink in the new dump), label and
description in `language`, its Wikidata aliases in `language` (dump order), and, from
`hansel_kb`, its first paragraph and article URL. `site` and `language` are by default the
scanned wiki's (`hansel.site`). Rows are in draw order (`pool_index`).

Stats: `e_new_entities`, `available_<TYPE>`, `drawn_<criterion>_<TYPE>`, `quota_<TYPE>` (the
balanced half's target per type) and `pool_short` (how many fewer than `size` E_new allowed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.hansel.site import require_site, wiki_site
from entbench.builders.hansel.splits import record_id
from entbench.builders.hansel.zeroshot import sample_pool
from entbench.engine.duck import stage_connection
from entbench.engine.stage import Output, Params, Stage, StageContext
from entbench.engine.stats import Stats
from entbench.schemas import hansel as schema
from entbench.schemas.base import column_suffix
from entbench.typesys.coarse import OTHER, parse_precedence


@dataclass(frozen=True)
class HanselZeroshotParams(Params):
    """`size` entities, drawn with `seed`; titles from `site`, texts in `language` ('': the
    scanned wiki's `dbname` and language)."""

    size: Annotated[
        int,
        Meta(ge=0, description="entities in the pool (series_zeroshot: in each period's)"),
    ] = 5000
    seed: Annotated[
        int,
        Meta(description="the sampling seed (series_zeroshot: period *i* uses `seed` + *i*)"),
    ] = 0
    site: Annotated[
        str,
        Meta(
            description="site of the page titles; empty: the wiki's (its `<dbname>`; series_zeroshot: the "
            "series filter's `site`)"
        ),
    ] = ""
    language: Annotated[
        str,
        Meta(description="language of labels, descriptions and aliases; empty: the wiki's (the site's)"),
    ] = ""


def coarse_labels(params: Mapping[str, Any]) -> tuple[str, ...]:
    """The labels a `coarse_types` build with `params` can assign: its precedence labels, then its
    fallback."""
    other = str(params.get("other", OTHER))
    return (*(root.label for root in parse_precedence(params["precedence"], other)), other)


@dataclass(eq=False)
class HanselZeroshot(Stage[HanselZeroshotParams]):
    """A type-balanced sample of E_new with what annotators need."""

    # 2: an id per row, and each entity's first paragraph and URL (hansel_kb); 3: site and
    # language from the wiki's <siteinfo>
    version = 3
    layer = "benchmarks"
    default_num_shards = 1
    description = "Hansel zero-shot pool: E_new, 50% uniform + 50% balanced over coarse types"
    progress_items = "entities"

    stage_name: str
    _: KW_ONLY
    entity_texts: str
    wikipedia: str
    kb: str = "entity_diff"
    types: str = "coarse_types"
    wikidata: str = "wikidata_new"

    def __post_init__(self) -> None:
        self.inputs = (self.kb, self.types, self.wikidata, self.entity_texts, self.wikipedia)

    def outputs(self, params: HanselZeroshotParams) -> list[Output]:
        """One table, `zeroshot_pool`."""
        return [Output("zeroshot_pool", schema.ZEROSHOT, ("pool_index",))]

    def shard(self, ctx: StageContext[HanselZeroshotParams], shard: int) -> tuple[dict[str, pa.Table], Stats]:
        """Draw the pool and look up what annotators see."""
        params = ctx.params
        site = wiki_site(ctx, self.wikipedia, site=params.site, language=params.language)
        labels = coarse_labels(ctx.inputs[self.types].params)
        kb_files = ctx.inputs[self.kb].files("kb_entities")
        kb_columns = pq.read_schema(kb_files[0]).names
        suffix = column_suffix(site.language)
        label = f"label_{suffix}" if f"label_{suffix}" in kb_columns else "NULL"
        description = f"description_{suffix}" if f"description_{suffix}" in kb_columns else "NULL"
        wd = ctx.inputs[self.wikidata]
        con = stage_connection(ctx, tasks=1, ordered=False)  # one global task: the draws are global
        try:
            con.execute(
                f"CREATE TEMP TABLE new AS SELECT e.qid, {label} AS label, {description} AS description, "
                "c.coarse FROM read_parquet($kb) e JOIN read_parquet($types) c USING (qid) WHERE e.in_new",
                {"kb": kb_files, "types": ctx.inputs[self.types].files("coarse_types")},
            )
            coarse = dict(con.execute("SELECT qid, coarse FROM new").fetchall())
            pool = sample_pool(coarse, params.size, labels, params.seed)
            draws = pool.draws
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
            rows = con.execute(
                "SELECT d.pool_index, d.qid, s.title, n.label, "
                "n.description, coalesce(a.aliases, []::VARCHAR[]), n.coarse, d.criterion, "
                "coalesce(t.text, ''), t.url "
                "FROM draws d JOIN new n USING (qid) "
                "LEFT JOIN (SELECT id, text, url FROM read_parquet($texts) "
                "WHERE id IN (SELECT qid FROM draws)) t ON t.id = d.qid "
                "LEFT JOIN (SELECT id, min(title) AS title "
                "FROM read_parquet($sitelinks) WHERE site = $site GROUP BY id) s "
                "ON s.id = d.qid "
                "LEFT JOIN (SELECT id, list(alias ORDER BY ordinal) AS aliases "
                "FROM read_parquet($aliases) WHERE language = $language GROUP BY id) a "
                "ON a.id = d.qid ORDER BY d.pool_index",
                {
                    "sitelinks": wd.files("sitelinks"),
                    "site": require_site(ctx, site),
                    "aliases": wd.files("aliases"),
                    "language": site.language,
                    "texts": ctx.inputs[self.entity_texts].files("kb"),
                },
            ).fetchall()
        finally:
            con.close()
        stats = Stats()
        stats.add("e_new_entities", len(coarse))
        stats.add("pool_short", params.size - len(draws))
        for t in labels:
            stats.add(f"available_{t}", sum(c == t for c in coarse.values()))
        for t, n in pool.quota.items():
            stats.add(f"quota_{t}", n)
        for qid, criterion in draws:
            stats.add(f"drawn_{criterion}_{coarse[qid]}")
        names = schema.ZEROSHOT.names
        table = pa.Table.from_pylist(
            [dict(zip(names, (record_id("zeroshot", r[0]), *r), strict=True)) for r in rows],
            schema=schema.ZEROSHOT,
        )
        return {"zeroshot_pool": table}, stats
