"""Draw `Chart`s to PNG with matplotlib's Agg backend (headless, no display, no pyplot state).

Each chart gets its own `Figure` and Agg canvas, so drawing is independent of any pyplot
configuration of the calling process. PNGs are written without the `Software` text chunk and at a
fixed size and dpi, so the same chart gives the same bytes on the same matplotlib version.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from entbench.cards.model import Chart

#: Width and dpi of every plot: 800 x 450 pixels (horizontal bar charts grow with their labels).
WIDTH_IN, HEIGHT_IN, DPI = 8.0, 4.5, 100
MAX_LABEL_CHARS = 40
ANNOTATE_MAX_BARS = 16
#: Bars spanning this ratio or more (largest / smallest nonzero) are drawn on a log axis.
LOG_RATIO = 1000.0


def _short(label: str) -> str:
    return label if len(label) <= MAX_LABEL_CHARS else label[: MAX_LABEL_CHARS - 1] + "…"


def log_scale(chart: Chart) -> bool:
    """Whether the bars span so many orders of magnitude that a linear axis would hide the small ones."""
    if chart.style == "hist":
        return False
    values = [v for _, series in chart.series for v in series]
    positive = [v for v in values if v > 0]
    return bool(positive) and min(values) >= 0 and max(positive) / min(positive) >= LOG_RATIO


def draw(chart: Chart, path: Path) -> None:
    """Render `chart` to the PNG file `path`."""
    height = HEIGHT_IN
    if chart.style == "barh":
        height = max(HEIGHT_IN, 1.2 + 0.32 * len(chart.labels))
    fig = Figure(figsize=(WIDTH_IN, height), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    labels = [_short(label) for label in chart.labels]
    positions = list(range(len(labels)))
    n_series = len(chart.series)
    width = 1.0 if chart.style == "hist" else 0.8 / max(1, n_series)
    colors = [f"C{i}" for i in range(n_series)]
    for i, (name, values) in enumerate(chart.series):
        offset = 0.0 if n_series == 1 else (i - (n_series - 1) / 2) * width
        at = [p + offset for p in positions]
        if chart.style == "barh":
            bars = ax.barh(at, values, height=width, color=colors[i], label=name or None)
        else:
            edge = "white" if chart.style == "hist" else None
            bars = ax.bar(at, values, width=width, color=colors[i], edgecolor=edge, label=name or None)
        if len(labels) * n_series <= ANNOTATE_MAX_BARS:
            ax.bar_label(
                bars, labels=[f"{v:,.0f}" if v == int(v) else f"{v:,.2f}" for v in values], fontsize=8
            )
    rotate = False
    if chart.style == "barh":
        ax.set_yticks(positions, labels, fontsize=8)
        ax.invert_yaxis()  # the first (largest) row on top
        ax.set_xlabel(chart.xlabel)
        ax.set_ylabel(chart.ylabel)
        ax.grid(axis="x", alpha=0.3)
    else:
        rotate = max((len(label) for label in labels), default=0) * len(labels) > 60
        step = max(1, len(labels) // 30)  # at most ~30 tick labels on a histogram
        ax.set_xticks(
            positions[::step],
            labels[::step],
            rotation=45 if rotate else 0,
            ha="right" if rotate else "center",
            fontsize=8,
        )
        ax.set_xlabel(chart.xlabel)
        ax.set_ylabel(chart.ylabel)
        ax.grid(axis="y", alpha=0.3)
    if log_scale(chart):
        (ax.set_xscale if chart.style == "barh" else ax.set_yscale)("log")
    ax.set_axisbelow(True)
    ax.set_title(chart.title + (" (log scale)" if log_scale(chart) else ""))
    if n_series > 1 or (n_series == 1 and chart.series[0][0]):
        ax.legend(fontsize=8)
    # Fixed margins rather than tight_layout: measuring every label costs a second full draw.
    left = 0.1
    if chart.style == "barh":
        longest = max((len(label) for label in labels), default=0)
        left = min(0.45, 0.04 + 0.0095 * longest)
    bottom = 0.12
    if chart.style != "barh" and rotate:
        longest = max((len(label) for label in labels), default=0)
        bottom = min(0.45, 0.1 + 0.012 * longest)
    if chart.style == "barh":
        bottom, top = 0.8 / height, 1 - 0.5 / height
    else:
        top = 0.9
    fig.subplots_adjust(left=left, right=0.97, top=top, bottom=bottom)
    with warnings.catch_warnings():
        # Glyphs missing from the default font (e.g. CJK labels) draw as boxes; say nothing.
        warnings.simplefilter("ignore", UserWarning)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
