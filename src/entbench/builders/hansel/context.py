"""The text of a Hansel record around its mention, Simplified on a Chinese wiki (spec §5; Hansel §3.2).

"To focus on simplified Chinese, we consider Chinese-Wikipedia only, and converted traditional
Chinese characters to simplified in all training and evaluation sets" (Hansel §3.2). The official
records' `text` is one paragraph (`hansel.readme-example.jsonl`); spec §5 makes it a flag:

* `paragraph` (default): the paragraph holding the mention. Paragraphs are separated by
  `paragraph_sep` ("\\n\\n" in the Wikipedia scan's text, spec §3; "\\n" for raw corpora).
* `sentence`: the sentences of that paragraph the mention overlaps, by the wiki's language. In
  Chinese and Japanese (`FULL_STOP_LANGUAGES`) a sentence ends after a run of 。！？!? and the
  closing quotes or brackets right after it; in any other language sentences are spaCy's
  sentencizer's over the language's tokenizer (`readers.tokenizer`: "U.S." or "Mr." end none).
* `window`: `window` code points on each side of the mention, clipped to the document.

Whitespace at either edge of a context is trimmed (never into the mention). Conversion (on a
Chinese wiki only: `hansel.site`) is OpenCC `t2s` as the alias table does it
(`filters.mentions.t2s`), or HanziConv, which the Hansel paper used (`converter="hanziconv"`,
footnote 3), or none (`converter="none"`); each keeps the number of code points, so offsets
survive. It is applied to the context itself and repeated until it no longer changes: every
output text is a fixed point of the conversion.
"""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass
from typing import Literal

from entbench.filters.mentions import simplifier
from entbench.readers.tokenizer import sentence_starts

ContextMode = Literal["paragraph", "sentence", "window"]
CONTEXT_MODES: tuple[ContextMode, ...] = typing.get_args(ContextMode)
#: Languages whose sentences end at full stops such as 。 (no space after them): the rule below.
FULL_STOP_LANGUAGES = frozenset({"zh", "ja", "yue", "lzh", "wuu", "gan"})
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
    (length kept); also whether it got there. `none` returns `text` as it is."""
    if converter == "none":
        return text, True
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


def full_stop_language(language: str) -> bool:
    """Whether `language`'s sentences end at CJK full stops (`FULL_STOP_LANGUAGES`)."""
    return language.split("-", maxsplit=1)[0] in FULL_STOP_LANGUAGES


def sentence_bounds(
    text: str, lo: int, hi: int, start: int, end: int, language: str = "zh"
) -> tuple[int, int]:
    """[s, e) of the sentences within [lo, hi) that text[start:end] overlaps, in `language`."""
    if not full_stop_language(language):
        starts = [lo + offset for offset in sentence_starts(text[lo:hi], language)]
        s = max((b for b in starts if b <= start), default=lo)
        e = min((b for b in starts if b >= end and b > s), default=hi)
        return s, e
    s, e = lo, hi
    for match in _SENTENCE_END.finditer(text, lo, hi):
        if match.end() <= start:
            s = match.end()
        elif match.start() >= end:
            e = match.end()
            break
    return s, e


def context_bounds(
    text: str,
    start: int,
    end: int,
    mode: str,
    *,
    paragraph_sep: str = "\n\n",
    window: int = 100,
    language: str = "zh",
) -> tuple[int, int]:
    """[lo, hi) of the context of text[start:end] under `mode` (sentences of `language`), edge
    whitespace trimmed."""
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"mention [{start}, {end}) outside a text of length {len(text)}")
    if mode == "window":
        lo, hi = max(0, start - window), min(len(text), end + window)
    elif mode in ("paragraph", "sentence"):
        lo, hi = paragraph_bounds(text, start, end, paragraph_sep)
        if mode == "sentence":
            lo, hi = sentence_bounds(text, lo, hi, start, end, language)
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
    language: str = "zh",
) -> Context:
    """The context of text[start:end] (Simplified by `converter`) with the mention's offsets in it."""
    lo, hi = context_bounds(
        text, start, end, mode, paragraph_sep=paragraph_sep, window=window, language=language
    )
    simplified, converged = to_simplified(text[lo:hi], converter)
    return Context(simplified, start - lo, end - lo, lo, converged)
