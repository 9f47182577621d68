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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Annotated

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.hansel.context import ContextMode, context_bounds, to_simplified
from entbench.builders.hansel.site import check_kb_site, wiki_site
from entbench.builders.hansel.splits import SPLITS, first_indices, record_id, validation_documents
from entbench.builders.hansel.stages.links import page_shards
from entbench.engine.inputs import Span, iter_span, row_group_spans
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
        mentions: dict[int, int] = {}
        for doc_file in ctx.inputs[self.links].files("documents"):
            groups = range(pq.ParquetFile(doc_file).num_row_groups)
            for batch in iter_span(doc_file, groups, ["page_id", "mentions"]):
                mentions.update(zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True))
        with_mentions = sum(count > 0 for count in mentions.values())
        if with_mentions and params.validation_docs >= with_mentions:
            # Every document would go to validation: an empty train set is never what was meant.
            raise UserError(
                f"hansel.validation_docs = {params.validation_docs} holds out all {with_mentions} documents "
                "with mentions, so train would be empty; pass --param hansel.validation_docs=N with N "
                f"below {with_mentions}"
            )
        held_out = validation_documents(mentions, params.validation_docs, params.seed)
        first = first_indices(mentions, held_out)
        del mentions
        pages = sorted(first)
        table = pa.Table.from_arrays(
            [
                pa.array(pages, pa.int64()),
                pa.array([first[p][0] for p in pages], pa.string()),
                pa.array([first[p][1] for p in pages], pa.int64()),
            ],
            schema=ASSIGNMENT,
        )
        del first, pages
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
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Cut, convert (on a Chinese wiki) and number the mentions of the shard's documents."""
        params = ctx.params
        site = wiki_site(ctx, self.wikipedia)
        converter = site.converter(params.converter)
        links = tables[LINKS].sort_by([("page_id", "ascending"), ("ordinal", "ascending")])
        by_page: dict[int, list[tuple[int, int, int, str, str]]] = {}
        for page_id, ordinal, start, end, anchor, qid in zip(
            *(links.column(c).to_pylist() for c in _LINK_ROWS.names), strict=True
        ):
            by_page.setdefault(page_id, []).append((ordinal, start, end, anchor, qid))
        del links
        pages = tables[PAGES].sort_by("page_id")
        assignment = _assignment(ctx)
        assigned = assignment.column("page_id").to_numpy()
        page_ids = pages.column("page_id").to_numpy()
        at = np.searchsorted(assigned, page_ids)
        splits = assignment.column("split").take(pa.array(at)).to_pylist()
        firsts = assignment.column("first").take(pa.array(at)).to_pylist()
        stats = Stats()
        rows: dict[str, list[tuple[object, ...]]] = {split: [] for split in SPLITS}
        for page_id, text, split, first in zip(
            page_ids.tolist(), pages.column("text").to_pylist(), splits, firsts, strict=True
        ):
            mentions = by_page.get(page_id, [])
            stats.add(f"{split}_documents")
            stats.add(f"{split}_mentions", len(mentions))
            cache: dict[tuple[int, int], tuple[str, bool]] = {}
            for rank, (ordinal, start, end, anchor, qid) in enumerate(mentions):
                if text[start:end] != anchor:
                    raise RuntimeError(f"page {page_id} link {ordinal}: offsets do not spell the anchor")
                lo, hi = context_bounds(
                    text, start, end, params.context, window=params.window, language=site.language
                )
                if (lo, hi) not in cache:
                    cache[(lo, hi)] = to_simplified(text[lo:hi], converter)
                    stats.add("contexts_not_converged", not cache[(lo, hi)][1])
                context = cache[(lo, hi)][0]
                mention = context[start - lo : end - lo]
                stats.add("mentions_changed_by_t2s", mention != anchor)
                index = first + rank
                rows[split].append(
                    (record_id(split, index), context, start - lo, end - lo, mention, qid, index,
                     page_id, ordinal, lo)
                )  # fmt: skip
        out = {}
        for split, split_rows in rows.items():
            columns: list[Sequence[object]] = list(zip(*split_rows, strict=True)) or [
                [] for _ in schema.EXAMPLES
            ]
            arrays = [pa.array(c, type=f.type) for c, f in zip(columns, schema.EXAMPLES, strict=True)]
            out[split] = pa.Table.from_arrays(arrays, schema=schema.EXAMPLES)
        return out, stats

    def finalize(self, ctx: StageContext[HanselParams], directory: Path, stats: Stats) -> dict[str, int]:
        """Record how many validation documents were asked for (the split may have fewer)."""
        params = ctx.params
        return {"validation_docs_requested": params.validation_docs}


def _assignment(ctx: StageContext) -> pa.Table:
    """The documents' split and first record number (`map_tasks`), memory-mapped."""
    return pa.ipc.open_file(pa.memory_map(str(ctx.scratch / ASSIGNMENT_FILE))).read_all()
