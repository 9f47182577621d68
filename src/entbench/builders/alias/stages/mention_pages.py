"""The article text `mention_stats` matches, one span of a scan shard at a time, and the form it
is kept in between the phases of a vocabulary in parts (`mention_partitions`).

A span's text is normalised once (`builders.alias.matching.matching_text`) and kept as one UTF-8
buffer: every link segment of every page followed by a `SEPARATOR` byte, which no key contains, so
one pass of an automaton over the buffer is a pass over each segment on its own. Beside it, the
layout: where each segment ends, whether it is a link anchor, which page it belongs to.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from entbench.builders.alias.matching import SEPARATOR, Segment, matching_text
from entbench.engine.inputs import Span, iter_span
from entbench.engine.stage import ProgressFn, UpstreamOutput
from entbench.engine.stats import Stats
from entbench.filters.mentions import MentionNormalizer

PAGE_BATCH = 256
_SEPARATOR = bytes([SEPARATOR])


def span_pages(
    wikipedia: UpstreamOutput, normalizer: MentionNormalizer, span: Span, stats: Stats, progress: ProgressFn
) -> Iterator[tuple[str, list[Segment]]]:
    """Each article of the span (namespace 0, not a redirect): its text normalised like the keys
    and its link segments (`matching_text`). Counts `pages_scanned` and
    `pages_normalised_by_segment`; reports pages read as progress."""
    links = pq.read_table(
        wikipedia.files("links")[span.file],
        columns=["page_id", "ordinal", "start", "end"],
        filters=[("page_id", ">=", span.first), ("page_id", "<=", span.last)],
    ).sort_by([("page_id", "ascending"), ("ordinal", "ascending")])
    link_pages = links.column("page_id").to_numpy()
    link_starts = links.column("start").to_numpy()
    link_ends = links.column("end").to_numpy()
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
            yield norm, cut
        progress(0, batch.num_rows)


@dataclass(frozen=True)
class SpanText:
    """A span's normalised text as one buffer (`SEPARATOR` after every segment) and its layout."""

    data: bytes
    segment_ends: np.ndarray  # int64: the offset of each segment's separator
    linked: np.ndarray  # bool: the segment is a link anchor
    page: np.ndarray  # int32: the segment's page, numbered from 0 in the span
    pages: int
    pages_normalised_by_segment: int

    @staticmethod
    def build(pages: Iterator[tuple[str, list[Segment]]], stats: Stats) -> SpanText:
        """The buffer of `pages` (`span_pages`); `stats` are the counts they made."""
        pieces: list[bytes] = []
        ends: list[int] = []
        linked: list[bool] = []
        page_of: list[int] = []
        size = 0
        count = 0
        for count, (norm, cut) in enumerate(pages, 1):
            for start, end, is_link in cut:
                piece = norm[start:end].encode()
                pieces.append(piece)
                pieces.append(_SEPARATOR)
                size += len(piece)
                ends.append(size)
                size += 1
                linked.append(is_link)
                page_of.append(count - 1)
        return SpanText(
            b"".join(pieces),
            np.array(ends, dtype=np.int64),
            np.array(linked, dtype=bool),
            np.array(page_of, dtype=np.int32),
            count,
            int(stats.get("pages_normalised_by_segment", 0)),
        )

    def save(self, directory: Path, name: str) -> None:
        """Write `name.bin` (the buffer) and `name.npz` (the layout), each atomically."""
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / f".{name}.bin.tmp-{os.getpid()}"
        tmp.write_bytes(self.data)
        layout = directory / f".{name}.npz.tmp-{os.getpid()}"
        with open(layout, "wb") as out:
            np.savez(
                out,
                segment_ends=self.segment_ends,
                linked=self.linked,
                page=self.page,
                counts=np.array([self.pages, self.pages_normalised_by_segment], dtype=np.int64),
            )
        os.replace(tmp, directory / f"{name}.bin")
        os.replace(layout, directory / f"{name}.npz")

    @staticmethod
    def load(directory: Path, name: str, *, data: bool = True) -> SpanText:
        """What `save` wrote (the buffer left empty without `data`)."""
        with np.load(directory / f"{name}.npz") as layout:
            pages, by_segment = (int(v) for v in layout["counts"])
            return SpanText(
                (directory / f"{name}.bin").read_bytes() if data else b"",
                layout["segment_ends"],
                layout["linked"],
                layout["page"],
                pages,
                by_segment,
            )
