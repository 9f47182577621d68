"""Seeded, order-independent sampling: every choice is a sort by a keyed hash.

A row's place in a seeded order is `xxh64(seed, key)`, with the key itself breaking ties, so the
result depends on the seed and the rows' content only, never on input order or worker count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import xxhash

T = TypeVar("T")
_SEP = "\x1f"


def stable_hash(seed: int, *parts: str) -> int:
    """xxh64 of the parts (joined by U+001F) with `seed` as the hash seed."""
    return int(xxhash.xxh64_intdigest(_SEP.join(parts).encode("utf-8"), seed=seed & 0xFFFFFFFFFFFFFFFF))


def seeded_order(items: Iterable[T], key: Callable[[T], tuple[str, ...]], seed: int) -> list[T]:
    """`items` sorted by the seeded hash of their key, ties by the key."""

    def order(item: T) -> tuple[int, tuple[str, ...]]:
        parts = key(item)
        return stable_hash(seed, *parts), parts

    return sorted(items, key=order)


def proportional(total: int, sizes: Sequence[int]) -> list[int]:
    """How many of `total` items each split gets: the sizes themselves when there are enough,
    else shares proportional to them (largest remainders first, ties to the earlier split)."""
    want = sum(sizes)
    if total >= want or want == 0:
        return list(sizes)
    exact = [total * s / want for s in sizes]
    counts = [int(x) for x in exact]
    order = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return counts
