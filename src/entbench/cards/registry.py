"""Which targets have their own card sections: a small registry filled by `cards.targets.*`.

A target names the module of `cards.targets` that draws its sections where its pipeline registers
it (`register_target(…, card="kb")`, `engine.registry.Target.card`); `card_for` imports that
module, whose import registers the entry (one module may register several targets). The entry
names functions that build its sections from a `BuildView` and, if the target is a benchmark, the
tables that are its splits (drawn in the split-size plot and audited for leakage). A target
without an entry gets the generic card only: sources, parameters, table sizes, stats by reason,
rebuild command and licence (judged by the dumps it reads). `content` says what the target's
tables hold, which decides the card's licence (`cards.licence`).

    register_card("wikireading", sections=(wikireading_section,), splits=("train", "valid", "test"))
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
from entbench.cards.build_view import BuildView
from entbench.cards.hub import HubMetadata
from entbench.cards.model import Content, Section
from entbench.engine import registry

SectionFn = Callable[[BuildView], Section | None]

#: The package holding the card modules targets name (`Target.card`).
CARD_PACKAGE = "entbench.cards.targets"


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
    #: The Hub's task metadata and the paper the target rebuilds (`cards.hub`; empty: none).
    hub: HubMetadata = field(default_factory=HubMetadata)


_CARDS: dict[str, TargetCard] = {}


def register_card(
    target: str,
    *,
    sections: tuple[SectionFn, ...] = (),
    splits: tuple[str, ...] = (),
    summary: str = "",
    content: Content | None = None,
    hub: HubMetadata | None = None,
) -> None:
    """Declare the card sections of `target` (once per target)."""
    if target in _CARDS:
        raise ValueError(f"card sections for {target!r} registered twice")
    _CARDS[target] = TargetCard(target, sections, splits, summary, content, hub or HubMetadata())


def card_module(target: str) -> str | None:
    """The module drawing `target`'s card sections, as its pipeline names it (None: the generic
    card only, also for a target no pipeline registers today, read from an older build)."""
    spec = registry.targets().get(target)
    return None if spec is None or spec.card is None else f"{CARD_PACKAGE}.{spec.card}"


def card_for(target: str) -> TargetCard:
    """The registered parts of `target`'s card, or an empty entry (generic card only)."""
    module = card_module(target)
    if module is not None:
        importlib.import_module(module)
    return _CARDS.get(target, TargetCard(target))
