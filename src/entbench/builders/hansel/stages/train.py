"""Stage `hansel`: Hansel's training and validation sets from a wiki's links (spec §5; Hansel §3.2).

"we use Wikipedia internal links to construct a training set [...] converted traditional Chinese
characters to simplified in all training and evaluation sets [...] We hold out 1K full documents
(9.7K mentions) as the validation set." (Hansel §3.2)

The documents and mentions are `hansel_links`' decisions (links of kept documents resolving to
E_known). This stage cuts each mention's context (`hansel.context`: the paragraph, its sentences
in the wiki's language, or a window), converts it to Simplified with offsets kept on a Chinese
wiki (`hansel.site`: the paper's zhwiki; any other wiki's text is kept as it is), assigns whole
documents to `validation` (`validation_docs` documents by a stable hash of the page id,
`hansel.splits`) or `train`, and numbers records `hansel-<split>-N` in page-id order, then link
order.

`map_tasks` computes the split and first record number of every document once (from
`hansel_links.documents`) into the stage's scratch directory. Then a repartition join by `page_id`:
map tasks read spans of row groups of the scan's `pages` (the text of documents with mentions)
and of `hansel_links.links` (the mentions), a few MB each, and route both by page; each reducer
cuts, converts and numbers the records of its pages. Shards are sized from the scan (`num_shards`
0, the default), so a task or a reducer holds a few MB of text whatever the dump. Stats: records
and documents per split, `validation_docs_requested`, `mentions_changed_by_t2s` (mentions whose
spelling conversion changed; 0 on a wiki that is not Chinese) and `contexts_not_converged`
(contexts whose conversion found no fixed point; expected 0).

Before any work, the wiki's site (its `<dbname>`) must be one the kb's `internal_filter.site`
admits (`hansel.site.check_kb_site`): E_known and E_new are the items with a sitelink to it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Annotated

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.hansel.context import ContextMode, context_bounds, to_simplified
from entbench.builders.hansel.site import WikiSite, check_kb_site, wiki_site
from entbench.builders.hansel.splits import (
    SPLITS,
    TRAIN,
    VALIDATION,
    assign_documents,
    has_mentions,
    record_id,
)
from entbench.builders.hansel.stages.links import page_shards
from entbench.engine.inputs import Span, iter_span, row_group_spans
from entbench.engine.stage import (
    BucketSink,
    InOrder,
    MapTask,
    Output,
    Params,
    ProgressFn,
    Stage,
    StageContext,
)
from entbench.engine.stats import Stats
from entbench.errors import UserError
from entbench.filters.mentions import Converter
from entbench.schemas import hansel as schema

ASSIGNMENT_FILE = "assignment.arrow"
#: The map tables: documents' text and their mentions, both routed by page.
PAGES, LINKS = "_pages", "_links"
_PAGE_ROWS = pa.schema(
    [pa.field("page_id", pa.int64(), nullable=False), pa.field("text", pa.string(), nullable=False)]
)
_LINK_ROWS = pa.schema(
    [schema.LINKS.field(n) for n in ("page_id", "ordinal", "start", "end", "anchor")]
    + [pa.field("qid", pa.string(), nullable=False)]
)
ASSIGNMENT = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("split", pa.string(), nullable=False),
        pa.field("first", pa.int64(), nullable=False),
    ]
)


@dataclass(frozen=True)
class HanselParams(Params):
    """`context`: paragraph | sentence | window (`window` code points each side); `validation_docs`:
    documents held out as validation; `seed`: the seed of the document hash; `converter`: the
    Traditional->Simplified conversion of a Chinese wiki's text, `opencc`, `hanziconv` (Hansel as
    published, footnote 3) or `none` (no conversion is applied to any other wiki's text)."""

    context: Annotated[
        ContextMode,
        Meta(description="`paragraph`, `sentence` or `window`"),
    ] = "paragraph"
    window: Annotated[
        int,
        Meta(ge=0, description="`window`: code points kept on each side of the mention"),
    ] = 100
    validation_docs: Annotated[
        int,
        Meta(ge=0, description="documents held out for validation (Hansel: 1,000)"),
    ] = 1000
    seed: Annotated[
        int,
        Meta(description="seed of the document hash"),
    ] = 0
    converter: Annotated[
        Converter,
        Meta(
            description=(
                "converter of a Chinese wiki's texts and mentions to Simplified: `opencc`, "
                "`hanziconv` (Hansel as published) or `none`; on any other wiki nothing is converted"
            )
        ),
    ] = "opencc"
    num_shards: Annotated[
        int,
        Meta(
            description="output shards; 0 = sized from the scan's Parquet, about one per 8 MB (~25 MB of XML)"
        ),
    ] = 0


@dataclass(eq=False)
class HanselTrain(Stage[HanselParams]):
    """`train` and `validation` records of a wiki scan (spec §5)."""

    version = 2  # 2: conversion on a Chinese wiki only, sentences in the wiki's language
    layer = "benchmarks"
    default_num_shards = 0
    shard_key = "page_id"
    description = "Hansel train/validation: wiki links to E_known, contexts (Simplified on zhwiki)"
    progress_unit = "task"
    progress_items = "mentions"

    stage_name: str
    _: KW_ONLY
    wikipedia: str
    links: str
    kb_filter: str = "internal_filter"

    def __post_init__(self) -> None:
        self.inputs = (self.wikipedia, self.links, self.kb_filter)

    def outputs(self, params: HanselParams) -> list[Output]:
        """`train` and `validation`, in the same shape."""
        return [Output(split, schema.EXAMPLES, ("page_id", "ordinal")) for split in SPLITS]

    def shard_inputs(self, params: HanselParams) -> tuple[tuple[str, str], ...]:
        """Sized from the scan's pages and links."""
        return ((self.wikipedia, "pages"), (self.wikipedia, "links"))

    def map_schemas(self, params: HanselParams) -> dict[str, pa.Schema]:
        """The two sides of the join: documents' text and their mentions."""
        return {PAGES: _PAGE_ROWS, LINKS: _LINK_ROWS}

    def map_tasks(self, ctx: StageContext[HanselParams]) -> Iterator[MapTask]:
        """Assign documents to splits and record numbers once, then one task per span of the
        scan's `pages` and one per span of `hansel_links.links`."""
        params = ctx.params
        check_kb_site(ctx, self.kb_filter, wiki_site(ctx, self.wikipedia).site)
        page_ids, mentions = [], []
        for doc_file in ctx.inputs[self.links].files("documents"):
            groups = range(pq.ParquetFile(doc_file).num_row_groups)
            for batch in iter_span(doc_file, groups, ["page_id", "mentions"]):
                page_ids.append(batch.column(0).to_numpy())
                mentions.append(batch.column(1).to_numpy())
        all_ids = np.concatenate(page_ids or [np.empty(0, np.int64)])
        all_mentions = np.concatenate(mentions or [np.empty(0, np.int64)])
        del page_ids, mentions
        documents = int(np.count_nonzero(has_mentions(all_mentions)))
        if documents and params.validation_docs >= documents:
            # Every document would go to validation: an empty train set is never what was meant.
            # Checked on the count, before every document of a dump is hashed.
            raise UserError(
                f"hansel.validation_docs = {params.validation_docs} holds out all {documents} documents "
                "with mentions, so train would be empty; pass --param hansel.validation_docs=N with N "
                f"below {documents}"
            )
        ids, held_out, firsts = assign_documents(all_ids, all_mentions, params.validation_docs, params.seed)
        del all_ids, all_mentions
        table = pa.Table.from_arrays(
            [pa.array(ids), pc.if_else(pa.array(held_out), VALIDATION, TRAIN), pa.array(firsts)],
            schema=ASSIGNMENT,
        )
        del ids, held_out, firsts
        path = ctx.scratch / ASSIGNMENT_FILE
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        with pa.ipc.new_file(str(tmp), ASSIGNMENT) as writer:
            writer.write_table(table)
        os.replace(tmp, path)
        for side, upstream, table_name in ((PAGES, self.wikipedia, "pages"), (LINKS, self.links, "links")):
            for span in row_group_spans(ctx.inputs[upstream].files(table_name)):
                yield MapTask(f"{side[1]}{span.task_id}", {**span.meta(), "side": side})

    def map(
        self, ctx: StageContext[HanselParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Route one span's documents (their text) or mentions to the shards of their pages."""
        span = Span.from_meta(task.meta)
        side = str(task.meta["side"])
        rows = 0
        if side == PAGES:
            assigned = _assignment(ctx).column("page_id").to_numpy()
            path = ctx.inputs[self.wikipedia].files("pages")[span.file]
            for batch in iter_span(path, span.row_groups, ["page_id", "text"]):
                ids = batch.column(0).to_numpy()
                # documents with mentions only: the assignment lists them, sorted
                at = np.searchsorted(assigned, ids).clip(max=max(0, len(assigned) - 1))
                keep = assigned[at] == ids if len(assigned) else np.zeros(len(ids), dtype=bool)
                if keep.any():
                    kept = pa.Table.from_batches([batch]).filter(pa.array(keep))
                    sink.emit_sharded(PAGES, kept, page_shards(kept, ctx.num_shards))
                    rows += kept.num_rows
        else:
            path = ctx.inputs[self.links].files("links")[span.file]
            columns = ["page_id", "ordinal", "start", "end", "anchor", "qid", "status"]
            for batch in iter_span(path, span.row_groups, columns):
                table = pa.Table.from_batches([batch])
                table = table.filter(pc.equal(table.column("status"), "known")).drop_columns(["status"])
                if table.num_rows:
                    sink.emit_sharded(LINKS, table.cast(_LINK_ROWS), page_shards(table, ctx.num_shards))
                    rows += table.num_rows
        progress(1, rows)
        return Stats()

    def reduce(
        self, ctx: StageContext[HanselParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table | InOrder], Stats]:
        """Cut, convert (on a Chinese wiki) and number the mentions of the shard's documents.

        Each split's records are given a piece at a time, in page order (`InOrder`): a record holds
        its whole context, so a shard's records are several times its text (a 4x 256 MB world's
        shard of 8 MiB of text: 63k records, +150 MiB over the reduce's start when built whole)."""
        links = tables[LINKS].sort_by([("page_id", "ascending"), ("ordinal", "ascending")])
        pages = tables[PAGES].sort_by("page_id")
        assignment = _assignment(ctx)
        page_ids = pages.column("page_id").to_numpy()
        at = pa.array(np.searchsorted(assignment.column("page_id").to_numpy(), page_ids))
        splits = assignment.column("split").take(at)
        firsts = assignment.column("first").take(at).to_numpy()
        # Each page's mentions are the rows [lo, hi) of the sorted links.
        link_pages = links.column("page_id").to_numpy()
        bounds = np.searchsorted(link_pages, page_ids, "left"), np.searchsorted(link_pages, page_ids, "right")
        cutter = _Cutter(ctx, wiki_site(ctx, self.wikipedia), pages, links, firsts, bounds)
        out: dict[str, pa.Table | InOrder] = {}
        for split in SPLITS:
            rows = np.flatnonzero(pc.equal(splits, split).to_numpy(zero_copy_only=False))
            out[split] = InOrder(cutter.pieces(split, rows))
        return out, cutter.stats

    def finalize(self, ctx: StageContext[HanselParams], directory: Path, stats: Stats) -> dict[str, int]:
        """Record how many validation documents were asked for (the split may have fewer)."""
        params = ctx.params
        return {"validation_docs_requested": params.validation_docs}


#: Records per piece of a split's output (`InOrder`), about: a piece ends with a whole document.
PIECE_RECORDS = 4096


class _Cutter:
    """Cuts the records of a reduce's documents (`pages`, sorted by page id; their mentions,
    `links`, sorted by page and ordinal: a page's are the rows `bounds[0]` to `bounds[1]`; the
    number of its first record, `firsts`), a piece of a split at a time; counts in `stats`."""

    def __init__(
        self,
        ctx: StageContext[HanselParams],
        site: WikiSite,
        pages: pa.Table,
        links: pa.Table,
        firsts: np.ndarray,
        bounds: tuple[np.ndarray, np.ndarray],
    ) -> None:
        self.params = ctx.params
        self.language = site.language
        self.converter = site.converter(ctx.params.converter)
        self.pages, self.links, self.firsts, self.bounds = pages, links, firsts, bounds
        self.stats = Stats()

    def pieces(self, split: str, rows: np.ndarray) -> Iterator[pa.Table]:
        """The records of the documents at `rows` of `pages` (all of `split`, in page order), in
        pieces of whole documents that end once they reach `PIECE_RECORDS` records."""
        counts = (self.bounds[1] - self.bounds[0])[rows].tolist()
        begin = total = 0
        for i, count in enumerate(counts):
            total += count
            if total >= PIECE_RECORDS or i == len(counts) - 1:
                yield self._piece(split, rows[begin : i + 1])
                begin, total = i + 1, 0

    def _piece(self, split: str, rows: np.ndarray) -> pa.Table:
        """The records of the documents at `rows` of `pages`."""
        params, stats, pages, firsts = self.params, self.stats, self.pages, self.firsts
        lows, highs = self.bounds[0][rows], self.bounds[1][rows]
        counts = highs - lows
        # The rows of every document's mentions in `links`, one range after another.
        starts = np.cumsum(counts) - counts
        at = np.repeat(lows - starts, counts) + np.arange(int(counts.sum()))
        mentions = self.links.take(pa.array(at, pa.int64()))
        ordinals, begins, ends, anchors, qids = (mentions.column(c).to_pylist() for c in _LINK_ROWS.names[1:])
        del mentions
        records: list[tuple[object, ...]] = []
        for page_id, text, first, low, count in zip(
            pages.column("page_id").take(pa.array(rows)).to_pylist(),
            pages.column("text").take(pa.array(rows)).to_pylist(),
            firsts[rows].tolist(),
            starts.tolist(),
            counts.tolist(),
            strict=True,
        ):
            stats.add(f"{split}_documents")
            stats.add(f"{split}_mentions", count)
            cache: dict[tuple[int, int], tuple[str, bool]] = {}
            for rank in range(count):
                m = low + rank
                ordinal, start, end, anchor = ordinals[m], begins[m], ends[m], anchors[m]
                if text[start:end] != anchor:
                    raise RuntimeError(f"page {page_id} link {ordinal}: offsets do not spell the anchor")
                lo, hi = context_bounds(
                    text, start, end, params.context, window=params.window, language=self.language
                )
                if (lo, hi) not in cache:
                    cache[(lo, hi)] = to_simplified(text[lo:hi], self.converter)
                    stats.add("contexts_not_converged", not cache[(lo, hi)][1])
                context = cache[(lo, hi)][0]
                mention = context[start - lo : end - lo]
                stats.add("mentions_changed_by_t2s", mention != anchor)
                index = first + rank
                records.append(
                    (record_id(split, index), context, start - lo, end - lo, mention, qids[m], index,
                     page_id, ordinal, lo)
                )  # fmt: skip
        return _records(records)


def _records(rows: list[tuple[object, ...]]) -> pa.Table:
    """A piece of records (`schema.EXAMPLES`) from its row tuples."""
    columns = list(zip(*rows, strict=True))
    arrays = [pa.array(c, type=f.type) for c, f in zip(columns, schema.EXAMPLES, strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema.EXAMPLES)


def _assignment(ctx: StageContext) -> pa.Table:
    """The documents' split and first record number (`map_tasks`), memory-mapped."""
    return pa.ipc.open_file(pa.memory_map(str(ctx.scratch / ASSIGNMENT_FILE))).read_all()
