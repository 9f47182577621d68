"""The `kb` card: E_known / E_new and the coarse-type distribution (Hansel §3.1).

Coarse types (Hansel Table 2; `docs/stages.md`, coarse_types): PER = Type(e, Q215627), LOC = Type(e, Q618123),
ORG = Type(e, Q43229), EVENT = Type(e, Q1656682), else OTHER, one label per entity by precedence.
"""

from __future__ import annotations

from entbench.cards.build_view import BuildView
from entbench.cards.charts import fmt, md_table, percent
from entbench.cards.model import Block, Chart, Content, Section
from entbench.cards.registry import register_card
from entbench.cards.stage_docs import section_link

#: Hansel §3.1: "about 90%" of E_new entities have at least one TopSnak.
HANSEL_TOPSNAK_COVERAGE = 0.90


def coarse_order(view: BuildView, stage: str, present: set[str]) -> list[str]:
    """Coarse labels in precedence order (from the stage's `precedence`/`other` params), then the rest."""
    params = view.manifests[stage]["params"]
    order = [str(p).split("=", 1)[0] for p in params.get("precedence", [])]
    other = params.get("other")
    if isinstance(other, str):
        order.append(other)
    return [c for c in order if c in present] + sorted(present - set(order))


def kb_section(view: BuildView) -> Section | None:
    """Coarse types of E_known and E_new (table and grouped bar chart), TopSnaks coverage."""
    types_stage = view.find("coarse_types", columns=("qid", "coarse"))
    if types_stage is None:
        return None
    diff_stage = view.find("kb_entities", columns=("qid", "in_known", "in_new"))
    if diff_stage is not None:
        rows = view.query(
            "SELECT c.coarse, count(*) FILTER (WHERE e.in_known), count(*) FILTER (WHERE e.in_new) "
            "FROM coarse c JOIN ents e ON c.qid = e.qid GROUP BY c.coarse",
            {"coarse": (types_stage, "coarse_types"), "ents": (diff_stage, "kb_entities")},
        )
        counts = {str(c): (int(k), int(n)) for c, k, n in rows}
        series_names = ("E_known", "E_new")
    else:
        rows = view.query(
            "SELECT coarse, count(*) FROM coarse GROUP BY coarse", {"coarse": (types_stage, "coarse_types")}
        )
        counts = {str(c): (int(n), 0) for c, n in rows}
        series_names = ("entities", "")
    labels = coarse_order(view, types_stage, set(counts))
    known_total = sum(k for k, _ in counts.values())
    new_total = sum(n for _, n in counts.values())
    blocks: list[Block] = []
    if diff_stage is not None:
        diff = view.stats(diff_stage)
        blocks.append(
            f"E_known (items of the old dump passing the Wikimedia-internal filter and the site "
            f"constraint): **{fmt(int(diff.get('known_entities', known_total)))}**; "
            f"E_new (items of the new dump whose id is not in the old dump): "
            f"**{fmt(int(diff.get('new_entities', new_total)))}** "
            f"(`{section_link('internal_filter')}`, `{section_link('entity_diff')}`)."
        )
    table_rows = [
        (
            label,
            counts[label][0],
            percent(counts[label][0] / known_total) if known_total else "–",
            counts[label][1],
            percent(counts[label][1] / new_total) if new_total else "–",
        )
        for label in labels
    ]
    header = ["coarse type", series_names[0], "share", series_names[1] or "–", "share"]
    blocks.append(
        "Coarse types (Hansel Table 2): PER, LOC, ORG, EVENT by the P31/P279 closure to "
        "Q215627, Q618123, Q43229, Q1656682, else OTHER; one label per entity by precedence "
        f"(`{section_link('coarse_types')}`)."
    )
    blocks.append(md_table(header, table_rows, "lrrrr"))
    conflicts = view.stats(types_stage).get("conflicts")
    if conflicts is not None:
        blocks.append(f"Entities reaching more than one root (labelled by precedence): {fmt(conflicts)}.")
    series = tuple(
        (name, tuple(float(counts[label][i]) for label in labels))
        for i, name in enumerate(series_names)
        if name
    )
    blocks.append(
        Chart(
            "coarse_types.png",
            f"{view.target}: coarse-type distribution",
            tuple(labels),
            series,
            xlabel="coarse type",
            ylabel="entities",
        )
    )
    snaks_stage = view.find("top_snaks")
    if snaks_stage is not None:
        snaks = view.stats(snaks_stage)
        coverage = snaks.get("coverage_new")
        kept = f"TopSnaks (`{section_link('top_snaks')}`): {fmt(int(snaks.get('top_snaks', 0)))} snaks kept; "
        if coverage is None:  # no E_new entity: a share of nothing is no number
            blocks.append(
                kept + "E_new is empty, so its coverage is undefined: the new dump adds no item "
                "to the old one (are `wikidata_old` and `wikidata_new` two different dumps?)."
            )
        else:
            blocks.append(
                kept + f"E_new entities with at least one: {percent(float(coverage))} (Hansel §3.1 "
                f"reports about {percent(HANSEL_TOPSNAK_COVERAGE, 0)})."
            )
    return Section("Knowledge base and coarse types", tuple(blocks))


def filter_classes_section(view: BuildView) -> Section | None:
    """The preset's filter classes: in each dump, whether its item is there, how many P31/P279
    statements name it, the classes under it, and the entities it removed (Hansel appendix D)."""
    stage = view.find("removed", columns=("snapshot", "qid", "reason", "classes"))
    if stage is None:
        return None
    params = view.manifests[stage]["params"]
    classes = [str(c) for c in params.get("classes", [])]
    stats = view.stats(stage)
    if not classes or f"old_class_{classes[0]}_item" not in stats:
        return None
    labels = view.labels(classes, ("en", "zh"))
    rows = []
    for qid in classes:
        cells: list[object] = [qid, labels.get(qid, "–")]
        for counter in ("item", "statements", "subclasses", "dropped"):
            for snapshot in ("old", "new"):
                key = (
                    f"{snapshot}_dropped_class_{qid}"
                    if counter == "dropped"
                    else f"{snapshot}_class_{qid}_{counter}"
                )
                value = int(stats.get(key, 0))
                cells.append(("yes" if value else "no") if counter == "item" else value)
        rows.append(tuple(cells))
    occurring = sum(
        1 for qid in classes if any(stats.get(f"{s}_class_{qid}_statements", 0) for s in ("old", "new"))
    )
    header = ["class", "label", "item old", "item new", "P31/P279 old", "P31/P279 new"]
    header += ["subclasses old", "subclasses new", "removed old", "removed new"]
    return Section(
        "Wikimedia-internal filter classes",
        (
            f"Preset `{params.get('preset', '–')}`: {len(classes)} filter classes "
            f"({'with' if params.get('transitive') else 'without'} their P279 subclasses); "
            f"{occurring} of them are the direct P31/P279 value of some statement of the dumps. "
            "Per class and dump: whether the dump has the class's item, the P31/P279 statements "
            "naming it, the classes under it in the filter's closure, and the entities it removed "
            f"(an entity reaching several classes counts under each; `{section_link('internal_filter')}`). "
            "The `table7` preset holds the classes of Hansel's Table 7 that real labels confirm.",
            md_table(header, rows, "ll" + "r" * 8),
        ),
    )


register_card(
    "kb",
    sections=(kb_section, filter_classes_section),
    summary=(
        "The knowledge base behind Hansel (Xu et al. 2022, §3.1): Wikidata items minus "
        "Wikimedia-internal ones, split into E_known (old dump) and E_new (added since), with "
        "coarse types and TopSnaks fine types."
    ),
    content=Content(
        wikidata="items of the two Wikidata dumps with their ids, labels, descriptions, coarse types "
        "and most frequent (property, value) statements"
    ),
)
