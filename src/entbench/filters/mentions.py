"""Mention normalisation for the alias table, and offset-preserving Traditional->Simplified (spec §4).

Schemes (parameter `normalization` of `alias_table`):

* `hansel` (default): OpenCC Traditional->Simplified (`t2s`, phrases then characters) for Chinese
  wikis, Unicode NFKC, whitespace runs collapsed to one space and trimmed, case kept.
* `mgenre`: character-by-character Traditional->Simplified as HanziConv does (no phrases), NFKD,
  `•` and `．` written as `·` (before NFKD, which would make `．` a `.`), trimmed, case kept.

Converters (parameter `converter` of `alias_table` and of the Hansel stages): `opencc` (default)
as above, `hanziconv`: HanziConv, character by character, for every scheme, or `none`: the text as
it is (Traditional characters kept). Conversion applies to Chinese wikis only (`chinese_language`;
the alias table's `chinese` parameter, the Hansel stages' wiki language). The Hansel paper
converted its sets and its alias table with HanziConv (§3.2, footnote 3), so `hanziconv` gives
Hansel as published; OpenCC stays the default, being the more accurate of the two on real
Traditional/Simplified pairs (issue 21).

Every conversion keeps the number of code points, so offsets into a converted text are offsets
into the original (Hansel converts its texts and mentions to Simplified, §5): OpenCC's phrase
tables map n characters to n characters, and if a conversion ever did not, the text is converted
character by character instead, which is always one-to-one; HanziConv maps one character to one.
Pure functions; the dictionaries are loaded once per process.
"""

from __future__ import annotations

import functools
import itertools
import re
import typing
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import opencc

#: The normalisation schemes and Traditional -> Simplified converters (a parameter's choices).
Scheme = Literal["hansel", "mgenre"]
Converter = Literal["opencc", "hanziconv", "none"]
SCHEMES: tuple[Scheme, ...] = typing.get_args(Scheme)
CONVERTERS: tuple[Converter, ...] = typing.get_args(Converter)
_WS = re.compile(r"\s+")
#: CJK blocks whose characters the character-level table covers.
_CJK_RANGES = ((0x3400, 0x4DC0), (0x4E00, 0xA000), (0xF900, 0xFB00), (0x20000, 0x2EBF0), (0x30000, 0x3134B))
_MGENRE_DOTS = str.maketrans({"•": "·", "．": "·"})


def chinese_language(language: str) -> bool:
    """Whether a wiki language is Chinese (`zh`, `zh-…`): the only text Traditional -> Simplified
    conversion applies to."""
    return language.split("-", maxsplit=1)[0] == "zh"


@functools.cache
def _opencc() -> opencc.OpenCC:
    return opencc.OpenCC("t2s")


@functools.cache
def char_table() -> dict[int, str]:
    """OpenCC's character-level Traditional->Simplified mapping (code point -> one character).

    Each character is converted on its own line, so no phrase can apply: what remains is the
    character dictionary, which is the HanziConv-style conversion of the `mgenre` scheme.
    """
    chars = [chr(c) for start, end in _CJK_RANGES for c in range(start, end)]
    converted = _opencc().convert("\n".join(chars)).split("\n")
    if len(converted) != len(chars):
        raise RuntimeError("OpenCC changed the number of lines of the character table")
    return {ord(a): b for a, b in zip(chars, converted, strict=True) if a != b and len(b) == 1}


def t2s_chars(text: str) -> str:
    """Character-by-character Traditional->Simplified (one code point for one)."""
    return text.translate(char_table())


def t2s(text: str) -> str:
    """OpenCC `t2s` with the length of `text` preserved (character-level if a phrase would not)."""
    if not text:
        return text
    out: str = _opencc().convert(text)
    if len(out) != len(text):
        return t2s_chars(text)
    return out


def t2s_many(texts: Sequence[str]) -> list[str]:
    """`t2s` of many short strings in one OpenCC call (strings are joined by newlines)."""
    if not texts:
        return []
    if any("\n" in t for t in texts):
        return [t2s(t) for t in texts]
    out = _opencc().convert("\n".join(texts)).split("\n")
    if len(out) != len(texts):
        return [t2s(t) for t in texts]
    return [o if len(o) == len(t) else t2s_chars(t) for o, t in zip(out, texts, strict=True)]


#: Joins the pieces of `t2s_pieces` in one OpenCC call: a private-use character, in no OpenCC
#: dictionary, so no phrase spans it and OpenCC's longest-match segmentation restarts after it.
_PIECE_SEPARATOR = "\ue000"


def t2s_pieces(text: str, cuts: Sequence[int]) -> str:
    """`text` with each piece between the sorted offsets `cuts` converted by `t2s` on its own.

    One OpenCC call for all the pieces (joined by a separator no phrase contains); the result has
    the length of `text`, piece by piece, as `"".join(t2s(piece) for piece in pieces)` does.
    """
    bounds = [0, *cuts, len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    if len(pieces) == 1:
        return t2s(text)
    if _PIECE_SEPARATOR in text:
        return "".join(t2s(piece) for piece in pieces)
    out = _opencc().convert(_PIECE_SEPARATOR.join(pieces)).split(_PIECE_SEPARATOR)
    if len(out) != len(pieces):
        return "".join(t2s(piece) for piece in pieces)
    return "".join(o if len(o) == len(p) else t2s_chars(p) for o, p in zip(out, pieces, strict=True))


@functools.cache
def hanziconv_table() -> dict[int, str]:
    """HanziConv's Traditional->Simplified conversion as a `str.translate` table.

    `HanziConv.toSimplified` finds each character in its traditional character map (`str.find`, so
    the first entry wins) and writes the simplified character at the same index: one code point
    for one. The same mapping as one table converts a paragraph in one call instead of a search
    of the 2,704-character map per character; the result is the same (tested against HanziConv).
    """
    from hanziconv.charmap import simplified_charmap, traditional_charmap

    table: dict[int, str] = {}
    for traditional, simplified in zip(traditional_charmap, simplified_charmap, strict=True):
        table.setdefault(ord(traditional), simplified)
    return {c: s for c, s in table.items() if chr(c) != s}


def t2s_hanziconv(text: str) -> str:
    """HanziConv's Traditional->Simplified (character by character, one code point for one)."""
    return text.translate(hanziconv_table())


def simplifier(converter: str) -> Callable[[str], str]:
    """The Traditional->Simplified conversion of a `converter` (each keeps the length of a text;
    `none` returns it as it is)."""
    if converter == "opencc":
        return t2s
    if converter == "hanziconv":
        return t2s_hanziconv
    if converter == "none":
        return _unchanged
    raise ValueError(f"unknown converter {converter!r}; choose from {', '.join(CONVERTERS)}")


def _unchanged(text: str) -> str:
    return text


def _finish_hansel(text: str) -> str:
    return _WS.sub(" ", unicodedata.normalize("NFKC", text)).strip()


def _finish_mgenre(text: str) -> str:
    return unicodedata.normalize("NFKD", text.translate(_MGENRE_DOTS)).strip()


class MentionNormalizer:
    """Normalises mentions with one scheme; `chinese` turns on Traditional->Simplified, with
    `converter` (`opencc`: phrases then characters for `hansel`, characters for `mgenre`;
    `hanziconv`: HanziConv's characters for both)."""

    def __init__(self, scheme: str = "hansel", *, chinese: bool = False, converter: str = "opencc") -> None:
        if scheme not in SCHEMES:
            raise ValueError(f"unknown mention normalisation {scheme!r}; choose from {', '.join(SCHEMES)}")
        self.scheme = scheme
        self.chinese = chinese
        self.converter = converter
        self.simplify: Callable[[str], str] = simplifier(converter)
        if converter == "opencc" and scheme == "mgenre":
            self.simplify = t2s_chars
        self._finish: Callable[[str], str] = _finish_hansel if scheme == "hansel" else _finish_mgenre

    @classmethod
    def from_json(cls, doc: Mapping[str, object]) -> MentionNormalizer:
        """The normaliser an alias table recorded (`_normalization.json`; no `converter`: OpenCC)."""
        return cls(
            str(doc["scheme"]), chinese=bool(doc["chinese"]), converter=str(doc.get("converter", "opencc"))
        )

    def to_json(self) -> dict[str, object]:
        """What `from_json` reads back."""
        return {"scheme": self.scheme, "chinese": self.chinese, "converter": self.converter}

    def __call__(self, text: str) -> str:
        """The normalised form of one mention ("" if nothing is left)."""
        return self.many([text])[0]

    def many(self, texts: Sequence[str]) -> list[str]:
        """Normalise many mentions (one OpenCC call for the batch)."""
        if self.chinese:
            flat = [t.replace("\n", " ").replace("\r", " ") for t in texts]
            if self.converter == "opencc" and self.scheme == "hansel":
                texts = t2s_many(flat)
            else:
                texts = [self.simplify(t) for t in flat]
        finish = self._finish
        return [finish(t) for t in texts]

    def convert_for_matching(self, text: str, cuts: Sequence[int] = ()) -> str:
        """`text` in Simplified for a Chinese wiki, each piece between `cuts` (the link boundaries)
        converted on its own as the keys were: one OpenCC pass per page (`t2s_pieces`). Always
        the length of `text`; unchanged for other wikis."""
        if not self.chinese:
            return text
        if self.converter == "opencc" and self.scheme == "hansel":
            return t2s_pieces(text, cuts)
        return self.simplify(text)  # character by character: the pieces make no difference

    def text_for_matching(self, converted: str) -> str | None:
        """A converted text (`convert_for_matching`) made matchable at the same offsets.

        Returns None when that is impossible for this text (NFKC/NFKD would change it); the
        caller then finishes it segment by segment (`segment_for_matching`). Whitespace
        characters become single spaces one for one, so a key never matches across a paragraph
        break ("\\n\\n" becomes two spaces and keys have single spaces only).
        """
        if self.scheme == "mgenre":
            converted = converted.translate(_MGENRE_DOTS)
            if not unicodedata.is_normalized("NFKD", converted):
                return None
        elif not unicodedata.is_normalized("NFKC", converted):
            return None
        return _WS_ONE.sub(" ", converted)

    def segment_for_matching(self, text: str, *, converted: bool = False) -> str:
        """One segment (a link anchor or the text between links) normalised for matching; pass
        `converted=True` for a segment cut from `convert_for_matching`'s result."""
        if not converted:
            text = self.convert_for_matching(text)
        if self.scheme == "hansel":
            return _WS_ONE.sub(" ", unicodedata.normalize("NFKC", text))
        return _WS_ONE.sub(" ", unicodedata.normalize("NFKD", text.translate(_MGENRE_DOTS)))


_WS_ONE = re.compile(r"\s")
