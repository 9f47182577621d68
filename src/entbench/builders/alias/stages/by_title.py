"""The phase of `alias_table` that resolves anchors and titles: a repartition join by title.

Every link's target and every article's title is looked up in `title_qid`. Each map task of the
stage used to filter the whole `title_qid` for the titles its span names, so the stage's work grew
with tasks x titles, the square of the dump. Here map tasks (one per span of a scan shard's
`pages` with the links of the same page-id range, as before) count their links per (anchor,
target) and route them, and their articles' titles, by title (xxh64, as `title_qid` routes its
rows) into partitions that each lie in one shard of `title_qid` (their count a multiple of its
shard count, `engine.inputs.partitions_for`): each reducer joins its rows with the titles of its
partition alone. `alias_table`'s own map then reads these rows and routes them by mention.

Tables (in the stage's work directory, deleted with it):
* `links`: per (anchor, QID) of the partition, the links with that anchor whose target resolves to
  the QID, and whether the QID is a disambiguation item (`title_qid.is_disambiguation` is a fact
  of the QID's page: one title per site and item);
* `names`: every article or redirect page (namespace 0) whose title resolves, with its QID.

Stats: `links_unresolved` (links whose target resolves to no QID).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from entbench.builders.wikipedia.stages.title_qid import title_partition
from entbench.engine.inputs import Span, spans_reading
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

#: What a map task reads of the scan's `pages` and `links` (its span is sized by their bytes).
PAGE_COLUMNS = ("page_id", "title", "is_redirect", "ns")
LINK_COLUMNS = ("page_id", "anchor", "target_normalized")

_ANCHORS = pa.schema(
    [
        pa.field("anchor", pa.string(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("n", pa.int64(), nullable=False),
    ]
)
_PAGES = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("is_redirect", pa.bool_(), nullable=False),
    ]
)
RESOLVED_LINKS = pa.schema(
    [
        pa.field("anchor", pa.string(), nullable=False),
        pa.field("qid", pa.string(), nullable=False),
        pa.field("link_count", pa.int64(), nullable=False),
        pa.field("is_disambiguation", pa.bool_(), nullable=False),
    ]
)
RESOLVED_NAMES = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("qid", pa.string(), nullable=False),
        pa.field("is_redirect", pa.bool_(), nullable=False),
        pa.field("is_disambiguation", pa.bool_(), nullable=False),
    ]
)


@dataclass(frozen=True)
class ByTitleParams(Params):
    """The partition count: a multiple of `title_qid`'s shard count (`AliasTable.phases`)."""

    num_shards: int = 1


@dataclass(eq=False)
class AnchorsByTitle(Stage[ByTitleParams]):
    """Anchor counts and article titles of a scan, joined with `title_qid` one title partition at a time."""

    version = 1
    layer = "derived"
    shard_key = "title"
    description = "anchors and titles resolved to QIDs, partition by partition of title_qid"
    progress_unit = "task"
    progress_items = "links"

    stage_name: str
    wikipedia: str
    title_qid: str

    def __post_init__(self) -> None:
        self.inputs = (self.wikipedia, self.title_qid)

    def outputs(self, params: ByTitleParams) -> list[Output]:
        """`links` and `names` (see the module docstring)."""
        return [
            Output("links", RESOLVED_LINKS, ("anchor", "qid"), may_be_empty=True),
            Output("names", RESOLVED_NAMES, ("page_id",), may_be_empty=True),
        ]

    def map_schemas(self, params: ByTitleParams) -> dict[str, pa.Schema]:
        """Anchor counts by (anchor, target title), and article titles, keyed by title."""
        return {"_anchors": _ANCHORS, "_pages": _PAGES}

    def map_tasks(self, ctx: StageContext[ByTitleParams]) -> Iterator[MapTask]:
        """One task per span of row groups of the scan's `pages` (its page-id range), sized by the
        page and link columns it reads."""
        scan = ctx.inputs[self.wikipedia]
        yield from spans_reading(
            scan.files("pages"), PAGE_COLUMNS, (scan.files("links"), LINK_COLUMNS), key="page_id"
        )

    def map(
        self, ctx: StageContext[ByTitleParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Count the span's links per (anchor, target) and route them, and its namespace-0 titles,
        by title."""
        span = Span.from_meta(task.meta)
        scan = ctx.inputs[self.wikipedia]
        in_span = [("page_id", ">=", span.first), ("page_id", "<=", span.last)]
        links = pq.read_table(scan.files("links")[span.file], columns=list(LINK_COLUMNS), filters=in_span)
        counted = links.group_by(["anchor", "target_normalized"], use_threads=False).aggregate(
            [("page_id", "count")]
        )
        anchors = pa.table(
            [counted["anchor"], counted["target_normalized"], counted["page_id_count"]], schema=_ANCHORS
        )
        sink.emit_by_key("_anchors", anchors, "title", ctx.num_shards)
        pages = pq.read_table(scan.files("pages")[span.file], columns=list(PAGE_COLUMNS), filters=in_span)
        pages = pages.filter(pc.equal(pages.column("ns"), 0)).select(list(_PAGES.names)).cast(_PAGES)
        sink.emit_by_key("_pages", pages, "title", ctx.num_shards)
        progress(1, links.num_rows)
        return Stats()

    def reduce(
        self, ctx: StageContext[ByTitleParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Join the partition's anchors and titles with its part of `title_qid`."""
        stats = Stats()
        titles = title_partition(
            ctx.inputs[self.title_qid], shard, ctx.num_shards, ("title", "qid", "is_disambiguation")
        )
        resolved = titles.filter(pc.is_valid(titles.column("qid")))
        anchors = tables["_anchors"]
        joined = anchors.join(resolved, "title", join_type="inner", use_threads=False)
        linked = int(pc.sum(joined.column("n")).as_py() or 0)
        stats.add("links_unresolved", int(pc.sum(anchors.column("n")).as_py() or 0) - linked)
        summed = joined.group_by(["anchor", "qid"], use_threads=False).aggregate(
            [("n", "sum"), ("is_disambiguation", "any")]
        )
        links = pa.table(
            [summed["anchor"], summed["qid"], summed["n_sum"], summed["is_disambiguation_any"]],
            schema=RESOLVED_LINKS,
        )
        names = tables["_pages"].join(resolved, "title", join_type="inner", use_threads=False)
        return {"links": links, "names": names.select(RESOLVED_NAMES.names).cast(RESOLVED_NAMES)}, stats
