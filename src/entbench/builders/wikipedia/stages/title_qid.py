"""Title -> QID: every title a Wikipedia dump mentions, resolved through Wikidata sitelinks (spec §3).

The titles are the dump's page titles, its redirect targets and its links' normalised targets.
Resolution follows mGENRE (`facebookresearch/GENRE:genre/utils.py`, `get_wikidata_ids`): first
the title's own sitelink; else follow the wiki's redirects (at most `max_hops`, default 10) and
take the sitelink of the title the chain ends at. Unlike mGENRE, a chain that comes back on itself
is detected and reported (`redirect_loop`) rather than cut at the hop limit, and mGENRE's last
fallback (matching Wikidata labels) is not used: a label is not a title.

Every title gets a `status` (`schemas.alias.TITLE_STATUSES`); the manifest counts titles and links
by status (`links_unresolved_<reason>`). Links the scan already set aside as not article links are
counted again here under `links_unresolved_special_namespace` (from the scan's `links_namespace`).

Which Wikidata scan is read is fixed per stage instance: `title_qid` reads `wikidata`, and
`title_qid_kb` reads `wikidata_new`, the newer dump the `kb` stages scan (so a kb build scans it
once). The site is the `site` parameter, by default the dump's own `dbname` (`_siteinfo.json`).

The resolution runs one title partition at a time (xxh64 of the title), so no task holds the
title vocabulary: the stage's phases (`builders.wikipedia.stages.title_phases`) gather each
title's facts (link count, page, redirect target, own sitelink) and walk the redirects one hop a
phase; the stage's reducers then resolve each partition, whose titles are its output shard. The
shards are sized from the scan (`num_shards` 0, the default: about one per 64 MB of its Parquet);
the phases cut the titles finer, about one partition per 8 MB of it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.wikipedia.stages.title_phases import (
    ENDS,
    FACTS,
    TITLES,
    WALK,
    RedirectWalk,
    TitleFacts,
    TitlePhaseParams,
)
from entbench.engine.duck import stage_connection
from entbench.engine.inputs import (
    Span,
    auto_num_shards,
    partitions_for,
    read_partition,
    read_span,
    row_group_spans,
    upstream_bytes,
)
from entbench.engine.stage import (
    BucketSink,
    MapTask,
    Output,
    Params,
    ProgressFn,
    Stage,
    StageContext,
    UpstreamOutput,
)
from entbench.engine.stats import Stats, counted
from entbench.errors import UserError
from entbench.readers.mediawiki.xml_dump import SiteInfo
from entbench.schemas.alias import TITLE_QID, TITLE_STATUSES

#: The phases cut the titles into about one partition per this many bytes of the scan's Parquet.
PARTITION_INPUT_BYTES = 8 << 20


@dataclass(frozen=True)
class TitleQidParams(Params):
    """`site`: sitelinks of which wiki ("" = the dump's dbname); `max_hops`: redirect chain limit."""

    site: Annotated[
        str,
        Meta(
            description=(
                "whose sitelinks to use (`enwiki`, `zhwiki`, …); empty = the dump's own (its `dbname`)"
            )
        ),
    ] = ""
    max_hops: Annotated[
        int,
        Meta(ge=0, description="longest redirect chain followed"),
    ] = 10
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = sized from the scan's Parquet, about one per 64 MB"),
    ] = 0


def title_partition(
    title_qid: UpstreamOutput, partition: int, partitions: int, columns: Sequence[str]
) -> pa.Table:
    """The `columns` of the titles whose `shard_of(title, partitions)` is `partition`: `title_qid`
    routes its rows by title, so with `partitions` shards that is one shard file
    (`engine.inputs.read_partition`)."""
    return read_partition(title_qid, "title_qid", "title", partition, partitions, columns)


def read_siteinfo(scan: UpstreamOutput) -> SiteInfo:
    """The siteinfo a Wikipedia scan declares as its side file (namespaces, dbname, language)."""
    return SiteInfo.from_json(scan.side_file("siteinfo"))


@dataclass(eq=False)
class TitleQid(Stage[TitleQidParams]):
    """Resolve every title of a Wikipedia dump to a QID, with a reason when it does not resolve."""

    version = 1
    layer = "derived"
    default_num_shards = 0
    #: A title row is a few dozen bytes against a page's text: shards of the scan's 64 MB.
    shard_input_bytes = 64 << 20
    shard_key = "title"
    description = "title -> QID via sitelinks, redirects followed <= max_hops (mGENRE order)"
    progress_unit = "task"
    progress_items = "titles"

    stage_name: str
    wikidata: str
    wikipedia: str = "wikipedia"

    def __post_init__(self) -> None:
        self.inputs = (self.wikipedia, self.wikidata)

    def coverage(self, stats: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """How many links reach an item, and why the others do not."""
        resolved = counted(stats, "links_resolved")
        red, no_item = (
            counted(stats, "links_unresolved_red_link"),
            counted(stats, "links_unresolved_no_sitelink"),
        )
        total = resolved + red + no_item + counted(stats, "links_unresolved_special_namespace")
        # The site is the dump's own unless given (`site_<dbname>` counts it).
        sites = [k.removeprefix("site_") for k in stats if k.startswith("site_")]
        site = params.get("site") or (sites[0] if sites else "the wiki's")
        return (
            f"{resolved:,} of the {total:,} links reach a Wikidata item through its sitelink to {site} "
            f"({red:,} point to a title with neither a page in the dump nor an item, {no_item:,} to "
            "a page no item of the Wikidata dump links to)"
        )

    def outputs(self, params: TitleQidParams) -> list[Output]:
        """One table, `title_qid`."""
        return [Output("title_qid", TITLE_QID, ("title",))]

    def shard_inputs(self, params: TitleQidParams) -> tuple[tuple[str, str], ...]:
        """Sized from the scan's pages and links."""
        return ((self.wikipedia, "pages"), (self.wikipedia, "links"))

    def site(self, ctx: StageContext[TitleQidParams]) -> str:
        """The wiki whose sitelinks are read: the `site` parameter, else the dump's dbname."""
        params = ctx.params
        site = params.site or read_siteinfo(ctx.inputs[self.wikipedia]).dbname
        if not site:
            raise UserError(f"{ctx.stage}: the dump names no dbname; pass --param {ctx.stage}.site=zhwiki")
        return site

    def phases(self, ctx: StageContext[TitleQidParams]) -> list[tuple[Stage, Params]]:
        """Every title's facts (`titles`), then the redirect walk one hop a phase (`walk1`, …) while
        walks go on: `builders.wikipedia.stages.title_phases`; about one title partition per 8 MB
        of the scan, a multiple of this stage's shard count."""
        params = ctx.params
        wanted = auto_num_shards(upstream_bytes(ctx.inputs, self.shard_inputs(params)), PARTITION_INPUT_BYTES)
        partitions = partitions_for(ctx.num_shards, wanted)
        site = self.site(ctx)
        phase_params = TitlePhaseParams(site=site, max_hops=params.max_hops, num_shards=partitions)
        # The walks: as many partitions as the output, each a few of the titles' (a constant
        # number of reads of them a hop; few walks go past the first).
        walk_params = TitlePhaseParams(site=site, max_hops=params.max_hops, num_shards=ctx.num_shards)
        titles = f"{self.stage_name}.{TITLES}"
        listed: list[tuple[Stage, Params]] = [
            (TitleFacts(titles, wikipedia=self.wikipedia, wikidata=self.wikidata), phase_params)
        ]
        previous: str | None = None
        first = f"{self.stage_name}.{WALK}1"
        for hop in range(1, params.max_hops + 1):
            if previous is not None and not (
                previous in ctx.phases and _has_rows(ctx.phases[previous], "active")
            ):
                break
            name = f"{self.stage_name}.{WALK}{hop}"
            walk = RedirectWalk(name, titles=titles, previous=previous, first=None if hop == 1 else first)
            listed.append((walk, walk_params))
            previous = name
        return listed

    def map_schemas(self, params: TitleQidParams) -> dict[str, pa.Schema]:
        """The walks' ends, keyed by the title they started from."""
        return {"_ends": ENDS}

    def map_tasks(self, ctx: StageContext[TitleQidParams]) -> Iterator[MapTask]:
        """One task per span of every walk phase's ends."""
        for name, phase in ctx.phases.items():
            if name.startswith(f"{self.stage_name}.{WALK}"):
                for span in row_group_spans(phase.files("ends")):
                    yield MapTask(f"{name.rsplit('.', 1)[-1]}-{span.task_id}", {**span.meta(), "phase": name})

    def map(
        self, ctx: StageContext[TitleQidParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Route one span of ends by the title their walk started from."""
        span = Span.from_meta(task.meta)
        ends = read_span(ctx.phases[str(task.meta["phase"])].files("ends")[span.file], span.row_groups)
        sink.emit_by_key("_ends", ends, "origin", ctx.num_shards)
        progress(1, ends.num_rows)
        return Stats()

    def reduce(
        self, ctx: StageContext[TitleQidParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Resolve the titles of one partition: their facts beside their walks' ends."""
        wikipedia = ctx.inputs[self.wikipedia]
        table = read_siteinfo(wikipedia).namespace_table()
        prefixes = sorted({name for ns, name in table.display.items() if ns != 0})
        facts = read_partition(
            ctx.phases[f"{self.stage_name}.{TITLES}"], TITLES, "title", shard, ctx.num_shards, FACTS.names
        )
        con = stage_connection(ctx, tasks=ctx.num_shards, ordered=False)
        try:
            con.register("facts", facts)
            con.register("ends", tables["_ends"])
            rows = con.sql(RESOLVE_SQL, params={"prefixes": list(prefixes)}).to_arrow_table().cast(TITLE_QID)
        finally:
            con.close()
        stats = Stats()
        counted = rows.group_by("status").aggregate([("title", "count"), ("link_count", "sum")])
        for status, count, linked in zip(
            counted["status"].to_pylist(),
            counted["title_count"].to_pylist(),
            counted["link_count_sum"].to_pylist(),
            strict=True,
        ):
            assert status in TITLE_STATUSES, status
            stats.add(f"titles_{status}", count)
            key = "links_resolved" if status in ("sitelink", "redirect") else f"links_unresolved_{status}"
            stats.add(key, linked or 0)
        return {"title_qid": rows}, stats

    def finalize(self, ctx: StageContext[TitleQidParams], directory: Path, stats: Stats) -> dict[str, Any]:
        """The site read, whether it had any sitelink, and the links the scan set aside as not
        article links (counted with the titles of special namespaces)."""
        site = self.site(ctx)
        extra: dict[str, Any] = {
            "site_" + site: 1,
            "links_unresolved_special_namespace": stats.get("links_unresolved_special_namespace", 0)
            + int(ctx.inputs[self.wikipedia].stats.get("links_namespace", 0)),
        }
        if not _any_sitelink(ctx.inputs[self.wikidata], site):
            extra["sitelinks_for_site_none"] = 1
        return extra


#: One title partition resolved in the mGENRE order: the title's own sitelink, else the end of its
#: redirect walk (`title_phases.RedirectWalk`); a title that is no redirect ends where it starts.
#: `still`: the walk stopped at a redirect (the hop limit), not at an article.
RESOLVE_SQL = """
WITH r AS (
    SELECT f.title, f.link_count, e.origin IS NOT NULL AS walked,
           coalesce(e.looped, false) AS looped,
           CASE WHEN e.origin IS NOT NULL THEN e.still ELSE f.redirect_to IS NOT NULL END AS still,
           coalesce(e.hops, 0) AS hops, coalesce(e.final_title, f.title) AS final_title,
           f.qid AS direct_qid,
           CASE WHEN e.origin IS NOT NULL THEN e.final_qid ELSE f.qid END AS final_qid,
           CASE WHEN e.origin IS NOT NULL THEN e.final_item_disambiguation
                ELSE f.item_disambiguation END AS final_item_disambiguation,
           f.item_disambiguation, f.page_id, f.page_disambiguation,
           e.final_page_id, e.final_page_disambiguation
    FROM facts f LEFT JOIN ends e ON e.origin = f.title
), q AS (
    SELECT *,
           CASE WHEN direct_qid IS NOT NULL THEN direct_qid
                WHEN NOT looped AND NOT still THEN final_qid END AS qid,
           CASE WHEN direct_qid IS NOT NULL THEN item_disambiguation
                WHEN NOT looped AND NOT still THEN final_item_disambiguation END AS qid_disambiguation,
           CASE WHEN direct_qid IS NOT NULL THEN title ELSE final_title END AS page_title,
           CASE WHEN direct_qid IS NOT NULL OR NOT walked THEN page_id
                ELSE final_page_id END AS page_page_id,
           CASE WHEN direct_qid IS NOT NULL OR NOT walked THEN page_disambiguation
                ELSE final_page_disambiguation END AS page_is_disambiguation
    FROM r
)
SELECT title, qid,
       CASE WHEN direct_qid IS NOT NULL THEN 'sitelink'
            WHEN looped THEN 'redirect_loop'
            WHEN still THEN 'redirect_too_deep'
            WHEN final_qid IS NOT NULL THEN 'redirect'
            WHEN list_contains($prefixes, split_part(final_title, ':', 1))
                 AND strpos(final_title, ':') > 0 THEN 'special_namespace'
            WHEN page_page_id IS NOT NULL THEN 'no_sitelink'
            ELSE 'red_link' END AS status,
       CAST(CASE WHEN direct_qid IS NOT NULL THEN 0 ELSE hops END AS INTEGER) AS hops,
       page_title AS final_title,
       page_page_id AS page_id,
       coalesce(page_is_disambiguation, false) OR coalesce(qid_disambiguation, false) AS is_disambiguation,
       link_count
FROM q
"""


def _has_rows(phase: UpstreamOutput, table: str) -> bool:
    """Whether a phase's table has any row (from the shards' footers)."""
    return any(pq.ParquetFile(path).metadata.num_rows for path in phase.files(table))


def _any_sitelink(wikidata: UpstreamOutput, site: str) -> bool:
    """Whether any item of the Wikidata scan has a sitelink to `site` (read a shard at a time)."""
    for path in wikidata.files("sitelinks"):
        if pq.read_table(path, columns=["site"], filters=[("site", "=", site)]).num_rows:
            return True
    return False
