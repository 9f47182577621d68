"""Each quirk of EPtest's filters (`Josh1108/EPtest:eptests/core/datafilter.py`) that `eptest` mode keeps.

Every test here fails if the quirk it names is "fixed"; the quirk codes (E1, U1, ...) are the ones
listed in `entbench.filters.memorization`. Where a quirk is about random draws, the seed is chosen
so that the quirky and the fixed behaviour draw differently, and the test asserts that first.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from entbench.filters.memorization import (
    Decision,
    Item,
    audit,
    build_index,
    mem_exact,
    mem_freq,
    mem_uniform,
    select_test_items,
)
from entbench.filters.memorization_reasons import (
    EXACT_LABEL_NOT_WITH_SPAN,
    EXACT_PAIR_IN_TRAIN,
    FREQ_DRAW_MATCHED,
    FREQ_FLAT,
    SPAN_UNSEEN,
    UNIFORM_DRAW_MATCHED,
)


def one(text: str, *labels: str) -> Item:
    return Item((text,), labels)


def two(a: str, b: str, *labels: str) -> Item:
    return Item((a, b), labels)


def removed(decisions: Sequence[Decision]) -> list[bool]:
    return [d.solved for d in decisions]


def seed_where(predicate: Callable[[random.Random], bool]) -> int:
    """The first seed whose generator satisfies `predicate` (deterministic)."""
    for seed in range(10_000):
        if predicate(random.Random(seed)):
            return seed
    raise AssertionError("no seed found")


# --- Mem-Exact ---------------------------------------------------------------------------------------
def test_e1_exact_removes_a_pair_seen_in_train_even_when_the_span_has_other_labels() -> None:
    train = [one("back", "ADV"), *[one("back", "NOUN")] * 5]
    index = build_index(train, "eptest")
    decisions = mem_exact(index, [one("back", "ADV"), one("back", "VERB")])
    # The prose ("has only one label") would keep both: "back" has two train labels.
    assert removed(decisions) == [True, False]
    assert [d.reason for d in decisions] == [EXACT_PAIR_IN_TRAIN, EXACT_LABEL_NOT_WITH_SPAN]


def test_e2_exact_key_ignores_span_order_and_collapses_equal_texts() -> None:
    index = build_index([two("dog", "barks", "nsubj"), two("the", "the", "det")], "eptest")
    swapped = two("barks", "dog", "nsubj")  # head and dependent exchanged
    collapsed = one("the", "det")  # frozenset({"the", "the", labels}) == frozenset({"the", labels})
    assert removed(mem_exact(index, [swapped, collapsed])) == [True, True]


# --- Mem-Uniform -------------------------------------------------------------------------------------
def test_u1_uniform_keys_one_span_by_its_set_of_characters() -> None:
    index = build_index([one("dog", "NOUN"), one("to", "PART")], "eptest")
    test = [one("god", "NOUN"), one("oot", "PART"), one("too", "PART"), one("cat", "NOUN")]
    # Anagrams and repeated letters share a key; "cat" shares no character set with train.
    assert removed(mem_uniform(index, test)) == [True, True, True, False]
    # Mem-Freq keys by the text itself (F1), so the same items are unknown there.
    assert [d.reason for d in mem_freq(index, test)] == [SPAN_UNSEEN] * 4


def test_u2_uniform_keys_two_spans_unordered_and_shares_keys_with_one_span_items() -> None:
    index = build_index([two("a", "b", "L"), one("xy", "M")], "eptest")
    test = [two("b", "a", "L"), two("x", "y", "M")]
    # ("b", "a") is the unordered pair {"a", "b"}; ("x", "y") collides with the characters of "xy".
    assert removed(mem_uniform(index, test)) == [True, True]


def test_u3_uniform_options_are_label_lists_deduplicated_in_order() -> None:
    train = [one("x", "A", "B"), one("x", "B", "A"), one("x", "C")]
    index = build_index(train, "eptest")
    # Three options [A,B], [B,A], [C]; a set-deduplicated version would have two: [A,B], [C].
    seed = seed_where(lambda r: 0.5 <= r.random() < 2 / 3)
    r = random.Random(seed).random()
    assert int(r * 3) == 1  # EPtest draws [B,A] ... which matches [A,B] once sorted
    assert int(r * 2) == 1  # ... where two options would have drawn [C]
    decisions = mem_uniform(index, [one("x", "A", "B")], seed=seed)
    assert removed(decisions) == [True]
    assert decisions[0].solved and decisions[0].reason == UNIFORM_DRAW_MATCHED


def test_u4_uniform_draws_even_for_a_key_with_a_single_option() -> None:
    index = build_index([one("a", "X"), one("b", "Y"), one("b", "Z")], "eptest")
    # The second item's outcome depends on whether the first consumed a random number.
    seed = seed_where(lambda r: int(r.random() * 2) == 1 and int(r.random() * 2) == 0)
    decisions = mem_uniform(index, [one("a", "X"), one("b", "Y")], seed=seed)
    # EPtest: the second draw is the second random number -> index 0 -> "Y" -> removed.
    # Skipping the single-option draw would use the first random number -> "Z" -> kept.
    assert removed(decisions) == [True, True]


# --- Mem-Freq ----------------------------------------------------------------------------------------
def test_f2_freq_draw_bisects_weights_in_first_seen_label_order() -> None:
    # Label ids: B (seen first, on "z") = 0, A = 1; "x" has weights [B: 1, A: 3].
    train = [one("z", "B"), *[one("x", "A")] * 3, one("x", "B")]
    index = build_index(train, "eptest")
    seed = seed_where(lambda r: r.random() < 0.25)
    # random() * 4 < 1 falls in B's bucket first; with A ordered first (e.g. sorted labels) it
    # would fall in A's bucket [0, 3).
    decisions = mem_freq(index, [one("x", "B")], seed=seed)
    assert removed(decisions) == [True]
    assert decisions[0].solved and decisions[0].reason == FREQ_DRAW_MATCHED


def test_f3_freq_never_draws_for_a_span_with_a_single_train_label() -> None:
    index = build_index([*[one("the", "DET")] * 9, one("run", "VERB")], "eptest")
    # weights [9, 0]: two distinct values, one of them 0 -> no draw, the item is kept, although
    # the train distribution predicts DET with certainty.
    (decision,) = mem_freq(index, [one("the", "DET")])
    assert not decision.solved
    assert (decision.reason, decision.detail) == (FREQ_FLAT, "no draw, train counts are uniform: DET:9")


def test_f3_freq_never_draws_when_the_seen_labels_are_equally_frequent() -> None:
    train = [one("x", "A"), one("x", "A"), one("x", "B"), one("x", "B"), one("y", "C")]
    index = build_index(train, "eptest")
    # weights over (A, B, C) = [2, 2, 0]: two distinct values, one of them 0 -> never removed.
    assert removed(mem_freq(index, [one("x", "A"), one("x", "B")] * 10)) == [False] * 20


def test_f3_freq_draws_in_a_binary_task_when_counts_differ() -> None:
    train = [*[two("a", "b", "1")] * 3, two("a", "b", "0"), two("c", "d", "0"), two("c", "d", "1")]
    index = build_index(train, "eptest")
    # {a,b}: [3, 1] has no zero -> drawn (3/4 "1"); {c,d}: [1, 1] -> one value -> never drawn.
    outcomes = removed(mem_freq(index, [two("b", "a", "1")] * 200 + [two("c", "d", "0")] * 50))
    assert 100 < sum(outcomes[:200]) < 200
    assert not any(outcomes[200:])


def test_f4_freq_consumes_random_numbers_only_when_it_draws() -> None:
    train = [one("solo", "A"), *[one("x", "A")] * 1, *[one("x", "B")] * 3]
    index = build_index(train, "eptest")
    # "x": weights [A: 1, B: 3]; A wins iff random() < 0.25.
    seed = seed_where(lambda r: r.random() < 0.25 <= r.random())
    decisions = mem_freq(index, [one("solo", "A"), one("x", "A")], seed=seed)
    # "solo" does not draw (F3), so "x" gets the first random number (< 0.25 -> A): removed.
    assert removed(decisions) == [False, True]


# --- seeding and the unseen-label drop ---------------------------------------------------------------
def test_s1_each_heuristic_starts_from_its_own_seed() -> None:
    train = [*[one("x", "A")] * 2, one("x", "B"), one("y", "A"), one("y", "B"), one("y", "C")]
    test = [one("x", "A"), one("y", "B"), one("x", "B"), one("y", "C")] * 5
    index = build_index(train, "eptest")
    result = audit(train, test, mode="eptest", seed=7)
    # The same decisions as each heuristic alone from `random.seed(7)`: no shared random state.
    assert result.decisions["mem_uniform"] == mem_uniform(index, test, seed=7)
    assert result.decisions["mem_freq"] == mem_freq(index, test, seed=7)


def test_c1_unseen_labels_are_dropped_per_label_and_multi_label_items_repeat() -> None:
    train_labels = {"A", "B"}
    test = [one("p", "A"), one("q", "Z"), one("r", "A", "B"), one("s", "A", "Z")]
    selection = select_test_items(train_labels, test, "eptest")
    # "r" has two known labels: appended twice; "s" is kept once *and* counted as dropped.
    assert selection.kept == [0, 2, 2, 3]
    assert selection.dropped == [(1, "Z"), (3, "Z")]
