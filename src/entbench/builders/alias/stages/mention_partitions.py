"""`mention_stats` over an alias vocabulary in parts: one phase per part, so that a worker holds
one part's automaton at a time, whatever the size of the vocabulary.

The sorted mentions (`MENTIONS_FILE`) are cut into consecutive parts of at most
`partition_mentions`. Phase k (`MentionCandidates`) runs one task per span of the scan's pages:
the first phase normalises the span's text once and keeps it in the stage's scratch directory
(`mention_pages.SpanText`), every phase finds, at each byte of it where a key of its part starts,
the longest such key (`matching.longest_per_start`) and keeps those (start, length, key) rows
beside it. The stage's own map then walks the union of every part's rows leftmost-longest
(`matching.leftmost_longest`): the counts of one automaton over the whole vocabulary, exactly.

Cost: a worker's memory is bounded by a part, but the matching of a byte of text costs more as the
vocabulary grows, whatever the size of the parts. On the same 8 MB of the `bench/pipelines` enwiki
articles (native trie, one core), the 307k mentions of its 256 MB world took 52-56 ns a byte and
the 1.12M of its 1 GB world 70-75 ns, in parts of ~62k or ~250k alike: a start whose first two
bytes begin some key walks deeper (7.05 -> 7.89 levels on average) and through more distinct nodes.
So, with a vocabulary that grows with the dump, the phases grow ~4.7x for 4x the dump (the
normalisation of the text, ~4.0x; the matching, ~4.9x); a fixed vocabulary matched over more
text grows with the text alone.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from entbench.builders.alias.matching import (
    OverlappingMatcher,
    build_overlapping_matcher,
    leftmost_longest,
    longest_per_start,
)
from entbench.builders.alias.stages.alias_table import normalizer_for
from entbench.builders.alias.stages.mention_pages import SpanText, span_pages
from entbench.engine.executors.base import on_release
from entbench.engine.inputs import Span, row_group_spans
from entbench.engine.stage import BucketSink, MapTask, Output, Params, ProgressFn, Stage, StageContext
from entbench.engine.stats import Stats
from entbench.readers.mediawiki.xml_dump import SiteInfo

MENTIONS_FILE = "mentions.arrow"
#: Where the phases keep each span's text and each part's rows, in the stage's scratch directory.
TEXT_DIR = "text"
ROWS_DIR = "longest"
#: A worker's peak per mention of the automaton it builds (~300 bytes a mention for a moment,
#: measured on the 256 MB enwiki world of `bench/pipelines`: 307k mentions of 14 characters on
#: average; ~125 bytes a mention are then held while the tasks run) and the mentions themselves.
#: That is the reference path's; the native trie holds ~50-57 bytes a mention (the 1.12M mentions of
#: the 1 GB world, in parts of 50,000) and needs less than the reference while it is built.
WORKER_BYTES_PER_MENTION = 320
#: Bytes of a span's text walked at a time (`walk_span`).
_WALK_BYTES = 1 << 20
#: Mentions turned into Python strings at a time while an automaton is built (not all at once).
_BUILD_BATCH = 65_536

T = TypeVar("T")


def read_mentions(scratch: Path) -> pa.ChunkedArray:
    """The stage's sorted mentions (`MENTIONS_FILE`), memory-mapped: only what is used is read."""
    return pa.ipc.open_file(pa.memory_map(str(scratch / MENTIONS_FILE))).read_all().column(0)


def mention_count(scratch: Path) -> int:
    """How many mentions the stage's sorted mentions file lists."""
    return len(read_mentions(scratch))


def mention_batches(mentions: pa.ChunkedArray | pa.Array) -> Iterator[list[str]]:
    """`mentions` as lists of Python strings, `_BUILD_BATCH` at a time (not all at once)."""
    for start in range(0, len(mentions), _BUILD_BATCH):
        yield mentions.slice(start, _BUILD_BATCH).to_pylist()


def mention_strings(mentions: pa.ChunkedArray) -> Iterator[str]:
    """`mentions` as Python strings, `_BUILD_BATCH` at a time (an automaton's keys, not all at once)."""
    for batch in mention_batches(mentions):
        yield from batch


#: What this process built last of each kind (`built_once`): the mentions file's identity and what
#: of it, and the thing built.
_LOADED: dict[str, tuple[tuple[object, ...], Any]] = {}


def built_once(
    scratch: Path, part: tuple[int, ...], build: Callable[[pa.ChunkedArray], T], *, kind: str = "matcher"
) -> T:
    """`build(the stage's sorted mentions)`, once per process for the mentions file and `part`: a
    matcher takes ~1 s for 300k mentions, so a worker builds it once per phase, not once per task.
    One of each `kind` is held at a time (the one it replaces is dropped before it is built), and
    none once the process ends a phase (`on_release`). Built, not loaded: an automaton cannot be
    saved."""
    info = os.stat(scratch / MENTIONS_FILE)
    key = (str(scratch), info.st_ino, info.st_size, info.st_mtime_ns, *part)
    held = _LOADED.get(kind)
    if held is None or held[0] != key:
        _LOADED.pop(kind, None)
        held = (key, build(read_mentions(scratch)))
        _LOADED[kind] = held
    built: T = held[1]
    return built


on_release(_LOADED.clear)


def partition_count(mentions: int, partition_mentions: int) -> int:
    """Parts of at most `partition_mentions` mentions (0: one part)."""
    if partition_mentions <= 0:
        return 1
    return max(1, math.ceil(mentions / partition_mentions))


def rows_name(partition: int, task_id: str) -> str:
    """The file a part's rows of one span are kept in (`ROWS_DIR`)."""
    return f"p{partition:05d}-{task_id}.npy"


@dataclass(frozen=True)
class CandidateParams(Params):
    """Which part of the vocabulary, and the parts' size (`mention_stats`' `partition_mentions`)."""

    partition: int = 0
    partition_mentions: int = 0


@dataclass(eq=False)
class MentionCandidates(Stage[CandidateParams]):
    """A phase of `mention_stats`: the longest key of one part starting at each position of every
    span's text (the first phase also normalises the text). It writes no table: its rows go to the
    stage's scratch directory, read by the stage's map."""

    version = 1
    layer = "derived"
    description = "the longest alias key of one part of the vocabulary at each position of the text"
    progress_unit = "task"
    progress_items = "pages"

    stage_name: str
    alias_table: str
    wikipedia: str
    #: The stage's scratch directory (not identity: where, not what).
    scratch: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        self.inputs = (self.wikipedia, self.alias_table)

    def identity(self) -> dict[str, object]:
        """The stage's inputs, not where its scratch directory is."""
        return {k: v for k, v in super().identity().items() if k != "scratch"}

    def outputs(self, params: CandidateParams) -> list[Output]:
        """None: the rows are kept in the stage's scratch directory."""
        return []

    def map_tasks(self, ctx: StageContext[CandidateParams]) -> Iterator[MapTask]:
        """One task per span of the scan's pages (the stage's own map tasks, `MentionStats`)."""
        for span in row_group_spans(ctx.inputs[self.wikipedia].files("pages"), key="page_id"):
            yield MapTask(span.task_id, span.meta())

    def worker_memory_estimate(self, ctx: StageContext[CandidateParams]) -> int | None:
        """One part's automaton."""
        return ctx.params.partition_mentions * WORKER_BYTES_PER_MENTION

    def map(
        self, ctx: StageContext[CandidateParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """The span's text (normalised here by the first part), then this part's longest keys."""
        scratch = Path(self.scratch)
        stats = Stats()
        if ctx.params.partition == 0:
            text = span_text(ctx, self.wikipedia, self.alias_table, Span.from_meta(task.meta), progress)
            text.save(scratch / TEXT_DIR, task.task_id)
        else:
            text = SpanText.load(scratch / TEXT_DIR, task.task_id)
        automaton, first = part_matcher(scratch, ctx.params.partition, ctx.params.partition_mentions)
        rows = longest_per_start(automaton, text.data, first)
        stats.add("positions_with_a_key", len(rows))
        (scratch / ROWS_DIR).mkdir(parents=True, exist_ok=True)
        name = rows_name(ctx.params.partition, task.task_id)
        tmp = scratch / ROWS_DIR / f".{name}.tmp-{os.getpid()}"
        with open(tmp, "wb") as out:
            np.save(out, rows)
        os.replace(tmp, scratch / ROWS_DIR / name)
        progress(1, 0)
        return stats

    def reduce(
        self, ctx: StageContext[CandidateParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Nothing to reduce."""
        return {}, Stats()


def walk_span(
    scratch: Path, task_id: str, parts: int
) -> tuple[SpanText, tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The span's layout, the keys of the leftmost-longest walk over every part's rows in linked
    and in unlinked segments (page after page), and how many of each every page has.

    The walk goes a block of the text at a time, each cut after a separator (where the walk starts
    afresh: no key crosses one), so its working arrays stay a few MB whatever the span."""
    text = SpanText.load(scratch / TEXT_DIR, task_id, data=False)
    rows = [np.load(scratch / ROWS_DIR / rows_name(k, task_id)) for k in range(parts)]
    ends = text.segment_ends
    cuts = np.unique(
        ends[np.searchsorted(ends, np.arange(_WALK_BYTES, int(ends[-1]) if len(ends) else 0, _WALK_BYTES))]
        + 1
    )
    # Where each block begins in each part's rows, found at once: a search in a column of the rows
    # (a strided view) would copy the column first, every block.
    bounds = [0, *cuts.tolist(), 1 << 62]
    at = [np.searchsorted(r[:, 0], bounds) for r in rows]
    found: list[np.ndarray] = []
    for b in range(len(bounds) - 1):
        block = [r[a[b] : a[b + 1]] for r, a in zip(rows, at, strict=True)]
        found.append(leftmost_longest(np.concatenate(block)))
    kept = np.concatenate(found) if found else np.empty((0, 3), np.int32)
    segment = np.searchsorted(ends, kept[:, 0])
    is_link = text.linked[segment]
    page = text.page[segment]
    ids = (kept[is_link, 2], kept[~is_link, 2])
    counts = (
        np.bincount(page[is_link], minlength=text.pages),
        np.bincount(page[~is_link], minlength=text.pages),
    )
    return text, ids, counts


def span_text(
    ctx: StageContext, wikipedia: str, alias_table: str, span: Span, progress: ProgressFn
) -> SpanText:
    """The span's articles normalised like the alias table's keys, as one buffer."""
    scan = ctx.inputs[wikipedia]
    language = SiteInfo.from_json(scan.side_file("siteinfo")).language
    normalizer = normalizer_for(ctx.inputs[alias_table].params, language)
    stats = Stats()
    return SpanText.build(span_pages(scan, normalizer, span, stats, progress), stats)


def part_matcher(scratch: Path, partition: int, partition_mentions: int) -> tuple[OverlappingMatcher, int]:
    """The matcher of part `partition` of the sorted mentions (`matching.build_overlapping_matcher`:
    the native trie when built), and the index of its first mention (a match's key index plus it is
    the mention's index); built once per worker and phase (`built_once`)."""
    first = partition * partition_mentions

    def build(mentions: pa.ChunkedArray) -> tuple[OverlappingMatcher, int]:
        part = mentions.slice(first, partition_mentions)
        return build_overlapping_matcher(mention_strings(part)), first

    return built_once(scratch, (partition, partition_mentions), build)
