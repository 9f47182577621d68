"""The native matcher of a part of an alias vocabulary (`entbench._mentionparts`,
src/entbench/_native/mentionparts.c), if built.

`matching.longest_per_start` finds, at every byte of a buffer, the longest key of one part starting
there. The reference asks ahocorasick-rs for every overlapping occurrence, one Python tuple each,
and keeps the longest per start with numpy; `_mentionparts.Trie` walks a byte trie of the part's
keys from each start whose first two bytes begin one of them, and returns the same rows as one
buffer (tests/builders/alias/test_matching_native.py compares the two). `_mentionparts.union_walk`
is `matching.leftmost_longest` in one linear pass. The extension is compiled when the package is installed
(hatch_build.py); without a C compiler the install still succeeds and matching takes the reference
path. `ENTBENCH_NATIVE=0` forces that path, as it does for the Wikidata scan.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from entbench.native_ext import load_extension, native_switched_on

#: The interface of `_mentionparts` this module calls; mentionparts.c's `ABI` must match, so a stale
#: build (an old .so next to newer sources) is ignored rather than misused.
NATIVE_ABI = 2

_mentionparts = load_extension("_mentionparts", NATIVE_ABI)


def native_available() -> bool:
    """Whether the compiled matcher is installed (regardless of `ENTBENCH_NATIVE`)."""
    return _mentionparts is not None


def native_enabled() -> bool:
    """Whether matching takes the native path: built, and not switched off by `ENTBENCH_NATIVE=0`."""
    return _mentionparts is not None and native_switched_on()


class PartTrie:
    """The byte trie of one part's keys (`_mentionparts.Trie`); a key's index is its position in
    the iteration order, an empty key never matches, and of equal keys the first counts.

    It holds 9 bytes a trie node (`nbytes`): ~5-8 nodes a key on a part of consecutive sorted
    mentions (they share most of their prefixes), the keys themselves only while it is built."""

    def __init__(self, keys: Iterable[bytes]) -> None:
        if _mentionparts is None:
            raise RuntimeError("the native mention matcher is not built")
        self._trie = _mentionparts.Trie(list(keys))

    @property
    def nbytes(self) -> int:
        """Bytes the trie holds."""
        return int(self._trie.nbytes)

    @property
    def nodes(self) -> int:
        """Nodes of the trie, the root included."""
        return int(self._trie.nodes)

    def longest_per_start(self, data: bytes, first_key: int = 0) -> np.ndarray:
        """(start, length, key) rows, int32, sorted by start: `matching.longest_per_start`."""
        found = self._trie.longest(data, first_key)
        return np.frombuffer(found, dtype=np.int32).reshape(-1, 3)


def native_union_walk(rows: np.ndarray) -> np.ndarray:
    """`_mentionparts.union_walk`: the (start, length, key) int32 rows `matching.leftmost_longest`
    keeps of `rows` (in any order), by start; two int32s of scratch per byte of their range of starts."""
    if _mentionparts is None:
        raise RuntimeError("the native mention matcher is not built")
    kept = _mentionparts.union_walk(np.ascontiguousarray(rows, dtype=np.int32))
    return np.frombuffer(kept, dtype=np.int32).reshape(-1, 3)
