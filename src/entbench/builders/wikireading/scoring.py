"""Mean F1, WikiReading's metric, with its breakdowns and upper bounds (Hewlett et al. 2016 §4).

§4: "An answer is correct when there is an exact string match between the predicted answer and
the gold answer. ... For each instance, we compute the F1-score (harmonic mean of precision and
recall) as a measure of the degree of overlap between the predicted answer set and the gold set
for a given instance. The resulting per-instance F1 scores are then averaged to produce a single
dataset-level score." Table 3 reports it overall, for categorical and relational properties (the
§2.4 split by scaled answer entropy) and for date properties ("properties containing dates"),
Table 5 per property, beside two upper bounds: "a method using a single value as answer is
bounded by a Mean F1 of 0.963", and "perfect classification across the 50,000 most frequent
answers would yield a Mean F1 of 0.831".

Answers are the rendered answer strings (`values`), compared exactly, case included, after one
normalisation of whitespace on both sides (`normalize_answer`): leading and trailing whitespace
is dropped and every inner run of it becomes one space, so "New  York " matches "New York" but
"new york" does not. A gold set is the set of its normalised values.

Means are exact: each instance's F1 is the fraction 2|P∩G| / (|P| + |G|), and fractions are
summed exactly, so the result does not depend on the order instances are read in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

#: The paper's Mean F1 upper bounds (§4, Table 3), for comparison.
PAPER_SINGLE_VALUE_BOUND = 0.963
PAPER_CLASSIFIER_BOUND = 0.831
#: The classifiers' answer vocabulary in the paper: the 50,000 most frequent answers.
PAPER_CLASSIFIER_VOCAB = 50_000

#: Table 3's property groups: the §2.4 partition by scaled entropy, and the date properties.
GROUPS = ("categorical", "relational", "date")

Terms = tuple[int, int]  # (numerator, denominator) of one instance's F1


def normalize_answer(text: str) -> str:
    """One answer string as compared: Unicode whitespace runs collapsed to one space, ends
    trimmed; case and every other character kept."""
    return " ".join(text.split())


def answer_set(values: Iterable[str]) -> frozenset[str]:
    """The set of normalised answers (an answer that is only whitespace is no answer)."""
    return frozenset(a for a in (normalize_answer(v) for v in values) if a)


def f1_terms(predicted: Collection[str], gold: Collection[str]) -> Terms:
    """F1 of a predicted answer set against a gold set, as (2|P∩G|, |P| + |G|); both are sets of
    normalised answers, the gold one non-empty. An empty prediction scores 0."""
    if not gold:
        raise ValueError("a gold answer set is never empty")
    overlap = sum(1 for a in predicted if a in gold)
    return 2 * overlap, len(predicted) + len(gold)


def answer_f1(predicted: Iterable[str], gold: Iterable[str]) -> float:
    """The F1 of one instance, from raw answer strings (normalised here)."""
    num, den = f1_terms(answer_set(predicted), answer_set(gold))
    return num / den


def single_value_terms(gold: Collection[str]) -> Terms:
    """The best F1 of one predicted value: a gold value, precision 1, recall 1/|G|: 2/(1+|G|)."""
    if not gold:
        raise ValueError("a gold answer set is never empty")
    return 2, 1 + len(gold)


def classifier_terms(gold: Collection[str], vocabulary: Collection[str]) -> Terms:
    """The best F1 of a classifier predicting one answer of `vocabulary`: 2/(1+|G|) when a gold
    value is in it, else 0."""
    if any(a in vocabulary for a in gold):
        return single_value_terms(gold)
    return 0, 1 + len(gold)


@dataclass
class MeanF1:
    """An exact running mean of per-instance F1 fractions."""

    terms: Counter[Terms] = field(default_factory=Counter)
    instances: int = 0

    def add(self, terms: Terms, n: int = 1) -> None:
        """Count `n` instances scoring `terms`."""
        self.terms[terms] += n
        self.instances += n

    def merge(self, other: MeanF1) -> None:
        """Add every instance of `other`."""
        self.terms.update(other.terms)
        self.instances += other.instances

    def total(self) -> Fraction:
        """The exact sum of the instances' F1."""
        return sum((Fraction(num, den) * n for (num, den), n in self.terms.items()), Fraction(0))

    def value(self) -> float | None:
        """The mean (None over no instance)."""
        return float(self.total() / self.instances) if self.instances else None


@dataclass(frozen=True)
class PropertyInfo:
    """What the breakdowns need of a property (from `property_stats`)."""

    label: str
    kind: str  # categorical | relational (§2.4)
    date: bool  # its values are Wikidata times (Table 3's date properties)

    def groups(self) -> tuple[str, ...]:
        """The Table 3 groups the property belongs to."""
        return (self.kind, "date") if self.date else (self.kind,)


@dataclass
class Scores:
    """Mean F1 and both bounds over a set of instances."""

    f1: MeanF1 = field(default_factory=MeanF1)
    single_value: MeanF1 = field(default_factory=MeanF1)
    classifier: MeanF1 = field(default_factory=MeanF1)

    def merge(self, other: Scores) -> None:
        """Add `other`'s instances."""
        self.f1.merge(other.f1)
        self.single_value.merge(other.single_value)
        self.classifier.merge(other.classifier)

    def to_json(self, *, with_f1: bool = True) -> dict[str, Any]:
        """`instances`, `mean_f1` (unless `with_f1` is False) and the two bounds."""
        doc: dict[str, Any] = {"instances": self.f1.instances}
        if with_f1:
            doc["mean_f1"] = self.f1.value()
        doc["single_value_bound"] = self.single_value.value()
        doc["classifier_bound"] = self.classifier.value()
        return doc


class ScoreBoard:
    """Per-property Mean F1 and bounds of one split, summed into Table 3's groups on demand."""

    def __init__(self, properties: Mapping[str, PropertyInfo], vocabulary: Collection[str]) -> None:
        self.properties = properties
        self.vocabulary = vocabulary
        self.by_property: dict[str, Scores] = {}

    def add(self, prop: str, gold_values: Iterable[str], predicted: Iterable[str] | None) -> None:
        """Score one instance of `prop` (`predicted` None: the key has no prediction, F1 0)."""
        if prop not in self.properties:
            raise KeyError(prop)
        gold = answer_set(gold_values)
        scores = self.by_property.setdefault(prop, Scores())
        scores.f1.add(f1_terms(answer_set(predicted or ()), gold))
        scores.single_value.add(single_value_terms(gold))
        scores.classifier.add(classifier_terms(gold, self.vocabulary))

    def overall(self) -> Scores:
        """Every instance."""
        total = Scores()
        for scores in self.by_property.values():
            total.merge(scores)
        return total

    def groups(self) -> dict[str, Scores]:
        """categorical, relational, date (Table 3's columns), each over its properties' instances."""
        result = {name: Scores() for name in GROUPS}
        for prop, scores in self.by_property.items():
            for name in self.properties[prop].groups():
                result[name].merge(scores)
        return result

    def group_properties(self) -> dict[str, int]:
        """How many properties of each group have an instance here."""
        counts = dict.fromkeys(GROUPS, 0)
        for prop in self.by_property:
            for name in self.properties[prop].groups():
                counts[name] += 1
        return counts
