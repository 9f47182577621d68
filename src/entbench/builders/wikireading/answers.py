"""Answer sets: one WikiReading instance per (item, property) (Hewlett et al. 2016 §2.2).

"We consolidated all Wikidata statements with the same item and property into a single (item,
property, answer) triple, where answer is a set of values." The statements are the truthy ones
(spec §1), in the order the dump lists them; values render as in `values.render_value`, and two
statements rendering to the same string count once (e.g. a population stated twice).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from entbench.builders.wikireading.values import RenderOptions, render_value

#: What to do with an instance when some, not all, of its values cannot be rendered:
#: "keep" the renderable ones (the default; the dropped values are counted), or "drop" the whole
#: instance so that no answer set is silently incomplete.
PartialPolicy = Literal["keep", "drop"]


@dataclass(frozen=True)
class AnswerSet:
    """The consolidated answers of one (item, property), with the bookkeeping of what was lost."""

    answers: tuple[str, ...]
    dropped: Mapping[str, int] = field(default_factory=dict)  # reason -> values dropped
    notes: Mapping[str, int] = field(default_factory=dict)  # rendering notes of kept values
    duplicates: int = 0  # values equal to an earlier one

    @property
    def values_dropped(self) -> int:
        """How many statement values could not be rendered."""
        return sum(self.dropped.values())


def consolidate(
    snaks: Iterable[Mapping[str, Any]],
    labels: Mapping[str, str],
    options: RenderOptions | None = None,
    property_datatype: str | None = None,
    on_partial: PartialPolicy = "keep",
) -> AnswerSet:
    """Render the truthy statements of one (item, property), in order, into its answer set.

    With `on_partial="drop"`, any unrenderable value empties the answer set (the instance is then
    dropped by the caller); the reasons are still reported.
    """
    answers: list[str] = []
    seen: set[str] = set()
    dropped: Counter[str] = Counter()
    notes: Counter[str] = Counter()
    duplicates = 0
    for snak in snaks:
        rendered = render_value(snak, labels, options, property_datatype)
        if rendered.text is None:
            dropped[rendered.reason or "unknown"] += 1
            continue
        if rendered.note:
            notes[rendered.note] += 1
        if rendered.text in seen:
            duplicates += 1
            continue
        seen.add(rendered.text)
        answers.append(rendered.text)
    if on_partial == "drop" and dropped:
        answers = []
    return AnswerSet(tuple(answers), dict(dropped), dict(notes), duplicates)
