"""WikiEnt (EntEval §4.3; spec §8): hyperlinked sentences, one instance per hyperlink.

"The WIKIENT dataset consists of sentences with contextualized entity mentions and their
corresponding descriptions obtained via hyperlinked Wikipedia pages. When processing descriptions,
we only keep the first 100 word tokens at most as the description of a Wikipedia page ... For
context sentences, we remove those without hyperlinks from the training data and duplicate those
with multiple hyperlinks. We also remove context sentences for which we cannot find matched
Wikipedia descriptions." (Chen et al. 2019, §4.3)

`place_links` puts a paragraph's links into its sentences as token offsets. A link is the span of
its anchor in the rendered text (`wikipedia.links`, code-point offsets); its mention tokens must be
exactly the anchor's characters, so where an anchor edge falls inside a word token (`[[Anglo]]phile`
is rendered as one word but linked as "Anglo"), that token is cut at the edge (counted). All links of
a sentence share one tokenisation, so a sentence repeated for each of its links reads the same.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from entbench.builders.enteval.tokens import Token


@dataclass(frozen=True)
class LinkSpan:
    """A link to place: its ordinal in the page and its code-point span in the paragraph."""

    ordinal: int
    start: int
    end: int


@dataclass
class LinkedSentence:
    """A sentence's word tokens and, per link ordinal, its token span (end exclusive)."""

    words: list[str]
    links: dict[int, tuple[int, int]] = field(default_factory=dict)

    def mention(self, ordinal: int) -> str:
        """The mention of a link: its tokens joined by one space, so that it is always
        `" ".join(sentence.split()[start:end])` of the instance (`specialists in ' other cultures '`
        for the anchor "specialists in 'other cultures'", which the tokenizer splits at the quotes)."""
        start, end = self.links[ordinal]
        return " ".join(self.words[start:end])


@dataclass
class Placement:
    """The sentences that received at least one link, and what happened to the others."""

    sentences: list[LinkedSentence] = field(default_factory=list)
    dropped: dict[int, str] = field(default_factory=dict)  # ordinal -> reason
    tokens_split: int = 0


def anchor_core(text: str, start: int, end: int) -> tuple[int, int]:
    """`[start, end)` without leading and trailing whitespace (empty when it is all whitespace)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def place_links(
    paragraph: str,
    tokens: Sequence[Token],
    sentences: Sequence[tuple[int, int]],
    links: Sequence[LinkSpan],
) -> Placement:
    """Assign each link to the sentence that contains its anchor and give it token offsets.

    `tokens` and `sentences` are the paragraph's word tokens and sentence spans (`Tokenizer.analyse`).
    A link whose anchor is only whitespace is dropped as `empty_anchor`; one whose anchor is not
    inside a single sentence (the sentencizer split inside it) as `link_crosses_sentence`.
    """
    result = Placement()
    starts = [s for s, _ in sentences]
    by_sentence: dict[int, list[tuple[int, int, int]]] = {}
    for link in links:
        start, end = anchor_core(paragraph, link.start, link.end)
        if start >= end:
            result.dropped[link.ordinal] = "empty_anchor"
            continue
        index = bisect.bisect_right(starts, start) - 1
        if index < 0 or end > sentences[index][1]:
            result.dropped[link.ordinal] = "link_crosses_sentence"
            continue
        by_sentence.setdefault(index, []).append((link.ordinal, start, end))
    token_starts = [t.start for t in tokens]
    for index in sorted(by_sentence):
        s_start, s_end = sentences[index]
        first = bisect.bisect_left(token_starts, s_start)
        last = bisect.bisect_left(token_starts, s_end)
        placed = by_sentence[index]
        cuts = sorted({p for _, a, b in placed for p in (a, b)})
        words: list[Token] = []
        for token in tokens[first:last]:
            inside = [c for c in cuts if token.start < c < token.end]
            if not inside:
                words.append(token)
                continue
            result.tokens_split += 1
            edges = [token.start, *inside, token.end]
            for a, b in itertools.pairwise(edges):
                words.append(Token(token.text[a - token.start : b - token.start], a, b))
        begin_at = {t.start: i for i, t in enumerate(words)}
        end_at = {t.end: i + 1 for i, t in enumerate(words)}
        sentence = LinkedSentence([t.text for t in words])
        for ordinal, a, b in placed:
            # Both exist: a and b are word edges, or became edges by the cuts above.
            sentence.links[ordinal] = (begin_at[a], end_at[b])
        result.sentences.append(sentence)
    return result
