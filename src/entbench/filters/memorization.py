"""Edge-probing memorisation heuristics: Mem-Exact, Mem-Freq, Mem-Uniform (spec §7).

Ray Choudhury & Kalra 2023, "Implications of Annotation Artifacts in Edge Probing Test Datasets", §3:

* **Mem-Exact**: "in what percentage of cases a test data point is in the training data and has
  only one label? [...] the EP classifier can successfully classify it by memorization."
* **Mem-Freq**: "the percentage of test data points that are present in the training data and can
  be classified correctly using the training label distribution."
* **Mem-Uniform**: "a baseline [...] where instead of the true label distribution the class labels
  can be predicted by sampling from a uniform distribution."

Table 2 reports, per dataset, the share of test items each heuristic solves; §4.2 removes those
items to build the "filtered" test sets. Two modes:

``eptest`` (the default here and of `entbench filter mem`, whose purpose is to reproduce the
paper) computes what the paper's code computes (`Josh1108/EPtest`, `eptests/core/datafilter.py`:
`TrainDataRemoval`, `TrainSample`, `RandomSample`), which is what produced Table 2. Its behaviour
differs from the prose; every difference is kept on purpose and pinned by a test
(`tests/filters/test_memorization_eptest.py`):

* E1 Mem-Exact removes a test item whenever its span text(s) occur in train *with its label*,
  whatever other labels the span also has in train (the prose says "only one label").
* E2 Mem-Exact's key is ``frozenset({span texts..., tuple(sorted(labels))})``: span order does not
  matter (a swapped dependent/head pair matches) and two equal span texts collapse into one.
* U1 Mem-Uniform keys a one-span item by ``frozenset(span_text)`` -- EPtest writes
  ``frozenset((data.span1.text))``, which is a set of *characters*: "dog" and "god" share a key,
  as do "to", "too" and "oot".
* U2 Mem-Uniform keys a two-span item by the unordered set of its two texts; one- and two-span
  keys live in one dict, so a one-span "ab" and a two-span ("a", "b") share a key.
* U3 Mem-Uniform's options are the distinct train label *lists* in first-seen order, deduplicated
  as lists (``["a", "b"]`` and ``["b", "a"]`` are two options) but compared sorted.
* U4 Mem-Uniform draws ``random.choices(options)`` (``options[floor(random() * n)]``) for every
  test item whose key is in train, also when there is a single option (always a match).
* F1 Mem-Freq keys a one-span item by its exact text (unlike U1), a two-span item by the
  unordered set of its texts.
* F2 Mem-Freq's weights are counts over *every* label tuple of train, indexed in first-seen
  order; the draw is ``random.choices(range(L), weights)`` (a bisection of the cumulative
  weights), so that order decides which label a given random number picks.
* F3 Mem-Freq draws only when the weight vector has more than two distinct values, or exactly two
  neither of which is 0 ("as long as distribution is not uniform"): a span seen in train with a
  single label, or with several labels equally often, is never removed by Mem-Freq.
* F4 Mem-Freq consumes a random number only for the items it draws for.
* S1 ``random.seed(30)`` runs before each heuristic (each filter object is built right before it
  is applied), so the three heuristics do not share random state; draws follow test order.
* C1 (EPtest's converters, `eptests/converters/iface.py: Converter.run`) test items with a label
  never seen in train are dropped before the heuristics; an item is appended once *per label* that
  train has, so a multi-label item can be kept twice, or kept and counted as dropped.

``strict`` implements the prose, and is the default of the leakage audits inside builds (Hansel,
WikiReading: `builders.edge_probing.stages.mem_audit`), whose labels are entities or answer sets: there F3
would leave Mem-Freq at almost 0% (a mention seen in train with one entity is never drawn for).
Keys are the ordered tuple of span texts, a multi-label set is one class (its sorted tuple), and

* Mem-Exact removes an item iff its key occurs in train with exactly one distinct label, which
  equals the test label;
* Mem-Freq predicts the most frequent train label of the key (ties: a seeded uniform draw among the
  tied labels, sorted) and removes the item iff the prediction equals the test label;
* Mem-Uniform draws uniformly among the key's distinct train labels (sorted) and removes the item
  iff the draw equals the test label;
* test items with any label unseen in train are dropped first, once.

Every decision, kept or solved, carries a reason code and its evidence: the codes are listed in
`entbench.filters.memorization_reasons`.

Seeds: each heuristic gets its own ``random.Random(seed)`` (default 30, EPtest's
``random.seed(30)``), consumed in test order and only when a draw is needed. ``random.Random`` with
an integer seed and ``random()`` give the same stream on every CPython version.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import dataclass, field
from itertools import accumulate
from math import floor
from typing import NamedTuple, Protocol

from entbench.filters import memorization_reasons as why
from entbench.filters.memorization_index import (
    MODES,
    EptestIndex,
    Item,
    LabelTuple,
    Mode,
    StrictIndex,
    TrainIndex,
    build_index,
    check_mode,
    checked,
    eptest_keys,
)
from entbench.filters.memorization_index import label_key as _sorted
from entbench.filters.memorization_reasons import Decision, fmt, shown
from entbench.gc_pause import gc_paused

HEURISTICS = ("mem_exact", "mem_freq", "mem_uniform")
#: EPtest's `FilterData.__init__` calls `random.seed(30)`.
DEFAULT_SEED = 30
Decisions = list[Decision]  # one per test item, in test order

__all__ = [  # the index's types are part of this module's interface
    "DEFAULT_SEED",
    "HEURISTICS",
    "MODES",
    "AuditResult",
    "Decision",
    "Decisions",
    "EptestIndex",
    "Item",
    "KeyMemo",
    "LabelTuple",
    "Mode",
    "RandomSource",
    "Selection",
    "StrictIndex",
    "TrainIndex",
    "audit",
    "audit_with_index",
    "build_index",
    "mem_exact",
    "mem_freq",
    "mem_uniform",
    "percent",
    "select_test_items",
]


# --- the unseen-label drop (C1) --------------------------------------------------------------------
@dataclass(frozen=True)
class Selection:
    """The test items the heuristics run on, and the drops made before them.

    `kept` indexes the test input in order (in `eptest` mode an index can repeat, C1); `dropped`
    lists `(test index, label)` for each label of a test item that train never has.
    """

    kept: list[int]
    dropped: list[tuple[int, str]]


def select_test_items(train_labels: Set[str], test: Sequence[Item], mode: Mode = "eptest") -> Selection:
    """Drop test items whose label never occurs in train (spec §7; EPtest's `Converter.run`)."""
    kept: list[int] = []
    dropped: list[tuple[int, str]] = []
    eptest = check_mode(mode) == "eptest"
    for i, item in enumerate(test):
        checked(item)
        if eptest:
            # C1: `for lbl in item.labels: if lbl not in labels: dr_item += 1 else: append(item)`
            for label in item.labels:
                if label in train_labels:
                    kept.append(i)
                else:
                    dropped.append((i, label))
        else:
            unseen = [label for label in item.labels if label not in train_labels]
            if unseen:
                dropped.extend((i, label) for label in unseen)
            else:
                kept.append(i)
    return Selection(kept, dropped)


# --- the heuristics --------------------------------------------------------------------------------
# Every heuristic's outcome for an item depends only on its key's train counts and on the random
# number it consumes, so what can be derived from the counts alone (EPtest's cumulative weights,
# strict mode's argmax and sorted labels, the evidence shown in `detail`) is derived once per key,
# on first use, and reused: linear in the test items plus the sum of the keys' label counts,
# instead of a pass over the key's (or all of train's) labels per test item. Every decision, kept
# or solved, has a reason (`entbench.filters.memorization_reasons`).
_UNSEEN = why.kept(why.SPAN_UNSEEN, "no train item has this span")


class _Argmax(NamedTuple):
    """Strict Mem-Freq for one key: its most frequent train labels (sorted) and the evidence."""

    tied: list[LabelTuple]
    shown: str


@dataclass
class KeyMemo:
    """What strict mode's heuristics derive from each key's train counts, kept from one call to
    the next: a sharded audit decides a shard's test items a slice at a time (its memory then
    follows the slice, not a frequent key's items), and a key's labels are sorted once, not once
    per slice."""

    exact: dict[tuple[str, ...], str] = field(default_factory=dict)
    freq: dict[tuple[str, ...], _Argmax] = field(default_factory=dict)
    uniform: dict[tuple[str, ...], list[LabelTuple]] = field(default_factory=dict)


def mem_exact(index: TrainIndex, test: Iterable[Item], *, memo: KeyMemo | None = None) -> Decisions:
    """Mem-Exact (§3): which test items memorising (span, label) pairs of train solves."""
    if isinstance(index, EptestIndex):
        pair = why.solved(why.EXACT_PAIR_IN_TRAIN, "span text(s) and label occur together in train")
        other = why.kept(why.EXACT_LABEL_NOT_WITH_SPAN, "span text(s) occur in train, never with this label")
        out: Decisions = []
        for item in test:
            exact, _, fkey = eptest_keys(item.spans, _sorted(item.labels))
            # E2 keys collapse equal texts, so a pair can match while F1's key is unseen: test E2 first.
            out.append(pair if exact in index.exact else other if fkey in index.freq else _UNSEEN)
        return out
    evidence = {} if memo is None else memo.exact
    out = []
    for item in test:
        counts = index.counts.get(item.spans)
        if counts is None:
            out.append(_UNSEEN)
            continue
        label = _sorted(item.labels)
        if label in counts and len(counts) == 1:
            out.append(
                why.solved(why.EXACT_ONLY_TRAIN_LABEL, f"only train label {fmt(label)} x{counts[label]}")
            )
            continue
        seen = evidence.get(item.spans)
        if seen is None:
            seen = evidence[item.spans] = "train labels " + shown(
                (fmt(lb), counts[lb]) for lb in sorted(counts)
            )
        reason = why.EXACT_PAIR_WITH_OTHER_LABELS if label in counts else why.EXACT_LABEL_NOT_WITH_SPAN
        out.append(why.kept(reason, seen))
    return out


class RandomSource(Protocol):
    """What the heuristics draw from: `random.Random`, or the draws of a sharded audit replayed
    (`builders.edge_probing.stages.mem_audit`), which must give the same numbers in test order."""

    def random(self) -> float:
        """The next number in [0, 1)."""
        ...


def mem_freq(
    index: TrainIndex,
    test: Iterable[Item],
    *,
    seed: int = DEFAULT_SEED,
    rng: RandomSource | None = None,
    memo: KeyMemo | None = None,
) -> Decisions:
    """Mem-Freq (§3): which test items predicting from the span's train label distribution solves
    (draws from `random.Random(seed)`, or from `rng` if given; strict mode's per-key argmax kept in
    `memo` if given)."""
    rng = random.Random(seed) if rng is None else rng
    if isinstance(index, EptestIndex):
        eptest_plans: dict[str | frozenset[str], _FreqDraw | Decision] = {}
        return [_eptest_freq(index, item, rng, eptest_plans) for item in test]
    strict_plans = {} if memo is None else memo.freq
    return [_strict_freq(index, item, rng, strict_plans) for item in test]


class _FreqDraw(NamedTuple):
    """EPtest's weighted draw for one key: its nonzero label ids, their cumulative counts, evidence."""

    ids: list[int]
    cum: list[int]
    shown: str


def _eptest_freq_plan(index: EptestIndex, counts: dict[int, int]) -> _FreqDraw | Decision:
    """The key's draw, or the decision for every item of the key when EPtest does not draw (F3)."""
    ids = sorted(counts)
    # Label ids number label tuples in first-seen order, so sorted ids list them in that order.
    evidence = shown((fmt(index.label_list[i]), counts[i]) for i in ids)
    n_labels = len(index.label_ids)
    has_zero = len(counts) < n_labels
    n_distinct = len(set(counts.values())) + (1 if has_zero else 0)
    # F3: `len(count.keys()) > 2 or (len(count.keys()) == 2 and 0 not in count.keys())`
    if not (n_distinct > 2 or (n_distinct == 2 and not has_zero)):
        return why.kept(why.FREQ_FLAT, f"no draw, train counts are uniform: {evidence}")
    return _FreqDraw(ids, list(accumulate(counts[i] for i in ids)), evidence)


def _eptest_freq(
    index: EptestIndex,
    item: Item,
    rng: RandomSource,
    plans: dict[str | frozenset[str], _FreqDraw | Decision],
) -> Decision:
    sorted_labels = _sorted(item.labels)
    key = eptest_keys(item.spans, sorted_labels)[2]
    plan = plans.get(key)
    if plan is None:
        counts = index.freq.get(key)
        plan = plans[key] = _UNSEEN if counts is None else _eptest_freq_plan(index, counts)
    if isinstance(plan, Decision):
        return plan
    # F2: `choices(range(L), weights)` is `bisect(cum_weights, random() * total, 0, L - 1)`; zero
    # weights never win a bisection, so the nonzero ones suffice, except that a draw at `total`
    # itself (possible only by rounding) lands on the last index, L - 1.
    x = rng.random() * (plan.cum[-1] + 0.0)
    pos = bisect_right(plan.cum, x)
    drawn = plan.ids[pos] if pos < len(plan.ids) else len(index.label_ids) - 1
    detail = f"drew {fmt(index.label_list[drawn])} from train counts {plan.shown}"
    if drawn == index.label_ids.get(sorted_labels):
        return why.solved(why.FREQ_DRAW_MATCHED, detail)
    return why.kept(why.FREQ_DRAW_MISSED, detail)


def _strict_freq(
    index: StrictIndex, item: Item, rng: RandomSource, plans: dict[tuple[str, ...], _Argmax]
) -> Decision:
    plan = plans.get(item.spans)
    if plan is None:
        counts = index.counts.get(item.spans)
        if counts is None:
            return _UNSEEN
        top = max(counts.values())
        tied = sorted(label for label, n in counts.items() if n == top)
        plan = plans[item.spans] = _Argmax(tied, shown((fmt(lb), counts[lb]) for lb in sorted(counts)))
    tied = plan.tied
    predicted = tied[floor(rng.random() * len(tied))] if len(tied) > 1 else tied[0]
    detail = f"most frequent in train: {fmt(predicted)} ({plan.shown})"
    if predicted == _sorted(item.labels):
        return why.solved(why.FREQ_ARGMAX if len(tied) == 1 else why.FREQ_ARGMAX_TIE_DRAW, detail)
    return why.kept(why.FREQ_ARGMAX_DIFFERS if len(tied) == 1 else why.FREQ_ARGMAX_TIE_DRAW_MISSED, detail)


def mem_uniform(
    index: TrainIndex,
    test: Iterable[Item],
    *,
    seed: int = DEFAULT_SEED,
    rng: RandomSource | None = None,
    memo: KeyMemo | None = None,
) -> Decisions:
    """Mem-Uniform (§3): which test items a uniform draw over the span's train labels solves
    (draws from `random.Random(seed)`, or from `rng` if given; strict mode's sorted options kept
    in `memo` if given)."""
    rng = random.Random(seed) if rng is None else rng
    options_of = (
        _eptest_options(index)
        if isinstance(index, EptestIndex)
        else _strict_options(index, {} if memo is None else memo.uniform)
    )
    out: Decisions = []
    for item in test:
        options = options_of(item)
        if options is None:
            out.append(_UNSEEN)
            continue
        # U4 (and `random.choices` without weights): options[floor(random() * n)]
        drawn = options[floor(rng.random() * len(options))]
        detail = f"drew {fmt(drawn)} of {len(options)} train label set(s)"
        matched = sorted(drawn) == sorted(item.labels)
        out.append(
            why.solved(why.UNIFORM_DRAW_MATCHED, detail)
            if matched
            else why.kept(why.UNIFORM_DRAW_MISSED, detail)
        )
    return out


OptionsOf = Callable[[Item], "list[LabelTuple] | None"]


def _eptest_options(index: EptestIndex) -> OptionsOf:
    """An item's Mem-Uniform options: its key's distinct train label lists, first seen first (U3)."""
    cache: dict[frozenset[str], list[LabelTuple]] = {}

    def options(item: Item) -> list[LabelTuple] | None:
        key = eptest_keys(item.spans, _sorted(item.labels))[1]
        found = cache.get(key)
        if found is None:
            labels = index.uniform.get(key)
            if labels is None:
                return None
            found = cache[key] = list(labels)
        return found

    return options


def _strict_options(index: StrictIndex, cache: dict[tuple[str, ...], list[LabelTuple]]) -> OptionsOf:
    """An item's Mem-Uniform options: its span's distinct train labels, sorted (kept in `cache`)."""

    def options(item: Item) -> list[LabelTuple] | None:
        found = cache.get(item.spans)
        if found is None:
            counts = index.counts.get(item.spans)
            if counts is None:
                return None
            found = cache[item.spans] = sorted(counts)
        return found

    return options


# --- everything at once ----------------------------------------------------------------------------
def percent(removed: int, total: int) -> float:
    """`100 * removed / total` rounded half up to two decimals (Table 2's precision); 0.0 if empty."""
    if total <= 0:
        return 0.0
    hundredths, rest = divmod(10_000 * removed, total)
    if 2 * rest >= total:
        hundredths += 1
    return hundredths / 100


@dataclass(frozen=True)
class AuditResult:
    """The heuristics' decisions on one train/test pair, aligned with `selection.kept`."""

    mode: Mode
    seed: int
    n_train: int
    n_input: int
    selection: Selection
    decisions: dict[str, Decisions]

    @property
    def n_test(self) -> int:
        """Test items the heuristics ran on (after the unseen-label drop)."""
        return len(self.selection.kept)

    def removed(self, heuristic: str) -> int:
        """How many test items `heuristic` solves."""
        return sum(1 for d in self.decisions[heuristic] if d.solved)

    def report(self) -> dict[str, int | float | str]:
        """`{"n_test", "mem_exact", "mem_freq", "mem_uniform", "mode"}`, percentages as in Table 2."""
        out: dict[str, int | float | str] = {"n_test": self.n_test}
        for heuristic in HEURISTICS:
            out[heuristic] = percent(self.removed(heuristic), self.n_test)
        out["mode"] = self.mode
        return out


def audit(
    train: Iterable[Item], test: Sequence[Item], *, mode: Mode = "eptest", seed: int = DEFAULT_SEED
) -> AuditResult:
    """Drop test items with unseen labels, then run Mem-Exact, Mem-Freq and Mem-Uniform (spec §7)."""
    index = build_index(train, mode)
    return audit_with_index(index, test, seed=seed)


def audit_with_index(index: TrainIndex, test: Sequence[Item], *, seed: int = DEFAULT_SEED) -> AuditResult:
    """`audit` over an already built train index (the stage streams train into it)."""
    # One decision per test item and heuristic, all acyclic: the cyclic GC would only re-traverse them.
    with gc_paused():
        selection = select_test_items(index.labels, test, index.mode)
        items = [test[i] for i in selection.kept]
        decisions = {
            "mem_exact": mem_exact(index, items),
            "mem_freq": mem_freq(index, items, seed=seed),
            "mem_uniform": mem_uniform(index, items, seed=seed),
        }
    return AuditResult(index.mode, seed, index.n_items, len(test), selection, decisions)
