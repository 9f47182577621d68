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
The sorted keys are listed once per build (in the stage's scratch directory). Up to
`partition_mentions` of them, every worker builds one automaton over them once (`_matcher`); map
tasks take one span of row groups of a scan shard's `pages` each (`engine.inputs`: a few MB of text,
read a batch at a time, `mention_pages.span_pages`) with the links of the same page-id range, and
route partial counts by mention. Past that, the vocabulary is matched in parts, one phase each
(`mention_partitions`), and each map task walks what the phases found in its span
(`_count_parts`): the same counts, a worker's memory bounded by one part. Shards are sized from the
scan (`num_shards` 0, the default).
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

from entbench.builders.alias.matching import build_matcher, match
from entbench.builders.alias.stages.alias_table import normalizer_for
from entbench.builders.alias.stages.mention_pages import span_pages
from entbench.builders.alias.stages.mention_partitions import (
    MENTIONS_FILE,
    WORKER_BYTES_PER_MENTION,
    CandidateParams,
    MentionCandidates,
    built_once,
    mention_batches,
    mention_count,
    mention_strings,
    partition_count,
    read_mentions,
    walk_span,
)
from entbench.engine.duck import stage_connection
from entbench.engine.external_sort import iter_sorted
from entbench.engine.inputs import Span, row_group_spans
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
from entbench.readers.mediawiki.xml_dump import SiteInfo
from entbench.schemas.alias import MENTION_STATS

PARTIAL = pa.schema(
    [MENTION_STATS.field(n) for n in ("mention", "linked_occurrences", "unlinked_occurrences")]
    + [MENTION_STATS.field(n) for n in ("docs_linked", "docs_unlinked")]
)
#: Default `partition_mentions`: one part's C trie is ~14 MiB (~57 bytes a mention), the reference
#: automaton ~80 MiB while it is built (`WORKER_BYTES_PER_MENTION`). Each part is one more pass over
#: the text, so parts that are too small make the stage grow faster than the dump; parts whose trie
#: outgrows the caches walk slower. On the `bench/pipelines` enwiki worlds (1 worker, CPU s, 16S:
#: 1.12M mentions) parts of 50k / 150k / 250k / 1M took 124 / 118 / 113 / 132 s at 16S, 24 s at 4S
#: for both 50k and 250k.
PARTITION_MENTIONS = 250_000
#: Bytes of mentions sorted at a time while they are listed (`_save_mentions`): the listing runs in
#: the process that plans the build, whose memory must not grow with the vocabulary.
MENTION_RUN_BYTES = 4 << 20
MENTIONS_SCHEMA = pa.schema([pa.field("mention", pa.string())])
#: Occurrence ids buffered before they are folded into counts (bounds a task's memory: 8 bytes each).
FLUSH_IDS = 4_000_000


@dataclass(frozen=True)
class MentionStatsParams(Params):
    """The shard count and the vocabulary's parts: matching follows the alias table's own
    normalisation parameters."""

    num_shards: Annotated[
        int,
        Meta(
            description=(
                "output shards; 0 = sized from the scan's Parquet, about one per 8 MB (~25 MB of XML)"
                " (matching follows the alias table's own parameters)"
            )
        ),
    ] = 0
    partition_mentions: Annotated[
        int,
        Meta(
            ge=0,
            description=(
                "most alias-table mentions in one automaton; a larger vocabulary is matched part by"
                " part, one pass over the text per part (same counts); 0 = one automaton however large"
            ),
        ),
    ] = PARTITION_MENTIONS


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

    def add_pages(self, ids: tuple[np.ndarray, np.ndarray], counts: tuple[np.ndarray, np.ndarray]) -> None:
        """Add whole pages at once: the (linked, unlinked) ids, page after page, and each page's
        number of them."""
        for kind in (0, 1):
            self.ids[kind].frombytes(np.ascontiguousarray(ids[kind], dtype=np.int64).tobytes())
            self.lengths[kind].extend(counts[kind].tolist())
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

    def table(self, mentions: pa.Array) -> tuple[pa.Table, np.ndarray]:
        """One row per mention seen, with its four counts; and the mention ids of the rows."""
        self._flush()
        columns: list[tuple[np.ndarray, np.ndarray]] = []
        for kind in range(4):
            parts = self.parts[kind]
            if len(parts) == 1:  # one fold (most tasks): its ids are distinct and sorted already
                columns.append(parts[0])
            elif parts:
                ids = np.concatenate([p[0] for p in parts])
                order = np.argsort(ids, kind="stable")  # a merge of the folds' sorted runs
                ids, counts = ids[order], np.concatenate([p[1] for p in parts])[order]
                starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
                columns.append((ids[starts], np.add.reduceat(counts, starts)))
            else:
                columns.append((np.empty(0, np.int64), np.empty(0, np.int64)))
        # Each column's ids are sorted and distinct: their union is a merge of four sorted runs
        # (timsort), where numpy's hashing `unique` took ~0.9 us an id, and a task finds more
        # distinct mentions of a larger vocabulary (~89k in 8 MB of text at 4S, ~175k at 16S).
        all_ids = _distinct_sorted(np.sort(np.concatenate([c[0] for c in columns]), kind="stable"))
        values = []
        for ids, counts in columns:
            full = np.zeros(len(all_ids), dtype=np.int64)
            full[np.searchsorted(all_ids, ids)] = counts
            values.append(pa.array(full, pa.int64()))
        names = mentions.take(pa.array(all_ids, pa.int64()))
        return pa.Table.from_arrays([names, *values], schema=PARTIAL), all_ids


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
        """The automaton and the mentions each worker loads: ~`WORKER_BYTES_PER_MENTION` a mention
        of the vocabulary, or of one part of it (`partition_mentions`: the phases hold the
        automaton, this map the mentions only)."""
        mentions = ctx.inputs[self.alias_table].stats.get("mentions")
        if not mentions:
            return None
        limit = ctx.params.partition_mentions
        return min(int(mentions), limit or int(mentions)) * WORKER_BYTES_PER_MENTION

    def phases(self, ctx: StageContext[MentionStatsParams]) -> list[tuple[Stage, Params]]:
        """None while the vocabulary fits one automaton (`partition_mentions`); else one phase per
        part of it (`mention_partitions`): the first also keeps each span's normalised text."""
        scratch = self._scratch(ctx)
        self._ensure_mentions(ctx, scratch)
        limit = ctx.params.partition_mentions
        parts = partition_count(mention_count(scratch), limit)
        if parts == 1:
            return []
        listed: list[tuple[Stage, Params]] = []
        for part in range(parts):
            phase = MentionCandidates(
                f"{self.stage_name}.part{part}", alias_table=self.alias_table, wikipedia=self.wikipedia
            )
            phase.scratch = str(scratch)
            listed.append((phase, CandidateParams(partition=part, partition_mentions=limit)))
        return listed

    def map_tasks(self, ctx: StageContext[MentionStatsParams]) -> Iterator[MapTask]:
        """List the alias keys once, then one task per span of row groups of the scan's `pages`."""
        self._ensure_mentions(ctx, self._scratch(ctx))
        for span in row_group_spans(ctx.inputs[self.wikipedia].files("pages"), key="page_id"):
            yield MapTask(span.task_id, span.meta())

    def _ensure_mentions(self, ctx: StageContext[MentionStatsParams], scratch: Path) -> None:
        if not (scratch / MENTIONS_FILE).exists():
            # In a function of its own: a generator's frame that called it lives while the tasks
            # run (in this process, with one worker), and must not keep the mentions alive.
            self._save_mentions(ctx, scratch)

    def _save_mentions(self, ctx: StageContext[MentionStatsParams], scratch: Path) -> None:
        """Write the sorted mentions (the automaton's keys, `_matcher`) to the scratch directory,
        a shard of the alias table at a time through the engine's external sort: this runs where
        the build is planned, and listing them all at once (a DuckDB sort) grew that process with
        the vocabulary (+48 MiB at 1.12M mentions, 4x the data, on 2 workers)."""
        scratch.mkdir(parents=True, exist_ok=True)
        files = ctx.inputs[self.alias_table].files("alias_table")
        tmp = scratch / f".{MENTIONS_FILE}.tmp-{os.getpid()}"
        rows = iter_sorted(
            (_distinct_mentions(file) for file in files),
            schema=MENTIONS_SCHEMA,
            sort_by=("mention",),
            scratch=scratch / "runs",
            run_bytes=MENTION_RUN_BYTES,
        )
        with pa.ipc.new_file(str(tmp), MENTIONS_SCHEMA) as writer:
            for window in rows:
                writer.write_table(window)
        os.replace(tmp, scratch / MENTIONS_FILE)

    def map(
        self, ctx: StageContext[MentionStatsParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Match every key in the articles of one span of a scan shard (or walk what the phases
        found there, `_count_parts`); route counts by mention."""
        counter = _Counter()
        stats = Stats()
        if ctx.phases:
            mentions = read_mentions(self._scratch(ctx)).combine_chunks()
            self._count_parts(ctx, task, counter, stats)
        else:
            automaton, mentions = _matcher(self._scratch(ctx))
            span = Span.from_meta(task.meta)
            language = SiteInfo.from_json(ctx.inputs[self.wikipedia].side_file("siteinfo")).language
            normalizer = normalizer_for(ctx.inputs[self.alias_table].params, language)
            for norm, cut in span_pages(ctx.inputs[self.wikipedia], normalizer, span, stats, progress):
                linked, unlinked = counter.ids
                before = len(linked), len(unlinked)
                match(automaton, norm, cut, linked, unlinked)
                stats.add("occurrences_linked", len(linked) - before[0])
                stats.add("occurrences_unlinked", len(unlinked) - before[1])
                counter.page_done(*before)
        rows, ids = counter.table(mentions)
        shards = _mention_shards(self._scratch(ctx), ctx.num_shards)
        sink.emit_sharded("mention_stats", rows, shards[ids])
        progress(1, 0)
        return stats

    def _count_parts(
        self, ctx: StageContext[MentionStatsParams], task: MapTask, counter: _Counter, stats: Stats
    ) -> None:
        """The leftmost-longest walk over every part's longest keys of the span, counted."""
        text, ids, counts = walk_span(self._scratch(ctx), task.task_id, len(ctx.phases))
        counter.add_pages(ids, counts)
        stats.add("pages_scanned", text.pages)
        stats.add("pages_normalised_by_segment", text.pages_normalised_by_segment)
        stats.add("occurrences_linked", len(ids[0]))
        stats.add("occurrences_unlinked", len(ids[1]))

    def reduce(
        self, ctx: StageContext[MentionStatsParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Sum counts per mention, list every alias key of the shard, add P(unlinked|m)."""
        stats = Stats()
        keys = _shard_mentions(
            ctx, self._scratch(ctx), ctx.inputs[self.alias_table].files("alias_table"), shard
        )
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


def _matcher(scratch: Path) -> tuple[ahocorasick_rs.BytesAhoCorasick, pa.Array]:
    """The stage's automaton and its mentions (index = the automaton's key index), built once per
    worker (`mention_partitions.built_once`)."""

    def build(mentions: pa.ChunkedArray) -> tuple[ahocorasick_rs.BytesAhoCorasick, pa.Array]:
        return build_matcher(mention_strings(mentions)), mentions.combine_chunks()

    return built_once(scratch, (), build)


def _mention_shards(scratch: Path, num_shards: int) -> np.ndarray:
    """`shards_of` every mention (index: the mention's id), hashed once per worker and phase
    (`built_once`, 4 bytes a mention), not once per task for each mention it found: a task finds a
    larger share of a larger vocabulary, so hashing per task grew faster than the text."""

    def build(mentions: pa.ChunkedArray) -> np.ndarray:
        shards = np.empty(len(mentions), dtype=np.int32)
        at = 0
        for batch in mention_batches(mentions):
            shards[at : at + len(batch)] = shards_of(batch, num_shards)
            at += len(batch)
        return shards

    return built_once(scratch, (num_shards,), build, kind="shards")


def _distinct_mentions(file: str) -> pa.Table:
    """The distinct mentions of one alias-table shard. The alias table is sharded by mention
    (`AliasTable.shard_key`): its shards' mentions are disjoint, which the sort checks."""
    column = pq.read_table(file, columns=["mention"]).column("mention").combine_chunks()
    return pa.table({"mention": pc.unique(column) if len(column) else column}, schema=MENTIONS_SCHEMA)


def _shard_mentions(ctx: StageContext, scratch: Path, files: list[str], shard: int) -> pa.Array:
    """The alias-table mentions that belong to mention shard `shard` (of the stage's shards): the
    alias table's own shard when it has as many, else those of the listed mentions (`_save_mentions`)
    that hash to it (not every shard of the alias table read again by every reducer)."""
    num_shards = ctx.num_shards
    if len(files) == num_shards:
        return _distinct_mentions(files[shard]).column("mention").combine_chunks()
    mentions = read_mentions(scratch).combine_chunks()
    return mentions.filter(pa.array(_mention_shards(scratch, num_shards) == shard))
