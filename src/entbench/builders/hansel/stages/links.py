"""Stage `hansel_links`: zhwiki articles as Hansel documents, their links as mentions or drops (spec §5).

Reads a Wikipedia scan of zhwiki (`pages`, `links`), its title -> QID resolution over the kb's new
Wikidata dump, and the kb's E_known/E_new (`entity_diff.kb_entities`). The titles are joined with
the kb once per build (in the stage's scratch directory); then one map task per span of row groups
of a scan shard's `pages` (`engine.inputs.spans_reading`: about 8 MB of the page and link columns
it reads, so memory does not grow with the dump) joins those pages and their links (the same
page-id range of the shard's `links`) with the rows of that table they name, in DuckDB; the
decisions are `hansel.resolution`'s. Rows are routed by `page_id` (as the scan routes them) into
shards sized from the scan (`num_shards` 0, the default).

Tables: `documents` (every article with its status and number of mentions) and `links` (every
link of a kept document with what it resolved to and its status). Stats count documents and
links by status (`documents_<status>`, `links_<status>`), links of dropped documents
(`links_in_dropped_documents`) and pages that are not articles (`pages_redirect`,
`pages_namespace_<ns>`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from entbench.builders.hansel.resolution import document_status, link_status
from entbench.engine.duck import stage_connection
from entbench.engine.inputs import Span, spans_reading
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

#: What a map task reads of the scan's `pages` and `links` (its span is sized by their bytes).
PAGE_COLUMNS = ("page_id", "title", "ns", "is_redirect", "is_disambiguation")
LINK_COLUMNS = ("page_id", "ordinal", "target_normalized", "anchor", "start", "end")
#: Every title with its QID's kb flags, joined once per build in the stage's scratch directory.
TITLES_FILE = "titles_kb.parquet"
TITLE_BATCH_ROWS = 1 << 17
#: Links decided and emitted at a time.
LINK_BATCH_ROWS = 1 << 16


@dataclass(frozen=True)
class HanselLinksParams(Params):
    """Only the shard count: what counts as a document or a mention is spec §5's."""

    num_shards: int = 0


def page_shards(table: pa.Table, num_shards: int) -> np.ndarray:
    """The shard of each row by its `page_id`, as the Wikipedia scan routes pages."""
    return shards_of([str(p) for p in table.column("page_id").to_pylist()], num_shards)


def split_by_page(table: pa.Table, num_shards: int) -> dict[int, pa.Table]:
    """Rows per output shard by `page_id`, routed as the Wikipedia scan routes pages."""
    if table.num_rows == 0:
        return {}
    keys = [str(p) for p in table.column("page_id").to_pylist()]
    shard_ids = shards_of(keys, num_shards)
    return {int(k): table.filter(pa.array(shard_ids == k)) for k in np.unique(shard_ids).tolist()}


class HanselLinks(Stage):
    """Documents and link decisions of a zhwiki scan against the kb."""

    version = 1
    layer = "derived"
    params_type = HanselLinksParams
    default_num_shards = 0
    shard_key = "page_id"
    description = "zhwiki articles minus E_new pages; links resolved to E_known or dropped"
    progress_unit = "task"
    progress_items = "links"

    def __init__(self, name: str, *, wikipedia: str, title_qid: str, kb: str = "entity_diff") -> None:
        super().__init__(name)
        self.wikipedia = wikipedia
        self.title_qid = title_qid
        self.kb = kb
        self.inputs = (wikipedia, title_qid, kb)

    def fingerprint_extra(self) -> dict[str, str]:
        """Which upstream stages this instance reads."""
        return {"wikipedia": self.wikipedia, "title_qid": self.title_qid, "kb": self.kb}

    def coverage(self, stats: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """How many links of the zhwiki articles reach an E_known entity."""
        known = counted(stats, "links_known")
        others = sum(int(v) for k, v in stats.items() if k.startswith("links_") and k != "links_known")
        return (
            f"{known:,} of {known + others:,} links of the {counted(stats, 'documents_kept'):,} kept "
            "article(s) reach an E_known entity (the others are unresolved or reach E_new)"
        )

    def outputs(self, params: Params) -> list[Output]:
        """`documents` and `links`."""
        return [
            Output("documents", schema.DOCUMENTS, ("page_id",)),
            Output("links", schema.LINKS, ("page_id", "ordinal")),
        ]

    def shard_inputs(self, params: Params) -> tuple[tuple[str, str], ...]:
        """Sized from the scan's pages and links."""
        return ((self.wikipedia, "pages"), (self.wikipedia, "links"))

    def map_tasks(self, ctx: StageContext) -> Iterator[MapTask]:
        """Join every title with the kb once, then one task per span of row groups of the scan's
        `pages` (its page-id range), sized by the page and link columns it reads."""
        if not (ctx.scratch / TITLES_FILE).exists():
            self._join_titles_with_kb(ctx)
        scan = ctx.inputs[self.wikipedia]
        yield from spans_reading(
            scan.files("pages"), PAGE_COLUMNS, (scan.files("links"), LINK_COLUMNS), key="page_id"
        )

    def _join_titles_with_kb(self, ctx: StageContext) -> None:
        """Write every title's resolution with its QID's kb flags to the stage's scratch directory:
        one join, where every task used to filter the whole `kb_entities` (a Wikidata-sized table)
        for the QIDs its titles name."""
        tmp = ctx.scratch / f".{TITLES_FILE}.tmp-{os.getpid()}"
        with stage_connection(ctx, tasks=1, ordered=False) as con:
            con.execute(
                "CREATE TEMP TABLE tq AS SELECT title, qid, status, is_disambiguation "
                "FROM read_parquet($files)",
                {"files": ctx.inputs[self.title_qid].files("title_qid")},
            )
            con.execute(
                "CREATE TEMP TABLE kb AS SELECT qid, in_known, in_new FROM read_parquet($files) "
                "WHERE qid IN (SELECT qid FROM tq WHERE qid IS NOT NULL)",
                {"files": ctx.inputs[self.kb].files("kb_entities")},
            )
            reader = con.sql(
                "SELECT t.title, t.qid, t.status, t.is_disambiguation, k.qid IS NOT NULL AS in_kb, "
                "coalesce(k.in_known, false) AS in_known, coalesce(k.in_new, false) AS in_new "
                "FROM tq t LEFT JOIN kb k ON k.qid = t.qid"
            ).to_arrow_reader(TITLE_BATCH_ROWS)
            with pq.ParquetWriter(str(tmp), reader.schema) as writer:
                for batch in reader:
                    writer.write_batch(batch)
        os.replace(tmp, ctx.scratch / TITLES_FILE)

    def map(self, ctx: StageContext, task: MapTask, sink: BucketSink, progress: ProgressFn) -> Stats:
        """Decide the documents and links of one span of a scan shard."""
        span = Span.from_meta(task.meta)
        scan = ctx.inputs[self.wikipedia]
        stats = Stats()
        con = stage_connection(ctx, tasks=int(task.meta["tasks"]), ordered=False)
        span_rows = {"lo": span.first, "hi": span.last}
        try:
            con.execute(
                "CREATE TEMP TABLE pages AS SELECT page_id, title, ns, is_redirect, is_disambiguation "
                "FROM read_parquet($file) WHERE page_id BETWEEN $lo AND $hi",
                {"file": scan.files("pages")[span.file], **span_rows},
            )
            con.execute(
                "CREATE TEMP TABLE span_links AS SELECT page_id, ordinal, target_normalized, anchor, start, "
                '"end" FROM read_parquet($file) WHERE page_id BETWEEN $lo AND $hi',
                {"file": scan.files("links")[span.file], **span_rows},
            )
            # Only the titles this span names (DuckDB keeps the wanted titles and streams the table
            # of every title past them).
            con.execute(
                "CREATE TEMP TABLE tq AS SELECT * FROM read_parquet($file) WHERE title IN "
                "(SELECT title FROM pages UNION SELECT target_normalized FROM span_links)",
                {"file": str(ctx.scratch / TITLES_FILE)},
            )
            for ns, is_redirect, n in con.execute(
                "SELECT ns, is_redirect, count(*) FROM pages WHERE ns <> 0 OR is_redirect GROUP BY ALL"
            ).fetchall():
                stats.add("pages_redirect" if ns == 0 and is_redirect else f"pages_namespace_{ns}", int(n))
            docs = con.execute(
                "SELECT p.page_id, p.title, t.qid, coalesce(t.in_kb, false), p.is_disambiguation, "
                "coalesce(t.is_disambiguation AND t.qid IS NOT NULL, false), coalesce(t.in_new, false) "
                "FROM pages p LEFT JOIN tq t ON t.title = p.title "
                "WHERE p.ns = 0 AND NOT p.is_redirect ORDER BY p.page_id"
            ).fetchall()
            status_of, doc_rows = self._documents(docs, stats)
            cursor = con.execute(
                'SELECT l.page_id, l.ordinal, l.target_normalized, l.anchor, l.start, l."end", '
                "t.status, t.qid, coalesce(t.is_disambiguation, false), "
                "coalesce(t.in_known, false), coalesce(t.in_new, false) "
                "FROM span_links l "
                "SEMI JOIN (SELECT page_id FROM pages WHERE ns = 0 AND NOT is_redirect) p "
                "ON p.page_id = l.page_id "
                "LEFT JOIN tq t ON t.title = l.target_normalized "
                "ORDER BY l.page_id, l.ordinal"
            )
            # A batch of links at a time: as Python tuples a span's links took ~17x their bytes.
            counts: dict[int, list[int]] = {}
            total = 0
            while batch := cursor.fetchmany(LINK_BATCH_ROWS):
                total += len(batch)
                link_rows = self._links(batch, status_of, counts, stats)
                self._emit(sink, "links", schema.LINKS, link_rows, ctx.num_shards)
        finally:
            con.close()
        for row in doc_rows:
            row[5], row[6] = counts.get(row[0], [0, 0])
        self._emit(sink, "documents", schema.DOCUMENTS, [tuple(r) for r in doc_rows], ctx.num_shards)
        progress(1, total)
        return stats

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

    @staticmethod
    def _emit(
        sink: BucketSink, table: str, table_schema: pa.Schema, rows: Sequence[tuple[object, ...]], shards: int
    ) -> None:
        if not rows:
            return
        columns = list(zip(*rows, strict=True))
        arrays = [pa.array(col, type=f.type) for col, f in zip(columns, table_schema, strict=True)]
        data = pa.Table.from_arrays(arrays, schema=table_schema)
        for shard, part in split_by_page(data, shards).items():
            sink.emit(table, shard, part)
