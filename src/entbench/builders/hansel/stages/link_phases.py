"""The phases of `hansel_links`: every article and link of the scan beside what its title resolves
to, by two repartition joins (`engine.stage.Stage.phases`).

A title's resolution comes from `title_qid` (sharded by title) and its QID's place in the kb from
`entity_diff.kb_entities` (sharded by QID). `hansel_links` used to join every title with the kb
once (one query holding the whole title vocabulary), and then every map task filtered that whole
table for the titles its span names, so its work grew with tasks x titles. Now:

1. `by_qid` (`TitlesInKb`): every title with a QID is routed by QID into partitions that each lie
   in one shard of `kb_entities` (their count a multiple of its shard count,
   `engine.inputs.partitions_for`); each reducer joins its titles with that shard's rows alone.
   Table `titles_kb`: the titles whose QID is in the kb, with `in_known` and `in_new`.
2. `by_title` (`ArticlesByTitle`): the kb flags by title, the scan's articles by title and its
   links by target, routed into partitions that each lie in one shard of `title_qid`; each
   reducer joins them with its titles' rows of that shard and their flags. Tables `documents`
   (every article, namespace 0 and not a redirect, with its title's QID and flags) and `links`
   (every link with its target's `title_qid.status`, QID and flags). Stats: pages that are not
   articles (`pages_redirect`, `pages_namespace_<ns>`).

`hansel_links` then routes both tables by `page_id` and decides each document and link in its
reducers (`builders.hansel.resolution`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import KW_ONLY, dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from entbench.builders.wikipedia.stages.title_qid import title_partition
from entbench.engine.inputs import Span, read_partition, read_span, row_group_spans, spans_reading
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

BY_QID = "by_qid"
BY_TITLE = "by_title"
#: What a `by_title` task reads of the scan's `pages` and `links` (its span is sized by their bytes).
PAGE_COLUMNS = ("page_id", "title", "ns", "is_redirect", "is_disambiguation")
LINK_COLUMNS = ("page_id", "ordinal", "target_normalized", "anchor", "start", "end")

_TITLE_QIDS = pa.schema([pa.field("title", pa.string(), nullable=False), pa.field("qid", pa.string())])
TITLES_KB = pa.schema(
    [
        pa.field("title", pa.string(), nullable=False),
        pa.field("in_known", pa.bool_(), nullable=False),
        pa.field("in_new", pa.bool_(), nullable=False),
    ]
)
_ARTICLES = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("page_disambiguation", pa.bool_(), nullable=False),
    ]
)
_LINKS = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("ordinal", pa.int32(), nullable=False),
        pa.field("target_normalized", pa.string(), nullable=False),
        pa.field("anchor", pa.string(), nullable=False),
        pa.field("start", pa.int32(), nullable=False),
        pa.field("end", pa.int32(), nullable=False),
    ]
)
#: An article with its title's resolution: `item_disambiguation` is the title's
#: `is_disambiguation` when it has a QID.
DOCUMENTS = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("qid", pa.string()),
        pa.field("in_kb", pa.bool_(), nullable=False),
        pa.field("page_disambiguation", pa.bool_(), nullable=False),
        pa.field("item_disambiguation", pa.bool_(), nullable=False),
        pa.field("in_new", pa.bool_(), nullable=False),
    ]
)
#: A link with its target's resolution (`title_status` null: the target is not in `title_qid`).
LINKS = pa.schema(
    [
        *_LINKS,
        pa.field("title_status", pa.string()),
        pa.field("qid", pa.string()),
        pa.field("is_disambiguation", pa.bool_(), nullable=False),
        pa.field("in_known", pa.bool_(), nullable=False),
        pa.field("in_new", pa.bool_(), nullable=False),
    ]
)


@dataclass(frozen=True)
class PartitionParams(Params):
    """The partition count: a multiple of the shard count of the table joined with
    (`HanselLinks.phases`)."""

    num_shards: int = 1


@dataclass(eq=False)
class TitlesInKb(Stage[PartitionParams]):
    """Phase `by_qid`: the titles whose QID is in the kb, joined one QID partition at a time."""

    version = 1
    layer = "derived"
    shard_key = "qid"
    description = "titles whose QID is in the kb, partition by partition of kb_entities"
    progress_unit = "task"
    progress_items = "titles"

    stage_name: str
    _: KW_ONLY
    title_qid: str
    kb: str

    def __post_init__(self) -> None:
        self.inputs = (self.title_qid, self.kb)

    def outputs(self, params: PartitionParams) -> list[Output]:
        """`titles_kb`."""
        return [Output("titles_kb", TITLES_KB, ("title",), may_be_empty=True)]

    def map_schemas(self, params: PartitionParams) -> dict[str, pa.Schema]:
        """Titles with their QID, keyed by QID."""
        return {"_titles": _TITLE_QIDS}

    def map_tasks(self, ctx: StageContext[PartitionParams]) -> Iterator[MapTask]:
        """One task per span of row groups of `title_qid`."""
        for span in row_group_spans(ctx.inputs[self.title_qid].files("title_qid")):
            yield MapTask(span.task_id, span.meta())

    def map(
        self, ctx: StageContext[PartitionParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Route the span's titles that have a QID by QID."""
        span = Span.from_meta(task.meta)
        path = ctx.inputs[self.title_qid].files("title_qid")[span.file]
        titles = read_span(path, span.row_groups, ["title", "qid"])
        titles = titles.filter(pc.is_valid(titles.column("qid"))).cast(_TITLE_QIDS)
        sink.emit_by_key("_titles", titles, "qid", ctx.num_shards)
        progress(1, titles.num_rows)
        return Stats()

    def reduce(
        self, ctx: StageContext[PartitionParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Join the partition's titles with its part of `kb_entities`."""
        kb = read_partition(
            ctx.inputs[self.kb], "kb_entities", "qid", shard, ctx.num_shards, ("qid", "in_known", "in_new")
        )
        joined = tables["_titles"].join(kb, "qid", join_type="inner", use_threads=False)
        return {"titles_kb": joined.select(TITLES_KB.names).cast(TITLES_KB)}, Stats()


@dataclass(eq=False)
class ArticlesByTitle(Stage[PartitionParams]):
    """Phase `by_title`: the scan's articles and links with their titles' resolution and kb flags,
    joined one title partition at a time."""

    version = 1
    layer = "derived"
    shard_key = "title"
    description = "articles and links with what their titles resolve to, partition by partition of title_qid"
    progress_unit = "task"
    progress_items = "links"

    stage_name: str
    _: KW_ONLY
    wikipedia: str
    title_qid: str
    titles_kb: str

    def __post_init__(self) -> None:
        self.inputs = (self.wikipedia, self.title_qid, self.titles_kb)

    def outputs(self, params: PartitionParams) -> list[Output]:
        """`documents` and `links` (see the module docstring)."""
        return [
            Output("documents", DOCUMENTS, ("page_id",), may_be_empty=True),
            Output("links", LINKS, ("page_id", "ordinal"), may_be_empty=True),
        ]

    def map_schemas(self, params: PartitionParams) -> dict[str, pa.Schema]:
        """The kb flags and the articles by title, the links by target."""
        return {"_kb": TITLES_KB, "_articles": _ARTICLES, "_links": _LINKS}

    def map_tasks(self, ctx: StageContext[PartitionParams]) -> Iterator[MapTask]:
        """One task per span of `titles_kb`, then one per span of row groups of the scan's `pages`
        (its page-id range), sized by the page and link columns it reads."""
        for span in row_group_spans(ctx.inputs[self.titles_kb].files("titles_kb")):
            yield MapTask(f"k{span.task_id}", {**span.meta(), "side": "kb"})
        scan = ctx.inputs[self.wikipedia]
        for task in spans_reading(
            scan.files("pages"), PAGE_COLUMNS, (scan.files("links"), LINK_COLUMNS), key="page_id"
        ):
            yield MapTask(task.task_id, {**task.meta, "side": "scan"})

    def map(
        self, ctx: StageContext[PartitionParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Route one span of kb flags by title, or one span's articles by title and links by target."""
        span = Span.from_meta(task.meta)
        stats = Stats()
        if task.meta["side"] == "kb":
            flags = read_span(ctx.inputs[self.titles_kb].files("titles_kb")[span.file], span.row_groups)
            sink.emit_by_key("_kb", flags.cast(TITLES_KB), "title", ctx.num_shards)
            progress(1, 0)
            return stats
        scan = ctx.inputs[self.wikipedia]
        in_span = [("page_id", ">=", span.first), ("page_id", "<=", span.last)]
        pages = pq.read_table(scan.files("pages")[span.file], columns=list(PAGE_COLUMNS), filters=in_span)
        ns, redirect = pages.column("ns"), pages.column("is_redirect")
        others = pages.filter(pc.or_(pc.not_equal(ns, 0), redirect))
        for (page_ns, is_redirect), n in _counts(others.select(["ns", "is_redirect"])).items():
            stats.add("pages_redirect" if page_ns == 0 and is_redirect else f"pages_namespace_{page_ns}", n)
        articles = pages.filter(pc.and_(pc.equal(ns, 0), pc.invert(redirect)))
        articles = pa.table(
            [articles["page_id"], articles["title"], articles["is_disambiguation"]], schema=_ARTICLES
        )
        sink.emit_by_key("_articles", articles, "title", ctx.num_shards)
        links = pq.read_table(scan.files("links")[span.file], columns=list(LINK_COLUMNS), filters=in_span)
        sink.emit_by_key("_links", links.cast(_LINKS), "target_normalized", ctx.num_shards)
        progress(1, links.num_rows)
        return stats

    def reduce(
        self, ctx: StageContext[PartitionParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Join the partition's articles and links with its titles' resolution and kb flags."""
        titles = title_partition(
            ctx.inputs[self.title_qid], shard, ctx.num_shards, ("title", "qid", "status", "is_disambiguation")
        )
        flags = tables["_kb"].append_column("in_kb", pa.repeat(True, tables["_kb"].num_rows))
        titles = titles.join(flags, "title", join_type="left outer", use_threads=False)
        articles = tables["_articles"].join(titles, "title", join_type="left outer", use_threads=False)
        has_qid = pc.is_valid(articles["qid"])
        documents = pa.table(
            [
                articles["page_id"],
                articles["title"],
                articles["qid"],
                _false_if_null(articles["in_kb"]),
                articles["page_disambiguation"],
                _false_if_null(pc.and_(articles["is_disambiguation"], has_qid)),
                _false_if_null(articles["in_new"]),
            ],
            schema=DOCUMENTS,
        )
        links = tables["_links"].join(
            titles.rename_columns({"title": "target_normalized", "status": "title_status"}),
            "target_normalized",
            join_type="left outer",
            use_threads=False,
        )
        resolved = [
            *(links[name] for name in _LINKS.names),
            links["title_status"],
            links["qid"],
            *(_false_if_null(links[name]) for name in ("is_disambiguation", "in_known", "in_new")),
        ]
        return {"documents": documents, "links": pa.table(resolved, schema=LINKS)}, Stats()


def _false_if_null(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    return pc.fill_null(column, False)


def _counts(table: pa.Table) -> dict[tuple[int, bool], int]:
    """Rows per distinct (ns, is_redirect)."""
    counted = table.group_by(["ns", "is_redirect"], use_threads=False).aggregate([([], "count_all")])
    return {
        (int(ns), bool(redirect)): int(n)
        for ns, redirect, n in zip(
            counted["ns"].to_pylist(),
            counted["is_redirect"].to_pylist(),
            counted["count_all"].to_pylist(),
            strict=True,
        )
    }
