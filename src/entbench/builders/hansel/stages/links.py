"""Stage `hansel_links`: zhwiki articles as Hansel documents, their links as mentions or drops (spec §5).

Reads a Wikipedia scan of zhwiki (`pages`, `links`), its title -> QID resolution over the kb's new
Wikidata dump, and the kb's E_known/E_new (`entity_diff.kb_entities`). Two repartition joins, the
stage's phases (`builders.hansel.stages.link_phases`), put every article and every link beside
what its title resolves to: by QID against `kb_entities`, then by title against `title_qid`, each
reducer reading one shard of the table it joins with, so no task reads a whole table and the work
grows with the dump, not with its square. The stage's map tasks route those rows by `page_id` (as
the scan routes pages) into shards sized from the scan (`num_shards` 0, the default), and each
reducer decides its documents and their links (`hansel.resolution`).

Tables: `documents` (every article with its status and number of mentions) and `links` (every
link of a kept document with what it resolved to and its status). Stats count documents and
links by status (`documents_<status>`, `links_<status>`), links of dropped documents
(`links_in_dropped_documents`) and pages that are not articles (`pages_redirect`,
`pages_namespace_<ns>`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from msgspec import Meta

from entbench.builders.hansel.resolution import document_status, link_status
from entbench.builders.hansel.stages.link_phases import (
    BY_QID,
    BY_TITLE,
    ArticlesByTitle,
    PartitionParams,
    TitlesInKb,
)
from entbench.builders.hansel.stages.link_phases import DOCUMENTS as RESOLVED_DOCUMENTS
from entbench.builders.hansel.stages.link_phases import LINKS as RESOLVED_LINKS
from entbench.engine.inputs import Span, partitions_for, read_span, row_group_spans
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
from entbench.schemas import hansel as schema

#: Links decided at a time (as Python tuples a link takes ~17x its bytes).
LINK_BATCH_ROWS = 1 << 16


@dataclass(frozen=True)
class HanselLinksParams(Params):
    """Only the shard count: what counts as a document or a mention is spec §5's."""

    num_shards: Annotated[
        int,
        Meta(
            description="output shards; 0 = sized from the scan's Parquet, about one per 8 MB (~25 MB of XML)"
        ),
    ] = 0


def page_shards(table: pa.Table, num_shards: int) -> np.ndarray:
    """The shard of each row by its `page_id`, as the Wikipedia scan routes pages."""
    return shards_of([str(p) for p in table.column("page_id").to_pylist()], num_shards)


@dataclass(eq=False)
class HanselLinks(Stage[HanselLinksParams]):
    """Documents and link decisions of a zhwiki scan against the kb."""

    version = 1
    layer = "derived"
    default_num_shards = 0
    shard_key = "page_id"
    description = "zhwiki articles minus E_new pages; links resolved to E_known or dropped"
    progress_unit = "task"
    progress_items = "links"

    stage_name: str
    _: KW_ONLY
    wikipedia: str
    title_qid: str
    kb: str = "entity_diff"

    def __post_init__(self) -> None:
        self.inputs = (self.wikipedia, self.title_qid, self.kb)

    def coverage(self, stats: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """How many links of the zhwiki articles reach an E_known entity."""
        known = counted(stats, "links_known")
        others = sum(int(v) for k, v in stats.items() if k.startswith("links_") and k != "links_known")
        return (
            f"{known:,} of {known + others:,} links of the {counted(stats, 'documents_kept'):,} kept "
            "article(s) reach an E_known entity (the others are unresolved or reach E_new)"
        )

    def outputs(self, params: HanselLinksParams) -> list[Output]:
        """`documents` and `links`."""
        return [
            Output("documents", schema.DOCUMENTS, ("page_id",)),
            Output("links", schema.LINKS, ("page_id", "ordinal")),
        ]

    def shard_inputs(self, params: HanselLinksParams) -> tuple[tuple[str, str], ...]:
        """Sized from the scan's pages and links."""
        return ((self.wikipedia, "pages"), (self.wikipedia, "links"))

    def phases(self, ctx: StageContext[HanselLinksParams]) -> list[tuple[Stage, Params]]:
        """The titles whose QID is in the kb (`by_qid`), then the articles and links with their
        titles' resolution (`by_title`): `builders.hansel.stages.link_phases`. Each has about as
        many partitions as this stage has shards, a multiple of the shard count of the table it
        joins with (`engine.inputs.partitions_for`)."""
        by_qid = f"{self.stage_name}.{BY_QID}"
        kb_shards = len(ctx.inputs[self.kb].files("kb_entities"))
        title_shards = len(ctx.inputs[self.title_qid].files("title_qid"))
        return [
            (
                TitlesInKb(by_qid, title_qid=self.title_qid, kb=self.kb),
                PartitionParams(num_shards=partitions_for(kb_shards, ctx.num_shards)),
            ),
            (
                ArticlesByTitle(
                    f"{self.stage_name}.{BY_TITLE}",
                    wikipedia=self.wikipedia,
                    title_qid=self.title_qid,
                    titles_kb=by_qid,
                ),
                PartitionParams(num_shards=partitions_for(title_shards, ctx.num_shards)),
            ),
        ]

    def map_schemas(self, params: HanselLinksParams) -> dict[str, pa.Schema]:
        """The resolved articles and links, keyed by page."""
        return {"_documents": RESOLVED_DOCUMENTS, "_links": RESOLVED_LINKS}

    def map_tasks(self, ctx: StageContext[HanselLinksParams]) -> Iterator[MapTask]:
        """One task per span of row groups of the resolved articles, then of the resolved links."""
        resolved = ctx.phases[f"{self.stage_name}.{BY_TITLE}"]
        for table in ("documents", "links"):
            for span in row_group_spans(resolved.files(table)):
                yield MapTask(f"{table[0]}{span.task_id}", {**span.meta(), "table": table})

    def map(
        self, ctx: StageContext[HanselLinksParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Route one span of resolved articles or links by page, as the Wikipedia scan routes pages."""
        span = Span.from_meta(task.meta)
        table = str(task.meta["table"])
        rows = read_span(ctx.phases[f"{self.stage_name}.{BY_TITLE}"].files(table)[span.file], span.row_groups)
        if rows.num_rows:
            sink.emit_sharded(f"_{table}", rows, page_shards(rows, ctx.num_shards))
        progress(1, rows.num_rows if table == "links" else 0)
        return Stats()

    def reduce(
        self, ctx: StageContext[HanselLinksParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Decide the shard's documents, then the links of its articles, a batch at a time."""
        stats = Stats()
        docs = tables["_documents"].sort_by("page_id")
        doc_columns = (
            "page_id",
            "title",
            "qid",
            "in_kb",
            "page_disambiguation",
            "item_disambiguation",
            "in_new",
        )
        status_of, doc_rows = self._documents(
            list(zip(*(docs[name].to_pylist() for name in doc_columns), strict=True)), stats
        )
        del docs
        links = tables["_links"]
        # Links of pages that are not articles (redirects, other namespaces) are no document's.
        links = links.filter(pc.is_in(links["page_id"], pa.array(list(status_of), pa.int64())))
        links = links.sort_by([("page_id", "ascending"), ("ordinal", "ascending")])
        link_columns = (
            "page_id",
            "ordinal",
            "target_normalized",
            "anchor",
            "start",
            "end",
            "title_status",
            "qid",
            "is_disambiguation",
            "in_known",
            "in_new",
        )
        counts: dict[int, list[int]] = {}
        kept: list[pa.Table] = []
        for batch in links.to_batches(LINK_BATCH_ROWS):
            rows = list(zip(*(batch.column(name).to_pylist() for name in link_columns), strict=True))
            kept.append(_table(schema.LINKS, self._links(rows, status_of, counts, stats)))
        for row in doc_rows:
            row[5], row[6] = counts.get(row[0], [0, 0])
        documents = _table(schema.DOCUMENTS, [tuple(r) for r in doc_rows])
        return {
            "documents": documents,
            "links": pa.concat_tables(kept) if kept else schema.LINKS.empty_table(),
        }, stats

    def finalize(self, ctx: StageContext[HanselLinksParams], directory: Path, stats: Stats) -> dict[str, Any]:
        """Report the pages that are not articles, which the `by_title` phase counted."""
        return dict(ctx.phases[f"{self.stage_name}.{BY_TITLE}"].stats)

    @staticmethod
    def _documents(docs: list[tuple[Any, ...]], stats: Stats) -> tuple[dict[int, str], list[list[Any]]]:
        """Each article's status (by page id) and its document row (mention counts filled later)."""
        status_of: dict[int, str] = {}
        doc_rows = []
        for page_id, title, qid, in_kb, page_dis, item_dis, in_new in docs:
            status = document_status(bool(page_dis), bool(item_dis), bool(in_new))
            status_of[page_id] = status
            stats.add(f"documents_{status}")
            if status == "kept" and qid is None:
                stats.add("documents_kept_without_qid")
            elif status == "kept" and not in_kb:
                stats.add("documents_kept_not_in_kb")
            doc_rows.append([page_id, title, qid, bool(in_kb), status, 0, 0])
        return status_of, doc_rows

    @staticmethod
    def _links(
        links: list[tuple[Any, ...]], status_of: dict[int, str], counts: dict[int, list[int]], stats: Stats
    ) -> list[tuple[object, ...]]:
        """The rows of the links of kept documents, with their status; counts every page's links
        and known links in `counts`."""
        link_rows: list[tuple[object, ...]] = []
        for page_id, ordinal, target, anchor, start, end, t_status, qid, dis, known, new in links:
            tally = counts.setdefault(page_id, [0, 0])
            tally[0] += 1
            if status_of[page_id] != "kept":
                stats.add("links_in_dropped_documents")
                continue
            status = link_status(anchor, t_status, qid, bool(dis), bool(known), bool(new))
            stats.add(f"links_{status}")
            tally[1] += status == "known"
            link_rows.append((page_id, ordinal, target, anchor, start, end, qid, status))
        return link_rows


def _table(table_schema: pa.Schema, rows: Sequence[tuple[object, ...]]) -> pa.Table:
    """Rows (tuples in the schema's column order) as a table."""
    if not rows:
        return table_schema.empty_table()
    columns = list(zip(*rows, strict=True))
    arrays = [pa.array(col, type=f.type) for col, f in zip(columns, table_schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=table_schema)
