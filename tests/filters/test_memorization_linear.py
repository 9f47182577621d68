"""The per-key heuristics decide exactly as the per-item algorithm they replaced (issue 22 item 1).

`eptest_reference` and `strict_reference` below are that algorithm, kept tiny and written from the
definitions: for every test item they rebuild the key's full train weight vector over *all* train
label tuples and call `random.choices` itself (EPtest's Mem-Freq), or recompute the key's argmax
and sorted labels (strict mode), and list the evidence by walking every train label. The filter
must give the same decisions, reasons (kept items' too) and evidence on any input, draws included
(`random.seed` per heuristic, test order).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from entbench.filters.memorization import Decision, Item, Mode, audit
from entbench.filters.memorization_reasons import (
    DETAIL_LABELS,
    EXACT_LABEL_NOT_WITH_SPAN,
    EXACT_ONLY_TRAIN_LABEL,
    EXACT_PAIR_IN_TRAIN,
    EXACT_PAIR_WITH_OTHER_LABELS,
    FREQ_ARGMAX,
    FREQ_ARGMAX_DIFFERS,
    FREQ_ARGMAX_TIE_DRAW,
    FREQ_ARGMAX_TIE_DRAW_MISSED,
    FREQ_DRAW_MATCHED,
    FREQ_DRAW_MISSED,
    FREQ_FLAT,
    SPAN_UNSEEN,
    UNIFORM_DRAW_MATCHED,
    UNIFORM_DRAW_MISSED,
)

Labels = tuple[str, ...]
Outcome = tuple[bool, str, str]  # (solved, reason, detail)
UNSEEN: Outcome = (False, SPAN_UNSEEN, "no train item has this span")


def fmt(labels: Sequence[str]) -> str:
    return labels[0] if len(labels) == 1 else "[" + ",".join(labels) + "]"


def listed(pairs: list[str]) -> str:
    """The evidence as decisions show it: the first DETAIL_LABELS entries, then how many more."""
    more = len(pairs) - DETAIL_LABELS
    return ", ".join(pairs[:DETAIL_LABELS]) + (f", ... (+{more} more)" if more > 0 else "")


def eptest_reference(train: list[Item], test: list[Item], seed: int) -> dict[str, list[Outcome]]:
    def srt(labels: Labels) -> Labels:
        return tuple(sorted(labels))

    def ukey(spans: tuple[str, ...]) -> frozenset[str]:
        return frozenset(spans[0]) if len(spans) == 1 else frozenset(spans)

    def fkey(spans: tuple[str, ...]) -> object:
        return spans[0] if len(spans) == 1 else frozenset(spans)

    seen = {label for it in train for label in it.labels}
    test = [it for it in test for label in it.labels if label in seen]
    pairs = {frozenset([*it.spans, srt(it.labels)]) for it in train}
    spans = {fkey(it.spans) for it in train}
    exact: list[Outcome] = [
        (True, EXACT_PAIR_IN_TRAIN, "span text(s) and label occur together in train")
        if frozenset([*it.spans, srt(it.labels)]) in pairs
        else (False, EXACT_LABEL_NOT_WITH_SPAN, "span text(s) occur in train, never with this label")
        if fkey(it.spans) in spans
        else UNSEEN
        for it in test
    ]
    order: list[Labels] = list(dict.fromkeys(srt(it.labels) for it in train))
    rng = random.Random(seed)
    freq: list[Outcome] = []
    for it in test:
        weights = [0] * len(order)
        for t in train:
            if fkey(t.spans) == fkey(it.spans):
                weights[order.index(srt(t.labels))] += 1
        if not any(weights):
            freq.append(UNSEEN)
            continue
        shown = listed([f"{fmt(lbl)}:{w}" for lbl, w in zip(order, weights, strict=True) if w])
        values = set(weights)
        if not (len(values) > 2 or (len(values) == 2 and 0 not in values)):
            freq.append((False, FREQ_FLAT, f"no draw, train counts are uniform: {shown}"))
            continue
        drawn = order[rng.choices(range(len(order)), weights)[0]]
        hit = drawn == srt(it.labels)
        freq.append(
            (
                hit,
                FREQ_DRAW_MATCHED if hit else FREQ_DRAW_MISSED,
                f"drew {fmt(drawn)} from train counts {shown}",
            )
        )
    rng = random.Random(seed)
    uniform: list[Outcome] = []
    for it in test:
        options = list(dict.fromkeys(t.labels for t in train if ukey(t.spans) == ukey(it.spans)))
        if not options:
            uniform.append(UNSEEN)
            continue
        pick = rng.choices(options)[0]
        hit = sorted(pick) == sorted(it.labels)
        detail = f"drew {fmt(pick)} of {len(options)} train label set(s)"
        uniform.append((hit, UNIFORM_DRAW_MATCHED if hit else UNIFORM_DRAW_MISSED, detail))
    return {"mem_exact": exact, "mem_freq": freq, "mem_uniform": uniform}


def strict_reference(train: list[Item], test: list[Item], seed: int) -> dict[str, list[Outcome]]:
    seen = {label for it in train for label in it.labels}
    test = [it for it in test if all(label in seen for label in it.labels)]

    def counts(spans: tuple[str, ...]) -> Counter[Labels]:
        return Counter(tuple(sorted(t.labels)) for t in train if t.spans == spans)

    exact: list[Outcome] = []
    for it in test:
        c, label = counts(it.spans), tuple(sorted(it.labels))
        if not c:
            exact.append(UNSEEN)
        elif list(c) == [label]:
            exact.append((True, EXACT_ONLY_TRAIN_LABEL, f"only train label {fmt(label)} x{c[label]}"))
        else:
            reason = EXACT_PAIR_WITH_OTHER_LABELS if label in c else EXACT_LABEL_NOT_WITH_SPAN
            exact.append(
                (False, reason, "train labels " + listed([f"{fmt(lb)}:{c[lb]}" for lb in sorted(c)]))
            )
    rng = random.Random(seed)
    freq: list[Outcome] = []
    for it in test:
        c = counts(it.spans)
        if not c:
            freq.append(UNSEEN)
            continue
        top = max(c.values())  # once per item: inside the filter it made this quadratic in the labels
        tied = sorted(lbl for lbl, n in c.items() if n == top)
        guess = tied[0] if len(tied) == 1 else tied[int(rng.random() * len(tied))]
        detail = (
            f"most frequent in train: {fmt(guess)} ("
            + listed([f"{fmt(lb)}:{c[lb]}" for lb in sorted(c)])
            + ")"
        )
        hit = guess == tuple(sorted(it.labels))
        reasons = {
            (True, True): FREQ_ARGMAX,
            (True, False): FREQ_ARGMAX_TIE_DRAW,
            (False, True): FREQ_ARGMAX_DIFFERS,
            (False, False): FREQ_ARGMAX_TIE_DRAW_MISSED,
        }
        freq.append((hit, reasons[hit, len(tied) == 1], detail))
    rng = random.Random(seed)
    uniform: list[Outcome] = []
    for it in test:
        options = sorted(counts(it.spans))
        if not options:
            uniform.append(UNSEEN)
            continue
        pick = options[int(rng.random() * len(options))]
        hit = pick == tuple(sorted(it.labels))
        detail = f"drew {fmt(pick)} of {len(options)} train label set(s)"
        uniform.append((hit, UNIFORM_DRAW_MATCHED if hit else UNIFORM_DRAW_MISSED, detail))
    return {"mem_exact": exact, "mem_freq": freq, "mem_uniform": uniform}


def outcomes(decisions: Sequence[Decision]) -> list[Outcome]:
    return [(d.solved, d.reason, d.detail) for d in decisions]


# Few texts and labels, so that keys repeat, collide (EPtest's character-set keys: "ab"/"ba") and
# gather more than DETAIL_LABELS distinct labels.
TEXTS = st.sampled_from(["a", "b", "ab", "ba", "aab", "c"])
LABELS = st.lists(st.sampled_from("ABCDEFGHIJKLMN"), min_size=1, max_size=3).map(tuple)
ITEMS = st.builds(Item, st.lists(TEXTS, min_size=1, max_size=2).map(tuple), LABELS)


@settings(max_examples=300, deadline=None)
@given(
    train=st.lists(ITEMS, max_size=120),
    test=st.lists(ITEMS, max_size=60),
    mode=st.sampled_from(["eptest", "strict"]),
    seed=st.integers(0, 2**32),
)
def test_same_decisions_as_the_per_item_reference(
    train: list[Item], test: list[Item], mode: Mode, seed: int
) -> None:
    result = audit(train, test, mode=mode, seed=seed)
    reference = (eptest_reference if mode == "eptest" else strict_reference)(train, test, seed)
    for heuristic, expected in reference.items():
        assert outcomes(result.decisions[heuristic]) == expected, heuristic


def test_the_evidence_is_capped_for_keys_with_many_train_labels() -> None:
    """A key with thousands of train labels (a WikiReading question) lists DETAIL_LABELS of them."""
    train = [Item(("P31",), (f"Q{n}",)) for n in range(2000) for _ in range(1 + n % 3)]
    train += [Item(("P31",), ("Q5",))] * 5
    test = [Item(("P31",), ("Q5",))] * 50
    result = audit(train, test, mode="strict")
    decision = result.decisions["mem_freq"][0]
    assert decision.solved and decision.reason == FREQ_ARGMAX
    assert decision.detail.startswith("most frequent in train: Q5 (Q0:1, Q1:2, Q10:2, Q100:2, ")
    assert decision.detail.endswith(f", ... (+{2000 - DETAIL_LABELS} more))")
    assert strict_reference(train, test, 30)["mem_freq"] == outcomes(result.decisions["mem_freq"])


def test_eptest_evidence_is_capped_too() -> None:
    train = [Item(("P31",), (f"Q{n}",)) for n in range(100)] + [Item(("P31",), ("Q5",))] * 500
    test = [Item(("P31",), ("Q5",))] * 20
    result = audit(train, test, mode="eptest")
    decisions = result.decisions["mem_freq"]
    assert sum(d.solved for d in decisions) > 10
    assert all(d.detail.endswith(", ... (+90 more)") for d in decisions)
    assert eptest_reference(train, test, 30)["mem_freq"] == outcomes(decisions)
