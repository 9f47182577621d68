"""The zero-shot annotation pool: E_new sampled half uniformly, half balanced over coarse types.

"We first down-sample E_new to get a diverse set of entities with various coarse types, as the
original distribution of E_new is heavily biased towards OTHER (52%) and PER (38%). We draw
samples from E_new by 50% random sampling and 50% type-diversified sampling." (Hansel §3.4)

With `size` entities wanted: `size // 2` are drawn uniformly from E_new; the rest are split
evenly over the coarse types (`balanced_quota`: equal shares, a type with fewer entities left
than its share gives all it has and the shortfall is shared among the others; remainders go to
types in their precedence order) and drawn uniformly within each type from the entities not
drawn yet. One seeded `random.Random` makes every draw, over entities in QID-number order.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from entbench.typesys.qids import qid_sorted

UNIFORM, BALANCED = "uniform", "balanced"


def balanced_quota(available: Mapping[str, int], total: int, types: Sequence[str]) -> dict[str, int]:
    """How many of `total` each type gets: as equal as `available` allows (water filling)."""
    quota = dict.fromkeys(types, 0)
    remaining = min(total, sum(max(0, available.get(t, 0)) for t in types))
    open_types = [t for t in types if available.get(t, 0) > 0]
    while remaining > 0 and open_types:
        share, extra = divmod(remaining, len(open_types))
        short = [t for t in open_types if available[t] - quota[t] <= share]
        if short:
            for t in short:
                remaining -= available[t] - quota[t]
                quota[t] = available[t]
            open_types = [t for t in open_types if t not in short]
            continue
        for i, t in enumerate(open_types):
            quota[t] += share + (1 if i < extra else 0)
        remaining = 0
    return quota


@dataclass(frozen=True)
class Pool:
    """The drawn (qid, criterion) pairs, uniform draws first, and the balanced half's quota per type."""

    draws: list[tuple[str, str]]
    quota: dict[str, int]


def sample_pool(coarse: Mapping[str, str], size: int, types: Sequence[str], seed: int) -> Pool:
    """Draw the pool from `coarse` (E_new QID -> coarse type)."""
    if size < 0:
        raise ValueError("size must be >= 0")
    unknown = sorted({t for t in coarse.values() if t not in types})
    if unknown:
        raise ValueError(f"coarse types {unknown} are not among {list(types)}")
    rng = random.Random(seed)
    everyone = qid_sorted(coarse)
    uniform = rng.sample(everyone, min(size // 2, len(everyone)))
    drawn = set(uniform)
    left: dict[str, list[str]] = {t: [] for t in types}
    for qid in everyone:
        if qid not in drawn:
            left[coarse[qid]].append(qid)
    quota = balanced_quota({t: len(v) for t, v in left.items()}, size - len(uniform), types)
    out = [(qid, UNIFORM) for qid in uniform]
    for t in types:
        out.extend((qid, BALANCED) for qid in rng.sample(left[t], quota[t]))
    return Pool(out, quota)
