"""P(unlinked|m) for every alias-table mention (Hansel appendix A; spec §4); target `alias-table`.

"P(unlinked|m), i.e. the prior of a given phrase that do not have a hyperlink in Wikipedia. We
removed the mentions that are over-commonly missing hyperlinks in Wikipedia, defined by
P(unlinked|m) > 0.98." (Hansel, appendix A)

Over the text of every article (namespace 0, not a redirect), each mention of the alias table is
found by exact, untokenised matching (one Aho-Corasick automaton over all keys, leftmost-longest
on overlap, `builders.alias.matching`), inside link anchors (linked) and between links
(unlinked) separately; text is normalised as the keys were (the alias table's own parameters).

    P(unlinked|m) = unlinked occurrences / (linked + unlinked occurrences)   (null if m never occurs)

`docs_linked`/`docs_unlinked` count the articles where m occurs linked / unlinked at least once.
The sorted keys are listed once per build (in the stage's scratch directory); every worker builds
the automaton over them once (`_matcher`); map tasks take one span of row groups of a scan shard's
`pages` each (`engine.inputs`: a few MB of text, read a batch at a time) with the links of the same
page-id range, and route partial counts by mention. Shards are sized from the scan (`num_shards`
0, the default).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import ahocorasick_rs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.alias.matching import build_matcher, match, matching_text
from entbench.builders.alias.stages.alias_table import normalizer_for
from entbench.engine.duck import stage_connection
from entbench.engine.executors.base import on_release
from entbench.engine.inputs import Span, iter_span, row_group_spans
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
from entbench.engine.stats import Stats
from entbench.readers.mediawiki_xml import SiteInfo
from entbench.schemas.alias import MENTION_STATS

PARTIAL = pa.schema(
    [MENTION_STATS.field(n) for n in ("mention", "linked_occurrences", "unlinked_occurrences")]
    + [MENTION_STATS.field(n) for n in ("docs_linked", "docs_unlinked")]
)
MENTIONS_FILE = "mentions.arrow"
#: A worker's peak per alias-table mention: building the automaton (~300 bytes a mention for a
#: moment, measured on the 256 MB enwiki world of `bench/pipelines`: 307k mentions of 14 characters
#: on average; ~125 bytes a mention are then held while the tasks run) and the mentions
#: themselves. A full enwiki alias table (~15M mentions) is then ~5 GB per worker at the start.
WORKER_BYTES_PER_MENTION = 320
#: Occurrence ids buffered before they are folded into counts (bounds a task's memory: 8 bytes each).
FLUSH_IDS = 4_000_000
PAGE_BATCH = 256


@dataclass(frozen=True)
class MentionStatsParams(Params):
    """Only the shard count: matching follows the alias table's own normalisation parameters."""

    num_shards: Annotated[
        int,
        Meta(
            description=(
                "output shards; 0 = sized from the scan's Parquet, about one per 8 MB (~25 MB of XML)"
                " (matching follows the alias table's own parameters)"
            )
        ),
    ] = 0


class _Counter:
    """Occurrence and document counts per mention id, folded with numpy every FLUSH_IDS ids.

    The automaton's matches of the pending pages are appended to two flat int64 arrays (linked,
    unlinked; `builders.alias.matching.match`) with each page's number of matches, so no Python object per
    match survives; a fold counts occurrences per id and documents per id (distinct (page, id)).
    """

    def __init__(self) -> None:
        self.ids = [array("q"), array("q")]  # linked, unlinked
        self.lengths: list[list[int]] = [[], []]  # per pending page, its matches in `ids`
        # folded (ids, counts): occurrences linked, unlinked, documents linked, unlinked
        self.parts: list[list[tuple[np.ndarray, np.ndarray]]] = [[], [], [], []]

    def page_done(self, linked_before: int, unlinked_before: int) -> None:
        """Close the current page: its matches are what was appended since the two sizes given."""
        self.lengths[0].append(len(self.ids[0]) - linked_before)
        self.lengths[1].append(len(self.ids[1]) - unlinked_before)
        if len(self.ids[0]) + len(self.ids[1]) >= FLUSH_IDS:
            self._flush()

    def _flush(self) -> None:
        for kind in (0, 1):
            if len(self.ids[kind]):
                ids = np.frombuffer(self.ids[kind], dtype=np.int64).copy()
                pages = np.repeat(np.arange(len(self.lengths[kind]), dtype=np.int64), self.lengths[kind])
                stride = int(ids.max()) + 1
                pairs = np.sort(pages * stride + ids)  # (page, id), as one sortable number
                self.parts[kind + 2].append(_run_counts(np.sort(_distinct_sorted(pairs) % stride)))
                ids.sort()
                self.parts[kind].append(_run_counts(ids))
            self.ids[kind] = array("q")  # a new array: `frombuffer` views may not resize the old one
            self.lengths[kind] = []

    def table(self, mentions: pa.Array) -> pa.Table:
        """One row per mention seen, with its four counts."""
        self._flush()
        columns: list[tuple[np.ndarray, np.ndarray]] = []
        for kind in range(4):
            parts = self.parts[kind]
            if parts:
                ids = np.concatenate([p[0] for p in parts])
                counts = np.concatenate([p[1] for p in parts])
                uniq, inverse = np.unique(ids, return_inverse=True)
                columns.append((uniq, np.bincount(inverse, weights=counts).astype(np.int64)))
            else:
                columns.append((np.empty(0, np.int64), np.empty(0, np.int64)))
        all_ids = np.unique(np.concatenate([c[0] for c in columns]))
        values = []
        for ids, counts in columns:
            full = np.zeros(len(all_ids), dtype=np.int64)
            full[np.searchsorted(all_ids, ids)] = counts
            values.append(pa.array(full, pa.int64()))
        names = mentions.take(pa.array(all_ids, pa.int64()))
        return pa.Table.from_arrays([names, *values], schema=PARTIAL)


def _distinct_sorted(values: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array."""
    return values[np.r_[True, values[1:] != values[:-1]]] if len(values) else values


def _run_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, how many times each) of a sorted array (numpy's hashing `unique` was
    several times slower on these int64 ids)."""
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    return values[starts], np.diff(np.r_[starts, len(values)]).astype(np.int64)


@dataclass(eq=False)
class MentionStats(Stage[MentionStatsParams]):
    """Count linked and unlinked occurrences of every alias-table mention in article text."""

    version = 2  # 2: true leftmost-longest (pyahocorasick's iter_long missed some keys)
    layer = "derived"
    default_num_shards = 0
    shard_key = "mention"
    description = "P(unlinked|m): exact longest-match occurrences of alias keys in article text"
    progress_unit = "task"
    progress_items = "pages"

    stage_name: str
    alias_table: str
    wikipedia: str = "wikipedia"

    def __post_init__(self) -> None:
        self.inputs = (self.wikipedia, self.alias_table)

    def outputs(self, params: MentionStatsParams) -> list[Output]:
        """One table, `mention_stats`."""
        return [Output("mention_stats", MENTION_STATS, ("mention",))]

    def map_schemas(self, params: MentionStatsParams) -> dict[str, pa.Schema]:
        """Map tasks emit counts only; the reducer adds P(unlinked|m)."""
        return {"mention_stats": PARTIAL}

    def _scratch(self, ctx: StageContext[MentionStatsParams]) -> Path:
        return Path(ctx.workdir) / "_scratch"

    def shard_inputs(self, params: MentionStatsParams) -> tuple[tuple[str, str], ...]:
        """Sized from the scan's pages and links."""
        return ((self.wikipedia, "pages"), (self.wikipedia, "links"))

    def worker_memory_estimate(self, ctx: StageContext[MentionStatsParams]) -> int | None:
        """The automaton and the mentions each worker loads: ~`WORKER_BYTES_PER_MENTION` a mention."""
        mentions = ctx.inputs[self.alias_table].stats.get("mentions")
        return int(mentions) * WORKER_BYTES_PER_MENTION if mentions else None

    def map_tasks(self, ctx: StageContext[MentionStatsParams]) -> Iterator[MapTask]:
        """List the alias keys once, then one task per span of row groups of the scan's `pages`."""
        scratch = self._scratch(ctx)
        if not (scratch / MENTIONS_FILE).exists():
            # In a function of its own: this generator's frame lives while the tasks run (in this
            # process, with one worker), and must not keep the mentions alive.
            self._save_mentions(ctx, scratch)
        for span in row_group_spans(ctx.inputs[self.wikipedia].files("pages"), key="page_id"):
            yield MapTask(span.task_id, span.meta())

    def _save_mentions(self, ctx: StageContext[MentionStatsParams], scratch: Path) -> None:
        """Write the sorted mentions (the automaton's keys, `_matcher`) to the scratch directory."""
        scratch.mkdir(parents=True, exist_ok=True)
        mentions = _all_mentions(ctx, ctx.inputs[self.alias_table].files("alias_table"), tasks=1)
        tmp = scratch / f".{MENTIONS_FILE}.tmp-{os.getpid()}"
        with pa.ipc.new_file(str(tmp), pa.schema([pa.field("mention", pa.string())])) as writer:
            writer.write_table(pa.table({"mention": mentions}))
        os.replace(tmp, scratch / MENTIONS_FILE)

    def map(
        self, ctx: StageContext[MentionStatsParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Match every key in the articles of one span of a scan shard; route counts by mention."""
        wikipedia = ctx.inputs[self.wikipedia]
        span = Span.from_meta(task.meta)
        automaton, mentions = _matcher(self._scratch(ctx))
        language = SiteInfo.from_json(wikipedia.side_file("siteinfo")).language
        normalizer = normalizer_for(ctx.inputs[self.alias_table].params, language)
        links = pq.read_table(
            wikipedia.files("links")[span.file],
            columns=["page_id", "ordinal", "start", "end"],
            filters=[("page_id", ">=", span.first), ("page_id", "<=", span.last)],
        ).sort_by([("page_id", "ascending"), ("ordinal", "ascending")])
        link_pages = links.column("page_id").to_numpy()
        link_starts = links.column("start").to_numpy()
        link_ends = links.column("end").to_numpy()
        counter = _Counter()
        stats = Stats()
        pages = wikipedia.files("pages")[span.file]
        for batch in iter_span(pages, span.row_groups, ["page_id", "ns", "is_redirect", "text"], PAGE_BATCH):
            for page_id, ns, is_redirect, text in zip(
                *(batch.column(i).to_pylist() for i in range(4)), strict=True
            ):
                if ns != 0 or is_redirect:
                    continue
                stats.add("pages_scanned")
                lo, hi = np.searchsorted(link_pages, [page_id, page_id + 1])
                spans = list(zip(link_starts[lo:hi].tolist(), link_ends[lo:hi].tolist(), strict=True))
                norm, cut, whole = matching_text(normalizer, text, spans)
                if not whole:
                    stats.add("pages_normalised_by_segment")
                linked, unlinked = counter.ids
                before = len(linked), len(unlinked)
                match(automaton, norm, cut, linked, unlinked)
                stats.add("occurrences_linked", len(linked) - before[0])
                stats.add("occurrences_unlinked", len(unlinked) - before[1])
                counter.page_done(*before)
            progress(0, batch.num_rows)
        rows = counter.table(mentions)
        sink.emit_by_key("mention_stats", rows, "mention", ctx.num_shards)
        progress(1, 0)
        return stats

    def reduce(
        self, ctx: StageContext[MentionStatsParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Sum counts per mention, list every alias key of the shard, add P(unlinked|m)."""
        stats = Stats()
        keys = _shard_mentions(ctx, ctx.inputs[self.alias_table].files("alias_table"), shard)
        con = stage_connection(ctx, tasks=ctx.num_shards)
        try:
            con.register("partial", tables["mention_stats"])
            con.register("keys", pa.table({"mention": keys}))
            result = con.sql(
                """
                WITH summed AS (
                    SELECT mention, sum(linked_occurrences)::BIGINT AS l,
                           sum(unlinked_occurrences)::BIGINT AS u,
                           sum(docs_linked)::BIGINT AS dl, sum(docs_unlinked)::BIGINT AS du
                    FROM partial GROUP BY mention
                )
                SELECT k.mention, coalesce(s.l, 0) AS linked_occurrences,
                       coalesce(s.u, 0) AS unlinked_occurrences,
                       CASE WHEN coalesce(s.l, 0) + coalesce(s.u, 0) = 0 THEN NULL
                            ELSE s.u / (s.l + s.u) END AS p_unlinked,
                       coalesce(s.dl, 0) AS docs_linked, coalesce(s.du, 0) AS docs_unlinked
                FROM keys k LEFT JOIN summed s ON s.mention = k.mention
                """
            ).to_arrow_table()
        finally:
            con.close()
        stats.add("mentions", result.num_rows)
        stats.add("mentions_never_found", result.column("p_unlinked").null_count)
        return {"mention_stats": result.cast(MENTION_STATS)}, stats


#: The automaton and mentions this process built last, by the mentions file's identity: building is
#: ~1 s for 300k mentions, so a worker builds it once per stage, not once per task (the cache is
#: dropped when the process ends a phase, `engine.executors.base.on_release`). Built, not loaded:
#: the automaton cannot be saved, and the build is as quick as loading pyahocorasick's was.
_LOADED: dict[tuple[str, int, int, int], tuple[ahocorasick_rs.BytesAhoCorasick, pa.Array]] = {}
#: Mentions turned into Python strings at a time while the automaton is built (not all at once).
_BUILD_BATCH = 65_536


def _matcher(scratch: Path) -> tuple[ahocorasick_rs.BytesAhoCorasick, pa.Array]:
    """The stage's automaton and its mentions (index = the automaton's key index), built once."""
    path = scratch / MENTIONS_FILE
    info = os.stat(path)
    key = (str(scratch), info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in _LOADED:
        _LOADED.clear()
        mentions = pa.ipc.open_file(pa.memory_map(str(path))).read_all().column(0).combine_chunks()
        batches = (
            mentions.slice(start, _BUILD_BATCH).to_pylist() for start in range(0, len(mentions), _BUILD_BATCH)
        )
        _LOADED[key] = (build_matcher(m for batch in batches for m in batch), mentions)
    return _LOADED[key]


on_release(_LOADED.clear)


def _all_mentions(ctx: StageContext, files: list[str], *, tasks: int) -> pa.Array:
    """Every distinct mention of an alias table, sorted (their index is the automaton's value);
    `tasks`: how many calls run side by side."""
    if not files:
        return pa.array([], pa.string())
    with stage_connection(ctx, tasks=tasks) as con:
        table = con.sql(
            "SELECT DISTINCT mention FROM read_parquet($files) ORDER BY mention", params={"files": files}
        ).to_arrow_table()
    return table.column("mention").combine_chunks()


def _shard_mentions(ctx: StageContext, files: list[str], shard: int) -> pa.Array:
    """The alias-table mentions that belong to mention shard `shard` (of the stage's shards)."""
    num_shards = ctx.num_shards
    if len(files) == num_shards:
        table = pq.read_table(files[shard], columns=["mention"])
        column = table.column("mention").combine_chunks()
        return pc.unique(column) if len(column) else pa.array([], pa.string())
    mentions = _all_mentions(ctx, files, tasks=num_shards)
    mask = shards_of(mentions.to_pylist(), num_shards) == shard
    return mentions.filter(pa.array(mask))
