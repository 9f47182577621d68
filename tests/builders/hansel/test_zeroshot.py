"""Zero-shot pool sampling: half uniform, half balanced over coarse types (Hansel §3.4; spec §5)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from entbench.builders.hansel.zeroshot import BALANCED, UNIFORM, balanced_quota, sample_pool

TYPES = ("PER", "LOC", "ORG", "EVENT", "OTHER")


def test_quota_is_even_and_gives_shortfalls_to_the_others() -> None:
    assert balanced_quota(dict.fromkeys(TYPES, 100), 10, TYPES) == dict.fromkeys(TYPES, 2)
    assert balanced_quota(dict.fromkeys(TYPES, 100), 12, TYPES) == {
        "PER": 3, "LOC": 3, "ORG": 2, "EVENT": 2, "OTHER": 2,
    }  # fmt: skip
    # ORG has 1, EVENT 0: their shares go to the other three
    short = {"PER": 50, "LOC": 50, "ORG": 1, "EVENT": 0, "OTHER": 50}
    assert balanced_quota(short, 10, TYPES) == {"PER": 3, "LOC": 3, "ORG": 1, "EVENT": 0, "OTHER": 3}
    assert balanced_quota(short, 1000, TYPES) == short


@given(
    st.lists(st.integers(0, 40), min_size=5, max_size=5),
    st.integers(0, 250),
)
def test_quota_is_max_min_fair(sizes: list[int], total: int) -> None:
    available = dict(zip(TYPES, sizes, strict=True))
    quota = balanced_quota(available, total, TYPES)
    assert sum(quota.values()) == min(total, sum(sizes))
    assert all(0 <= quota[t] <= available[t] for t in TYPES)
    # A type left below its availability is never more than one behind any other type.
    highest = max(quota.values())
    assert all(quota[t] >= highest - 1 for t in TYPES if quota[t] < available[t])


def population(counts: dict[str, int]) -> dict[str, str]:
    out, n = {}, 1
    for t, k in counts.items():
        for _ in range(k):
            out[f"Q{n}"] = t
            n += 7
    return out


def test_pool_halves() -> None:
    coarse = population({"PER": 380, "LOC": 40, "ORG": 30, "EVENT": 30, "OTHER": 520})
    pool = sample_pool(coarse, 100, TYPES, seed=1)
    assert len(pool.draws) == 100 and len({q for q, _ in pool.draws}) == 100
    assert [c for _, c in pool.draws] == [UNIFORM] * 50 + [BALANCED] * 50
    balanced = [coarse[q] for q, c in pool.draws if c == BALANCED]
    assert {t: balanced.count(t) for t in TYPES} == dict.fromkeys(TYPES, 10) == pool.quota
    uniform = [coarse[q] for q, c in pool.draws if c == UNIFORM]
    assert uniform.count("OTHER") + uniform.count("PER") > 35  # the skew the uniform half keeps


@given(st.integers(0, 300), st.integers(0, 2**31))
def test_balance_within_one_of_the_target(size: int, seed: int) -> None:
    coarse = population({"PER": 380, "LOC": 90, "ORG": 70, "EVENT": 75, "OTHER": 520})
    pool = sample_pool(coarse, size, TYPES, seed)
    balanced = [coarse[q] for q, c in pool.draws if c == BALANCED]
    target = (size - size // 2) / len(TYPES)
    for t in TYPES:
        assert abs(balanced.count(t) - target) <= 1


def test_seeded_and_order_free() -> None:
    coarse = population({"PER": 30, "LOC": 9, "ORG": 7, "EVENT": 5, "OTHER": 50})
    a = sample_pool(coarse, 20, TYPES, 7)
    assert a == sample_pool(dict(reversed(coarse.items())), 20, TYPES, 7)
    assert a != sample_pool(coarse, 20, TYPES, 8)


def test_unknown_type_is_refused() -> None:
    with pytest.raises(ValueError, match="not among"):
        sample_pool({"Q1": "GPE"}, 1, TYPES, 0)
