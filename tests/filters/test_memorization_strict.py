"""`strict` mode: each heuristic as the paper's prose defines it (Ray Choudhury & Kalra 2023, §3)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from entbench.filters.memorization import (
    Decision,
    Item,
    KeyMemo,
    audit,
    build_index,
    mem_exact,
    mem_freq,
    mem_uniform,
    percent,
    select_test_items,
)
from entbench.filters.memorization_reasons import (
    EXACT_LABEL_NOT_WITH_SPAN,
    EXACT_ONLY_TRAIN_LABEL,
    EXACT_PAIR_WITH_OTHER_LABELS,
    FREQ_ARGMAX,
    FREQ_ARGMAX_DIFFERS,
    FREQ_ARGMAX_TIE_DRAW,
    FREQ_ARGMAX_TIE_DRAW_MISSED,
    SPAN_UNSEEN,
    UNIFORM_DRAW_MATCHED,
    UNIFORM_DRAW_MISSED,
)


def one(text: str, *labels: str) -> Item:
    return Item((text,), labels)


def two(a: str, b: str, *labels: str) -> Item:
    return Item((a, b), labels)


def removed(decisions: Sequence[Decision]) -> list[bool]:
    return [d.solved for d in decisions]


def test_exact_needs_exactly_one_train_label_equal_to_the_test_label() -> None:
    """ "a test data point is in the training data and has only one label" (§3)."""
    index = build_index(
        [one("Google", "ORG"), one("Google", "ORG"), one("back", "ADV"), one("back", "NOUN")], "strict"
    )
    test = [one("Google", "ORG"), one("Google", "PRODUCT"), one("back", "ADV"), one("unseen", "ORG")]
    decisions = mem_exact(index, test)
    assert removed(decisions) == [True, False, False, False]
    assert [(d.reason, d.detail) for d in decisions] == [
        (EXACT_ONLY_TRAIN_LABEL, "only train label ORG x2"),
        (EXACT_LABEL_NOT_WITH_SPAN, "train labels ORG:2"),
        (EXACT_PAIR_WITH_OTHER_LABELS, "train labels ADV:1, NOUN:1"),
        (SPAN_UNSEEN, "no train item has this span"),
    ]


def test_keys_are_ordered_span_tuples_and_label_sets_are_one_class() -> None:
    index = build_index([two("dog", "barks", "nsubj"), one("x", "B", "A")], "strict")
    test = [two("barks", "dog", "nsubj"), two("dog", "barks", "nsubj"), one("x", "A", "B"), one("x", "A")]
    # The swapped pair is a different key; {A, B} is one class in any order, and differs from {A}.
    assert removed(mem_exact(index, test)) == [False, True, True, False]


def test_freq_predicts_the_most_frequent_train_label() -> None:
    """ "classified correctly using the training label distribution" (§3): the argmax."""
    train = [*[one("that", "SCONJ")] * 5, *[one("that", "PRON")] * 3, one("the", "DET")]
    index = build_index(train, "strict")
    test = [one("that", "SCONJ"), one("that", "PRON"), one("the", "DET"), one("this", "DET")]
    decisions = mem_freq(index, test)
    # Unlike eptest (F3), a span with a single train label is solved too.
    assert removed(decisions) == [True, False, True, False]
    assert [d.reason for d in decisions] == [FREQ_ARGMAX, FREQ_ARGMAX_DIFFERS, FREQ_ARGMAX, SPAN_UNSEEN]
    assert decisions[1].detail == "most frequent in train: SCONJ (PRON:3, SCONJ:5)"


def test_freq_breaks_ties_with_a_seeded_draw_over_the_sorted_tied_labels() -> None:
    index = build_index([one("x", "B"), one("x", "A"), one("x", "C")], "strict")
    test = [one("x", "A")] * 30
    rng = random.Random(11)
    expected = [("A", "B", "C")[int(rng.random() * 3)] == "A" for _ in test]
    decisions = mem_freq(index, test, seed=11)
    assert removed(decisions) == expected
    assert any(expected) and not all(expected)
    assert {d.reason for d in decisions if d.solved} == {FREQ_ARGMAX_TIE_DRAW}
    assert {d.reason for d in decisions if not d.solved} == {FREQ_ARGMAX_TIE_DRAW_MISSED}


def test_uniform_draws_uniformly_over_the_spans_distinct_train_labels() -> None:
    """ "the class labels can be predicted by sampling from a uniform distribution" (§3)."""
    train = [*[one("back", "NOUN")] * 50, one("back", "ADV"), one("back", "VERB")]
    index = build_index(train, "strict")
    test = [one("back", "ADV")] * 3000 + [one("unseen", "ADV")]
    decisions = mem_uniform(index, test, seed=3)
    # One of three labels, whatever their train frequency: about a third; never an unseen span.
    share = sum(removed(decisions[:3000])) / 3000
    assert 0.30 < share < 0.37
    assert decisions[-1].reason == SPAN_UNSEEN
    assert {(d.solved, d.reason) for d in decisions[:3000]} == {
        (True, UNIFORM_DRAW_MATCHED),
        (False, UNIFORM_DRAW_MISSED),
    }
    rng = random.Random(3)
    assert removed(decisions[:3000]) == [
        sorted(["ADV", "NOUN", "VERB"])[int(rng.random() * 3)] == "ADV" for _ in range(3000)
    ]


def test_slices_with_one_memo_and_one_stream_decide_as_the_whole_test_split() -> None:
    """A sharded audit decides a frequent key's items a slice at a time (its memory then follows
    the slice): the heuristics called per slice, with one `KeyMemo` and one random stream, give
    the decisions of one call over every item, evidence included."""
    train = [*[one("x", "B")] * 3, *[one("x", "A")] * 3, one("x", "C"), one("y", "A"), one("z", "A", "B")]
    index = build_index(train, "strict")
    test = [one(text, label) for text, label in zip("xxyxzxwxx" * 40, "ABACABAAC" * 40, strict=True)]
    memo = KeyMemo()
    freq, uniform = random.Random(4), random.Random(4)
    sliced: dict[str, list[Decision]] = {"exact": [], "freq": [], "uniform": []}
    for start in range(0, len(test), 7):
        part = test[start : start + 7]
        sliced["exact"] += mem_exact(index, part, memo=memo)
        sliced["freq"] += mem_freq(index, part, rng=freq, memo=memo)
        sliced["uniform"] += mem_uniform(index, part, rng=uniform, memo=memo)
    assert sliced == {
        "exact": mem_exact(index, test),
        "freq": mem_freq(index, test, seed=4),
        "uniform": mem_uniform(index, test, seed=4),
    }
    assert set(memo.freq) == {("x",), ("y",), ("z",)}  # each key's argmax derived once, then reused
    tie_draws = {d.reason for d in sliced["freq"]} & {FREQ_ARGMAX_TIE_DRAW, FREQ_ARGMAX_TIE_DRAW_MISSED}
    assert len(tie_draws) == 2  # the tied key drew in every slice it has


def test_unseen_labels_drop_the_whole_item_once() -> None:
    test = [one("p", "A"), one("q", "Z"), one("r", "A", "B"), one("s", "A", "Z", "Y")]
    selection = select_test_items({"A", "B"}, test, "strict")
    assert selection.kept == [0, 2]
    assert selection.dropped == [(1, "Z"), (3, "Z"), (3, "Y")]


def test_report_rounds_half_up_to_two_decimals() -> None:
    assert percent(1, 8) == 12.5
    assert percent(1, 3) == 33.33
    assert percent(2, 3) == 66.67
    assert percent(1, 80_000) == 0.0  # 0.00125
    assert percent(1, 800) == 0.13  # 0.125 rounds up
    assert percent(0, 0) == 0.0
    result = audit([one("a", "X")], [one("a", "X"), one("b", "X"), one("c", "Q")], mode="strict")
    assert result.report() == {
        "n_test": 2,
        "mem_exact": 50.0,
        "mem_freq": 50.0,
        "mem_uniform": 50.0,
        "mode": "strict",
    }


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        build_index([], "loose")  # type: ignore[arg-type]
