"""The WikiReading section of the dataset card, as `wikireading_stats` writes it (`_DATASET_CARD.md`).

Every figure of the build stands beside the paper's (Hewlett et al. 2016 §2, §4, Table 2):
split sizes, the categorical/relational shares, verbatim answers, unseen test answers, the §2
document, answer and property statistics (`corpus`), the Mean F1 bounds (`scoring`), the most
frequent answers and the most frequent properties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from entbench.builders.wikireading.corpus import PAPER_FIGURES, PAPER_TOP_ANSWER
from entbench.builders.wikireading.entropy import PAPER_FIGURES as PAPER_SHARES
from entbench.builders.wikireading.splits import SPLITS


@dataclass(frozen=True)
class CardInputs:
    """What the section is made of: the `property_stats` rows, the stage's counters and shares,
    the §2 figures (`corpus.section2_figures`) and the most frequent answers with their counts."""

    rows: Sequence[Mapping[str, Any]]
    stats: Mapping[str, int]
    shares: Mapping[str, float]
    figures: Mapping[str, float | None]
    top_answers: Sequence[tuple[str, int]]
    answers_total: int
    entropy_splits: Sequence[str]
    categorical_threshold: float
    card_properties: int
    bound_split: str
    classifier_vocab: int


def pct(x: float | None) -> str:
    """A share as a percentage with one decimal ("–" for none)."""
    return "–" if x is None else f"{100 * x:.1f}%"


def num(x: float | None, digits: int = 1) -> str:
    """A number with thousands separators: integers as such, others with `digits` decimals."""
    if x is None:
        return "–"
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.{digits}f}"


def render_card(inputs: CardInputs) -> str:
    """The WikiReading section of a dataset card, in Markdown."""
    stats, shares, rows = inputs.stats, inputs.shares, inputs.rows
    lines = [
        "## WikiReading",
        "",
        "Built by `entbench build wikireading` (Hewlett et al. 2016): one instance per "
        "(item, property) of the truthy statements, the item's article as the document, the "
        "property label as the question and the set of rendered values as the answer.",
        "",
        "| split | instances | documents |",
        "|---|---:|---:|",
    ]
    lines += [
        f"| {s} | {stats.get(f'{s}_instances', 0):,} | {stats.get(f'{s}_documents', 0):,} |" for s in SPLITS
    ]
    lines += [
        "",
        f"Properties: {len(rows):,} ({stats.get('categorical_properties', 0):,} categorical, "
        f"{stats.get('relational_properties', 0):,} relational; threshold Ĥ < {inputs.categorical_threshold} "
        f"over the {', '.join(inputs.entropy_splits)} answers; {stats.get('date_properties', 0):,} "
        "date properties, whose values are Wikidata times).",
        "",
        "| measure | this build | paper (2016) |",
        "|---|---:|---:|",
        f"| instances of categorical properties | {pct(shares['categorical_instance_share'])} | "
        f"{pct(PAPER_SHARES['categorical_instance_share'])} |",
        f"| instances of relational properties | {pct(shares['relational_instance_share'])} | "
        f"{pct(PAPER_SHARES['relational_instance_share'])} |",
        f"| instances with an answer verbatim in the document | {pct(shares['verbatim_instance_share'])} | "
        f"{pct(PAPER_SHARES['verbatim_instance_share'])} |",
        f"| test answers never seen in train | {pct(shares['test_answers_unseen_share'])} | "
        f"{pct(PAPER_SHARES['test_answers_unseen_share'])} |",
        f"| valid instances whose (question, whole answer set) repeats a train instance | "
        f"{pct(shares['mem_exact_valid_share'])} | – |",
        f"| test instances whose (question, whole answer set) repeats a train instance | "
        f"{pct(shares['mem_exact_test_share'])} | – |",
        "",
        *section2_table(inputs),
        "",
        *top_answers_table(inputs),
        "",
        f"Most frequent properties (top {inputs.card_properties}):",
        "",
        "| property | label | instances | Ĥ(p) | kind | date | verbatim | test unseen |",
        "|---|---|---:|---:|---|---|---:|---:|",
    ]
    top = sorted(rows, key=lambda r: (-int(r["instances"]), str(r["property"])))[: inputs.card_properties]
    for r in top:
        unseen = "–" if r["test_unseen_share"] is None else pct(float(r["test_unseen_share"]))
        lines.append(
            f"| {r['property']} | {r['property_label']} | {int(r['instances']):,} | "
            f"{float(r['scaled_entropy']):.3f} | {r['kind']} | {'yes' if r['date_property'] else 'no'} | "
            f"{pct(float(r['verbatim_share']))} | {unseen} |"
        )
    return "\n".join(lines) + "\n"


def section2_table(inputs: CardInputs) -> list[str]:
    """The §2 statistics and the Mean F1 bounds, each beside the paper's figure."""
    f, p = inputs.figures, PAPER_FIGURES
    top_answer = inputs.top_answers[0][0] if inputs.top_answers else "–"

    def bound(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    rows = [
        (
            "instances per document: mean",
            num(f["instances_per_document_mean"], 2),
            num(p["instances_per_document_mean"], 2),
        ),
        (
            "instances per document: median",
            num(f["instances_per_document_median"]),
            num(p["instances_per_document_median"]),
        ),
        (
            "instances per document: max",
            num(f["instances_per_document_max"]),
            num(p["instances_per_document_max"]),
        ),
        ("document length in words: mean", num(f["document_words_mean"]), num(p["document_words_mean"])),
        (
            "document length in words: median",
            num(f["document_words_median"]),
            num(p["document_words_median"]),
        ),
        (
            "answers per instance (answer-set size): mean / max",
            f"{num(f['answers_per_instance_mean'], 2)} / {num(f['answers_per_instance_max'])}",
            "–",
        ),
        (
            "most frequent answer, share of all answers",
            f"{top_answer}: {pct(f['top_answer_share'])}",
            f"{PAPER_TOP_ANSWER}: almost {pct(p['top_answer_share'])}",
        ),
        (
            "unique answers (occurring once), share of distinct answers",
            pct(f["unique_answer_share"]),
            pct(p["unique_answer_share"]),
        ),
        ("date answers, share of all answers", pct(f["date_answer_share"]), pct(p["date_answer_share"])),
        (
            "unique date answers, share of distinct date answers",
            pct(f["date_unique_answer_share"]),
            pct(p["date_unique_answer_share"]),
        ),
        ("properties", num(f["properties"]), num(p["properties"])),
        (
            "instances covered by the top 20 properties",
            pct(f["top20_property_coverage"]),
            pct(p["top20_property_coverage"]),
        ),
        (
            "instances covered by the top 180 properties",
            pct(f["top180_property_coverage"]),
            pct(p["top180_property_coverage"]),
        ),
        (
            "properties covering 75% / 99% of the instances",
            f"{num(f['properties_for_75_percent'])} / {num(f['properties_for_99_percent'])}",
            "20 / 180",
        ),
        (
            "Mean F1 bound of a single-value answer",
            bound(f["single_value_bound"]),
            bound(p["single_value_bound"]),
        ),
        (
            f"Mean F1 bound of a classifier over the {inputs.classifier_vocab:,} most frequent train answers",
            bound(f["classifier_bound"]),
            f"{bound(p['classifier_bound'])} (50,000)",
        ),
    ]
    return [
        "The paper's dataset statistics (§2; over all splits; an answer is one value of an answer set) "
        f"and the Mean F1 upper bounds (§4, Table 3; over {inputs.bound_split}):",
        "",
        "| statistic | this build | paper (2016) |",
        "|---|---:|---:|",
        *(f"| {label} | {build} | {paper} |" for label, build, paper in rows),
    ]


def top_answers_table(inputs: CardInputs) -> list[str]:
    """The most frequent answers with their share of all answers."""
    if not inputs.top_answers:
        return ["No answers: every split is empty."]
    lines = [
        f"Most frequent answers (top {len(inputs.top_answers)}; the paper: {PAPER_TOP_ANSWER}, almost 7%):",
        "",
        "| answer | answers | share |",
        "|---|---:|---:|",
    ]
    for answer, n in inputs.top_answers:
        shown = " ".join(answer.split()).replace("|", "\\|")
        lines.append(
            f"| {shown} | {n:,} | {pct(n / inputs.answers_total if inputs.answers_total else 0.0)} |"
        )
    return lines
