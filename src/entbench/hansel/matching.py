"""Exact alias matching over raw text for the few-shot slice (Hansel appendix A; spec §5).

"We apply the alias table to perform exact matching on each unlabeled corpus. During alias
matching, we favor long mentions over short ones if multiple mentions overlap. [...] (2) do not
use any tokenization mechanism" (Hansel, appendix A).

* The text is normalised the way the alias-table keys were (`filters.mentions.MentionNormalizer`):
  Traditional->Simplified, then Unicode normalisation and whitespace one character at a time, so
  every character of the normalised text knows the character of the raw text it came from and a
  match maps back to raw offsets. (Per-character NFKC/NFKD equals whole-string normalisation except
  for combining sequences, which keys built from titles and anchors practically never contain.)
* Every occurrence of every key is found (an Aho-Corasick automaton, no tokenisation); among
  overlapping occurrences the longest wins, ties to the leftmost: occurrences are taken longest
  first and kept when they overlap nothing kept before. (pyahocorasick's `iter_long`, which
  `mention_stats` uses, is leftmost-longest instead: with keys "AB" and "BCD" over "ABCD" it keeps
  "AB"; the paper's rule keeps "BCD".)

Which matches then become few-shot candidates is decided by `hansel.fewshot` (the filters).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Literal, NamedTuple

import ahocorasick

from entbench.filters.mentions import MentionNormalizer

_MGENRE_DOTS = {ord("•"): "·", ord("．"): "·"}


class Occurrence(NamedTuple):
    """One match: raw-text offsets [start, end) and the index of the key."""

    start: int
    end: int
    key: int


def normalize_with_offsets(normalizer: MentionNormalizer, text: str) -> tuple[str, list[int]]:
    """`text` normalised like alias keys, and for each of its characters the raw index it came from.

    The last entry of the offsets list is `len(text)` (a sentinel for match ends).
    """
    if normalizer.chinese:
        text = normalizer.simplify(text)
    form: Literal["NFKC", "NFKD"] = "NFKC" if normalizer.scheme == "hansel" else "NFKD"
    if normalizer.scheme == "mgenre":
        text = text.translate(_MGENRE_DOTS)
    if unicodedata.is_normalized(form, text):
        # The common case: one character for one, only whitespace to unify.
        flat = "".join(" " if ch.isspace() else ch for ch in text)
        return flat, list(range(len(text) + 1))
    pieces: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        piece = " " if ch.isspace() else unicodedata.normalize(form, ch)
        pieces.append(piece)
        origin.extend([i] * len(piece))
    origin.append(len(text))
    return "".join(pieces), origin


def build_automaton(keys: Sequence[str]) -> ahocorasick.Automaton:
    """An automaton over `keys`; a match's value is the key's index in `keys`."""
    automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
    for i, key in enumerate(keys):
        if key:
            automaton.add_word(key, i)
    automaton.make_automaton()
    return automaton


def find_occurrences(
    automaton: ahocorasick.Automaton, keys: Sequence[str], normalizer: MentionNormalizer, text: str
) -> list[Occurrence]:
    """Every kept match of a key in `text` (raw offsets), in text order."""
    if not len(automaton) or not text:
        return []
    norm, origin = normalize_with_offsets(normalizer, text)
    spans = [(end + 1 - len(keys[i]), end + 1, i) for end, i in automaton.iter(norm)]
    out = []
    for start, end, key in longest_first(spans):
        raw_start, raw_end = origin[start], origin[end - 1] + 1
        out.append(Occurrence(raw_start, raw_end, key))
    return out


def longest_first(spans: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Non-overlapping (start, end, key) spans, longest first, ties to the leftmost; in text order."""
    if not spans:
        return []
    used = bytearray(max(end for _, end, _ in spans))
    kept: list[tuple[int, int, int]] = []
    for start, end, key in sorted(spans, key=lambda s: (s[0] - s[1], s[0], s[2])):
        if not any(used[start:end]):
            used[start:end] = b"\x01" * (end - start)
            kept.append((start, end, key))
    return sorted(kept)
