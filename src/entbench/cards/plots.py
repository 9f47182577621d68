"""Draw `Chart`s to PNG with matplotlib's Agg backend (headless, no display, no pyplot state).

Each chart gets its own `Figure` and Agg canvas, so drawing is independent of any pyplot
configuration of the calling process. PNGs are written without the `Software` text chunk and at a
fixed size and dpi, so the same chart gives the same bytes on the same matplotlib version.

Readability rules: counts get integer ticks with thousands separators (never a 0.5 tick); the
title is centred on the figure and wrapped, so long horizontal-bar labels cannot push it out;
category labels are wrapped at spaces, and turned 45° only when a wrapped label is still wider
than its slot; values printed above bars get room inside the frame.
"""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from entbench.cards.model import Chart

#: Width and dpi of every plot: 800 x 450 pixels (horizontal bar charts grow with their labels).
WIDTH_IN, HEIGHT_IN, DPI = 8.0, 4.5, 100
MAX_LABEL_CHARS = 40
ANNOTATE_MAX_BARS = 16
#: Bars spanning this ratio or more (largest / smallest nonzero) are drawn on a log axis.
LOG_RATIO = 1000.0
#: Tick labels are 8 pt (11 px at 100 dpi): a DejaVu Sans digit is 0.64 em wide, about 7 px.
CHAR_PX = 6.8
TITLE_CHARS = 80
AXES_LEFT, AXES_RIGHT = 0.1, 0.97


def _short(label: str) -> str:
    return label if len(label) <= MAX_LABEL_CHARS else label[: MAX_LABEL_CHARS - 1] + "…"


def log_scale(chart: Chart) -> bool:
    """Whether the bars span so many orders of magnitude that a linear axis would hide the small ones
    (a long-tailed histogram too: its tail is what a linear axis flattens)."""
    values = [v for _, series in chart.series for v in series]
    positive = [v for v in values if v > 0]
    return bool(positive) and min(values) >= 0 and max(positive) / min(positive) >= LOG_RATIO


def category_labels(labels: list[str], slot_px: float) -> tuple[list[str], bool]:
    """Labels of a vertical-bar axis as drawn, and whether they are turned 45°.

    A label wider than its slot is wrapped at spaces (at most two lines); if a word alone is still
    too wide, every label is turned instead (unwrapped), so labels never run into each other.
    """
    chars = max(1, int(slot_px / CHAR_PX))
    if all(len(label) <= chars for label in labels):
        return labels, False
    wrapped = [
        textwrap.wrap(label, chars, break_long_words=False, break_on_hyphens=False) or [label]
        for label in labels
    ]
    if all(len(lines) <= 2 and all(len(line) <= chars for line in lines) for lines in wrapped):
        return ["\n".join(lines) for lines in wrapped], False
    return labels, True


def line_tick_step(points: int, most: int = 10) -> int:
    """A round step (1, 2, 5 x 10^k) giving at most `most` ticks along a line of `points` points."""
    step = 1
    while points / step > most:
        for factor in (2, 5, 10):
            if points / (step * factor) <= most or factor == 10:
                step *= factor
                break
    return step


def _value_axis(axis: Axis, chart: Chart, log: bool) -> None:
    """Integer ticks for counts (no 0.5 ticks), thousands separators, plain numbers on log axes."""
    if log:
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
        return
    if chart.counts:
        axis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 2.5, 5, 10]))
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
    else:
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,g}"))


def figure(chart: Chart) -> Figure:
    """The matplotlib figure of `chart` (on its own Agg canvas), ready to save."""
    height = HEIGHT_IN
    if chart.style == "barh":
        height = max(HEIGHT_IN, 1.3 + 0.32 * len(chart.labels))
    fig = Figure(figsize=(WIDTH_IN, height), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    labels = [_short(label) for label in chart.labels]
    positions = list(range(len(labels)))
    n_series = len(chart.series)
    width = 1.0 if chart.style == "hist" else 0.8 / max(1, n_series)
    colors = [f"C{i}" for i in range(n_series)]
    annotate = len(labels) * n_series <= ANNOTATE_MAX_BARS
    for i, (name, values) in enumerate(chart.series):
        offset = 0.0 if n_series == 1 else (i - (n_series - 1) / 2) * width
        at = [p + offset for p in positions]
        if chart.style == "line":
            ax.plot(positions, values, color=colors[i], label=name or None, linewidth=1.5)
            continue
        if chart.style == "barh":
            bars = ax.barh(at, values, height=width, color=colors[i], label=name or None)
        else:
            edge = "white" if chart.style == "hist" else None
            bars = ax.bar(at, values, width=width, color=colors[i], edgecolor=edge, label=name or None)
        if annotate:
            texts = [f"{v:,.0f}" if v == int(v) else f"{v:,.2f}" for v in values]
            ax.bar_label(bars, labels=texts, fontsize=8, padding=2)
    log = log_scale(chart) and chart.style != "line"
    longest = max((len(label) for label in labels), default=0)
    left, bottom = AXES_LEFT, 0.12
    if chart.style == "barh":
        ax.set_yticks(positions, labels, fontsize=8)
        ax.invert_yaxis()  # the first (largest) row on top
        ax.grid(axis="x", alpha=0.3)
        if log:
            ax.set_xscale("log")
        _value_axis(ax.xaxis, chart, log)
        if annotate:
            ax.margins(x=0.12)  # room for the value printed after the longest bar
        left = min(0.45, 0.04 + 0.0095 * longest)
        bottom, top = 0.8 / height, 1 - 0.6 / height
    else:
        slot_px = WIDTH_IN * DPI * (AXES_RIGHT - AXES_LEFT) / max(1, len(labels))
        step = max(1, len(labels) // 30)  # at most ~30 tick labels on a histogram
        ticks = positions[::step]
        if chart.style == "line":  # a curve over ranks: the first and every round step (1, 20, 40, …)
            step = line_tick_step(len(labels))
            ticks = sorted({0, *range(step - 1, len(labels), step)})
        shown, rotate = category_labels([labels[t] for t in ticks], slot_px * step)
        ax.set_xticks(
            ticks,
            shown,
            rotation=45 if rotate else 0,
            ha="right" if rotate else "center",
            fontsize=8,
        )
        ax.grid(axis="y", alpha=0.3)
        if log:
            ax.set_yscale("log")
        _value_axis(ax.yaxis, chart, log)
        if annotate:
            ax.margins(y=0.1)  # room for the value printed above the tallest bar
        if rotate:
            bottom = min(0.45, 0.1 + 0.012 * longest)
        elif any("\n" in label for label in shown):
            bottom = 0.16
        top = 0.88
    ax.set_xlabel(chart.xlabel)
    ax.set_ylabel(chart.ylabel)
    ax.set_axisbelow(True)
    title = textwrap.wrap(chart.title + (" (log scale)" if log else ""), TITLE_CHARS)
    fig.suptitle("\n".join(title), fontsize=12, y=1 - 0.15 / height)
    top -= 0.22 * (len(title) - 1) / height  # room for a second title line
    if n_series > 1 or (n_series == 1 and chart.series[0][0]):
        ax.legend(fontsize=8, loc="best")
    # Fixed margins rather than tight_layout: measuring every label costs a second full draw.
    fig.subplots_adjust(left=left, right=AXES_RIGHT, top=top, bottom=bottom)
    return fig


def draw(chart: Chart, path: Path) -> None:
    """Render `chart` to the PNG file `path`."""
    fig = figure(chart)
    with warnings.catch_warnings():
        # Glyphs missing from the default font (e.g. CJK labels) draw as boxes; say nothing.
        warnings.simplefilter("ignore", UserWarning)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
