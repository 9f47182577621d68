"""Validation documents by a stable hash of the page id, and record numbering (spec §5; Hansel §3.2)."""

from __future__ import annotations

import numpy as np
import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from entbench.builders.hansel.splits import (
    TRAIN,
    VALIDATION,
    assign_documents,
    document_hash,
    first_indices,
    record_id,
    validation_documents,
)

# Mentions per page id (the shape `hansel_links.documents` gives), page 7 without mentions.
PAGES = {13: 3, 18: 5, 21: 0, 22: 2, 25: 4, 3472: 1, 7: 0}


def test_hash_is_xxh64_of_the_decimal_page_id() -> None:
    assert document_hash(3472, 0) == xxhash.xxh64_intdigest(b"3472", seed=0)
    assert document_hash(3472, 1) != document_hash(3472, 0)


def test_validation_takes_the_smallest_hashes_among_pages_with_mentions() -> None:
    by_hash = sorted((document_hash(p, 0), p) for p, n in PAGES.items() if n)
    assert validation_documents(PAGES, 2, 0) == {p for _, p in by_hash[:2]}
    assert validation_documents(PAGES, 0, 0) == frozenset()
    everything = validation_documents(PAGES, 100, 0)
    assert everything == {13, 18, 22, 25, 3472}  # never a page without mentions


def test_validation_depends_on_the_seed_only_through_the_hash() -> None:
    picks = {validation_documents(PAGES, 2, seed) for seed in range(20)}
    assert len(picks) > 1
    assert validation_documents(PAGES, 2, 5) == validation_documents(dict(reversed(PAGES.items())), 2, 5)


def test_numbering_follows_page_ids_within_each_split() -> None:
    held_out = {18, 3472}
    first = first_indices(PAGES, held_out)
    assert first == {
        13: (TRAIN, 0),
        18: (VALIDATION, 0),
        22: (TRAIN, 3),
        25: (TRAIN, 5),
        3472: (VALIDATION, 5),
    }
    assert record_id(TRAIN, 5) == "hansel-train-5"
    assert record_id(VALIDATION, 0) == "hansel-validation-0"


@given(
    st.dictionaries(st.integers(1, 10**7), st.integers(0, 6), max_size=60),
    st.integers(0, 30),
    st.integers(0, 2**32),
)
def test_splits_are_disjoint_and_numbers_contiguous(pages: dict[int, int], n: int, seed: int) -> None:
    held_out = validation_documents(pages, n, seed)
    assert len(held_out) == min(n, sum(1 for c in pages.values() if c))
    first = first_indices(pages, held_out)
    for split in (TRAIN, VALIDATION):
        numbered = sorted((index, pages[p]) for p, (s, index) in first.items() if s == split)
        expected = 0
        for index, count in numbered:
            assert index == expected
            expected += count


@given(
    st.dictionaries(st.integers(1, 10**7), st.integers(0, 6), max_size=60),
    st.integers(0, 30),
    st.integers(0, 2**32),
)
def test_the_arrays_assign_as_the_mappings_do(pages: dict[int, int], n: int, seed: int) -> None:
    # `assign_documents` is what the stage runs on a dump's documents; the mappings define it.
    ids, held_out, firsts = assign_documents(
        np.array(list(pages), dtype=np.int64), np.array(list(pages.values()), dtype=np.int64), n, seed
    )
    expected = first_indices(pages, validation_documents(pages, n, seed))
    assert ids.tolist() == sorted(expected)
    split = [VALIDATION if held else TRAIN for held in held_out.tolist()]
    assert dict(zip(ids.tolist(), zip(split, firsts.tolist(), strict=True), strict=True)) == expected


def test_negative_count_is_refused() -> None:
    with pytest.raises(ValueError):
        validation_documents(PAGES, -1, 0)
    with pytest.raises(ValueError):
        assign_documents(np.array([1]), np.array([1]), -1, 0)
