"""The `kb-series` card: new entities per period and coarse type over a series of Wikidata dumps.

Period `i` lies between dumps `i-1` and `i` (sources `wikidata_<i>`); its E_new and their coarse
types (Hansel §3.1, Table 2) come from `series_new`, its zero-shot pool from `series_zeroshot`.
"""

from __future__ import annotations

from collections import defaultdict

from entbench.cards.build_view import BuildView
from entbench.cards.charts import fmt, md_table
from entbench.cards.model import Block, Chart, Content, Section
from entbench.cards.registry import register_card
from entbench.cards.stage_docs import section_link
from entbench.cards.targets.kb import coarse_order

#: What each `new_means` makes an entity new in period i.
NEW_MEANS_TEXT = {
    "first-seen": "the entities dump *i* keeps whose id no earlier dump holds (each entity is new "
    "in the period it first appeared in, so the periods' sets are disjoint)",
    "not-in-previous-dump": "the entities dump *i* keeps whose id dump *i-1* does not hold (the `kb` "
    "target's E_new, pair by pair)",
}


def series_section(view: BuildView) -> Section | None:
    """Per period: the dumps it lies between, E_new per coarse type, the zero-shot pool; the union
    of the periods' E_new against the newest dump's entities the oldest lacks; the plot."""
    if "series_new" not in view.manifests:
        return None
    stats = view.stats("series_new")
    new_means = str(view.manifests["series_new"]["params"].get("new_means", "first-seen"))
    rows = view.query(
        "SELECT period, coarse, count(*) FROM n GROUP BY ALL", {"n": ("series_new", "new_entities")}
    )
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for period, coarse, n in rows:
        counts[int(period)][str(coarse)] = int(n)
    dumps = int(stats.get("dumps", 0))
    periods = list(range(1, dumps))
    labels = coarse_order(view, "series_new", {c for per in counts.values() for c in per})
    pools = view.stats("series_zeroshot")
    sources = view.sources()
    table_rows = []
    for i in periods:
        between = " → ".join(f"`{_source_label(sources, d)}`" for d in (i - 1, i))
        table_rows.append(
            (
                f"{i - 1}→{i}",
                between,
                int(stats.get(f"period_{i}_kept", 0)),
                int(stats.get(f"period_{i}_new_entities", 0)),
                *(counts[i].get(label, 0) for label in labels),
                int(pools.get(f"period_{i}_pool", 0)) if pools else "–",
            )
        )
    blocks: list[Block] = [
        f"Period *i* lies between dumps *i-1* and *i* (`wikidata_<i>`, oldest first). Its E_new "
        f"(Hansel §3.1) are {NEW_MEANS_TEXT.get(new_means, f'new by `{new_means}`')}, after the "
        f"Wikimedia-internal filter and site constraint of each dump "
        f"(`{section_link('series_filter')}`, `{section_link('series_new')}`). Coarse types: "
        "P31/P279 closed to the precedence roots in the period's dump, one label per entity.",
        md_table(
            ["period", "dumps", "kept in the newer", "E_new", *labels, "zero-shot pool"],
            table_rows,
            "ll" + "r" * (3 + len(labels)),
        ),
    ]
    union = int(stats.get("union_new_entities", 0))
    since_first = int(stats.get("last_dump_new_since_first", 0))
    union_only = int(stats.get("union_not_new_since_first", 0))
    last_only = int(stats.get("new_since_first_not_in_union", 0))
    verdict = (
        "the same set"
        if union == since_first and not union_only and not last_only
        else f"{fmt(union_only)} only in the union (deleted, redirected or filtered out since), "
        f"{fmt(last_only)} only among the newest dump's (kept only after the dump they appeared in)"
    )
    blocks.append(
        f"Over the series, **{fmt(union)}** entities are new in some period; the newest dump keeps "
        f"**{fmt(since_first)}** entities whose id the oldest dump lacks: {verdict}. "
        f"`first_dump` lists the {fmt(int(stats.get('first_dump_ids', 0)))} ids the dumps hold, "
        "each with the first dump holding it, the first whose filter kept it and the last holding it."
    )
    blocks.append(
        Chart(
            "new_entities.png",
            f"{view.target}: new entities per period and coarse type",
            tuple(f"{i - 1}→{i}" for i in periods),
            tuple((label, tuple(float(counts[i].get(label, 0)) for i in periods)) for label in labels),
            xlabel="period (dumps)",
            ylabel="new entities",
        )
    )
    return Section("New entities per period", tuple(blocks))


def _source_label(sources: dict[str, dict[str, object]], index: int) -> str:
    """A dump as the user gave it (its path as written), else its source name."""
    info = sources.get(f"wikidata_{index}", {})
    return str(info.get("label") or info.get("path") or f"wikidata_{index}")


register_card(
    "kb-series",
    sections=(series_section,),
    summary=(
        "New-entity test sets over time: Hansel's E_new (Xu et al. 2022, §3.1) for each consecutive "
        "pair of a series of Wikidata dumps, with coarse types and a zero-shot annotation pool per "
        "period, for measuring how entity linkers age."
    ),
    content=Content(
        wikidata="ids, labels, descriptions, aliases, sitelink titles and coarse types of the "
        "entities of each dump of the series"
    ),
)
