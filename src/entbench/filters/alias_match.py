"""Exact multi-pattern matching of alias keys over page text, for P(unlinked|m) (Hansel appendix A).

"We apply the alias table to perform exact matching … we favor long mentions over short ones if
multiple mentions overlap … do not use any tokenization mechanism … also compute P(unlinked|m),
i.e. the prior of a given phrase that do not have a hyperlink in Wikipedia." (Hansel, appendix A)

A page's text is cut at its link boundaries into segments, each either a link anchor (linked) or
text between links (unlinked); keys are matched inside segments only, leftmost-longest and
non-overlapping (pyahocorasick `iter_long`), so an occurrence is linked iff it lies in an anchor.
Pure functions: the caller reads pages and writes counts.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from operator import itemgetter

import ahocorasick

from entbench.filters.mentions import MentionNormalizer

Segment = tuple[int, int, bool]  # (start, end, linked) in the text the automaton runs over


def build_automaton(mentions: Iterable[str]) -> ahocorasick.Automaton:
    """An automaton over `mentions`; a match's value is the mention's index in the iteration order."""
    automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
    for i, mention in enumerate(mentions):
        if mention:
            automaton.add_word(mention, i)
    automaton.make_automaton()
    return automaton


def segments(length: int, spans: Sequence[tuple[int, int]]) -> list[Segment]:
    """Cut [0, length) at the (sorted, non-overlapping) link spans."""
    out: list[Segment] = []
    pos = 0
    for start, end in spans:
        if start > pos:
            out.append((pos, start, False))
        out.append((start, end, True))
        pos = end
    if pos < length:
        out.append((pos, length, False))
    return out


def matching_text(
    normalizer: MentionNormalizer, text: str, spans: Sequence[tuple[int, int]]
) -> tuple[str, list[Segment], bool]:
    """The page text normalised like the keys, its segments (offsets into the returned text), and
    whether the whole text could be finished at once.

    The text is converted to Simplified once (a Chinese wiki), each segment on its own as the keys
    were (`MentionNormalizer.convert_for_matching`); conversion keeps every offset. Usually the
    Unicode normalisation keeps them too; when it could move them (the text is not already in
    NFKC/NFKD form, e.g. full-width punctuation), each converted segment is normalised on its own
    and the segments re-cut.
    """
    cut = segments(len(text), spans)
    converted = normalizer.convert_for_matching(text, [start for start, _, _ in cut[1:]])
    whole = normalizer.text_for_matching(converted)
    if whole is not None:
        return whole, cut, True
    parts: list[str] = []
    recut: list[Segment] = []
    pos = 0
    for start, end, linked in cut:
        piece = normalizer.segment_for_matching(converted[start:end], converted=True)
        recut.append((pos, pos + len(piece), linked))
        parts.append(piece)
        pos += len(piece)
    return "".join(parts), recut, False


def match(
    automaton: ahocorasick.Automaton,
    text: str,
    cut: Sequence[Segment],
    linked: array[int],
    unlinked: array[int],
) -> None:
    """Append the indices of the keys found in linked and in unlinked segments (one per occurrence).

    The matches go from pyahocorasick's iterator straight into the arrays (`array.extend` over a
    C `map`): no Python list or loop step per match.
    """
    if not len(automaton):
        return
    for start, end, is_link in cut:
        if end > start:
            (linked if is_link else unlinked).extend(map(_VALUE, automaton.iter_long(text, start, end)))


_VALUE = itemgetter(1)  # (end index, value) -> value
