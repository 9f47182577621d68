"""Why a memorisation heuristic solved or kept a test item: the decision type and its reason codes.

Every decision of Mem-Exact, Mem-Freq and Mem-Uniform (`entbench.filters.memorization`, spec §7)
carries a stable reason code and its evidence (`detail`, at most `DETAIL_LABELS` train labels with
their counts). The codes, by heuristic and mode:

=====================================  =========  ======  ==============================================
code                                   heuristic  mode    meaning
=====================================  =========  ======  ==============================================
``span_label_pair_in_train``           exact      eptest  solved: the span occurs in train with the label (E1)
``only_train_label``                   exact      strict  solved: the span's only train label is the label
``pair_in_train_with_other_labels``    exact      strict  kept: the pair is in train, with other labels
``label_not_with_span``                exact      both    kept: the span occurs in train, never with the label
``train_distribution_draw_matched``    freq       eptest  solved: the weighted draw gave the label (F2)
``train_distribution_draw_missed``     freq       eptest  kept: the weighted draw gave another label
``train_distribution_flat``            freq       eptest  kept: no draw, the counts are uniform (F3)
``train_argmax``                       freq       strict  solved: the most frequent train label is the label
``train_argmax_tie_draw``              freq       strict  solved: the seeded draw among tied labels
``train_argmax_differs``               freq       strict  kept: the most frequent train label is another
``train_argmax_tie_draw_missed``       freq       strict  kept: the tie was drawn to another label
``uniform_draw_matched``               uniform    both    solved: the uniform draw gave the label
``uniform_draw_missed``                uniform    both    kept: the uniform draw gave another label
``span_unseen_in_train``               any        both    kept: no train item has the item's key
=====================================  =========  ======  ==============================================

Before the heuristics run, items are dropped with ``label_unseen_in_train`` (a label train never
has; EPtest's converters, C1); the audit stage also records rows it cannot audit, with
``span_or_label_null``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# Solved (the heuristic removes the item from the filtered test set).
EXACT_PAIR_IN_TRAIN = "span_label_pair_in_train"  # eptest (E1)
EXACT_ONLY_TRAIN_LABEL = "only_train_label"  # strict
FREQ_DRAW_MATCHED = "train_distribution_draw_matched"  # eptest (F2, F3)
FREQ_ARGMAX = "train_argmax"  # strict
FREQ_ARGMAX_TIE_DRAW = "train_argmax_tie_draw"  # strict, tie broken by the seeded draw
UNIFORM_DRAW_MATCHED = "uniform_draw_matched"  # both modes

# Kept.
SPAN_UNSEEN = "span_unseen_in_train"  # every heuristic, both modes
EXACT_PAIR_WITH_OTHER_LABELS = "pair_in_train_with_other_labels"  # strict
EXACT_LABEL_NOT_WITH_SPAN = "label_not_with_span"  # both modes
FREQ_DRAW_MISSED = "train_distribution_draw_missed"  # eptest
FREQ_FLAT = "train_distribution_flat"  # eptest (F3)
FREQ_ARGMAX_DIFFERS = "train_argmax_differs"  # strict
FREQ_ARGMAX_TIE_DRAW_MISSED = "train_argmax_tie_draw_missed"  # strict
UNIFORM_DRAW_MISSED = "uniform_draw_missed"  # both modes

#: Every code a heuristic's decision can carry, in the order of the table above.
DECISION_REASONS = (
    EXACT_PAIR_IN_TRAIN,
    EXACT_ONLY_TRAIN_LABEL,
    EXACT_PAIR_WITH_OTHER_LABELS,
    EXACT_LABEL_NOT_WITH_SPAN,
    FREQ_DRAW_MATCHED,
    FREQ_DRAW_MISSED,
    FREQ_FLAT,
    FREQ_ARGMAX,
    FREQ_ARGMAX_TIE_DRAW,
    FREQ_ARGMAX_DIFFERS,
    FREQ_ARGMAX_TIE_DRAW_MISSED,
    UNIFORM_DRAW_MATCHED,
    UNIFORM_DRAW_MISSED,
    SPAN_UNSEEN,
)

# Not audited.
UNSEEN_LABEL = "label_unseen_in_train"  # dropped before the heuristics (C1)
NULL_SPAN_OR_LABEL = "span_or_label_null"  # an audited table's row without a span or a label

#: Mem-Exact reasons meaning "the (span, label) pair occurs in train", in either mode: the leakage
#: share of an entity-linking split (Hansel) counts these.
PAIR_IN_TRAIN = (EXACT_PAIR_IN_TRAIN, EXACT_ONLY_TRAIN_LABEL, EXACT_PAIR_WITH_OTHER_LABELS)

#: At most this many train labels are listed in a decision's `detail`: a WikiReading question has
#: thousands of distinct answers, and the evidence is repeated on every item of the key.
DETAIL_LABELS = 10


@dataclass(frozen=True, slots=True)
class Decision:
    """A heuristic's verdict on one test item: solved (so removed) or kept, why, and the evidence."""

    solved: bool
    reason: str
    detail: str


def solved(reason: str, detail: str) -> Decision:
    """A decision removing the item."""
    return Decision(True, reason, detail)


def kept(reason: str, detail: str) -> Decision:
    """A decision keeping the item."""
    return Decision(False, reason, detail)


def fmt(labels: Iterable[str]) -> str:
    """A label tuple as decisions show it: `X`, or `[X,Y]` for several."""
    labels = tuple(labels)
    return labels[0] if len(labels) == 1 else "[" + ",".join(labels) + "]"


def shown(counts: Iterable[tuple[str, int]]) -> str:
    """`label:count, ...`, the first `DETAIL_LABELS` of them, then how many more there are."""
    parts: list[str] = []
    more = 0
    for label, count in counts:
        if len(parts) < DETAIL_LABELS:
            parts.append(f"{label}:{count}")
        else:
            more += 1
    return ", ".join(parts) + (f", ... (+{more} more)" if more else "")
