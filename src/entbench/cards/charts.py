"""Pure helpers that turn counts into chart data and Markdown (no I/O, no matplotlib)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from entbench.cards.model import Chart


@dataclass(frozen=True)
class IntBins:
    """Bins over integers: `count` bins of `width` from `low`, then an open bin if `open_from` is set."""

    low: int
    width: int
    count: int
    open_from: int | None

    def labels(self) -> tuple[str, ...]:
        """One label per bin ("3", "10–14", "1,000–1,999", "≥50")."""
        edges = [self.low + i * self.width for i in range(self.count)]
        labels = [f"{e:,}" if self.width == 1 else f"{e:,}–{e + self.width - 1:,}" for e in edges]
        if self.open_from is not None:
            labels.append(f"≥{self.open_from:,}")
        return tuple(labels)

    def apply(self, counts: Mapping[int, int]) -> tuple[float, ...]:
        """Counts per bin (values below `low` are not expected; they go to the first bin)."""
        binned = [0.0] * (self.count + (self.open_from is not None))
        for value, n in counts.items():
            if self.open_from is not None and value >= self.open_from:
                binned[-1] += n
            else:
                binned[min(self.count - 1, max(0, (value - self.low) // self.width))] += n
        return tuple(binned)


def int_bins(counts: Mapping[int, int], *, max_bins: int = 40) -> IntBins:
    """Bins for a histogram of integer values (lengths, set sizes), at most `max_bins` of them.

    One bin per value when the values span at most `max_bins` integers; otherwise bins of a round
    width (1, 2 or 5 times a power of ten, so edges read 0, 500, 1,000, …) up to the 99th
    percentile, and a last open-ended bin ("≥ v") for the rest, so a long tail (a few
    300-character mentions) does not squash the bars everyone looks at.
    """
    if not counts:
        return IntBins(0, 1, 0, None)
    low, high = min(counts), max(counts)
    if high - low + 1 <= max_bins:
        return IntBins(low, 1, high - low + 1, None)
    cap = min(high, _percentile(counts, 0.99))
    width = _round_width(math.ceil((cap - low + 1) / (max_bins - 1)))
    start = low // width * width
    count = min(max_bins - 1, math.ceil((cap + 1 - start) / width))
    end = start + count * width
    return IntBins(start, width, count, end if high >= end else None)


def _round_width(width: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, … at least `width`."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            if step * scale >= width:
                return step * scale
        scale *= 10


def integer_histogram(
    counts: Mapping[int, int], *, max_bins: int = 40
) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Labels and counts of the histogram of `counts` (value -> occurrences), binned by `int_bins`."""
    bins = int_bins(counts, max_bins=max_bins)
    return bins.labels(), bins.apply(counts)


def _percentile(counts: Mapping[int, int], q: float) -> int:
    total = sum(counts.values())
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        if seen >= q * total:
            return value
    return max(counts)


def top_items(rows: Iterable[tuple[str, float]], n: int) -> list[tuple[str, float]]:
    """The `n` largest (label, value) pairs, largest first, ties by label (deterministic)."""
    return sorted(rows, key=lambda r: (-r[1], r[0]))[:n]


def bar_chart(
    file: str,
    title: str,
    rows: Sequence[tuple[str, float]],
    *,
    xlabel: str = "",
    ylabel: str = "",
    horizontal: bool = False,
    series: str = "",
) -> Chart:
    """A one-series bar chart of (label, value) rows, in the given order."""
    return Chart(
        file=file,
        title=title,
        labels=tuple(r[0] for r in rows),
        series=((series, tuple(float(r[1]) for r in rows)),),
        xlabel=xlabel,
        ylabel=ylabel,
        style="barh" if horizontal else "bar",
    )


def size_category(rows: int) -> str:
    """The Hugging Face `size_categories` bucket of a row count."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    bounds += [(10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B")]
    for bound, name in bounds:
        if rows < bound:
            return name
    return "n>1B"


def fmt(value: Any) -> str:
    """A number as the card prints it: thousands separators, floats to 4 significant decimals."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def percent(value: float, digits: int = 1) -> str:
    """A share in [0, 1] as a percentage."""
    return f"{100 * value:.{digits}f}%"


def md_escape(text: str) -> str:
    """Text safe inside a Markdown table cell (pipes escaped, newlines flattened)."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "") -> str:
    """A GitHub-flavoured Markdown table; `align` gives one of l/r per column (default: l)."""
    spec = align or "l" * len(header)
    if len(spec) != len(header):
        raise ValueError(f"{len(spec)} alignments for {len(header)} columns")
    lines = [
        "| " + " | ".join(md_escape(h) for h in header) + " |",
        "|" + "|".join("---:" if a == "r" else "---" for a in spec) + "|",
    ]
    for row in rows:
        lines.append("| " + " | ".join(md_escape(fmt(c)) for c in row) + " |")
    return "\n".join(lines)


def demote_headings(markdown: str, levels: int = 1) -> str:
    """Push every ATX heading of a Markdown text down `levels` levels (to nest it in a section)."""
    out = []
    fence = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fence = not fence
        out.append("#" * levels + line if not fence and line.startswith("#") else line)
    return "\n".join(out)
