"""Stage `hansel`: Hansel's training and validation sets from zhwiki links (spec §5; Hansel §3.2).

"we use Wikipedia internal links to construct a training set [...] converted traditional Chinese
characters to simplified in all training and evaluation sets [...] We hold out 1K full documents
(9.7K mentions) as the validation set." (Hansel §3.2)

The documents and mentions are `hansel_links`' decisions (links of kept documents resolving to
E_known). This stage cuts each mention's context (`hansel.context`: the paragraph, its sentence,
or a window), converts it to Simplified with offsets kept, assigns whole documents to
`validation` (`validation_docs` documents by a stable hash of the page id, `hansel.splits`) or
`train`, and numbers records `hansel-<split>-N` in page-id order, then link order.

`map_tasks` computes the split and first record number of every document once (from
`hansel_links.documents`) into the stage's scratch directory; one map task per scan shard then
writes that shard's records, routed by `page_id`. Stats: records and documents per split,
`validation_docs_requested`, `mentions_changed_by_t2s` (mentions whose spelling conversion
changed) and `contexts_not_converged` (contexts whose conversion found no fixed point; expected 0).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from entbench.builders.hansel.context import CONTEXT_MODES, context_bounds, to_simplified
from entbench.builders.hansel.splits import SPLITS, first_indices, record_id, validation_documents
from entbench.builders.hansel.stages.links import split_by_page
from entbench.engine.duck import stage_connection
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
from entbench.filters.mentions import CONVERTERS
from entbench.schemas import hansel as schema

ASSIGNMENT_FILE = "assignment.arrow"
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
    Traditional->Simplified conversion, `opencc` or `hanziconv` (Hansel as published, footnote 3)."""

    context: str = "paragraph"
    window: int = 100
    validation_docs: int = 1000
    seed: int = 0
    converter: str = "opencc"
    num_shards: int = 8

    def __post_init__(self) -> None:
        if self.converter not in CONVERTERS:
            raise ValueError(f"converter must be one of {', '.join(CONVERTERS)}, got {self.converter!r}")
        if self.context not in CONTEXT_MODES:
            raise ValueError(f"context must be one of {', '.join(CONTEXT_MODES)}, got {self.context!r}")
        if self.window < 0:
            raise ValueError("window must be >= 0")
        if self.validation_docs < 0:
            raise ValueError("validation_docs must be >= 0")
        if self.num_shards < 1:
            raise ValueError("num_shards must be >= 1")


class HanselTrain(Stage):
    """`train` and `validation` records of a zhwiki scan (spec §5)."""

    version = 1
    layer = "benchmarks"
    params_type = HanselParams
    default_num_shards = 8
    shard_key = "page_id"
    description = "Hansel train/validation: zhwiki links to E_known, Simplified contexts"
    progress_unit = "shard"
    progress_items = "mentions"

    def __init__(self, name: str, *, wikipedia: str, links: str) -> None:
        super().__init__(name)
        self.wikipedia = wikipedia
        self.links = links
        self.inputs = (wikipedia, links)

    def fingerprint_extra(self) -> dict[str, str]:
        """Which upstream stages this instance reads."""
        return {"wikipedia": self.wikipedia, "links": self.links}

    def outputs(self, params: Params) -> list[Output]:
        """`train` and `validation`, in the same shape."""
        return [Output(split, schema.EXAMPLES, ("page_id", "ordinal")) for split in SPLITS]

    def map_tasks(self, ctx: StageContext) -> Iterator[MapTask]:
        """Assign documents to splits and record numbers once, then one task per scan shard."""
        params = ctx.params
        assert isinstance(params, HanselParams)
        docs = pa.concat_tables(
            [
                pq.read_table(f, columns=["page_id", "mentions"])
                for f in ctx.inputs[self.links].files("documents")
            ]
        )
        mentions = dict(
            zip(docs.column("page_id").to_pylist(), docs.column("mentions").to_pylist(), strict=True)
        )
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
        pages = sorted(first)
        table = pa.Table.from_arrays(
            [
                pa.array(pages, pa.int64()),
                pa.array([first[p][0] for p in pages], pa.string()),
                pa.array([first[p][1] for p in pages], pa.int64()),
            ],
            schema=ASSIGNMENT,
        )
        path = ctx.scratch / ASSIGNMENT_FILE
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        with pa.ipc.new_file(str(tmp), ASSIGNMENT) as writer:
            writer.write_table(table)
        os.replace(tmp, path)
        for i in range(len(ctx.inputs[self.wikipedia].files("pages"))):
            yield MapTask(f"p{i:05d}", {"part": i})

    def map(self, ctx: StageContext, task: MapTask, sink: BucketSink, progress: ProgressFn) -> Stats:
        """Cut, convert and number the mentions of one scan shard's documents."""
        params = ctx.params
        assert isinstance(params, HanselParams)
        part = int(task.meta["part"])
        assignment = pa.ipc.open_file(pa.memory_map(str(ctx.scratch / ASSIGNMENT_FILE)))
        con = stage_connection(ctx, tasks=len(ctx.inputs[self.wikipedia].files("pages")), ordered=False)
        try:
            con.register("assignment", assignment.read_all())
            pages = con.execute(
                "SELECT p.page_id, p.text, a.split, a.first "
                "FROM read_parquet($files) p "
                "JOIN assignment a ON a.page_id = p.page_id ORDER BY p.page_id",
                {"files": [ctx.inputs[self.wikipedia].files("pages")[part]]},
            ).fetchall()
            con.register("shard_pages", pa.table({"page_id": pa.array([p[0] for p in pages], pa.int64())}))
            links = con.execute(
                'SELECT l.page_id, l.ordinal, l.start, l."end", l.anchor, l.qid '
                "FROM read_parquet($files) l "
                "SEMI JOIN shard_pages s ON s.page_id = l.page_id "
                "WHERE l.status = 'known' ORDER BY l.page_id, l.ordinal",
                {"files": ctx.inputs[self.links].files("links")},
            ).fetchall()
        finally:
            con.close()
        by_page: dict[int, list[tuple[int, int, int, str, str]]] = {}
        for page_id, ordinal, start, end, anchor, qid in links:
            by_page.setdefault(page_id, []).append((ordinal, start, end, anchor, qid))
        stats = Stats()
        rows: dict[str, list[tuple[object, ...]]] = {split: [] for split in SPLITS}
        for page_id, text, split, first in pages:
            mentions = by_page.get(page_id, [])
            stats.add(f"{split}_documents")
            stats.add(f"{split}_mentions", len(mentions))
            cache: dict[tuple[int, int], tuple[str, bool]] = {}
            for rank, (ordinal, start, end, anchor, qid) in enumerate(mentions):
                if text[start:end] != anchor:
                    raise RuntimeError(f"page {page_id} link {ordinal}: offsets do not spell the anchor")
                lo, hi = context_bounds(text, start, end, params.context, window=params.window)
                if (lo, hi) not in cache:
                    cache[(lo, hi)] = to_simplified(text[lo:hi], params.converter)
                    stats.add("contexts_not_converged", not cache[(lo, hi)][1])
                context = cache[(lo, hi)][0]
                mention = context[start - lo : end - lo]
                stats.add("mentions_changed_by_t2s", mention != anchor)
                index = first + rank
                rows[split].append(
                    (record_id(split, index), context, start - lo, end - lo, mention, qid, index,
                     page_id, ordinal, lo)
                )  # fmt: skip
        for split, split_rows in rows.items():
            if split_rows:
                columns = list(zip(*split_rows, strict=True))
                arrays = [pa.array(c, type=f.type) for c, f in zip(columns, schema.EXAMPLES, strict=True)]
                table = pa.Table.from_arrays(arrays, schema=schema.EXAMPLES)
                for shard, piece in split_by_page(table, ctx.num_shards).items():
                    sink.emit(split, shard, piece)
        progress(1, len(links))
        return stats

    def finalize(self, ctx: StageContext, directory: Path, stats: Stats) -> dict[str, int]:
        """Record how many validation documents were asked for (the split may have fewer)."""
        params = ctx.params
        assert isinstance(params, HanselParams)
        return {"validation_docs_requested": params.validation_docs}
