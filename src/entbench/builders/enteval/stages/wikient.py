"""WikiEnt (EntEval §4.3; spec §8): stages `wikient_descriptions` and `wikient` (target `wikient`).

    wikipedia ─┬──────────────> wikient_descriptions ──┐
    wikidata ──┴─> title_qid ──────────────────────────┴─> wikient

* `wikient_descriptions` (derived): each article's first `description_tokens` (100) word tokens,
  from the start of its text, so the description begins with the article's first sentence.
  Articles with no word in their text have no row (a link to one is dropped as `target_no_text`).
* `wikient` (benchmarks): one instance per hyperlink of a sentence. A link resolves through
  `title_qid` (its target title, redirects followed, to the article page and its QID); it is
  dropped, and counted under `dropped_<reason>`, when the title does not resolve
  (`unresolved_<status>`), the article is not in the dump (`target_not_in_dump`), the article has
  no text (`target_no_text`), the anchor is empty or the sentencizer split inside it. Parameters:
  `lowercase` (default on: "We lowercased all training data", §5.1), `drop_disambiguation_targets`
  (default off), `require_qid` (default off: a linked article without a Wikidata item keeps
  `target_qid` null, counted as `instances_without_qid`).

The `wikient` stage is a repartition join: map tasks over the Wikipedia scan's shards place links
in sentences (spaCy blank English + sentencizer) and route instances by the target page; map tasks
over the description shards route descriptions by page; each reducer joins its bucket.
`entbench export enteval --from OUT --out DIR` writes the tab-separated form
(`entbench.builders.enteval.export`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.enteval.tokens import Tokenizer
from entbench.builders.enteval.wikient import LinkSpan, place_links
from entbench.engine.duck import stage_connection
from entbench.engine.inputs import Span, read_span, row_group_spans
from entbench.engine.shards import shards_of
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
from entbench.schemas import enteval as schema

#: title_qid statuses under which a link has no article to describe it (spec §3, `TITLE_STATUSES`).
UNRESOLVED = ("red_link", "redirect_loop", "redirect_too_deep", "special_namespace")

_DESCRIPTION_ROWS = pa.schema(
    [schema.DESCRIPTIONS.field("page_id"), schema.DESCRIPTIONS.field("description")]
)
_INSTANCE_ROWS = pa.schema([f for f in schema.WIKIENT if f.name != "description"])


@dataclass(frozen=True)
class DescriptionsParams(Params):
    """`description_tokens`: how many word tokens of an article make its description (EntEval
    §4.3: "the first 100 word tokens at most")."""

    description_tokens: Annotated[
        int,
        Meta(ge=1, description="word tokens per description"),
    ] = 100
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 64 MB of the scan's `pages`"),
    ] = 0


@dataclass(frozen=True)
class WikiEntParams(Params):
    """See the module docstring."""

    lowercase: Annotated[
        bool,
        Meta(description='lowercase sentences and descriptions ("We lowercased all training data", §5.1)'),
    ] = True
    drop_disambiguation_targets: Annotated[
        bool,
        Meta(description="drop links to disambiguation pages"),
    ] = False
    require_qid: Annotated[
        bool,
        Meta(description="drop links to articles without a Wikidata item (else `target_qid` is null)"),
    ] = False
    num_shards: Annotated[
        int,
        Meta(
            description="output shards; 0 = sized from the scan's Parquet, about one per 8 MB (~25 MB of XML)"
        ),
    ] = 0


def route_by_page(table: pa.Table, column: str, num_shards: int) -> dict[int, pa.Table]:
    """Split rows by the shard of an integer page id (`shard_of(str(page_id))`, as the scan does)."""
    if table.num_rows == 0:
        return {}
    ids = shards_of([str(v) for v in table.column(column).to_pylist()], num_shards)
    return {int(k): table.filter(pa.array(ids == k)) for k in np.unique(ids)}


class WikiEntDescriptions(Stage[DescriptionsParams]):
    """Article descriptions: the first N word tokens of every article's text."""

    name = "wikient_descriptions"
    version = 1
    layer = "derived"
    inputs = ("wikipedia",)
    default_num_shards = 0
    #: A description is its article's first 100 words: shards of the scan's 64 MB.
    shard_input_bytes = 64 << 20
    shard_key = "page_id"
    description = "each article's first 100 word tokens (EntEval §4.3)"
    progress_unit = "task"
    progress_items = "articles"

    def outputs(self, params: DescriptionsParams) -> list[Output]:
        """One table, `descriptions`."""
        return [Output("descriptions", schema.DESCRIPTIONS, ("page_id",))]

    def shard_inputs(self, params: DescriptionsParams) -> tuple[tuple[str, str], ...]:
        """Sized from the scan's pages."""
        return (("wikipedia", "pages"),)

    def map_tasks(self, ctx: StageContext[DescriptionsParams]) -> Iterator[MapTask]:
        """One task per span of row groups of the scan's `pages` (`engine.inputs`)."""
        for span in row_group_spans(ctx.inputs["wikipedia"].files("pages"), key="page_id"):
            yield MapTask(span.task_id, span.meta())

    def map(
        self, ctx: StageContext[DescriptionsParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Describe the articles of one span of a scan shard."""
        params = ctx.params
        stats = Stats()
        span = Span.from_meta(task.meta)
        pages = read_span(
            ctx.inputs["wikipedia"].files("pages")[span.file],
            span.row_groups,
            ["page_id", "title", "ns", "is_redirect", "is_disambiguation", "text"],
        )
        stats.add("pages_read", pages.num_rows)
        articles = pages.filter(
            pc.and_(pc.equal(pages.column("ns"), 0), pc.invert(pages.column("is_redirect")))
        )
        stats.add("pages_not_articles", pages.num_rows - articles.num_rows)
        tokenizer = Tokenizer.shared()
        rows: dict[str, list[Any]] = {f.name: [] for f in schema.DESCRIPTIONS}
        for page in articles.to_pylist():
            words = tokenizer.first_words(page["text"], params.description_tokens)
            if not words:
                stats.add("articles_without_text")
                continue
            stats.add("descriptions")
            if len(words) < params.description_tokens:
                stats.add("descriptions_shorter_than_limit")
            rows["page_id"].append(page["page_id"])
            rows["title"].append(page["title"])
            rows["is_disambiguation"].append(page["is_disambiguation"])
            rows["description"].append(" ".join(words))
            rows["num_tokens"].append(len(words))
        table = pa.table(rows, schema=schema.DESCRIPTIONS)
        for shard, part in route_by_page(table, "page_id", ctx.num_shards).items():
            sink.emit("descriptions", shard, part)
        progress(1, table.num_rows)
        return stats


class WikiEnt(Stage[WikiEntParams]):
    """WikiEnt instances: hyperlinked sentences joined with the linked article's description."""

    name = "wikient"
    # 2: `mention` is the mention's tokens joined by spaces (was the raw anchor); 3: no sentence
    # cut after an abbreviation's full stop ("No. 1", `readers.tokenizer`)
    version = 3
    layer = "benchmarks"
    inputs = ("wikipedia", "title_qid", "wikient_descriptions")
    default_num_shards = 0
    shard_key = "target_page_id"
    description = "WikiEnt: one instance per hyperlink of a sentence, with the target's description"
    progress_unit = "task"
    progress_items = "rows"

    def coverage(self, stats: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """How many links became instances, and why the others did not."""
        return (
            f"{counted(stats, 'instances'):,} WikiEnt instance(s) from {counted(stats, 'links_read'):,} "
            f"links ({counted(stats, 'dropped_unresolved_red_link'):,} point to no page of the dump, "
            f"{counted(stats, 'dropped_target_not_in_dump'):,} to a page without text)"
        )

    def outputs(self, params: WikiEntParams) -> list[Output]:
        """One table, `wikient`, unique by (page_id, link_ordinal)."""
        return [Output("wikient", schema.WIKIENT, ("page_id", "link_ordinal"))]

    def map_schemas(self, params: WikiEntParams) -> dict[str, pa.Schema]:
        """Instances without their description, and the descriptions, meet in the reducers."""
        return {"_instances": _INSTANCE_ROWS, "_descriptions": _DESCRIPTION_ROWS}

    def shard_inputs(self, params: WikiEntParams) -> tuple[tuple[str, str], ...]:
        """Sized from the scan's pages and links."""
        return (("wikipedia", "pages"), ("wikipedia", "links"))

    def map_tasks(self, ctx: StageContext[WikiEntParams]) -> Iterator[MapTask]:
        """One task per span of the scan's `pages` (contexts: those pages' links), then one per
        span of the descriptions."""
        pages = row_group_spans(ctx.inputs["wikipedia"].files("pages"), key="page_id")
        descriptions = row_group_spans(ctx.inputs["wikient_descriptions"].files("descriptions"))
        tasks = len(pages) + len(descriptions)
        for span in pages:
            yield MapTask(f"c{span.task_id}", {**span.meta(), "side": "contexts", "tasks": tasks})
        for span in descriptions:
            yield MapTask(f"d{span.task_id}", {**span.meta(), "side": "descriptions", "tasks": tasks})

    def map(
        self, ctx: StageContext[WikiEntParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Place one span's links in sentences, or route one span of descriptions."""
        span = Span.from_meta(task.meta)
        if task.meta["side"] == "descriptions":
            table = read_span(
                ctx.inputs["wikient_descriptions"].files("descriptions")[span.file],
                span.row_groups,
                ["page_id", "description"],
            )
            for shard, part in route_by_page(table, "page_id", ctx.num_shards).items():
                sink.emit("_descriptions", shard, part)
            progress(1, 0)
            return Stats()
        stats = Stats()
        instances = _contexts(ctx, span, int(task.meta["tasks"]), stats)
        for shard, part in route_by_page(instances, "target_page_id", ctx.num_shards).items():
            sink.emit("_instances", shard, part)
        progress(1, instances.num_rows)
        return stats

    def reduce(
        self, ctx: StageContext[WikiEntParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Attach each instance's description (lowercased if asked)."""
        params = ctx.params
        stats = Stats()
        descriptions = dict(
            zip(
                tables["_descriptions"].column("page_id").to_pylist(),
                tables["_descriptions"].column("description").to_pylist(),
                strict=True,
            )
        )
        instances = tables["_instances"]
        texts: list[str | None] = []
        for target in instances.column("target_page_id").to_pylist():
            text = descriptions.get(target)
            texts.append(text.lower() if text is not None and params.lowercase else text)
        # Typed: a reducer whose bucket got no instance has an empty list, which pyarrow would
        # infer as the null type and refuse as a filter mask.
        described = pa.array([t is not None for t in texts], pa.bool_())
        # The map side checked every target has a description; this guards a changed upstream.
        stats.add("dropped_description_missing", len(texts) - pc.sum(described).as_py() if texts else 0)
        table = instances.append_column("description", pa.array(texts, pa.string())).filter(described)
        stats.add("instances", table.num_rows)
        stats.add("instances_without_qid", table.column("target_qid").null_count)
        return {"wikient": table.select(schema.WIKIENT.names).cast(schema.WIKIENT)}, stats


def _resolved_links(ctx: StageContext, span: Span, tasks: int) -> pa.Table:
    """The links of a span's pages with where their target resolves to, and whether that article
    has a description."""
    links = ctx.inputs["wikipedia"].files("links")[span.file]
    con = stage_connection(ctx, tasks=tasks)  # one of the map's tasks (`map_tasks`)
    try:
        con.execute(
            'CREATE TEMP TABLE l AS SELECT page_id, ordinal, target_normalized, anchor, start, "end", '
            "paragraph FROM read_parquet($links) WHERE page_id BETWEEN $lo AND $hi",
            {"links": [links], "lo": span.first, "hi": span.last},
        )
        return con.sql(
            """
            SELECT l.page_id, l.ordinal, l.anchor, l.start, l."end", l.paragraph,
                   t.status, t.qid, t.final_title, t.page_id AS target_page_id,
                   d.page_id IS NOT NULL AS described,
                   coalesce(d.is_disambiguation, false) AS target_disambiguation
            FROM l
            LEFT JOIN (SELECT title, status, qid, final_title, page_id FROM read_parquet($titles)
                       WHERE title IN (SELECT target_normalized FROM l)) t
                   ON t.title = l.target_normalized
            LEFT JOIN (SELECT page_id, is_disambiguation FROM read_parquet($descriptions)) d
                   ON d.page_id = t.page_id
            ORDER BY l.page_id, l.ordinal
            """,
            params={
                "titles": ctx.inputs["title_qid"].files("title_qid"),
                "descriptions": ctx.inputs["wikient_descriptions"].files("descriptions"),
            },
        ).to_arrow_table()
    finally:
        con.close()


def link_drop_reason(link: Mapping[str, Any], params: WikiEntParams) -> str | None:
    """Why a link cannot be a WikiEnt instance (before sentence placement), or None."""
    status = link["status"]
    if status is None:
        return "unresolved_unknown_title"
    if status in UNRESOLVED:
        return f"unresolved_{status}"
    if link["target_page_id"] is None:
        return "target_not_in_dump"
    if not link["described"]:
        return "target_no_text"
    if params.drop_disambiguation_targets and link["target_disambiguation"]:
        return "target_disambiguation"
    if params.require_qid and link["qid"] is None:
        return "no_qid"
    return None


def _contexts(ctx: StageContext[WikiEntParams], span: Span, tasks: int, stats: Stats) -> pa.Table:
    """The instances (without descriptions) of a span's pages, from their resolvable links."""
    params = ctx.params
    links = _resolved_links(ctx, span, tasks)
    stats.add("links_read", links.num_rows)
    kept: dict[int, list[dict[str, Any]]] = {}
    for link in links.to_pylist():
        reason = link_drop_reason(link, params)
        if reason is not None:
            stats.add(f"dropped_{reason}")
            continue
        kept.setdefault(int(link["page_id"]), []).append(link)
    rows: dict[str, list[Any]] = {f.name: [] for f in _INSTANCE_ROWS}
    if kept:
        pages = pq.read_table(
            ctx.inputs["wikipedia"].files("pages")[span.file],
            columns=["page_id", "ns", "is_redirect", "text", "paragraph_starts"],
            filters=[("page_id", "in", sorted(kept))],
        )
        paragraphs, jobs = _paragraph_jobs(pages.to_pylist(), kept, stats)
        tokenizer = Tokenizer.shared()
        for (page_id, spans, by_ordinal), analysis, text in zip(
            jobs, tokenizer.analyse(paragraphs), paragraphs, strict=True
        ):
            placement = place_links(text, analysis.tokens, analysis.sentences, spans)
            stats.add("tokens_split_at_link_edge", placement.tokens_split)
            for reason in placement.dropped.values():
                stats.add(f"dropped_{reason}")
            for sentence in placement.sentences:
                stats.add("sentences_with_links")
                words = " ".join(sentence.words)
                if params.lowercase:
                    words = words.lower()
                for ordinal in sorted(sentence.links):
                    link = by_ordinal[ordinal]
                    start, end = sentence.links[ordinal]
                    mention = sentence.mention(ordinal)  # the token span, not the raw anchor
                    rows["sentence"].append(words)
                    rows["mention_start"].append(start)
                    rows["mention_end"].append(end)
                    rows["mention"].append(mention.lower() if params.lowercase else mention)
                    rows["target_qid"].append(link["qid"])
                    rows["target_title"].append(link["final_title"])
                    rows["page_id"].append(page_id)
                    rows["link_ordinal"].append(ordinal)
                    rows["target_page_id"].append(link["target_page_id"])
    stats.add("instances_placed", len(rows["sentence"]))
    return pa.table(rows, schema=_INSTANCE_ROWS)


def _paragraph_jobs(
    pages: list[dict[str, Any]], kept: Mapping[int, list[dict[str, Any]]], stats: Stats
) -> tuple[list[str], list[tuple[int, list[LinkSpan], dict[int, dict[str, Any]]]]]:
    """The paragraphs holding kept links, and per paragraph its links in paragraph offsets."""
    texts: list[str] = []
    jobs: list[tuple[int, list[LinkSpan], dict[int, dict[str, Any]]]] = []
    for page in sorted(pages, key=lambda p: int(p["page_id"])):
        page_id = int(page["page_id"])
        links = kept[page_id]
        if page["ns"] != 0 or page["is_redirect"]:
            stats.add("dropped_source_not_article", len(links))
            continue
        text: str = page["text"]
        starts: list[int] = page["paragraph_starts"]
        by_paragraph: dict[int, list[dict[str, Any]]] = {}
        for link in links:
            by_paragraph.setdefault(int(link["paragraph"]), []).append(link)
        for p in sorted(by_paragraph):
            begin = starts[p]
            end = starts[p + 1] - 2 if p + 1 < len(starts) else len(text)
            spans: list[LinkSpan] = []
            for link in by_paragraph[p]:
                if link["start"] < begin or link["end"] > end:
                    stats.add("dropped_link_crosses_paragraph")
                    continue
                spans.append(LinkSpan(int(link["ordinal"]), link["start"] - begin, link["end"] - begin))
            if spans:
                texts.append(text[begin:end])
                jobs.append((page_id, spans, {int(x["ordinal"]): x for x in by_paragraph[p]}))
    return texts, jobs
