"""Every card of the demo world (`fixtures/world/`, built once per session): its own section, plots
that show something (more than one bar; a chart of one bar is said in words), integer axes for
counts, the licence its content calls for with the reason, and links only to `docs/stages.md`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from entbench.cards.build_view import BuildView
from entbench.cards.model import Chart
from entbench.cards.plots import figure, log_scale
from entbench.cards.writer import card_sections
from entbench.golden import GOLDEN_TARGETS as WORLD_TARGETS
from tests.cards.card_support import assert_real_png
from tests.cards.test_stage_docs import headings

#: The section each target's card has besides the generic ones.
OWN_SECTION = {
    "wikidata": "Wikidata entities",
    "wikipedia": "Wikipedia pages and links",
    "title-qid": "Title → QID",
    "alias-table": "Alias table",
    "alias-table-kb": "Alias table",
    "kb": "Knowledge base and coarse types",
    "kb-series": "New entities per period",
    "wikireading": "WikiReading",
    "wikient": "WikiEnt",
    "enteval-tasks": "EntEval tasks",
    "hansel-train": "Hansel mentions",
    "hansel-fewshot": "Few-shot candidates",
    "hansel-zeroshot": "Zero-shot pool",
    "hansel-kb": "Entity KB",
}
CC_BY_SA, CC0, OTHER = "cc-by-sa-4.0", "cc0-1.0", "other"
#: What each target's tables hold decides its licence: Wikipedia text -> CC BY-SA, only Wikidata
#: content -> CC0, a corpus or task files of their own -> other as well.
LICENCES = {
    "wikidata": [CC0],
    "kb": [CC0],
    "kb-series": [CC0],
    "hansel-zeroshot": [CC0],  # reads zhwiki (its audit), holds only Wikidata content
    "wikipedia": [CC_BY_SA],
    "title-qid": [CC_BY_SA],
    "alias-table": [CC_BY_SA],
    "alias-table-kb": [CC_BY_SA],
    "wikireading": [CC_BY_SA],
    "wikient": [CC_BY_SA],
    "hansel-train": [CC_BY_SA],
    "hansel-fewshot": [CC_BY_SA, OTHER],
    "hansel-kb": [CC_BY_SA],  # first paragraphs of zhwiki pages
    "enteval-tasks": [CC_BY_SA, OTHER],
}


def card(out: Path, target: str) -> tuple[str, dict[str, object]]:
    directory = out / "cards" / target
    doc = json.loads((directory / "card.json").read_text(encoding="utf-8"))
    return (directory / "README.md").read_text(encoding="utf-8"), doc


def charts(out: Path, target: str) -> list[Chart]:
    view = BuildView(out, target)
    try:
        return [c for section in card_sections(view) for c in section.charts()]
    finally:
        view.close()


def test_every_target_has_a_card_with_its_own_section() -> None:
    assert set(OWN_SECTION) == set(WORLD_TARGETS) == set(LICENCES)


@pytest.mark.parametrize("target", WORLD_TARGETS)
def test_card_has_its_section_and_plots_that_show_something(world_out: Path, target: str) -> None:
    readme, doc = card(world_out, target)
    assert f"\n## {OWN_SECTION[target]}\n" in readme
    assert doc["plots_failed"] == {} and doc["sections_failed"] == {}
    written = set(doc["plots_written"])  # type: ignore[arg-type]
    assert written, f"{target}: no plot drawn"
    embedded = set(re.findall(r"!\[(?:[^\]\\]|\\.)*\]\(([^)]+\.png)\)", readme))
    assert embedded == written
    for name in written:
        assert_real_png(world_out / "cards" / target / name)
    drawn = {c.file: c for c in charts(world_out, target) if c.file in written}
    assert set(drawn) == written
    for chart in drawn.values():
        assert chart.bars >= 2, f"{target}/{chart.file}: a plot of {chart.bars} bar(s)"
        assert len(chart.labels) >= 2 or len(chart.series) >= 2
    for name in doc["plots_single_bar"]:  # type: ignore[attr-defined]
        assert f"“{target}: " in readme and "has a single bar, so it is said here" in readme, name
        assert not (world_out / "cards" / target / name).exists()


@pytest.mark.parametrize("target", WORLD_TARGETS)
def test_count_axes_tick_integers_only(world_out: Path, target: str) -> None:
    _, doc = card(world_out, target)
    for chart in charts(world_out, target):
        if chart.file not in doc["plots_written"] or not chart.counts:  # type: ignore[operator]
            continue
        ax = figure(chart).axes[0]
        axis = ax.xaxis if chart.style == "barh" else ax.yaxis
        low, high = sorted(axis.get_view_interval())
        shown = [t for t in axis.get_majorticklocs() if low <= t <= high]
        assert len(shown) >= 2, (target, chart.file)
        assert all(float(t).is_integer() for t in shown), (target, chart.file, shown, log_scale(chart))


@pytest.mark.parametrize("target", WORLD_TARGETS)
def test_licence_follows_the_content_and_says_why(world_out: Path, target: str) -> None:
    readme, _ = card(world_out, target)
    front = readme.split("\n---\n", 1)[0]
    licences = LICENCES[target]
    if len(licences) == 1:
        assert f"\nlicense: {licences[0]}\n" in front
    else:
        assert "\nlicense:\n" + "".join(f"- {lic}\n" for lic in licences) in front + "\n"
    section = readme.split("\n## Licence\n", 1)[1].split("\n## ", 1)[0]
    if CC_BY_SA in licences:
        assert (
            "CC BY-SA 4.0](https://creativecommons.org/licenses/by-sa/4.0/)**, because these tables hold "
            in section
        )
        assert "**Attribution** (required)" in section and ".wikipedia.org" in section
    else:
        assert (
            "CC0 1.0](https://creativecommons.org/publicdomain/zero/1.0/)**, because these tables hold only "
            in section
        )
        assert "CC BY-SA" not in section
    assert (OTHER in licences) == ("keeps the terms of its source" in section)
    assert f"Front matter: `license: {', '.join(licences)}`" in section


@pytest.mark.parametrize("target", WORLD_TARGETS)
def test_cards_cite_the_stage_reference_and_no_design_spec(world_out: Path, target: str) -> None:
    readme, _ = card(world_out, target)
    assert "spec §" not in readme
    anchors = re.findall(r"docs/stages\.md#([\w-]+)", readme)
    assert anchors, target
    sections = headings()
    assert sorted({a for a in anchors if a not in sections}) == []


def test_wikipedia_card_says_which_templates_the_text_lost(world_out: Path) -> None:
    # Issue 32: the share of removed templates by name, for the removed ones that stood between words.
    text, _ = card(world_out, "wikipedia")
    assert "stood between words of a sentence" in text
    table = text.split("most frequent of them:", 1)[1].split("\n\n", 2)[1]
    rows = [line.split("|")[1:4] for line in table.splitlines()[2:]]
    assert rows and all(
        name.strip().startswith("`") and share.strip().endswith("%") for name, _, share in rows
    )
    counts = [int(n.replace(",", "")) for _, n, _ in rows]
    assert counts == sorted(counts, reverse=True)
