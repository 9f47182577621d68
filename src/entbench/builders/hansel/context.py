"""The text of a Hansel record around its mention, in Simplified Chinese (spec §5; Hansel §3.2).

"To focus on simplified Chinese, we consider Chinese-Wikipedia only, and converted traditional
Chinese characters to simplified in all training and evaluation sets" (Hansel §3.2). The official
records' `text` is one paragraph (`hansel.readme-example.jsonl`); spec §5 makes it a flag:

* `paragraph` (default): the paragraph holding the mention. Paragraphs are separated by
  `paragraph_sep` ("\\n\\n" in the Wikipedia scan's text, spec §3; "\\n" for raw corpora).
* `sentence`: the sentences of that paragraph the mention overlaps. A sentence ends after a run
  of 。！？!? and the closing quotes or brackets right after it.
* `window`: `window` code points on each side of the mention, clipped to the document.

Whitespace at either edge of a context is trimmed (never into the mention). Conversion is
OpenCC `t2s` as the alias table does it (`filters.mentions.t2s`), or HanziConv, which the Hansel
paper used (`converter="hanziconv"`, footnote 3); both keep the number of code points, so offsets
survive. It is applied to the context itself and repeated until it no longer changes: every
output text is a fixed point of the conversion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from entbench.filters.mentions import simplifier

CONTEXT_MODES = ("paragraph", "sentence", "window")
#: End of a sentence: terminal punctuation, then any closing quotes/brackets.
_SENTENCE_END = re.compile(r"[。！？!?]+[”’」』）)》〉\"']*")
#: Conversion rounds before giving up on a fixed point (OpenCC's t2s is idempotent in practice).
MAX_ROUNDS = 4


@dataclass(frozen=True)
class Context:
    """A context cut from a document: `text` and the mention's offsets in it, and where it starts."""

    text: str
    start: int
    end: int
    doc_start: int
    converged: bool  # the conversion reached a fixed point within MAX_ROUNDS

    @property
    def mention(self) -> str:
        """The mention, `text[start:end]`."""
        return self.text[self.start : self.end]


def to_simplified(text: str, converter: str = "opencc") -> tuple[str, bool]:
    """`converter`'s Traditional->Simplified (OpenCC t2s by default) repeated to a fixed point
    (length kept); also whether it got there."""
    convert = simplifier(converter)
    current = text
    for _ in range(MAX_ROUNDS):
        converted = convert(current)
        if converted == current:
            return current, True
        current = converted
    return current, convert(current) == current


def paragraph_bounds(text: str, start: int, end: int, sep: str) -> tuple[int, int]:
    """[lo, hi) of the paragraph(s) holding text[start:end] (separators excluded)."""
    before = text.rfind(sep, 0, start)
    lo = 0 if before < 0 else before + len(sep)
    after = text.find(sep, end)
    hi = len(text) if after < 0 else after
    return lo, hi


def sentence_bounds(text: str, lo: int, hi: int, start: int, end: int) -> tuple[int, int]:
    """[s, e) of the sentences within [lo, hi) that text[start:end] overlaps."""
    s, e = lo, hi
    for match in _SENTENCE_END.finditer(text, lo, hi):
        if match.end() <= start:
            s = match.end()
        elif match.start() >= end:
            e = match.end()
            break
    return s, e


def context_bounds(
    text: str, start: int, end: int, mode: str, *, paragraph_sep: str = "\n\n", window: int = 100
) -> tuple[int, int]:
    """[lo, hi) of the context of text[start:end] under `mode`, edge whitespace trimmed."""
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"mention [{start}, {end}) outside a text of length {len(text)}")
    if mode == "window":
        lo, hi = max(0, start - window), min(len(text), end + window)
    elif mode in ("paragraph", "sentence"):
        lo, hi = paragraph_bounds(text, start, end, paragraph_sep)
        if mode == "sentence":
            lo, hi = sentence_bounds(text, lo, hi, start, end)
    else:
        raise ValueError(f"unknown context mode {mode!r}; expected one of {', '.join(CONTEXT_MODES)}")
    while lo < start and text[lo].isspace():
        lo += 1
    while hi > end and text[hi - 1].isspace():
        hi -= 1
    return lo, hi


def cut_context(
    text: str,
    start: int,
    end: int,
    mode: str,
    *,
    paragraph_sep: str = "\n\n",
    window: int = 100,
    converter: str = "opencc",
) -> Context:
    """The Simplified context of text[start:end] with the mention's offsets in it."""
    lo, hi = context_bounds(text, start, end, mode, paragraph_sep=paragraph_sep, window=window)
    simplified, converged = to_simplified(text[lo:hi], converter)
    return Context(simplified, start - lo, end - lo, lo, converged)
