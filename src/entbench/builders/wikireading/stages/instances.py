"""Stage `wikireading_instances`: answer sets joined with their article's text (spec §6).

Hewlett et al. 2016 §2.2: "Replacing each item with the text of the linked Wikipedia article
(discarding unlinked items) yields a dataset of ... (document, property, answer) instances."

A repartition join: map tasks read either a span of row groups of `wikireading_triples` or of the
Wikipedia `pages` (namespace 0 only; `engine.inputs`: a few MB each) and route both by the
normalized title; each reducer joins its bucket. Shards are sized from the two inputs
(`num_shards` 0, the default). Losses are counted in the paper's order: an item whose sitelink
names no article (`dropped_no_article`), a redirect (`dropped_article_is_redirect`) or, by default, a
disambiguation page (`dropped_article_is_disambiguation`), an empty text (`dropped_empty_article`),
and only then the triples' own reasons (`dropped_property_without_label`,
`dropped_no_renderable_value`). All counts are of (item, property) rows; `items_*` count items.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.compute as pc
from msgspec import Meta

from entbench.builders.wikireading.documents import normalize_title, truncate_words
from entbench.engine.inputs import Span, read_span, row_group_spans
from entbench.engine.stage import (
    BucketSink,
    MapTask,
    Output,
    Params,
    ProgressFn,
    Stage,
    StageContext,
)
from entbench.engine.stats import Stats, counted
from entbench.schemas import wikireading as schema

TITLE_KEY = "_title_key"

_TRIPLE_ROWS = pa.schema([*schema.TRIPLES, pa.field(TITLE_KEY, pa.string(), nullable=False)])
_PAGE_ROWS = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("is_redirect", pa.bool_(), nullable=False),
        pa.field("is_disambiguation", pa.bool_(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field(TITLE_KEY, pa.string(), nullable=False),
    ]
)


@dataclass(frozen=True)
class InstancesParams(Params):
    """`max_document_words`: keep only the first N words of each article (0 = whole article, the
    dataset's form; the paper's models read 300, §4.1); `drop_disambiguation`: drop items whose
    article is a disambiguation page."""

    max_document_words: Annotated[
        int,
        Meta(ge=0, description="keep only the first N words of each article; 0 = the whole article"),
    ] = 0
    drop_disambiguation: Annotated[
        bool,
        Meta(description="drop items whose article is a disambiguation page"),
    ] = True
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 8 MB of the scan's `pages` and the triples"),
    ] = 0


class WikiReadingInstances(Stage[InstancesParams]):
    """(item, property, answers) x article text, joined by the sitelink title."""

    name = "wikireading_instances"
    version = 2  # 2: row groups of at most ~8 MB of values (`engine.row_groups.ROW_GROUP_BYTES`)
    layer = "derived"
    inputs = ("wikireading_triples", "wikipedia")
    default_num_shards = 0
    shard_key = "title"
    description = "answer sets joined with the text of the item's article"
    progress_unit = "task"
    progress_items = "rows"

    def coverage(self, stats: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """How many items have their article in the Wikipedia dump."""
        with_article, without = counted(stats, "items_with_instances"), counted(stats, "items_no_article")
        return (
            f"{with_article:,} of {with_article + without:,} items have their article among the "
            f"{counted(stats, 'pages_read'):,} pages of the Wikipedia dump "
            f"({counted(stats, 'documents_written'):,} document(s) written)"
        )

    def outputs(self, params: InstancesParams) -> list[Output]:
        """One table, sorted by (document_id, property)."""
        return [Output("instances", schema.INSTANCES, ("document_id", "property"))]

    def map_schemas(self, params: InstancesParams) -> dict[str, pa.Schema]:
        """Both sides of the join travel to the reducers keyed by the normalized title."""
        return {"_triples": _TRIPLE_ROWS, "_pages": _PAGE_ROWS}

    def shard_inputs(self, params: InstancesParams) -> tuple[tuple[str, str], ...]:
        """Sized from the articles and the triples."""
        return (("wikipedia", "pages"), ("wikireading_triples", "triples"))

    def map_tasks(self, ctx: StageContext[InstancesParams]) -> Iterator[MapTask]:
        """One task per span of the triples, then one per span of the pages."""
        for side, stage, table in (
            ("triples", "wikireading_triples", "triples"),
            ("pages", "wikipedia", "pages"),
        ):
            for span in row_group_spans(ctx.inputs[stage].files(table)):
                yield MapTask(f"{side[0]}{span.task_id}", {**span.meta(), "side": side})

    def map(
        self, ctx: StageContext[InstancesParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Add the normalized title to one upstream span's rows and route them by it."""
        stats = Stats()
        span = Span.from_meta(task.meta)
        if task.meta["side"] == "triples":
            table = read_span(ctx.inputs["wikireading_triples"].files("triples")[span.file], span.row_groups)
            keys = [normalize_title(t) for t in table.column("site_title").to_pylist()]
            table = table.append_column(_TRIPLE_ROWS.field(TITLE_KEY), pa.array(keys, pa.string()))
            name = "_triples"
        else:
            pages = read_span(
                ctx.inputs["wikipedia"].files("pages")[span.file],
                span.row_groups,
                ["page_id", "title", "ns", "is_redirect", "is_disambiguation", "text"],
            )
            stats.add("pages_read", pages.num_rows)
            pages = pages.filter(pc.equal(pages.column("ns"), 0)).drop_columns(["ns"])
            keys = [normalize_title(t) for t in pages.column("title").to_pylist()]
            table = pages.append_column(_PAGE_ROWS.field(TITLE_KEY), pa.array(keys, pa.string()))
            name = "_pages"
        sink.emit_by_key(name, table, TITLE_KEY, ctx.num_shards)
        progress(1, table.num_rows)
        return stats

    def reduce(
        self, ctx: StageContext[InstancesParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Join the bucket's triples with its pages and count every row that does not make it."""
        params = ctx.params
        stats = Stats()
        pages = _pages_by_title(tables["_pages"], stats)
        triples = tables["_triples"].sort_by([("qid", "ascending"), ("property", "ascending")])
        owner = _article_owners(triples, pages, stats)
        rows: list[dict[str, Any]] = []
        texts: dict[int, str] = {}
        seen_items: dict[str, str] = {}
        for row in triples.to_pylist():
            reason = _join_reason(row, pages.get(row[TITLE_KEY]), owner, params)
            qid = row["qid"]
            if reason is not None:
                stats.add(f"dropped_{reason}")
                seen_items.setdefault(qid, reason)
                continue
            seen_items[qid] = "ok"
            page = pages[row[TITLE_KEY]]
            document_id = int(page["page_id"])
            if document_id not in texts:
                texts[document_id] = truncate_words(page["text"], params.max_document_words)
                if len(texts[document_id]) < len(page["text"]):
                    stats.add("documents_truncated")
            stats.add("instances_written")
            rows.append(
                {
                    "document_id": document_id,
                    "title": page["title"],
                    "qid": qid,
                    "property": row["property"],
                    "property_label": row["property_label"],
                    "answers": row["answers"],
                    "document": texts[document_id],
                }
            )
        for outcome in seen_items.values():
            stats.add("items_with_instances" if outcome == "ok" else f"items_{outcome}")
        stats.add("documents_written", len(texts))
        return {"instances": pa.Table.from_pylist(rows, schema=schema.INSTANCES)}, stats


def _pages_by_title(pages: pa.Table, stats: Stats) -> dict[str, dict[str, Any]]:
    """Pages by normalized title; a title twice (a dump quirk) keeps the lowest page id."""
    result: dict[str, dict[str, Any]] = {}
    for page in sorted(pages.to_pylist(), key=lambda p: int(p["page_id"])):
        key = page[TITLE_KEY]
        if key in result:
            stats.add("pages_duplicate_title")
            continue
        result[key] = page
    return result


def _article_owners(triples: pa.Table, pages: Mapping[str, dict[str, Any]], stats: Stats) -> dict[str, str]:
    """Normalized title -> the one item whose article it is (lowest QID number if several claim it)."""
    owner: dict[str, str] = {}
    for qid, key in zip(
        triples.column("qid").to_pylist(), triples.column(TITLE_KEY).to_pylist(), strict=True
    ):
        if key not in pages:
            continue
        current = owner.get(key)
        if current is None or _qid_number(qid) < _qid_number(current):
            if current is not None and current != qid:
                stats.add("articles_claimed_by_several_items")
            owner[key] = qid
    return owner


def _join_reason(
    row: Mapping[str, Any], page: Mapping[str, Any] | None, owner: Mapping[str, str], params: InstancesParams
) -> str | None:
    """Why this (item, property) row is not an instance, or None if it is."""
    if page is None:
        return "no_article"
    if page["is_redirect"]:
        return "article_is_redirect"
    if params.drop_disambiguation and page["is_disambiguation"]:
        return "article_is_disambiguation"
    if not page["text"].strip():
        return "empty_article"
    if owner.get(row[TITLE_KEY]) != row["qid"]:
        return "article_of_another_item"
    if row["drop_reason"] is not None:
        return str(row["drop_reason"])
    return None


def _qid_number(qid: str) -> int:
    digits = qid[1:]
    return int(digits) if digits.isdigit() else 1 << 62
