"""The dataset statistics of Hewlett et al. 2016 §2, beside the paper's figures.

§2.3 "Multiple instances can share the same document, with a mean of 5.31 instances per article
(median: 4, max: 879). ... The mean and median document lengths are 489.2 and 203 words."
§2.4 "The dataset contains 884 unique properties ... The top 20 properties cover 75% of the
dataset, with 99% coverage achieved after 180 properties."
§2.5 "the most frequent answer human accounts for almost 7% of the dataset, while 54.7% of the
answers in the dataset are unique. ... dates, which comprise 8.9% of the dataset (with 7.2% being
unique)."
§4 and Table 3: the Mean F1 upper bounds, 0.963 for a single-value answer and 0.831 for a
classifier over the 50,000 most frequent answers (`scoring`).

How entbench reads them, over all three splits: a word is a run of non-whitespace characters (as
`documents.truncate_words` counts them); an *answer* is one value of an answer set, so an instance
with three values counts three answers, as A_p does (`entropy`); the most frequent answer's share
and the date share are shares of all answers; "unique" answers are distinct answers occurring
exactly once, as a share of the distinct answers (of all answers, and of date answers: the values
of date properties, whose Wikidata datatype is `time`). Property coverage is the share of
instances of the k most frequent properties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from entbench.builders.wikireading.scoring import PAPER_CLASSIFIER_BOUND, PAPER_SINGLE_VALUE_BOUND

#: The paper's §2 figures (full 2016 dataset) under the names entbench records them by.
PAPER_FIGURES: Mapping[str, float] = {
    "instances_per_document_mean": 5.31,
    "instances_per_document_median": 4,
    "instances_per_document_max": 879,
    "document_words_mean": 489.2,
    "document_words_median": 203,
    "top_answer_share": 0.07,  # "human ... almost 7%"
    "unique_answer_share": 0.547,
    "date_answer_share": 0.089,
    "date_unique_answer_share": 0.072,
    "properties": 884,
    "top20_property_coverage": 0.75,
    "top180_property_coverage": 0.99,
    "single_value_bound": PAPER_SINGLE_VALUE_BOUND,
    "classifier_bound": PAPER_CLASSIFIER_BOUND,
}
PAPER_TOP_ANSWER = "human"
#: The property counts whose coverage the paper states.
COVERAGE_POINTS = (20, 180)


@dataclass(frozen=True)
class Summary:
    """Mean, median and maximum of a distribution of non-negative integers."""

    count: int
    mean: float
    median: float
    max: int

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON object."""
        return {"count": self.count, "mean": self.mean, "median": self.median, "max": self.max}


def summarize(histogram: Mapping[int, int]) -> Summary:
    """The summary of the values `histogram` counts (value -> how many times); the median of an
    even count is the mean of the two middle values. All zero for an empty histogram."""
    count = sum(histogram.values())
    if count == 0:
        return Summary(0, 0.0, 0.0, 0)
    total = sum(value * n for value, n in histogram.items())
    middle = ((count - 1) // 2, count // 2)  # 0-based ranks of the middle value(s)
    found: list[int] = []
    seen = 0
    for value in sorted(histogram):
        seen += histogram[value]
        while len(found) < 2 and middle[len(found)] < seen:
            found.append(value)
    return Summary(count, total / count, (found[0] + found[1]) / 2, max(histogram))


def coverage_curve(instances_per_property: Sequence[int]) -> list[float]:
    """Cumulative share of instances covered by the k most frequent properties, k = 1, 2, …"""
    counts = sorted((int(n) for n in instances_per_property), reverse=True)
    total = sum(counts)
    curve: list[float] = []
    running = 0
    for n in counts:
        running += n
        curve.append(running / total if total else 0.0)
    return curve


def coverage_at(curve: Sequence[float], k: int) -> float:
    """Share covered by the top `k` properties (everything when there are fewer)."""
    if not curve:
        return 0.0
    return curve[min(k, len(curve)) - 1]


def properties_for(curve: Sequence[float], share: float) -> int:
    """How many of the most frequent properties cover at least `share` of the instances."""
    for k, covered in enumerate(curve, start=1):
        if covered >= share - 1e-12:
            return k
    return len(curve)


@dataclass(frozen=True)
class AnswerFigures:
    """Answer counts over all splits (one count per value of each answer set)."""

    answers: int  # values over all instances
    distinct: int
    unique: int  # distinct answers occurring once
    top: tuple[tuple[str, int], ...]  # the most frequent answers with their counts
    date_answers: int  # values of date properties
    date_distinct: int
    date_unique: int

    def share(self, part: int, whole: int) -> float:
        """`part / whole`, 0 when there is nothing."""
        return part / whole if whole else 0.0


def section2_figures(
    documents: Mapping[str, Summary],
    answers: AnswerFigures,
    instances_per_property: Sequence[int],
    bounds: Mapping[str, float | None],
) -> dict[str, float | None]:
    """The build's figures under `PAPER_FIGURES`' names (plus the answer-set size summary), from the
    document summaries (`instances_per_document`, `document_words`, `answers_per_instance`)."""
    curve = coverage_curve(instances_per_property)
    per_doc, words, sizes = (
        documents["instances_per_document"],
        documents["document_words"],
        documents["answers_per_instance"],
    )
    return {
        "instances_per_document_mean": per_doc.mean,
        "instances_per_document_median": per_doc.median,
        "instances_per_document_max": per_doc.max,
        "document_words_mean": words.mean,
        "document_words_median": words.median,
        "answers_per_instance_mean": sizes.mean,
        "answers_per_instance_max": sizes.max,
        "top_answer_share": answers.share(answers.top[0][1], answers.answers) if answers.top else 0.0,
        "unique_answer_share": answers.share(answers.unique, answers.distinct),
        "date_answer_share": answers.share(answers.date_answers, answers.answers),
        "date_unique_answer_share": answers.share(answers.date_unique, answers.date_distinct),
        "properties": len(curve),
        "top20_property_coverage": coverage_at(curve, 20),
        "top180_property_coverage": coverage_at(curve, 180),
        "properties_for_75_percent": properties_for(curve, 0.75),
        "properties_for_99_percent": properties_for(curve, 0.99),
        "single_value_bound": bounds.get("single_value_bound"),
        "classifier_bound": bounds.get("classifier_bound"),
    }
