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

``eptest`` (default) computes what the paper's code computes (`Josh1108/EPtest`,
`eptests/core/datafilter.py`: `TrainDataRemoval`, `TrainSample`, `RandomSample`), which is what
produced Table 2. Its behaviour differs from the prose; every difference is kept on purpose and
pinned by a test (`tests/filters/test_memorization_eptest.py`):

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

``strict`` implements the prose: keys are the ordered tuple of span texts, a multi-label set is
one class (its sorted tuple), and

* Mem-Exact removes an item iff its key occurs in train with exactly one distinct label, which
  equals the test label;
* Mem-Freq predicts the most frequent train label of the key (ties: a seeded uniform draw among the
  tied labels, sorted) and removes the item iff the prediction equals the test label;
* Mem-Uniform draws uniformly among the key's distinct train labels (sorted) and removes the item
  iff the draw equals the test label;
* test items with any label unseen in train are dropped first, once.

Seeds: each heuristic gets its own ``random.Random(seed)`` (default 30, EPtest's
``random.seed(30)``), consumed in test order and only when a draw is needed. ``random.Random`` with
an integer seed and ``random()`` give the same stream on every CPython version.
"""

from __future__ import annotations

import gc
import random
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import accumulate
from math import floor
from typing import Literal, NamedTuple

Mode = Literal["eptest", "strict"]
MODES: tuple[Mode, ...] = ("eptest", "strict")
HEURISTICS = ("mem_exact", "mem_freq", "mem_uniform")
#: EPtest's `FilterData.__init__` calls `random.seed(30)`.
DEFAULT_SEED = 30

#: Removal reasons (stable codes, counted in stats as `removed_<heuristic>`).
EXACT_PAIR_IN_TRAIN = "span_label_pair_in_train"  # eptest (E1)
EXACT_ONLY_TRAIN_LABEL = "only_train_label"  # strict
FREQ_DRAW_MATCHED = "train_distribution_draw_matched"  # eptest (F2, F3)
FREQ_ARGMAX = "train_argmax"  # strict
FREQ_ARGMAX_TIE_DRAW = "train_argmax_tie_draw"  # strict, tie broken by the seeded draw
UNIFORM_DRAW_MATCHED = "uniform_draw_matched"  # both modes
UNSEEN_LABEL = "label_unseen_in_train"  # dropped before the heuristics (C1)

LabelTuple = tuple[str, ...]


class Item(NamedTuple):
    """One edge-probing target as the heuristics see it: its span text(s) and its label(s).

    `labels` keeps the order of the data (EPtest's Mem-Uniform deduplicates label lists by order, U3).
    A NamedTuple, not a dataclass: it is built and hashed once per train item.
    """

    spans: tuple[str, ...]
    labels: LabelTuple


def _checked(item: Item) -> Item:
    if len(item.spans) not in (1, 2):
        raise ValueError(f"an edge-probing item has one or two spans, got {len(item.spans)}")
    if not item.labels:
        raise ValueError("an edge-probing item needs at least one label")
    return item


@dataclass(frozen=True, slots=True)
class Removal:
    """Why a heuristic solves (and so removes) a test item: a stable reason code and the evidence."""

    reason: str
    detail: str


Decisions = list[Removal | None]  # one entry per test item: None = kept


# --- train indexes ---------------------------------------------------------------------------------
EptestKeys = tuple[frozenset[object], frozenset[str], "str | frozenset[str]"]


def eptest_keys(spans: tuple[str, ...], sorted_labels: LabelTuple) -> EptestKeys:
    """EPtest's keys of an item: (Mem-Exact, Mem-Uniform, Mem-Freq), `datafilter.py` verbatim."""
    if len(spans) == 1:
        text = spans[0]
        # E2: frozenset((span1.text, tuple(sorted(labels)))); U1: `frozenset((data.span1.text))` is
        # `frozenset(str)`, the set of the text's characters; F1: the text itself.
        return frozenset((text, sorted_labels)), frozenset(text), text
    pair = frozenset(spans)
    # E2: frozenset((span1.text, span2.text, labels)); U2 and F1: frozenset((span1.text, span2.text))
    return frozenset((*spans, sorted_labels)), pair, pair


def _sorted(labels: LabelTuple) -> LabelTuple:
    return labels if len(labels) == 1 else tuple(sorted(labels))


@dataclass
class EptestIndex:
    """What EPtest's three filters collect from train, built in one pass in train order."""

    n_items: int = 0
    labels: set[str] = field(default_factory=set)
    exact: set[frozenset[object]] = field(default_factory=set)
    #: Mem-Uniform options per key: distinct label lists in first-seen order (a dict as ordered set).
    uniform: dict[frozenset[str], dict[LabelTuple, None]] = field(default_factory=dict)
    label_ids: dict[LabelTuple, int] = field(default_factory=dict)
    #: `label_ids` inverted: the label tuple of each id.
    label_list: list[LabelTuple] = field(default_factory=list)
    freq: dict[str | frozenset[str], dict[int, int]] = field(default_factory=dict)

    mode: Mode = "eptest"

    def add(self, item: Item, count: int = 1) -> None:
        """Record `count` copies of one train item (adding them one by one gives the same index)."""
        spans, labels = item
        self.n_items += count
        self.labels.update(labels)
        sorted_labels = _sorted(labels)
        exact, ukey, fkey = eptest_keys(spans, sorted_labels)
        self.exact.add(exact)
        options = self.uniform.get(ukey)
        if options is None:
            self.uniform[ukey] = {labels: None}
        elif labels not in options:  # U3: deduplicated as ordered lists
            options[labels] = None
        # F2: `label_dict` numbers label tuples in first-seen order over the whole train split.
        label_id = self.label_ids.get(sorted_labels)
        if label_id is None:
            label_id = self.label_ids[sorted_labels] = len(self.label_ids)
            self.label_list.append(sorted_labels)
        counts = self.freq.get(fkey)
        if counts is None:
            self.freq[fkey] = {label_id: count}
        else:
            counts[label_id] = counts.get(label_id, 0) + count


@dataclass
class StrictIndex:
    """Train label counts per ordered span-text key (the paper's prose)."""

    n_items: int = 0
    labels: set[str] = field(default_factory=set)
    counts: dict[tuple[str, ...], dict[LabelTuple, int]] = field(default_factory=dict)

    mode: Mode = "strict"

    def add(self, item: Item, count: int = 1) -> None:
        """Record `count` copies of one train item."""
        self.n_items += count
        self.labels.update(item.labels)
        label = tuple(sorted(item.labels))
        per_key = self.counts.setdefault(item.spans, {})
        per_key[label] = per_key.get(label, 0) + count


TrainIndex = EptestIndex | StrictIndex


def build_index(train: Iterable[Item], mode: Mode = "eptest") -> TrainIndex:
    """Index the train split (streamed once, in order: order matters in `eptest` mode, F2/U3).

    Identical items are counted first: every order the index keeps is a first-seen order, which
    an insertion-ordered count of distinct items preserves, and it is much faster on real data
    (EWT v2.2 pos train: 204,607 items, 22,201 distinct).
    """
    index: TrainIndex = EptestIndex() if _check_mode(mode) == "eptest" else StrictIndex()
    distinct: dict[Item, int] = {}
    with paused_gc():
        for item in train:
            distinct[item] = distinct.get(item, 0) + 1
        for item, count in distinct.items():
            index.add(_checked(item), count)
    return index


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector around a bulk build of acyclic containers.

    Building the index allocates a few hundred thousand tuples and frozensets; CPython 3.11 then
    rescans every live container again and again (5x the build time on EWT). Nothing built here
    is cyclic, so reference counting frees all of it; the collector is re-enabled after.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _check_mode(mode: str) -> Mode:
    if mode == "eptest":
        return "eptest"
    if mode == "strict":
        return "strict"
    raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")


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
    eptest = _check_mode(mode) == "eptest"
    for i, item in enumerate(test):
        _checked(item)
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
# instead of a pass over the key's (or all of train's) labels per test item.

#: At most this many train labels are listed in a decision's `detail`: a WikiReading question has
#: thousands of distinct answers, and the evidence is repeated on every item of the key.
DETAIL_LABELS = 10


def mem_exact(index: TrainIndex, test: Iterable[Item]) -> Decisions:
    """Mem-Exact (§3): which test items memorising (span, label) pairs of train solves."""
    if isinstance(index, EptestIndex):
        return [
            Removal(EXACT_PAIR_IN_TRAIN, "span text(s) and label occur together in train")
            if eptest_keys(item.spans, _sorted(item.labels))[0] in index.exact
            else None
            for item in test
        ]
    out: Decisions = []
    for item in test:
        counts = index.counts.get(item.spans)
        label = _sorted(item.labels)
        if counts is not None and len(counts) == 1 and label in counts:
            out.append(Removal(EXACT_ONLY_TRAIN_LABEL, f"only train label {_fmt(label)} x{counts[label]}"))
        else:
            out.append(None)
    return out


def mem_freq(index: TrainIndex, test: Iterable[Item], *, seed: int = DEFAULT_SEED) -> Decisions:
    """Mem-Freq (§3): which test items predicting from the span's train label distribution solves."""
    rng = random.Random(seed)
    if isinstance(index, EptestIndex):
        eptest_plans: dict[str | frozenset[str], _FreqDraw | None] = {}
        return [_eptest_freq(index, item, rng, eptest_plans) for item in test]
    strict_plans: dict[tuple[str, ...], _Argmax] = {}
    return [_strict_freq(index, item, rng, strict_plans) for item in test]


class _FreqDraw(NamedTuple):
    """EPtest's weighted draw for one key: its nonzero label ids, their cumulative counts, evidence."""

    ids: list[int]
    cum: list[int]
    shown: str


def _eptest_freq_plan(index: EptestIndex, counts: dict[int, int]) -> _FreqDraw | None:
    """The key's draw, or None when EPtest does not draw for it (F3)."""
    n_labels = len(index.label_ids)
    has_zero = len(counts) < n_labels
    n_distinct = len(set(counts.values())) + (1 if has_zero else 0)
    # F3: `len(count.keys()) > 2 or (len(count.keys()) == 2 and 0 not in count.keys())`
    if not (n_distinct > 2 or (n_distinct == 2 and not has_zero)):
        return None
    ids = sorted(counts)
    cum = list(accumulate(counts[i] for i in ids))
    # Label ids number label tuples in first-seen order, so sorted ids list them in that order.
    shown = _shown((_fmt(index.label_list[i]), counts[i]) for i in ids)
    return _FreqDraw(ids, cum, shown)


def _eptest_freq(
    index: EptestIndex,
    item: Item,
    rng: random.Random,
    plans: dict[str | frozenset[str], _FreqDraw | None],
) -> Removal | None:
    sorted_labels = _sorted(item.labels)
    key = eptest_keys(item.spans, sorted_labels)[2]
    if key in plans:
        plan = plans[key]
    else:
        counts = index.freq.get(key)
        plan = plans[key] = None if counts is None else _eptest_freq_plan(index, counts)
    if plan is None:
        return None
    # F2: `choices(range(L), weights)` is `bisect(cum_weights, random() * total, 0, L - 1)`; zero
    # weights never win a bisection, so the nonzero ones suffice, except that a draw at `total`
    # itself (possible only by rounding) lands on the last index, L - 1.
    x = rng.random() * (plan.cum[-1] + 0.0)
    pos = bisect_right(plan.cum, x)
    drawn = plan.ids[pos] if pos < len(plan.ids) else len(index.label_ids) - 1
    label_id = index.label_ids.get(sorted_labels)
    if label_id is None or drawn != label_id:
        return None
    return Removal(FREQ_DRAW_MATCHED, f"drew {_fmt(sorted_labels)} from train counts {plan.shown}")


class _Argmax(NamedTuple):
    """Strict Mem-Freq for one key: its most frequent train labels (sorted) and the evidence."""

    tied: list[LabelTuple]
    shown: str


def _strict_freq(
    index: StrictIndex, item: Item, rng: random.Random, plans: dict[tuple[str, ...], _Argmax]
) -> Removal | None:
    plan = plans.get(item.spans)
    if plan is None:
        counts = index.counts.get(item.spans)
        if counts is None:
            return None
        top = max(counts.values())
        tied = sorted(label for label, n in counts.items() if n == top)
        shown = _shown((_fmt(lbl), counts[lbl]) for lbl in sorted(counts))
        plan = plans[item.spans] = _Argmax(tied, shown)
    tied = plan.tied
    predicted = tied[floor(rng.random() * len(tied))] if len(tied) > 1 else tied[0]
    if predicted != _sorted(item.labels):
        return None
    reason = FREQ_ARGMAX if len(tied) == 1 else FREQ_ARGMAX_TIE_DRAW
    return Removal(reason, f"most frequent in train: {_fmt(predicted)} ({plan.shown})")


def _shown(counts: Iterable[tuple[str, int]]) -> str:
    """`label:count, ...`, the first `DETAIL_LABELS` of them, then how many more there are."""
    parts: list[str] = []
    more = 0
    for label, count in counts:
        if len(parts) < DETAIL_LABELS:
            parts.append(f"{label}:{count}")
        else:
            more += 1
    return ", ".join(parts) + (f", ... (+{more} more)" if more else "")


def mem_uniform(index: TrainIndex, test: Iterable[Item], *, seed: int = DEFAULT_SEED) -> Decisions:
    """Mem-Uniform (§3): which test items a uniform draw over the span's train labels solves."""
    rng = random.Random(seed)
    options_of = _eptest_options(index) if isinstance(index, EptestIndex) else _strict_options(index)
    out: Decisions = []
    for item in test:
        options = options_of(item)
        if options is None:
            out.append(None)
            continue
        # U4 (and `random.choices` without weights): options[floor(random() * n)]
        drawn = options[floor(rng.random() * len(options))]
        if sorted(drawn) == sorted(item.labels):
            out.append(
                Removal(UNIFORM_DRAW_MATCHED, f"drew {_fmt(drawn)} of {len(options)} train label set(s)")
            )
        else:
            out.append(None)
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


def _strict_options(index: StrictIndex) -> OptionsOf:
    """An item's Mem-Uniform options: its span's distinct train labels, sorted."""
    cache: dict[tuple[str, ...], list[LabelTuple]] = {}

    def options(item: Item) -> list[LabelTuple] | None:
        found = cache.get(item.spans)
        if found is None:
            counts = index.counts.get(item.spans)
            if counts is None:
                return None
            found = cache[item.spans] = sorted(counts)
        return found

    return options


def _fmt(labels: Sequence[str]) -> str:
    return labels[0] if len(labels) == 1 else "[" + ",".join(labels) + "]"


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
        return sum(1 for d in self.decisions[heuristic] if d is not None)

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
    selection = select_test_items(index.labels, test, index.mode)
    items = [test[i] for i in selection.kept]
    decisions = {
        "mem_exact": mem_exact(index, items),
        "mem_freq": mem_freq(index, items, seed=seed),
        "mem_uniform": mem_uniform(index, items, seed=seed),
    }
    return AuditResult(index.mode, seed, index.n_items, len(test), selection, decisions)
