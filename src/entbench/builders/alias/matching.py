"""Exact matching of alias-table keys over text (Hansel appendix A; spec §4, §5): one automaton,
the two overlap rules, and which stage uses which.

"We apply the alias table to perform exact matching … we favor long mentions over short ones if
multiple mentions overlap … do not use any tokenization mechanism … also compute P(unlinked|m),
i.e. the prior of a given phrase that do not have a hyperlink in Wikipedia." (Hansel, appendix A)

Every key is found by one Aho-Corasick automaton (no tokenisation) over text normalised the way
the keys were (`filters.mentions.MentionNormalizer`), and overlapping occurrences are resolved in
favour of the longer one. The two rules differ when a longer key starts later: with keys "AB" and
"BCD" over "ABCD",

* leftmost-longest (`match` over a `build_matcher` automaton: ahocorasick-rs, the Rust
  `aho-corasick` crate's `LeftmostLongest`) keeps "AB": scanning left to right, the longest key at
  the leftmost start wins. `mention_stats` counts P(unlinked|m) with it over every article of
  Wikipedia: one native call per link segment, and the text is cut at link boundaries first
  (`segments`, `matching_text`), so an occurrence is linked iff it lies in an anchor. Its
  contiguous NFA holds ~125 bytes a key where pyahocorasick's trie held ~290. A vocabulary too
  large for one automaton per worker (a full enwiki alias table has ~15M keys) is matched in parts
  (`longest_per_start` per part, then `leftmost_longest` over their union: the same matches); a
  part is a byte trie in C when the extension is built (`builders.alias.native`), an overlapping
  ahocorasick-rs automaton otherwise (the reference).
  pyahocorasick's `iter_long` is not used for it: it skips some occurrences that follow an
  unfinished longer key (keys "cdda" and "d" over "cdd" give nothing, not "d" twice).
* longest-first (`find_occurrences` over a `build_automaton` automaton: pyahocorasick,
  `longest_first`) keeps "BCD": the longest occurrence
  anywhere wins, ties to the leftmost, as the paper puts it. `hansel_corpus` finds the few-shot
  candidates with it, where each kept occurrence is shown to annotators and its raw-text offsets
  matter (`normalize_with_offsets` maps every normalised character back); a corpus is small
  enough for the Python pass. (Per-character NFKC/NFKD equals whole-string normalisation except
  for combining sequences, which keys built from titles and anchors practically never contain.)

Which matches then become few-shot candidates is decided by `builders.hansel.fewshot`. Pure
functions: callers read the text and write the counts or rows.
"""

from __future__ import annotations

import unicodedata
from array import array
from collections.abc import Iterable, Sequence
from itertools import chain
from operator import itemgetter
from typing import Literal, NamedTuple

import ahocorasick
import ahocorasick_rs
import numpy as np

from entbench.builders.alias.native import PartTrie, native_enabled, native_union_walk
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


# --- leftmost-longest, inside link segments: P(unlinked|m) (`mention_stats`) -------------------
#: Stands in for an empty key, which the automaton refuses: 0xFF is no byte of any UTF-8 text, so
#: it never matches, and every other key keeps its index.
_NEVER = b"\xff"


def build_matcher(mentions: Iterable[str]) -> ahocorasick_rs.BytesAhoCorasick:
    """A leftmost-longest automaton over the UTF-8 of `mentions`; a match's first item is the
    mention's index in the iteration order (`match`)."""
    return ahocorasick_rs.BytesAhoCorasick(
        (mention.encode() if mention else _NEVER for mention in mentions),
        matchkind=ahocorasick_rs.MatchKind.LeftmostLongest,
        implementation=ahocorasick_rs.Implementation.ContiguousNFA,
    )


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
    automaton: ahocorasick_rs.BytesAhoCorasick,
    text: str,
    cut: Sequence[Segment],
    linked: array[int],
    unlinked: array[int],
) -> None:
    """Append the indices of the keys found in linked and in unlinked segments (one per occurrence).

    Each segment is matched on its own (a key never spans a link boundary), as UTF-8: offsets are
    not needed, only which key. The matches go from the automaton's list straight into the arrays
    (`array.extend` over a C `map`): no Python loop step per match.
    """
    find = automaton.find_matches_as_indexes
    for start, end, is_link in cut:
        if end > start:
            (linked if is_link else unlinked).extend(map(_KEY, find(text[start:end].encode())))


_KEY = itemgetter(0)  # (key index, start, end) -> key index


# --- leftmost-longest over a vocabulary in parts (`mention_stats` with `partition_mentions`) ----
# Leftmost-longest decides between the keys of every part at once, so the parts are not matched
# leftmost-longest each: each gives the longest of its keys starting at every position (all its
# occurrences, overlapping, the longest kept per start), and one walk over the union makes the
# leftmost-longest choice. The longest key starting at a position is the longest of the parts'
# longest there, so any cut of the vocabulary gives the same counts as one automaton over it all.
#: Separates segments (and pages) in a matched buffer: no key contains it (no UTF-8 does), so no
#: occurrence crosses it and one walk over the whole buffer is one walk per segment.
SEPARATOR = 0xFF
#: Bytes of buffer matched by one ahocorasick-rs call (cut at a separator): bounds the Python tuples alive.
_CHUNK_BYTES = 1 << 18


#: Stands in for an empty key in an overlapping automaton: 0xFE is no byte of UTF-8 text and, unlike
#: `_NEVER`, not the separator either, so it never matches in a matched buffer.
_NEVER_IN_BUFFER = b"\xfe"
#: A part of the vocabulary: the native trie, or the reference's overlapping automaton.
OverlappingMatcher = PartTrie | ahocorasick_rs.BytesAhoCorasick


def build_overlapping_matcher(mentions: Iterable[str], *, native: bool | None = None) -> OverlappingMatcher:
    """A matcher of every occurrence of the UTF-8 of `mentions` (`longest_per_start`); a key's
    index is its position in the iteration order, an empty mention never matches. `native`: the C
    trie (`native.PartTrie`; default: when built and not switched off by `ENTBENCH_NATIVE=0`) or
    the reference, an overlapping ahocorasick-rs automaton."""
    if native is None:
        native = native_enabled()
    if native:
        return PartTrie(mention.encode() for mention in mentions)
    return ahocorasick_rs.BytesAhoCorasick(
        (mention.encode() if mention else _NEVER_IN_BUFFER for mention in mentions),
        matchkind=ahocorasick_rs.MatchKind.Standard,
        implementation=ahocorasick_rs.Implementation.ContiguousNFA,
    )


def longest_per_start(matcher: OverlappingMatcher, data: bytes, first_key: int = 0) -> np.ndarray:
    """(start, length, key) rows, int32, sorted by start: at every byte offset of `data` where
    some key of the matcher starts, the longest one (`first_key` is added to its index).

    The native trie does it in one call. The reference cuts `data` into chunks at `SEPARATOR`
    bytes (no key crosses one), gets every overlapping occurrence of each chunk from the automaton
    and keeps the longest per start.
    """
    if isinstance(matcher, PartTrie):
        return matcher.longest_per_start(data, first_key)
    parts: list[np.ndarray] = []
    size = len(data)
    pos = 0
    while pos < size:
        end = data.find(SEPARATOR, pos + _CHUNK_BYTES) + 1 or size
        found = matcher.find_matches_as_indexes(data[pos:end], overlapping=True)
        if found:
            flat = np.fromiter(chain.from_iterable(found), dtype=np.int64, count=3 * len(found))
            keys, starts, ends = flat[0::3], flat[1::3], flat[2::3]
            del found, flat
            lengths = ends - starts
            longest = np.zeros(end - pos, dtype=np.int64)
            np.maximum.at(longest, starts, lengths)
            kept = np.flatnonzero(lengths == longest[starts])  # one key per (start, length)
            kept = kept[np.argsort(starts[kept], kind="stable")]
            parts.append(np.stack([starts[kept] + pos, lengths[kept], keys[kept] + first_key], axis=1))
        pos = end
    if not parts:
        return np.empty((0, 3), dtype=np.int32)
    return _int32(np.concatenate(parts))


def _int32(rows: np.ndarray) -> np.ndarray:
    if len(rows) and max(int(rows[:, 0].max()) + int(rows[:, 1].max()), int(rows[:, 2].max())) >= 1 << 31:
        raise ValueError("a matched buffer or key index past 2**31")
    return rows.astype(np.int32)


def leftmost_longest(rows: np.ndarray, *, native: bool | None = None) -> np.ndarray:
    """The (start, length, key) rows a leftmost-longest search keeps, from the longest key at each
    start (`longest_per_start`, one array per part of the vocabulary concatenated): from the start
    of the buffer, the smallest start at or after the position, the longest key there, then on
    from its end. The same matches as one `LeftmostLongest` automaton over every part's keys.
    `native`: in C (`native.native_union_walk`, linear in the rows and their range of starts; default:
    when built and enabled) or the reference in numpy and Python (a sort of the union, a search per row)."""
    if native_enabled() if native is None else native:
        return native_union_walk(rows)
    if len(rows) > 1:  # by start then longest first (each part's rows are sorted: a merge of
        # sorted runs), and the first of each start
        order = (rows[:, 0].astype(np.int64) << 32) - rows[:, 1]
        rows = rows[np.argsort(order, kind="stable")]
        rows = rows[np.r_[True, rows[1:, 0] != rows[:-1, 0]]]
    starts = rows[:, 0].astype(np.int64)
    following = np.searchsorted(starts, starts + rows[:, 1], side="left")
    kept: list[int] = []
    i, n = 0, len(following)
    while i < n:  # a block of Python ints at a time (one each for every row would be ~36 bytes a row)
        block = i - i % _WALK_BLOCK
        step = following[block : block + _WALK_BLOCK].tolist()
        while block <= i < block + len(step):
            kept.append(i)
            i = step[i - block]
    return rows[np.array(kept, dtype=np.int64)]


_WALK_BLOCK = 1 << 16


# --- longest-first, with raw-text offsets: few-shot candidates (`hansel_corpus`) ---------------
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
