"""The pure card helpers: histogram bins, Markdown tables, heading demotion, size buckets; a chart
drawn once per process."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from entbench.cards import plots, writer
from entbench.cards.charts import (
    demote_headings,
    fmt,
    int_bins,
    integer_histogram,
    md_table,
    size_category,
    top_items,
)
from entbench.cards.model import Chart
from entbench.cards.plots import category_labels, figure, line_tick_step
from entbench.cards.writer import single_bar_sentence


def test_small_ranges_get_one_bar_per_value_with_gaps_filled() -> None:
    labels, values = integer_histogram({1: 5, 3: 2})
    assert labels == ("1", "2", "3")
    assert values == (5.0, 0.0, 2.0)


def test_long_tails_go_to_an_open_last_bin_and_nothing_is_lost() -> None:
    # 1,000 short values and one very long one: the tail must not stretch the bins.
    counts = dict.fromkeys(range(1, 101), 10)
    counts[5000] = 1
    bins = int_bins(counts, max_bins=20)
    labels, values = bins.labels(), bins.apply(counts)
    assert len(labels) <= 20 and labels[-1] == f"≥{bins.open_from:,}"
    assert sum(values) == sum(counts.values())
    assert values[-1] == 1  # the 5000 alone is in the open bin
    assert bins.width == 10 and labels[:2] == ("0–9", "10–19")  # round edges


def test_bin_edges_are_round_numbers_with_separators() -> None:
    counts = {56: 1, 493: 40, 1_442: 3, 110_562: 1, **dict.fromkeys(range(2_000, 40_000, 700), 2)}
    bins = int_bins(counts, max_bins=30)
    assert bins.width in (1_000, 2_000, 5_000) and bins.low % bins.width == 0
    assert bins.labels()[1] == f"{bins.width:,}–{2 * bins.width - 1:,}"
    assert sum(bins.apply(counts)) == sum(counts.values())


def test_same_bins_apply_to_every_series() -> None:
    total = dict.fromkeys(range(0, 200), 3)
    bins = int_bins(total, max_bins=10)
    part = bins.apply({0: 1, 199: 1})
    assert len(part) == len(bins.labels()) and part[0] == 1 and part[-1] == 1


def test_markdown_tables_escape_cells_and_format_numbers() -> None:
    table = md_table(["mention", "count"], [("a|b", 12345), ("x\ny", 0.5)], "lr")
    assert table.splitlines() == [
        "| mention | count |",
        "|---|---:|",
        "| a\\|b | 12,345 |",
        "| x y | 0.5 |",
    ]
    assert fmt(True) == "true" and fmt([1, "a"]) == '[1, "a"]'


def test_headings_are_demoted_outside_code_fences() -> None:
    text = "## WikiReading\n```\n# not a heading\n```\n### Sub"
    assert demote_headings(text) == "### WikiReading\n```\n# not a heading\n```\n#### Sub"


def test_size_categories_and_top_items() -> None:
    assert [size_category(n) for n in (0, 999, 1000, 10**6, 10**9)] == [
        "n<1K",
        "n<1K",
        "1K<n<10K",
        "1M<n<10M",
        "n>1B",
    ]
    assert top_items([("b", 2), ("a", 2), ("c", 5)], 2) == [("c", 5), ("a", 2)]


def test_charts_reject_mismatched_series() -> None:
    with pytest.raises(ValueError, match="values for"):
        Chart("x.png", "x", ("a", "b"), (("s", (1.0,)),))
    with pytest.raises(ValueError, match=r"\.png"):
        Chart("../x.svg", "x", (), ())
    assert Chart("x.png", "x", ("a",), (("s", (0.0,)),)).empty


def test_a_chart_of_one_bar_is_said_in_words() -> None:
    chart = Chart(
        "n.png", "candidates per mention", ("1", "2", "3"), (("", (0.0, 8.0, 0.0)),), ylabel="mentions"
    )
    assert chart.bars == 1
    assert single_bar_sentence(chart) == (
        "*“candidates per mention” has a single bar, so it is said here instead of drawn: "
        "2: 8 mentions; every other value is 0.*"
    )
    histogram = Chart(
        "h.png", "sizes", ("1", "2"), (("", (0.0, 8.0)),), xlabel="candidates", ylabel="records", style="hist"
    )
    assert single_bar_sentence(histogram) == (
        "*“sizes” has a single bar, so it is said here instead of drawn: all 8 records: candidates = 2.*"
    )


def test_count_axes_tick_integers_only_and_shares_may_not() -> None:
    # Three small counts: matplotlib's default locator would tick 0, 0.5, 1, … 3.
    counts = figure(Chart("c.png", "c", ("a", "b", "c"), (("", (1.0, 3.0, 2.0)),), ylabel="rows"))
    ticks = counts.axes[0].get_yticks()
    assert len(ticks) >= 3 and all(t == int(t) for t in ticks)
    shares = figure(Chart("s.png", "s", ("a", "b"), (("", (0.5, 1.5)),), counts=False))
    assert any(t != int(t) for t in shares.axes[0].get_yticks())
    horizontal = figure(Chart("h.png", "h", ("a", "b"), (("", (1.0, 2.0)),), style="barh"))
    assert all(t == int(t) for t in horizontal.axes[0].get_xticks())


def test_long_category_labels_wrap_before_they_turn() -> None:
    labels, turned = category_labels(["never found", "0.1–0.2"], slot_px=50)
    assert (labels, turned) == (["never\nfound", "0.1–0.2"], False)
    labels, turned = category_labels(["enteval_conll_yago", "kore"], slot_px=50)
    assert (labels, turned) == (["enteval_conll_yago", "kore"], True)


def test_a_line_over_ranks_ticks_round_ranks_and_never_goes_log() -> None:
    assert [line_tick_step(n) for n in (1, 10, 11, 25, 609, 884, 3000)] == [1, 1, 2, 5, 100, 100, 500]
    curve = tuple(min(1.0, 0.001 * 2**k) for k in range(609))  # spans 1000x: bars would go log
    fig = figure(
        Chart(
            "c.png",
            "coverage",
            tuple(str(k) for k in range(1, 610)),
            (("", curve),),
            style="line",
            counts=False,
        )
    )
    ax = fig.axes[0]
    assert ax.get_yscale() == "linear" and len(ax.get_lines()) == 1 and not ax.patches
    assert list(ax.get_lines()[0].get_ydata()) == list(curve)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", *(str(k) for k in range(100, 610, 100))]


def test_a_chart_drawn_again_in_the_process_is_written_from_its_first_drawing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart = Chart("again.png", f"drawn once {tmp_path.name}", ("a", "b", "c"), (("", (1.0, 3.0, 2.0)),))
    writer.draw(chart, tmp_path / "first" / chart.file)
    first = (tmp_path / "first" / chart.file).read_bytes()
    assert first[:8] == b"\x89PNG\r\n\x1a\n"

    def not_again(_chart: Chart, _path: Path) -> None:
        raise AssertionError("drawn again")

    monkeypatch.setattr(plots, "draw", not_again)
    writer.draw(chart, tmp_path / "second" / chart.file)  # another card directory, same chart
    assert (tmp_path / "second" / chart.file).read_bytes() == first
    other = dataclasses.replace(chart, title=chart.title + " (changed)")
    with pytest.raises(AssertionError, match="drawn again"):  # another chart is drawn
        writer.draw(other, tmp_path / "third" / chart.file)
