"""Mean F1 and its bounds (Hewlett et al. 2016 §4), on the paper's own examples and small sets."""

from __future__ import annotations

from fractions import Fraction

import pytest

from entbench.builders.wikireading.scoring import (
    GROUPS,
    MeanF1,
    PropertyInfo,
    ScoreBoard,
    answer_f1,
    answer_set,
    classifier_terms,
    f1_terms,
    normalize_answer,
    single_value_terms,
)

# Table 1's third example: "located next to body of water" -> three oceans.
OCEANS = ["Atlantic Ocean", "Arctic Ocean", "Pacific Ocean"]


def test_f1_is_the_overlap_of_the_predicted_and_gold_sets() -> None:
    assert answer_f1(OCEANS, OCEANS) == 1.0
    assert answer_f1(["Pacific Ocean", "Arctic Ocean", "Atlantic Ocean"], OCEANS) == 1.0  # a set
    # One right value: precision 1, recall 1/3 -> F1 = 2/(1+3) = 0.5 (partial credit, §4).
    assert answer_f1(["Atlantic Ocean"], OCEANS) == 0.5
    # Two values, one right: P = 1/2, R = 1/3 -> 2PR/(P+R) = 0.4.
    assert answer_f1(["Atlantic Ocean", "Indian Ocean"], OCEANS) == pytest.approx(0.4)
    assert f1_terms(frozenset({"Atlantic Ocean", "Indian Ocean"}), frozenset(OCEANS)) == (2, 5)
    assert answer_f1([], OCEANS) == 0.0
    assert answer_f1(["Indian Ocean"], OCEANS) == 0.0
    assert answer_f1(["Turkey", "Turkey"], ["Turkey"]) == 1.0  # repeated predictions count once
    with pytest.raises(ValueError):
        f1_terms(frozenset({"x"}), frozenset())


def test_exact_match_keeps_case_and_normalises_only_whitespace() -> None:
    assert normalize_answer("  New \t York\u00a0City \n") == "New York City"
    assert answer_f1(["new york"], ["New York"]) == 0.0  # case matters, as an exact match
    assert answer_f1(["New  York "], ["New York"]) == 1.0
    assert answer_f1(["4 July 1776"], ["4 July  1776"]) == 1.0  # on the gold side too
    assert answer_set(["a", " a", "", "   "]) == frozenset({"a"})  # whitespace-only: no answer


def test_bounds_of_one_instance() -> None:
    gold = frozenset(OCEANS)
    assert single_value_terms(gold) == (2, 4)  # one value of three: 2/(1+3)
    assert single_value_terms(frozenset({"Turkey"})) == (2, 2)
    assert classifier_terms(gold, {"Arctic Ocean", "human"}) == (2, 4)
    assert classifier_terms(gold, {"human"}) == (0, 4)
    assert classifier_terms(gold, set()) == (0, 4)


def test_mean_f1_is_exact_whatever_the_order() -> None:
    thirds = [(2, 3)] * 3 + [(2, 6)] * 7 + [(0, 2)]
    forward, backward = MeanF1(), MeanF1()
    for terms in thirds:
        forward.add(terms)
    for terms in reversed(thirds):
        backward.add(terms)
    expected = (3 * Fraction(2, 3) + 7 * Fraction(2, 6)) / 11
    assert forward.total() == backward.total() == expected * 11
    assert forward.value() == backward.value() == float(expected)
    assert MeanF1().value() is None


def test_score_board_breaks_down_by_table_3_groups_and_property() -> None:
    properties = {
        "P31": PropertyInfo("instance of", "categorical", False),
        "P569": PropertyInfo("date of birth", "relational", True),
        "P206": PropertyInfo("located next to body of water", "relational", False),
    }
    board = ScoreBoard(properties, vocabulary={"human", "Atlantic Ocean"})
    board.add("P31", ["human"], ["human"])
    board.add("P31", ["human"], None)  # no prediction: 0
    board.add("P569", ["4 July 1776"], ["July 1776"])
    board.add("P206", OCEANS, ["Atlantic Ocean"])
    overall = board.overall()
    assert overall.f1.instances == 4
    assert overall.f1.value() == pytest.approx((1 + 0 + 0 + 0.5) / 4)
    assert overall.single_value.value() == pytest.approx((1 + 1 + 1 + 0.5) / 4)
    assert overall.classifier.value() == pytest.approx((1 + 1 + 0 + 0.5) / 4)  # no date in the vocabulary
    groups = board.groups()
    assert tuple(groups) == GROUPS == ("categorical", "relational", "date")
    assert groups["categorical"].f1.value() == 0.5
    assert groups["relational"].f1.instances == 2 and groups["relational"].f1.value() == 0.25
    assert groups["date"].f1.instances == 1 and groups["date"].f1.value() == 0.0  # dates are relational too
    assert board.group_properties() == {"categorical": 1, "relational": 2, "date": 1}
    assert board.by_property["P31"].to_json() == {
        "instances": 2,
        "mean_f1": 0.5,
        "single_value_bound": 1.0,
        "classifier_bound": 1.0,
    }
    with pytest.raises(KeyError):
        board.add("P17", ["Turkey"], None)  # a property the statistics do not know
