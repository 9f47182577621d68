"""Leftmost-longest over a vocabulary in parts (`mention_stats`' `partition_mentions`): the longest
key of each part at every start, merged and walked, finds what one `LeftmostLongest` automaton
over the whole vocabulary finds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from entbench.builders.alias import matching
from entbench.builders.alias.matching import (
    SEPARATOR,
    build_matcher,
    build_overlapping_matcher,
    leftmost_longest,
    longest_per_start,
)


def one_automaton(keys: list[str], data: bytes) -> list[tuple[int, int, int]]:
    """(start, length, key) of one leftmost-longest automaton over every key."""
    return [
        (start, end - start, key) for key, start, end in build_matcher(keys).find_matches_as_indexes(data)
    ]


def in_parts(
    keys: list[str], data: bytes, parts: list[list[int]], *, native: bool | None = None
) -> list[tuple[int, int, int]]:
    """The same through one overlapping matcher per part (`parts`: the key indices of each; the
    native trie when built, unless `native` says which)."""
    found = []
    for members in parts:
        automaton = build_overlapping_matcher([keys[i] for i in members], native=native)
        rows = longest_per_start(automaton, data)
        rows[:, 2] = np.array(members, dtype=np.int32)[rows[:, 2]] if len(rows) else rows[:, 2]
        found.append(rows)
    kept = leftmost_longest(np.concatenate(found) if found else np.empty((0, 3), np.int32))
    return [(int(s), int(n), int(k)) for s, n, k in kept.tolist()]


def test_a_longer_key_starting_later_loses_in_every_cut() -> None:
    keys = ["AB", "BCD", "D"]
    for parts in ([[0, 1, 2]], [[0], [1], [2]], [[1], [0, 2]], [[2, 1], [0]]):
        assert in_parts(keys, b"ABCD", parts) == one_automaton(keys, b"ABCD") == [(0, 2, 0), (3, 1, 2)]


def test_a_key_after_an_unfinished_longer_one_is_found_in_every_cut() -> None:
    keys = ["cdda", "d"]
    for parts in ([[0, 1]], [[0], [1]], [[1], [0]]):
        assert in_parts(keys, b"cdd", parts) == one_automaton(keys, b"cdd") == [(1, 1, 1), (2, 1, 1)]


def test_prefixes_in_other_parts() -> None:
    keys = ["a", "ab", "abc", "abcd", "bcd", "c"]
    data = b"abcdabcabxbcdc"
    expected = one_automaton(keys, data)
    assert expected == [(0, 4, 3), (4, 3, 2), (7, 2, 1), (10, 3, 4), (13, 1, 5)]
    for parts in ([[0], [1], [2], [3], [4], [5]], [[3, 5], [0, 4], [1, 2]], [[0, 1, 2, 3, 4, 5]]):
        assert in_parts(keys, data, parts) == expected


def test_no_occurrence_crosses_a_separator() -> None:
    keys = ["ab", "b"]
    data = b"a" + bytes([SEPARATOR]) + b"b"
    assert in_parts(keys, data, [[0], [1]]) == [(2, 1, 1)]


def test_buffers_longer_than_one_native_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matching, "_CHUNK_BYTES", 3)  # each call stops at the next separator
    keys = ["ab", "b", "bab"]
    data = bytes([SEPARATOR]).join([b"abab", b"bab", b"", b"babab"])
    assert in_parts(keys, data, [[0], [1, 2]], native=False) == one_automaton(keys, data)


ALPHABET = "abcé中"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=5), min_size=1, max_size=10, unique=True),
    st.lists(st.text(alphabet=ALPHABET, max_size=25), min_size=1, max_size=4),
    st.data(),
)
def test_parts_agree_with_one_automaton(keys: list[str], segments: list[str], data: st.DataObject) -> None:
    # Keys that are prefixes of one another come often from this small alphabet; each key goes to
    # a part drawn at random (not only consecutive ones), and segments are separated as a span's
    # text is (`mention_pages.SpanText`).
    part_of = data.draw(st.lists(st.integers(0, 3), min_size=len(keys), max_size=len(keys)))
    parts = [[i for i, p in enumerate(part_of) if p == part] for part in sorted(set(part_of))]
    buffer = bytes([SEPARATOR]).join(s.encode() for s in segments)
    assert in_parts(keys, buffer, parts) == one_automaton(keys, buffer)
