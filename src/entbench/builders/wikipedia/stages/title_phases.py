"""The phases of `title_qid`: every title's facts, then the redirect walk, by title partition.

`title_qid` used to resolve every title in one DuckDB query, whose hash tables held the whole
title vocabulary (~400 bytes a title at its peak): its memory grew with the dump. Here every step
holds one partition of the titles (xxh64 of the title, as `title_qid` routes its rows; as many
partitions as `title_qid` has shards):

1. `titles` (`TitleFacts`): map tasks read a span of the scan's pages with the links of the same
   page-id range (pages by title, link targets and redirect targets counted by title) or a span of
   a Wikidata scan shard's sitelinks (those to the site, each with whether its item is an instance
   of Q4167410, a disambiguation page: the item's truthy P31 statements are in the same shard,
   which is sharded and sorted by entity id); reducer k writes one row per title of partition k:
   its link count, its page (the lowest page id; a disambiguation page if any page of that title
   is one), the title it redirects to (that of its redirect page of the lowest id) and its own
   sitelink (the lowest QID number if several items name it).
2. `walk1`, `walk2`, … (`RedirectWalk`): the redirect walk, one hop a phase. The walks of phase h
   are routed by the title they stand at, and reducer k looks those titles up in partition k of
   `titles`: a walk goes on to the title's redirect target unless it came back to a title it passed
   (`looped`), has made `max_hops` hops, or stands at a title that is no redirect; else it ends
   there (`ends`: where, after how many hops, the facts of that title). `title_qid` asks for the
   next hop while walks go on (`Stage.phases` is asked again after each phase).
   Every walk stands at a redirect's target, and `walk1` starts one at every redirect: its
   reducers keep the facts of the titles their walks stood at (`targets`, every redirect target of
   the partition), and the later hops look their few walks up there, not in all of `titles`.

`title_qid`'s own map routes the ends by the title they started from, and reducer k puts them
beside partition k of `titles`: the resolution of the mGENRE order, one title partition at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import KW_ONLY, dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from entbench.engine.duck import stage_connection
from entbench.engine.inputs import (
    Span,
    iter_span,
    read_partition,
    read_span,
    row_group_spans,
    span_tasks,
    spans_reading,
)
from entbench.engine.stage import (
    BucketSink,
    MapTask,
    Output,
    Params,
    ProgressFn,
    Stage,
    StageContext,
)
from entbench.engine.stats import Stats

#: An item is a disambiguation page if a truthy P31 is Q4167410 (spec §3).
DISAMBIGUATION_CLASS = "Q4167410"
TITLES = "titles"
WALK = "walk"
#: What a `titles` task reads of the scan's pages and links (its span is sized by their bytes).
PAGE_COLUMNS = ("page_id", "title", "is_redirect", "redirect_target", "is_disambiguation")
LINK_COLUMNS = ("page_id", "target_normalized")

_PAGES = pa.schema(
    [
        pa.field("title", pa.string(), nullable=False),
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("is_redirect", pa.bool_(), nullable=False),
        pa.field("redirect_target", pa.string()),
        pa.field("is_disambiguation", pa.bool_(), nullable=False),
    ]
)
_LINKED = pa.schema(
    [pa.field("title", pa.string(), nullable=False), pa.field("n", pa.int64(), nullable=False)]
)
_SITELINKS = pa.schema(
    [
        pa.field("title", pa.string(), nullable=False),
        pa.field("qid", pa.string(), nullable=False),
        pa.field("item_disambiguation", pa.bool_(), nullable=False),
    ]
)
#: One row per title the dump mentions (pages, link targets, redirect targets).
FACTS = pa.schema(
    [
        pa.field("title", pa.string(), nullable=False),
        pa.field("link_count", pa.int64(), nullable=False),
        pa.field("page_id", pa.int64()),
        pa.field("page_disambiguation", pa.bool_()),
        pa.field("redirect_to", pa.string()),
        pa.field("qid", pa.string()),  # the title's own sitelink
        pa.field("item_disambiguation", pa.bool_()),
    ]
)
#: What a walk looks up of the title it stands at.
LOOKUP = pa.schema(
    [
        FACTS.field(name)
        for name in ("title", "redirect_to", "qid", "item_disambiguation", "page_id", "page_disambiguation")
    ]
)
WALKS = pa.schema(
    [
        pa.field("origin", pa.string(), nullable=False),
        pa.field("cur", pa.string(), nullable=False),
        pa.field("hops", pa.int32(), nullable=False),
        pa.field("path", pa.list_(pa.string()), nullable=False),
        pa.field("looped", pa.bool_(), nullable=False),
    ]
)
#: Where a walk from `origin` ended: the title, its hops, whether it looped or stopped at a redirect
#: (`still`), and that title's sitelink and page.
ENDS = pa.schema(
    [
        pa.field("origin", pa.string(), nullable=False),
        pa.field("final_title", pa.string(), nullable=False),
        pa.field("hops", pa.int32(), nullable=False),
        pa.field("looped", pa.bool_(), nullable=False),
        pa.field("still", pa.bool_(), nullable=False),
        pa.field("final_qid", pa.string()),
        pa.field("final_item_disambiguation", pa.bool_()),
        pa.field("final_page_id", pa.int64()),
        pa.field("final_page_disambiguation", pa.bool_()),
    ]
)


@dataclass(frozen=True)
class TitlePhaseParams(Params):
    """What a phase of `title_qid` needs of its parameters: the site, the hop limit, the partitions."""

    site: str = ""
    max_hops: int = 10
    num_shards: int = 1


@dataclass(eq=False)
class TitleFacts(Stage[TitlePhaseParams]):
    """Phase `titles`: one row of facts per title, partition by partition."""

    version = 1
    layer = "derived"
    shard_key = "title"
    description = "every title's link count, page, redirect target and sitelink, by title partition"
    progress_unit = "task"
    progress_items = "rows"

    stage_name: str
    _: KW_ONLY
    wikipedia: str
    wikidata: str

    def __post_init__(self) -> None:
        self.inputs = (self.wikipedia, self.wikidata)

    def outputs(self, params: TitlePhaseParams) -> list[Output]:
        """`titles`."""
        return [Output(TITLES, FACTS, ("title",), may_be_empty=True)]

    def map_schemas(self, params: TitlePhaseParams) -> dict[str, pa.Schema]:
        """Pages, link counts and sitelinks, each keyed by title."""
        return {"_pages": _PAGES, "_linked": _LINKED, "_sitelinks": _SITELINKS}

    def map_tasks(self, ctx: StageContext[TitlePhaseParams]) -> Iterator[MapTask]:
        """One task per span of the scan's pages (with their links), then one per Wikidata shard."""
        scan = ctx.inputs[self.wikipedia]
        for task in spans_reading(
            scan.files("pages"), PAGE_COLUMNS, (scan.files("links"), LINK_COLUMNS), key="page_id"
        ):
            yield MapTask(task.task_id, {**task.meta, "side": "scan"})
        wikidata = ctx.inputs[self.wikidata]
        if len(wikidata.files("sitelinks")) != len(wikidata.files("truthy_claims")):
            raise RuntimeError(f"{self.wikidata}: sitelinks and truthy_claims are sharded differently")
        for task in span_tasks(wikidata.files("sitelinks"), key="id", columns=["id", "site", "title"]):
            yield MapTask(f"wikidata-{task.task_id}", {**task.meta, "side": "wikidata"})

    def map(
        self, ctx: StageContext[TitlePhaseParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Route one span's pages and link counts, or one Wikidata shard's sitelinks, by title."""
        params = ctx.params
        if task.meta["side"] == "wikidata":
            sitelinks = self._sitelinks(ctx, Span.from_meta(task.meta), params.site)
            sink.emit_by_key("_sitelinks", sitelinks, "title", ctx.num_shards)
            progress(1, sitelinks.num_rows)
            return Stats()
        span = Span.from_meta(task.meta)
        scan = ctx.inputs[self.wikipedia]
        in_span = [("page_id", ">=", span.first), ("page_id", "<=", span.last)]
        pages = pq.read_table(scan.files("pages")[span.file], columns=list(PAGE_COLUMNS), filters=in_span)
        sink.emit_by_key("_pages", pages.select(_PAGES.names).cast(_PAGES), "title", ctx.num_shards)
        links = pq.read_table(scan.files("links")[span.file], columns=list(LINK_COLUMNS), filters=in_span)
        counted = links.group_by("target_normalized", use_threads=False).aggregate([("page_id", "count")])
        linked = pa.table([counted["target_normalized"], counted["page_id_count"]], schema=_LINKED)
        # Redirect targets are titles of the dump too, linked or not.
        targets = pages.filter(pc.is_valid(pages["redirect_target"])).column("redirect_target")
        targets = pa.table([targets, pa.repeat(0, len(targets)).cast(pa.int64())], schema=_LINKED)
        sink.emit_by_key("_linked", pa.concat_tables([linked, targets]), "title", ctx.num_shards)
        progress(1, pages.num_rows)
        return Stats()

    def _sitelinks(self, ctx: StageContext[TitlePhaseParams], span: Span, site: str) -> pa.Table:
        """A span of a Wikidata shard's sitelinks to `site`, each with whether its item is a
        disambiguation page (its truthy P31 statements are in the same shard, sorted by subject:
        only the row groups of the span's id range are read)."""
        wikidata = ctx.inputs[self.wikidata]
        sitelinks = read_span(
            wikidata.files("sitelinks")[span.file], span.row_groups, ["id", "site", "title"]
        )
        sitelinks = sitelinks.filter(pc.equal(sitelinks["site"], site))
        disambiguation = _disambiguation_items(wikidata.files("truthy_claims")[span.file], span)
        flags = pc.is_in(sitelinks["id"], value_set=disambiguation)
        return pa.table([sitelinks["title"], sitelinks["id"], flags], schema=_SITELINKS)

    def reduce(
        self, ctx: StageContext[TitlePhaseParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Every title of the partition with its facts."""
        con = stage_connection(ctx, tasks=ctx.num_shards, ordered=False)
        try:
            for name in ("_pages", "_linked", "_sitelinks"):
                con.register(name[1:], tables[name])
            # A consistent dump has one item per (site, title); if not, the lowest QID number wins.
            facts = con.sql(
                """
                WITH page AS (
                    SELECT title, min(page_id) AS page_id, bool_or(is_disambiguation) AS dis
                    FROM pages GROUP BY title
                ), redirect AS (
                    SELECT title, arg_min(redirect_target, page_id) AS redirect_to FROM pages
                    WHERE is_redirect AND redirect_target IS NOT NULL GROUP BY title
                ), link AS (
                    SELECT title, CAST(sum(n) AS BIGINT) AS link_count FROM linked GROUP BY title
                ), own AS (
                    SELECT title, arg_min(qid, TRY_CAST(substr(qid, 2) AS BIGINT)) AS qid
                    FROM sitelinks GROUP BY title
                ), item AS (
                    SELECT qid, bool_or(item_disambiguation) AS dis FROM sitelinks GROUP BY qid
                ), titles AS (SELECT title FROM page UNION SELECT title FROM link)
                SELECT t.title, coalesce(l.link_count, 0) AS link_count, p.page_id,
                       p.dis AS page_disambiguation, r.redirect_to, o.qid, i.dis AS item_disambiguation
                FROM titles t
                LEFT JOIN link l USING (title) LEFT JOIN page p USING (title)
                LEFT JOIN redirect r USING (title) LEFT JOIN own o USING (title)
                LEFT JOIN item i ON i.qid = o.qid
                """
            ).to_arrow_table()
        finally:
            con.close()
        return {TITLES: facts.cast(FACTS)}, Stats()


@dataclass(eq=False)
class RedirectWalk(Stage[TitlePhaseParams]):
    """Phase `walk<h>`: the redirect walks one hop further, or ended, by title partition."""

    version = 1
    layer = "derived"
    shard_key = "cur"
    description = "one hop of the redirect walk, by title partition"
    progress_unit = "task"
    progress_items = "walks"

    stage_name: str
    _: KW_ONLY
    titles: str
    #: The walk phase before (None: the walks start at the redirects).
    previous: str | None
    #: The first hop's phase, whose `targets` the later hops look titles up in (None: this is it).
    first: str | None = None

    def __post_init__(self) -> None:
        if self.previous is None or self.first is None:
            if self.previous != self.first:
                raise ValueError(f"{self.stage_name}: a later hop names both the hop before and the first")
            self.inputs = (self.titles,)
        else:
            self.inputs = tuple(dict.fromkeys((self.titles, self.previous, self.first)))

    def outputs(self, params: TitlePhaseParams) -> list[Output]:
        """`active` (walks going on) and `ends` (walks that ended here); the first hop also
        `targets`, the facts of the titles its walks stood at (every redirect target)."""
        outputs = [
            Output("active", WALKS, ("origin",), may_be_empty=True),
            Output("ends", ENDS, ("origin",), may_be_empty=True),
        ]
        if self.first is None:
            outputs.append(Output("targets", LOOKUP, ("title",), may_be_empty=True))
        return outputs

    def map_schemas(self, params: TitlePhaseParams) -> dict[str, pa.Schema]:
        """The walks, keyed by the title they stand at."""
        return {"_walks": WALKS}

    def map_tasks(self, ctx: StageContext[TitlePhaseParams]) -> Iterator[MapTask]:
        """One task per span of the titles (the first hop) or of the walks going on."""
        source = (self.titles, TITLES) if self.previous is None else (self.previous, "active")
        for span in row_group_spans(ctx.inputs[source[0]].files(source[1])):
            yield MapTask(span.task_id, span.meta())

    def map(
        self, ctx: StageContext[TitlePhaseParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Route one span of walks by the title they stand at (the first hop: every redirect)."""
        span = Span.from_meta(task.meta)
        if self.previous is None:
            titles = read_span(
                ctx.inputs[self.titles].files(TITLES)[span.file], span.row_groups, ["title", "redirect_to"]
            )
            titles = titles.filter(pc.is_valid(titles["redirect_to"]))
            origin, target = titles["title"], titles["redirect_to"]
            paths = pa.ListArray.from_arrays(
                pa.array(range(0, 2 * len(titles) + 1, 2), pa.int32()),
                pc.take(
                    pa.concat_arrays([origin.combine_chunks(), target.combine_chunks()]),
                    _interleave(len(titles)),
                ),
            )
            walks = pa.table(
                [origin, target, pa.repeat(1, len(titles)).cast(pa.int32()), paths, pc.equal(origin, target)],
                schema=WALKS,
            )
        else:
            walks = read_span(ctx.inputs[self.previous].files("active")[span.file], span.row_groups)
        sink.emit_by_key("_walks", walks.cast(WALKS), "cur", ctx.num_shards)
        progress(1, walks.num_rows)
        return Stats()

    def reduce(
        self, ctx: StageContext[TitlePhaseParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Look up the title each walk stands at: one hop further, or the walk's end."""
        params = ctx.params
        walks = tables["_walks"]
        if not walks.num_rows:  # the late hops' walks are few: most partitions have none
            outputs = {"active": WALKS.empty_table(), "ends": ENDS.empty_table()}
            if self.first is None:
                outputs["targets"] = LOOKUP.empty_table()
            return outputs, Stats()
        # The later hops read the first's `targets` (a few of the titles), not the whole partition.
        source, table = (self.titles, TITLES) if self.first is None else (self.first, "targets")
        facts = read_partition(ctx.inputs[source], table, "title", shard, ctx.num_shards, LOOKUP.names)
        # Only the titles the walks stand at (a hash join would index the whole partition).
        facts = facts.filter(pc.is_in(facts["title"], value_set=pc.unique(walks["cur"])))
        # Acero joins no list column: the paths are taken back by row afterwards.
        rows = walks.drop_columns(["path"]).append_column("_row", pa.array(range(walks.num_rows), pa.int64()))
        here = rows.join(facts, "cur", right_keys="title", join_type="left outer", use_threads=False)
        here = here.append_column("path", walks["path"].take(here["_row"]))
        target = here["redirect_to"]
        goes_on = pc.and_(
            pc.and_(pc.invert(here["looped"]), pc.less(here["hops"], params.max_hops)), pc.is_valid(target)
        )
        ended = here.filter(pc.invert(goes_on))
        ends = pa.table(
            [
                ended["origin"],
                ended["cur"],
                ended["hops"],
                ended["looped"],
                pc.and_(pc.is_valid(ended["redirect_to"]), pc.invert(ended["looped"])),
                ended["qid"],
                ended["item_disambiguation"],
                ended["page_id"],
                ended["page_disambiguation"],
            ],
            schema=ENDS,
        )
        # Walks that go on are few (a redirect to a redirect): a row at a time.
        going = here.filter(goes_on).select(["origin", "hops", "path", "redirect_to"]).to_pylist()
        active = pa.Table.from_pylist(
            [
                {
                    "origin": walk["origin"],
                    "cur": walk["redirect_to"],
                    "hops": walk["hops"] + 1,
                    "path": [*walk["path"], walk["redirect_to"]],
                    "looped": walk["redirect_to"] in walk["path"],
                }
                for walk in going
            ],
            schema=WALKS,
        )
        outputs = {"active": active, "ends": ends}
        if self.first is None:
            outputs["targets"] = facts.cast(LOOKUP)
        return outputs, Stats()


def _disambiguation_items(claims_file: str, span: Span) -> pa.Array:
    """The subjects of the span's id range with a truthy P31 of Q4167410, read a batch at a time
    from the row groups whose subjects can be in the range (a Wikidata shard's statements are
    sorted by subject)."""
    metadata = pq.ParquetFile(claims_file).metadata
    subject = metadata.schema.to_arrow_schema().get_field_index("subject")
    groups = []
    for g in range(metadata.num_row_groups):
        stats = metadata.row_group(g).column(subject).statistics
        low, high = (stats.min, stats.max) if stats is not None and stats.has_min_max else (None, None)
        if low is None or (low <= span.last and (span.after is None or high > span.after)):
            groups.append(g)
    found: list[pa.Array] = []
    for batch in iter_span(claims_file, groups, ["subject", "property", "item"], batch_rows=1 << 16):
        keep = pc.and_(pc.equal(batch["property"], "P31"), pc.equal(batch["item"], DISAMBIGUATION_CLASS))
        keep = pc.and_(keep, pc.less_equal(batch["subject"], span.last))
        if span.after is not None:
            keep = pc.and_(keep, pc.greater(batch["subject"], span.after))
        found.append(batch["subject"].filter(keep))
    return pc.unique(pa.concat_arrays(found)) if found else pa.array([], pa.string())


def _interleave(n: int) -> pa.Array:
    """Indices 0, n, 1, n+1, …: the i-th origin, then the i-th target, for n of each."""
    return pa.array([i // 2 + (i % 2) * n for i in range(2 * n)], pa.int64())
