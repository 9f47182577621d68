"""Which targets have their own card sections: a small registry filled by `cards.targets.*`.

A target's entry names functions that build its sections from a `BuildView` and, if the target is
a benchmark, the tables that are its splits (drawn in the split-size plot and audited for
leakage). A target without an entry gets the generic card only: sources, parameters, table sizes,
stats by reason, rebuild command and licence (judged by the dumps it reads). `content` says what
the target's tables hold, which decides the card's licence (`cards.licence`).

    register_card("wikireading", sections=(wikireading_section,), splits=("train", "valid", "test"))
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from entbench.cards.build_view import BuildView
from entbench.cards.model import Content, Section

SectionFn = Callable[[BuildView], Section | None]

#: Modules whose import registers target sections (imported on first use).
CARD_MODULES = (
    "entbench.cards.targets.kb",
    "entbench.cards.targets.kb_series",
    "entbench.cards.targets.wikireading",
    "entbench.cards.targets.alias_table",
    "entbench.cards.targets.hansel",
    "entbench.cards.targets.hansel_fewshot",
    "entbench.cards.targets.hansel_kb",
    "entbench.cards.targets.title_qid",
    "entbench.cards.targets.wikient",
    "entbench.cards.targets.enteval",
    "entbench.cards.targets.dumps",
)


@dataclass(frozen=True)
class TargetCard:
    """A target's own card parts."""

    target: str
    sections: tuple[SectionFn, ...] = ()
    #: Names of the tables that are the benchmark's splits, in display order.
    splits: tuple[str, ...] = ()
    #: One line saying what the dataset is for (the card's opening paragraph).
    summary: str = ""
    #: What the tables hold, which decides the card's licence (None: judged by the dumps read).
    content: Content | None = None


_CARDS: dict[str, TargetCard] = {}
_loaded = False


def register_card(
    target: str,
    *,
    sections: tuple[SectionFn, ...] = (),
    splits: tuple[str, ...] = (),
    summary: str = "",
    content: Content | None = None,
) -> None:
    """Declare the card sections of `target` (once per target)."""
    if target in _CARDS:
        raise ValueError(f"card sections for {target!r} registered twice")
    _CARDS[target] = TargetCard(target, sections, splits, summary, content)


def card_for(target: str) -> TargetCard:
    """The registered parts of `target`'s card, or an empty entry (generic card only)."""
    global _loaded  # noqa: PLW0603 - the registry is filled once per process
    if not _loaded:
        for module in CARD_MODULES:
            importlib.import_module(module)
        _loaded = True
    return _CARDS.get(target, TargetCard(target))
