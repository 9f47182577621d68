"""Property statistics of Hewlett et al. 2016 §2.4–2.5.

§2.4: "we compute the entropy of the answer distribution A for each property p, scaled to the
[0, 1] range by dividing by the entropy of a uniform distribution with the same number of values,
i.e., Ĥ(p) = H(A_p)/log|A_p|. Properties that represent essentially one-to-one mappings score near
1.0, while a property with just a single answer would score 0.0. ... We label properties with an
entropy less than 0.7 as categorical, and those with a higher entropy as relational. Categorical
properties cover 56.7% of the instances in the dataset, with the remaining 43.3% being
relational."

§2.5: "many (30.0%) of the answers in the test set never appear in the training set ... An answer
is present verbatim in the document for 45.6% of the instances."

A_p counts answer *values*: an instance whose answer set has three values adds one count to each.
The ratio does not depend on the logarithm's base.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

#: Hewlett et al. 2016 §2.4: below this scaled entropy a property is categorical.
CATEGORICAL_THRESHOLD = 0.7

Kind = Literal["categorical", "relational"]

#: Figures the paper reports for the full 2016 dataset, quoted in the dataset card for comparison.
PAPER_FIGURES = {
    "categorical_instance_share": 0.567,
    "relational_instance_share": 0.433,
    "verbatim_instance_share": 0.456,
    "test_answers_unseen_share": 0.300,
}


def entropy(counts: Iterable[int]) -> float:
    """Shannon entropy (natural log) of the distribution given by positive counts."""
    values = [c for c in counts if c > 0]
    total = sum(values)
    if total == 0:
        return 0.0
    return -sum(c / total * math.log(c / total) for c in values)


def scaled_entropy(counts: Iterable[int]) -> float:
    """H(A_p) / log|A_p| over the answer counts of one property; 0.0 for fewer than two answers."""
    values = [c for c in counts if c > 0]
    if len(values) < 2:
        return 0.0
    return entropy(values) / math.log(len(values))


def classify(scaled: float, threshold: float = CATEGORICAL_THRESHOLD) -> Kind:
    """Categorical if the scaled entropy is below `threshold`, else relational (§2.4)."""
    return "categorical" if scaled < threshold else "relational"


@dataclass(frozen=True)
class PropertyAggregate:
    """What the statistics stage gathers for one property before the pure computations."""

    property: str
    label: str
    instances_by_split: Mapping[str, int]
    answer_counts: Sequence[int]  # count of each distinct answer value over the entropy splits
    verbatim_instances: int  # instances with at least one answer occurring verbatim in the document
    test_answers: int  # answer values of test instances
    test_answers_unseen: int  # ... that are never an answer of this property in train


def property_row(agg: PropertyAggregate, threshold: float = CATEGORICAL_THRESHOLD) -> dict[str, Any]:
    """One row of the `property_stats` table."""
    splits = agg.instances_by_split
    train, valid, test = splits.get("train", 0), splits.get("valid", 0), splits.get("test", 0)
    instances = train + valid + test
    scaled = scaled_entropy(agg.answer_counts)
    return {
        "property": agg.property,
        "property_label": agg.label,
        "instances": instances,
        "train_instances": train,
        "valid_instances": valid,
        "test_instances": test,
        "distinct_answers": sum(1 for c in agg.answer_counts if c > 0),
        "scaled_entropy": scaled,
        "kind": classify(scaled, threshold),
        "verbatim_share": agg.verbatim_instances / instances if instances else 0.0,
        "test_answers": agg.test_answers,
        "test_answers_unseen": agg.test_answers_unseen,
        "test_unseen_share": agg.test_answers_unseen / agg.test_answers if agg.test_answers else None,
        "test_only": test > 0 and train == 0 and valid == 0,
    }


def overall_shares(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Instance-weighted shares over all properties: categorical vs relational (§2.4) and
    answers verbatim in the document (§2.5); 0.0 when there are no instances."""
    instances = categorical = verbatim = 0.0
    for row in rows:
        n = float(row["instances"])
        instances += n
        if row["kind"] == "categorical":
            categorical += n
        verbatim += float(row["verbatim_share"]) * n
    if not instances:
        return {
            "categorical_instance_share": 0.0,
            "relational_instance_share": 0.0,
            "verbatim_instance_share": 0.0,
        }
    return {
        "categorical_instance_share": categorical / instances,
        "relational_instance_share": (instances - categorical) / instances,
        "verbatim_instance_share": verbatim / instances,
    }
