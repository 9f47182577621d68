"""The native matcher of a vocabulary part (`entbench._mentionparts`) against the reference:
`longest_per_start` through the C trie gives the rows the overlapping ahocorasick-rs automaton
gives, and `leftmost_longest`'s walk in C keeps the rows the Python walk keeps.

Keys share prefixes (a small alphabet, or keys cut from one another), hold multi-byte UTF-8, and
come in parts of consecutive sorted keys as `mention_stats` cuts them (and in arbitrary ones); the
buffers are segments separated by 0xFF as a span's text is (`mention_pages.SpanText`). `make
sanitize` runs these under AddressSanitizer and UndefinedBehaviorSanitizer too. Budgets:
tests/fuzz/budget.py (ENTBENCH_FUZZ_SCALE).
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from entbench.builders.alias import native
from entbench.builders.alias.matching import (
    SEPARATOR,
    build_matcher,
    build_overlapping_matcher,
    leftmost_longest,
    longest_per_start,
)
from entbench.builders.alias.native import PartTrie
from tests.fuzz.budget import fuzz_settings

pytestmark = pytest.mark.skipif(
    not native.native_available() and os.environ.get("ENTBENCH_REQUIRE_NATIVE") != "1",
    reason="entbench._mentionparts is not built (no C compiler at install)",
)
SEP = bytes([SEPARATOR])


def both(keys: list[str], data: bytes, first_key: int = 0) -> np.ndarray:
    """`longest_per_start` of `keys` over `data` both ways; they must be equal. The native rows."""
    reference = longest_per_start(build_overlapping_matcher(keys, native=False), data, first_key)
    trie = build_overlapping_matcher(keys, native=True)
    assert isinstance(trie, PartTrie)
    rows = longest_per_start(trie, data, first_key)
    assert rows.dtype == np.int32 and rows.shape == reference.shape
    assert rows.tolist() == reference.tolist()
    return rows


def in_sorted_parts(keys: list[str], data: bytes, size: int) -> list[tuple[int, int, int]]:
    """`mention_stats`' way: sorted keys cut into parts of `size`, each part's rows, then the walk
    (both ways, which must agree). (start, length, key index in the sorted keys) rows."""
    ordered = sorted(keys)
    found = [both(ordered[i : i + size], data, i) for i in range(0, len(ordered), size)]
    union = np.concatenate(found) if found else np.empty((0, 3), np.int32)
    kept = leftmost_longest(union, native=True)
    assert kept.tolist() == leftmost_longest(union, native=False).tolist()
    return [(s, n, k) for s, n, k in kept.tolist()]


def one_automaton(keys: list[str], data: bytes) -> list[tuple[int, int, int]]:
    """What one leftmost-longest automaton over every key finds (key: index in the sorted keys).
    Its stand-in for an empty key (0xFF) matches the separators alone: those matches are dropped."""
    ordered = sorted(keys)
    matcher = build_matcher(ordered)
    return [(s, e - s, k) for k, s, e in matcher.find_matches_as_indexes(data) if ordered[k]]


# --- examples ----------------------------------------------------------------------------------------------
def test_native_is_built_when_required() -> None:
    """CI (the Makefile) sets ENTBENCH_REQUIRE_NATIVE=1: there the compiled matcher must be importable."""
    if os.environ.get("ENTBENCH_REQUIRE_NATIVE") != "1":
        pytest.skip("ENTBENCH_REQUIRE_NATIVE is not set")
    assert native.native_available(), "entbench._mentionparts is not built (or is a stale build)"


def test_the_longest_key_at_each_start() -> None:
    keys = ["a", "ab", "abc", "abcd", "bcd", "c", "长江", "长江三峡大坝", "江"]
    data = SEP.join([b"abcdabcabx", "长江三峡的江".encode(), b"", b"bcdc"])
    rows = both(keys, data, 10)
    assert [(s, n, k - 10) for s, n, k in rows.tolist()] == [
        (0, 4, 3),  # abcd; bcd and c start inside it, each with a row of its own
        (1, 3, 4),
        (2, 1, 5),
        (4, 3, 2),
        (6, 1, 5),
        (7, 2, 1),
        (11, 6, 6),  # 长江: 长江三峡大坝 breaks off at 的
        (14, 3, 8),
        (26, 3, 8),
        (31, 3, 4),  # after the empty segment
        (32, 1, 5),
        (34, 1, 5),
    ]
    texts = {(s, n): data[s : s + n].decode() for s, n, _ in rows.tolist()}
    assert texts[(0, 4)] == "abcd" and texts[(1, 3)] == "bcd" and texts[(11, 6)] == "长江"
    assert all(keys[k - 10] == data[s : s + n].decode() for s, n, k in rows.tolist())


def test_a_separator_ends_every_key_and_an_empty_key_never_matches() -> None:
    keys = ["", "ab", "b"]
    rows = both(keys, b"a" + SEP + b"b" + SEP + SEP + b"ab")
    assert rows.tolist() == [[2, 1, 2], [5, 2, 1], [6, 1, 2]]


def test_of_equal_keys_the_first_counts() -> None:
    trie = PartTrie([b"x", b"ab", b"ab"])
    assert trie.longest_per_start(b"abab", 5).tolist() == [[0, 2, 6], [2, 2, 6]]


def test_a_trie_holds_a_node_per_distinct_prefix() -> None:
    trie = PartTrie([b"abc", b"ab", b"b", b"", b"abd"])
    assert trie.nodes == 6  # the root, a, b, ab, abc, abd
    assert trie.nbytes < 20_000
    assert trie.longest_per_start(b"").tolist() == []
    assert PartTrie([]).longest_per_start(b"abc").tolist() == []


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="bytes"):
        PartTrie(["ab"])  # type: ignore[list-item]
    trie = PartTrie([b"a", b"b"])
    with pytest.raises(ValueError, match="2\\*\\*31"):
        trie.longest_per_start(b"ab", (1 << 31) - 2)
    with pytest.raises(RuntimeError, match="built once"):
        trie._trie.__init__([b"c"])  # another thread could be walking it
    with pytest.raises(ValueError, match="length below 1"):
        native.native_union_walk(np.array([[0, 0, 1]], dtype=np.int32))
    with pytest.raises(ValueError, match="negative start"):
        native.native_union_walk(np.array([[-1, 2, 1]], dtype=np.int32))
    with pytest.raises(ValueError, match="triples"):
        native._mentionparts.union_walk(b"\x00" * 8)  # type: ignore[union-attr]
    assert native.native_union_walk(np.empty((0, 3), np.int32)).tolist() == []
    rows = np.array([[5, 1, 9], [2, 2, 7], [3, 4, 8], [2, 1, 6]], dtype=np.int32)  # any order
    assert native.native_union_walk(rows).tolist() == [[2, 2, 7], [5, 1, 9]]
    # from an unaligned buffer (a copy is walked)
    assert native._mentionparts.union_walk(memoryview(b"\x00" + rows.tobytes())[1:]) == bytearray(  # type: ignore[union-attr]
        np.array([[2, 2, 7], [5, 1, 9]], dtype=np.int32).tobytes()
    )


def test_many_children_and_long_shared_prefixes() -> None:
    """Nodes with dozens of children (the binary search), long keys cut from one another, parts of
    every size: the C trie, the reference and one automaton agree."""
    rng = random.Random(33)
    alphabet = "abcdefghijklmnopqrstuvwxyzé中文ß0123456789 -"
    keys = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4))) for _ in range(3000)}
    stems = ["".join(rng.choice(alphabet) for _ in range(20)) for _ in range(30)]
    keys |= {stem[:n] for stem in stems for n in range(1, 21, 3)}
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300))) for _ in range(60)]
    texts += [stem + rng.choice(stems)[:7] for stem in stems]
    data = SEP.join(t.encode() for t in texts)
    expected = one_automaton(sorted(keys), data)
    assert len(expected) > 1000
    for size in (1, 7, 500, 10_000):
        assert in_sorted_parts(sorted(keys), data, size) == expected


# --- differential property test ------------------------------------------------------------------------
ALPHABET = "abcé中\x00"


@fuzz_settings(300)
@given(
    st.lists(st.text(alphabet=ALPHABET, max_size=6), min_size=1, max_size=16, unique=True),
    st.lists(st.text(alphabet=ALPHABET, max_size=30), min_size=1, max_size=5),
    st.integers(1, 6),
)
def test_native_agrees_with_the_reference(keys: list[str], segments: list[str], size: int) -> None:
    # Keys that are prefixes of one another come often from this small alphabet; the empty key is
    # drawn too (it never matches); segments are separated as a span's text is.
    data = SEP.join(s.encode() for s in segments)
    assert in_sorted_parts(keys, data, size) == one_automaton(keys, data)


@fuzz_settings(300)
@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(1, 9), st.integers(0, 1 << 30)), max_size=40),
    st.randoms(use_true_random=False),
)
def test_union_walk_agrees_with_the_reference(rows: list[tuple[int, int, int]], rng: random.Random) -> None:
    # Rows in any order, with ties at one (start, length) (the first counts) and starts far from 0:
    # the dense walk in C keeps what the sort-and-search reference keeps.
    shift = rng.choice([0, 1, 1 << 20])
    union = np.array([(s + shift, n, k) for s, n, k in rows], dtype=np.int32).reshape(-1, 3)
    expected = leftmost_longest(union, native=False)
    assert leftmost_longest(union, native=True).tolist() == expected.tolist()


@fuzz_settings(200)
@given(st.lists(st.binary(min_size=1, max_size=5), max_size=12), st.binary(max_size=60), st.data())
def test_native_agrees_on_arbitrary_bytes(keys: list[bytes], data: bytes, draw: st.DataObject) -> None:
    # Any bytes, 0xFF included: the C trie against a brute force (the reference automaton takes
    # UTF-8 keys only), with a part of the keys in any order.
    trie = PartTrie(keys)
    first = draw.draw(st.integers(0, 1000))
    expected = []
    for start in range(len(data)):
        best = max(
            ((len(key), -i) for i, key in enumerate(keys) if data.startswith(key, start)), default=None
        )
        if best is not None:
            expected.append([start, best[0], first - best[1]])
    assert trie.longest_per_start(data, first).tolist() == expected
