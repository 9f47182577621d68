"""Scaled answer entropy and the categorical/relational split (Hewlett et al. 2016 §2.4), by hand."""

from __future__ import annotations

import math

import pytest

from entbench.builders.wikireading.entropy import (
    PropertyAggregate,
    classify,
    entropy,
    overall_shares,
    property_row,
    scaled_entropy,
)


def test_entropy_by_hand() -> None:
    assert entropy([1, 1]) == pytest.approx(math.log(2))
    # p = (1/2, 1/4, 1/4): H = 1/2 ln 2 + 2 * 1/4 ln 4 = 1.5 ln 2 = 1.0397…
    assert entropy([2, 1, 1]) == pytest.approx(1.0397207708)
    assert entropy([]) == 0.0
    assert entropy([0, 5]) == 0.0


def test_scaled_entropy_by_hand() -> None:
    # 1.5 ln 2 / ln 3 = 0.946394…
    assert scaled_entropy([2, 1, 1]) == pytest.approx(0.9463946303)
    # (0.9, 0.1): H = 0.325083 nats; / ln 2 = 0.468996
    assert scaled_entropy([9, 1]) == pytest.approx(0.4689955936)
    assert scaled_entropy([7, 7, 7, 7]) == pytest.approx(1.0)  # uniform: one-to-one-like
    assert scaled_entropy([42]) == 0.0  # "a property with just a single answer would score 0.0"
    assert scaled_entropy([]) == 0.0
    # The log base cancels out.
    h2 = -sum(p * math.log2(p) for p in (0.5, 0.25, 0.25))
    assert scaled_entropy([2, 1, 1]) == pytest.approx(h2 / math.log2(3))


def test_threshold_point_seven() -> None:
    assert classify(0.6999) == "categorical"
    assert classify(0.7) == "relational"  # "less than 0.7" is categorical
    assert classify(scaled_entropy([9, 1])) == "categorical"
    assert classify(scaled_entropy([2, 1, 1])) == "relational"
    assert classify(0.5, threshold=0.4) == "relational"


def test_property_rows_and_instance_shares_by_hand() -> None:
    # sex or gender: 6 instances (5 male, 1 female) -> H = 0.450561 nats, / ln 2 = 0.650022.
    gender = PropertyAggregate(
        property="P21",
        label="sex or gender",
        instances_by_split={"train": 4, "valid": 1, "test": 1},
        answer_counts=[5, 1],
        verbatim_instances=3,
        test_answers=1,
        test_answers_unseen=0,
    )
    # date of birth: 4 instances, all distinct answers -> 1.0; one test answer never seen in train.
    birth = PropertyAggregate(
        property="P569",
        label="date of birth",
        instances_by_split={"train": 2, "test": 2},
        answer_counts=[1, 1, 1, 1],
        verbatim_instances=1,
        test_answers=2,
        test_answers_unseen=2,
    )
    rows = [property_row(gender), property_row(birth)]
    assert rows[0]["scaled_entropy"] == pytest.approx(0.6500224216)
    assert rows[0]["kind"] == "categorical"
    assert (rows[0]["instances"], rows[0]["distinct_answers"], rows[0]["verbatim_share"]) == (6, 2, 0.5)
    assert rows[0]["test_unseen_share"] == 0.0
    assert rows[1]["scaled_entropy"] == pytest.approx(1.0)
    assert rows[1]["kind"] == "relational"
    assert (rows[1]["valid_instances"], rows[1]["test_unseen_share"], rows[1]["verbatim_share"]) == (
        0,
        1.0,
        0.25,
    )
    shares = overall_shares(rows)
    assert shares["categorical_instance_share"] == pytest.approx(0.6)  # 6 of 10 instances
    assert shares["relational_instance_share"] == pytest.approx(0.4)
    assert shares["verbatim_instance_share"] == pytest.approx(0.4)  # (3 + 1) / 10


def test_test_only_flag() -> None:
    held = PropertyAggregate("P999", "x", {"test": 3}, [3], 0, 3, 3)
    row = property_row(held)
    assert row["test_only"] is True
    assert row["test_unseen_share"] == 1.0
    nothing = PropertyAggregate("P998", "y", {"train": 1}, [1], 0, 0, 0)
    assert property_row(nothing)["test_unseen_share"] is None
    assert overall_shares([])["categorical_instance_share"] == 0.0
