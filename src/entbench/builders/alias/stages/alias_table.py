"""AT-base, the alias table (Hansel §3.1, appendix A; spec §4); target `alias-table` (`pipeline.py`).

"An alias table defines the probability of a text mention m linking to an entity e, i.e. P(e|m).
We extract an alias table from Wikipedia … by parsing Wikipedia internal links, redirections and
page titles, following (De Cao et al., 2021b)." (Hansel §3.1)

    count(m, e) = link_count(m, e) + title_weight * [m is e's title]
                  + redirect_weight * [m is a redirect to e]
    P(e|m)      = count(m, e) / Σ_e' count(m, e')

`link_count` counts anchors m of links whose target resolves (redirects followed, `title_qid`) to
e. Mentions are normalised (`filters.mentions`, parameter `normalization`: `hansel` or `mgenre`;
Traditional->Simplified when the wiki is Chinese, parameter `chinese`, with `converter`: `opencc`,
or `hanziconv` as the Hansel paper did it). Candidates are ranked by
P(e|m), ties by QID number. Candidates that are disambiguation pages are dropped (and counted)
unless `drop_disambiguation = false`.

Titles are resolved by a repartition join (the stage's phase `by_title`,
`builders.alias.stages.by_title`): the scan's anchors and titles are routed by title into
partitions that each lie in one shard of `title_qid`, so each reducer reads one shard of it. The
stage's map tasks then take one span of those resolved rows each, normalise the anchors and
titles, and route partial counts by mention; reducers sum them, so every candidate of a mention is
in one shard.
Shards are sized from the scan (`num_shards` 0, the default). The companion stage `mention_stats`
(`builders.alias.stages.mention_stats`) adds P(unlinked|m). `alias_table_kb`/`mention_stats_kb` are the same
stages over `title_qid_kb` (Wikidata `wikidata_new`), for builds with a `kb`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import pyarrow as pa
import pyarrow.compute as pc
from msgspec import Meta

from entbench.builders.alias.stages.by_title import AnchorsByTitle, ByTitleParams
from entbench.engine.duck import stage_connection
from entbench.engine.inputs import Span, partitions_for, read_span, row_group_spans
from entbench.engine.stage import (
    BucketSink,
    MapTask,
    Output,
    Params,
    ProgressFn,
    Stage,
    StageContext,
    write_side_file,
)
from entbench.engine.stats import Stats
from entbench.filters.mentions import Converter, MentionNormalizer, Scheme
from entbench.readers.mediawiki_xml import SiteInfo
from entbench.schemas.alias import ALIAS_TABLE

#: The phase that resolves anchors and titles, partition by partition of `title_qid`.
BY_TITLE = "by_title"
#: What map tasks emit: the three components, before the reducer sums them.
PARTIAL = pa.schema(
    [ALIAS_TABLE.field(n) for n in ("mention", "qid", "link_count", "title_flag", "redirect_flag")]
)


@dataclass(frozen=True)
class AliasTableParams(Params):
    """Parameters of AT-base (see the module docstring); `preset` = hansel | mgenre."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "hansel": {"normalization": "hansel"},
        "mgenre": {"normalization": "mgenre"},
    }

    preset: Annotated[
        str,
        Meta(description="`hansel` or `mgenre`: sets `normalization`"),
    ] = "hansel"
    normalization: Annotated[
        Scheme,
        Meta(
            description=(
                "`hansel`: Traditional → Simplified for Chinese (OpenCC), NFKC, whitespace collapsed,"
                " case kept; `mgenre`: as mGENRE (NFKD, `•`/`．` → `·`)"
            )
        ),
    ] = "hansel"
    chinese: Annotated[
        Literal["auto", "yes", "no"],
        Meta(
            description=(
                "Traditional → Simplified conversion: `auto` (when the wiki is Chinese), `yes` or `no`"
            )
        ),
    ] = "auto"
    converter: Annotated[
        Converter,
        Meta(
            description=(
                "the Traditional → Simplified converter: `opencc` (phrases, then characters; the more"
                " accurate), `hanziconv` (character by character, as the Hansel paper converted) or "
                "`none`"
            )
        ),
    ] = "opencc"
    title_weight: Annotated[
        int,
        Meta(ge=0, description="count added for a page's own title"),
    ] = 1
    redirect_weight: Annotated[
        int,
        Meta(ge=0, description="count added for a redirect to the page"),
    ] = 1
    drop_disambiguation: Annotated[
        bool,
        Meta(description="drop candidates that are disambiguation pages"),
    ] = True
    num_shards: Annotated[
        int,
        Meta(
            description="output shards; 0 = sized from the scan's Parquet, about one per 8 MB (~25 MB of XML)"
        ),
    ] = 0


def normalizer_for(params: Mapping[str, Any], language: str) -> MentionNormalizer:
    """The mention normaliser an alias table was built with (from its parameters)."""
    chinese = str(params.get("chinese", "auto"))
    zh = language.split("-", maxsplit=1)[0] == "zh" if chinese == "auto" else chinese == "yes"
    converter = str(params.get("converter", "opencc"))
    return MentionNormalizer(str(params.get("normalization", "hansel")), chinese=zh, converter=converter)


@dataclass(eq=False)
class AliasTable(Stage[AliasTableParams]):
    """Build AT-base from a Wikipedia scan and its title -> QID resolution."""

    version = 2  # 2: the `normalization` side file (sidecars start with `_`)
    layer = "derived"
    default_num_shards = 0
    shard_key = "mention"
    description = "AT-base: P(e|m) from anchors, titles and redirects (Hansel §3.1)"
    progress_unit = "task"
    progress_items = "mentions"
    side_files = ("normalization",)

    stage_name: str
    title_qid: str
    wikipedia: str = "wikipedia"

    def __post_init__(self) -> None:
        self.inputs = (self.wikipedia, self.title_qid)

    def outputs(self, params: AliasTableParams) -> list[Output]:
        """One table, `alias_table`."""
        return [Output("alias_table", ALIAS_TABLE, ("mention", "qid"))]

    def map_schemas(self, params: AliasTableParams) -> dict[str, pa.Schema]:
        """Map tasks emit the components only; the reducer adds count, P(e|m) and rank."""
        return {"alias_table": PARTIAL}

    def shard_inputs(self, params: AliasTableParams) -> tuple[tuple[str, str], ...]:
        """Sized from the scan's pages and links."""
        return ((self.wikipedia, "pages"), (self.wikipedia, "links"))

    def phases(self, ctx: StageContext[AliasTableParams]) -> list[tuple[Stage, Params]]:
        """Anchors and titles resolved by title partition (`by_title`): about as many partitions as
        this stage has shards, a multiple of `title_qid`'s (`engine.inputs.partitions_for`)."""
        partitions = partitions_for(len(ctx.inputs[self.title_qid].files("title_qid")), ctx.num_shards)
        phase = AnchorsByTitle(f"{self.stage_name}.{BY_TITLE}", self.wikipedia, self.title_qid)
        return [(phase, ByTitleParams(num_shards=partitions))]

    def map_tasks(self, ctx: StageContext[AliasTableParams]) -> Iterator[MapTask]:
        """One task per span of row groups of the resolved links, then one per span of the
        resolved titles (`by_title`)."""
        resolved = ctx.phases[f"{self.stage_name}.{BY_TITLE}"]
        for table in ("links", "names"):
            for span in row_group_spans(resolved.files(table)):
                yield MapTask(f"{table[0]}{span.task_id}", {**span.meta(), "table": table})

    def map(
        self, ctx: StageContext[AliasTableParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Normalise one span of resolved anchors (or titles) and count them per (mention, QID)."""
        params = ctx.params
        language = SiteInfo.from_json(ctx.inputs[self.wikipedia].side_file("siteinfo")).language
        normalizer = normalizer_for(params.to_json(), language)
        span = Span.from_meta(task.meta)
        table = str(task.meta["table"])
        rows = read_span(ctx.phases[f"{self.stage_name}.{BY_TITLE}"].files(table)[span.file], span.row_groups)
        raw_column = "anchor" if table == "links" else "title"
        raw = rows.column(raw_column).to_pylist()
        distinct = sorted(set(raw))
        normal = dict(zip(distinct, normalizer.many(distinct), strict=True))
        stats = Stats()
        counts: dict[tuple[str, str], list[int]] = {}
        if table == "links":
            for anchor, qid, n, disambiguation in zip(
                raw,
                rows.column("qid").to_pylist(),
                rows.column("link_count").to_pylist(),
                rows.column("is_disambiguation").to_pylist(),
                strict=True,
            ):
                if disambiguation and params.drop_disambiguation:
                    stats.add("dropped_links_to_disambiguation", int(n))
                    continue
                mention = normal[anchor]
                if not mention:
                    stats.add("dropped_links_empty_mention", int(n))
                    continue
                counts.setdefault((mention, qid), [0, 0, 0])[0] += int(n)
                stats.add("links_counted", int(n))
        else:
            for title, qid, is_redirect, disambiguation in zip(
                raw,
                rows.column("qid").to_pylist(),
                rows.column("is_redirect").to_pylist(),
                rows.column("is_disambiguation").to_pylist(),
                strict=True,
            ):
                kind = "redirects" if is_redirect else "titles"
                if disambiguation and params.drop_disambiguation:
                    stats.add(f"dropped_{kind}_of_disambiguation", 1)
                    continue
                mention = normal[title]
                if not mention:
                    stats.add(f"dropped_{kind}_empty_mention", 1)
                    continue
                counts.setdefault((mention, qid), [0, 0, 0])[2 if is_redirect else 1] = 1
                stats.add(f"{kind}_counted", 1)
        if counts:
            keys = list(counts)
            values = [counts[k] for k in keys]
            partial = pa.Table.from_arrays(
                [
                    pa.array([k[0] for k in keys], pa.string()),
                    pa.array([k[1] for k in keys], pa.string()),
                    pa.array([v[0] for v in values], pa.int64()),
                    pa.array([bool(v[1]) for v in values], pa.bool_()),
                    pa.array([bool(v[2]) for v in values], pa.bool_()),
                ],
                schema=PARTIAL,
            )
            sink.emit_by_key("alias_table", partial, "mention", ctx.num_shards)
        progress(1, len(counts))
        return stats

    def reduce(
        self, ctx: StageContext[AliasTableParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Sum the components per (mention, QID); add count, P(e|m) and rank."""
        params = ctx.params
        stats = Stats()
        partial = tables["alias_table"]
        con = stage_connection(ctx, tasks=ctx.num_shards)
        try:
            con.register("partial", partial)
            result = con.sql(
                f"""
                WITH summed AS (
                    SELECT mention, qid, sum(link_count)::BIGINT AS link_count,
                           bool_or(title_flag) AS title_flag, bool_or(redirect_flag) AS redirect_flag
                    FROM partial GROUP BY mention, qid
                ), counted AS (
                    SELECT *, link_count + {int(params.title_weight)} * title_flag::BIGINT
                              + {int(params.redirect_weight)} * redirect_flag::BIGINT AS count
                    FROM summed
                )
                SELECT mention, qid, link_count, title_flag, redirect_flag, count,
                       count / sum(count) OVER (PARTITION BY mention) AS p_e_given_m,
                       CAST(row_number() OVER (
                           PARTITION BY mention
                           ORDER BY count DESC, TRY_CAST(substr(qid, 2) AS BIGINT), qid
                       ) AS INTEGER) AS rank
                FROM counted WHERE count > 0
                """
            ).to_arrow_table()
            zero = con.execute(
                "SELECT count(*) FROM (SELECT sum(link_count) AS l, bool_or(title_flag) AS t, "
                "bool_or(redirect_flag) AS r FROM partial GROUP BY mention, qid) "
                f"WHERE l + {int(params.title_weight)} * t::BIGINT "
                f"+ {int(params.redirect_weight)} * r::BIGINT = 0"
            ).fetchone()
        finally:
            con.close()
        stats.add("dropped_zero_count", int(zero[0]) if zero else 0)
        stats.add("candidates", result.num_rows)
        if result.num_rows:
            mentions = pc.count_distinct(result.column("mention")).as_py()
            stats.add("mentions", int(mentions))
        return {"alias_table": result.cast(ALIAS_TABLE)}, stats

    def finalize(self, ctx: StageContext[AliasTableParams], directory: Path, stats: Stats) -> dict[str, Any]:
        """Write the `normalization` side file (scheme, Chinese conversion, converter, wiki language),
        so lookups normalise as the keys were; report what the title resolution counted."""
        language = SiteInfo.from_json(ctx.inputs[self.wikipedia].side_file("siteinfo")).language
        normalizer = normalizer_for(ctx.params.to_json(), language)
        doc = {**normalizer.to_json(), "language": language}
        write_side_file(directory, "normalization", doc)
        # What the title resolution counted (`links_unresolved`) is the stage's to report.
        return {**ctx.phases[f"{self.stage_name}.{BY_TITLE}"].stats}
