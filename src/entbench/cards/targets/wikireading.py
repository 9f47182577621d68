"""The `wikireading` card: top properties by instances, the property coverage curve, the answer-set
size histogram, and the statistics section `wikireading_stats` writes (`_DATASET_CARD.md`: the
paper's §2 statistics and Mean F1 bounds beside its figures; Hewlett et al. 2016 §2, §4).

An instance is one (item, property) of the truthy statements, its answer the set of rendered
values (`docs/stages.md`, wikireading_triples); the answer-set size is the number of values in that set.
"""

from __future__ import annotations

from entbench.builders.wikireading.corpus import COVERAGE_POINTS, PAPER_FIGURES, coverage_curve
from entbench.cards.build_view import BuildView
from entbench.cards.charts import bar_chart, demote_headings, int_bins, md_table, top_items
from entbench.cards.hub import WIKIREADING
from entbench.cards.model import Block, Chart, Content, Section
from entbench.cards.registry import register_card

SPLITS = ("train", "valid", "test")
TOP_PROPERTIES = 20
STATS_CARD_FILE = "_DATASET_CARD.md"  # written by the wikireading_stats stage


def wikireading_section(view: BuildView) -> Section | None:
    """Split documents, the stats stage's card section, top properties and answer-set sizes."""
    split_stage = view.find("train", columns=("property", "answers"))
    if split_stage is None:
        return None
    blocks: list[Block] = []
    stats_stage = view.find("property_stats", columns=("property", "property_label", "instances"))
    stats_card = view.extra_file(stats_stage, STATS_CARD_FILE) if stats_stage else None
    if stats_card is not None:
        text = stats_card.read_text(encoding="utf-8").strip()
        lines = text.splitlines()
        if lines and lines[0].startswith("## "):
            text = "\n".join(lines[1:]).strip()  # the section title is ours
        blocks.append(demote_headings(text, 1))
    else:
        split_stats = view.stats(split_stage)
        blocks.append(
            md_table(
                ["split", "instances", "documents"],
                [(s, view.rows(split_stage, s), int(split_stats.get(f"{s}_documents", 0))) for s in SPLITS],
                "lrr",
            )
        )
    if stats_stage is not None:
        rows = view.query(
            "SELECT property, property_label, instances FROM ps", {"ps": (stats_stage, "property_stats")}
        )
        top = top_items([(f"{p} {label}", float(n)) for p, label, n in rows], TOP_PROPERTIES)
        blocks.append(
            bar_chart(
                "top_properties.png",
                f"{view.target}: top {TOP_PROPERTIES} properties by instances (all splits)",
                top,
                xlabel="instances",
                horizontal=True,
            )
        )
        blocks.append(property_coverage(view.target, [int(n) for _, _, n in rows]))
    blocks.append(answer_set_sizes(view, split_stage))
    return Section("WikiReading", tuple(blocks))


def property_coverage(target: str, instances_per_property: list[int]) -> Chart:
    """Share of the instances covered by the k most frequent properties, k = 1 … all (§2.4)."""
    curve = coverage_curve(instances_per_property)
    paper = ", ".join(
        f"top {k} cover {100 * PAPER_FIGURES[f'top{k}_property_coverage']:.0f}%" for k in COVERAGE_POINTS
    )
    return Chart(
        "property_coverage.png",
        f"{target}: instances covered by the k most frequent properties (paper: {paper})",
        tuple(str(k) for k in range(1, len(curve) + 1)),
        (("", tuple(curve)),),
        xlabel="k most frequent properties",
        ylabel="share of all instances",
        style="line",
        counts=False,
    )


def answer_set_sizes(view: BuildView, stage: str) -> Chart:
    """Histogram of |answers| over all splits, one series per split."""
    union = " UNION ALL ".join(f"SELECT '{s}' AS split, len(answers) AS n FROM {s}" for s in SPLITS)
    rows = view.query(
        f"SELECT split, n, count(*) FROM ({union}) GROUP BY split, n",
        {s: (stage, s) for s in SPLITS},
    )
    total: dict[int, int] = {}
    by_split: dict[str, dict[int, int]] = {s: {} for s in SPLITS}
    for split, n, count in rows:
        total[int(n)] = total.get(int(n), 0) + int(count)
        by_split[str(split)][int(n)] = int(count)
    bins = int_bins(total, max_bins=30)
    return Chart(
        "answer_set_sizes.png",
        f"{view.target}: answer-set size (values per instance)",
        bins.labels(),
        tuple((split, bins.apply(by_split[split])) for split in SPLITS),
        xlabel="answers in the set",
        ylabel="instances",
    )


register_card(
    "wikireading",
    sections=(wikireading_section,),
    splits=SPLITS,
    summary=(
        "WikiReading (Hewlett et al. 2016): predict the value(s) of a Wikidata property of an item "
        "from the text of the item's Wikipedia article."
    ),
    content=Content(
        wikipedia="the documents, the plain text of each item's Wikipedia article",
        wikidata="the questions (property labels) and answers (statement values rendered with their labels)",
    ),
    hub=WIKIREADING,
)
