"""Word tokens and sentences with spaCy's blank English pipeline and rule-based sentencizer
(`readers.tokenizer`).

The EntEval loaders split every text field on whitespace (`str.split()`), so a token must never
contain whitespace: spaCy's whitespace tokens are dropped, and a token holding a character Python
counts as whitespace (spaCy does not split on all of them) is cut there. Then
`" ".join(words).split() == words` always holds, which is what makes token offsets written next to
a sentence mean the same thing to the loaders.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from entbench.readers.tokenizer import english_pipeline

_NON_SPACE = re.compile(r"\S+")  # \s is exactly str.isspace(), the set str.split() cuts on
_SPACE = re.compile(r"\s")
_SHARED: Tokenizer | None = None


class Token(NamedTuple):
    """A word token and its code-point offsets (end exclusive) in the text it came from (a named
    tuple: a world build makes a million of them, and a tuple is made several times faster than a
    frozen dataclass)."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Analysis:
    """The word tokens and the sentencizer's sentence spans (code-point offsets) of one text."""

    tokens: tuple[Token, ...]
    sentences: tuple[tuple[int, int], ...]


def safe_words(words: Iterable[str]) -> list[str]:
    """Pre-tokenised words (a task source's own tokens) made safe for `str.split()`: whitespace
    inside a word cuts it, empty words disappear."""
    return [piece for word in words for piece in word.split()]


class Tokenizer:
    """Tokens and sentences with the shared English pipeline (`readers.tokenizer`)."""

    def __init__(self) -> None:
        from spacy.attrs import IDX, IS_SPACE, LENGTH

        self._nlp: Any = english_pipeline()
        self._columns = [IDX, LENGTH, IS_SPACE]  # what `_doc_tokens` reads of each token

    @classmethod
    def shared(cls) -> Tokenizer:
        """One tokenizer per process (loading spaCy's English data takes a moment)."""
        global _SHARED  # noqa: PLW0603 - a per-process cache of an immutable pipeline
        if _SHARED is None:
            _SHARED = cls()
        return _SHARED

    def tokens(self, text: str) -> list[Token]:
        """The word tokens of `text` (no sentence splitting)."""
        return _doc_tokens(self._nlp.tokenizer(text), text, self._columns)

    def words(self, text: str) -> list[str]:
        """The word strings of `text`."""
        return [t.text for t in self.tokens(text)]

    def analyse(self, texts: Sequence[str], batch_size: int = 64) -> Iterator[Analysis]:
        """Tokens and sentences of each text, in order (spaCy's `pipe` batches the work)."""
        for text, doc in zip(texts, self._nlp.pipe(texts, batch_size=batch_size), strict=True):
            sentences = tuple((s.start_char, s.end_char) for s in doc.sents)
            yield Analysis(tuple(_doc_tokens(doc, text, self._columns)), sentences)

    def first_words(self, text: str, n: int) -> list[str]:
        """The first `n` word tokens of `text` (all of them if it has fewer).

        Only a prefix is tokenised: spaCy tokenises each whitespace-delimited chunk on its own, so
        cutting the text at a whitespace character leaves the tokens before the cut unchanged. The
        prefix doubles until it holds more than `n` tokens or is the whole text.
        """
        if n <= 0:
            return []
        length = max(64, 8 * n)
        while True:
            if length >= len(text):
                return self.words(text)[:n]
            cut = _whitespace_at_or_before(text, length)
            if cut > 0:
                words = self.words(text[:cut])
                if len(words) > n:
                    return words[:n]
            length *= 2


def _whitespace_at_or_before(text: str, position: int) -> int:
    """The offset of the last whitespace character at or before `position` (0 if there is none)."""
    for i in range(position, 0, -1):
        if text[i].isspace():
            return i
    return 0


def _doc_tokens(doc: Any, text: str, columns: list[int]) -> list[Token]:
    """The word tokens of a spaCy `Doc` of `text`, read from one array of each token's offset,
    length and whitespace flag (`columns`) and slices of `text`: no spaCy `Token` object is made.

    `text` is the string the tokenizer was given, which is `doc.text` (spaCy's tokenization keeps
    every character), so the offsets index it; `doc.text` itself is rebuilt by joining a `Token`
    made for every token (~5% of the tokens' time on the demo enwiki pages)."""
    tokens: list[Token] = []
    for start, length, space in doc.to_array(columns).tolist():
        if space:
            continue
        end = start + length
        word = text[start:end]
        if _SPACE.search(word) is None:  # one C call; a generator over the characters cost ~2 s/world
            tokens.append(Token(word, start, end))
            continue
        for match in _NON_SPACE.finditer(word):
            tokens.append(Token(match.group(), start + match.start(), start + match.end()))
    return tokens
