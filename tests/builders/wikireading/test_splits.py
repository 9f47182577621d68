"""Document splits (spec §6): disjoint, on target within a point, property-holdout only in test.

The 12,000 documents (and their instances) are generated here; nothing else is synthetic.
"""

from __future__ import annotations

import random
from collections import Counter

import pyarrow as pa
import pytest

from entbench.builders.wikireading.splits import (
    PAPER_RATIOS,
    RELEASED_RATIOS,
    SPLITS,
    assign_split,
    assign_splits,
    check_ratios,
    held_out_properties,
)

DOCUMENTS = 12_000
PROPERTIES = [f"P{n}" for n in range(1, 61)]


@pytest.fixture(scope="module")
def instances() -> pa.Table:
    """12,000 documents with 1-6 properties each, property frequencies skewed like Wikidata's."""
    rng = random.Random(2016)
    weights = [1.0 / (rank + 1) for rank in range(len(PROPERTIES))]
    rows: dict[str, list[object]] = {"document_id": [], "property": [], "answers": []}
    for doc in range(DOCUMENTS):
        document_id = 10_000 + 7 * doc
        for prop in sorted(set(rng.choices(PROPERTIES, weights=weights, k=rng.randint(1, 6)))):
            rows["document_id"].append(document_id)
            rows["property"].append(prop)
            rows["answers"].append([f"value {rng.randrange(50)}"])
    return pa.table(
        {
            "document_id": pa.array(rows["document_id"], pa.int64()),
            "property": pa.array(rows["property"], pa.string()),
            "answers": pa.array(rows["answers"], pa.list_(pa.string())),
        }
    )


def documents_of(parts: dict[str, pa.Table]) -> dict[str, set[int]]:
    return {name: set(parts[name].column("document_id").to_pylist()) for name in SPLITS}


@pytest.mark.parametrize("ratios", [PAPER_RATIOS, RELEASED_RATIOS])
def test_document_splits_are_disjoint_and_on_target(instances: pa.Table, ratios: tuple[float, ...]) -> None:
    parts = assign_splits(instances, ratios, seed=0)
    docs = documents_of(parts)
    assert not docs["train"] & docs["valid"]
    assert not docs["train"] & docs["test"]
    assert not docs["valid"] & docs["test"]
    assert sum(len(d) for d in docs.values()) == DOCUMENTS
    assert sum(p.num_rows for p in parts.values()) == instances.num_rows  # nothing lost
    for name, target in zip(SPLITS, ratios, strict=True):
        assert abs(len(docs[name]) / DOCUMENTS - target) < 0.01, (name, len(docs[name]) / DOCUMENTS)


def test_split_depends_on_document_and_seed_only(instances: pa.Table) -> None:
    whole = documents_of(assign_splits(instances, PAPER_RATIOS, seed=3))
    # Any slice of the rows (another shard layout) gives every document the same split.
    half = documents_of(assign_splits(instances.slice(0, instances.num_rows // 2), PAPER_RATIOS, seed=3))
    for name in SPLITS:
        assert half[name] <= whole[name]
    for doc in list(whole["valid"])[:50]:
        assert assign_split(doc, PAPER_RATIOS, 3) == "valid"
    other_seed = documents_of(assign_splits(instances, PAPER_RATIOS, seed=4))
    assert other_seed["test"] != whole["test"]


def test_property_holdout_puts_held_out_properties_only_in_test(instances: pa.Table) -> None:
    document_counts = Counter(instances.column("property").to_pylist())
    held = held_out_properties(dict(document_counts), share=0.2, seed=0, max_documents=500)
    assert len(held) == round(0.2 * len(PROPERTIES))
    assert all(document_counts[p] <= 500 for p in held)
    parts = assign_splits(instances, PAPER_RATIOS, seed=0, held_out=held)
    for name in ("train", "valid"):
        assert not set(parts[name].column("property").to_pylist()) & held
    assert held <= set(parts["test"].column("property").to_pylist())
    docs = documents_of(parts)
    assert not (docs["train"] & docs["test"]) and not (docs["valid"] & docs["test"])
    assert not docs["train"] & docs["valid"]
    assert sum(p.num_rows for p in parts.values()) == instances.num_rows
    # Documents without a held-out property keep their document split.
    with_held = {
        d
        for d, p in zip(
            instances.column("document_id").to_pylist(), instances.column("property").to_pylist(), strict=True
        )
        if p in held
    }
    for doc in sorted(docs["train"])[:100]:
        assert doc not in with_held
        assert assign_split(doc, PAPER_RATIOS, 0) == "train"
    assert {assign_split(doc, PAPER_RATIOS, 0) for doc in with_held} == set(SPLITS)  # moved to test


def test_holdout_choice_is_stable_and_bounded() -> None:
    counts = {f"P{n}": n for n in range(1, 101)}
    first = held_out_properties(counts, 0.2, seed=1)
    assert first == held_out_properties(dict(reversed(list(counts.items()))), 0.2, seed=1)
    assert len(first) == 20
    assert held_out_properties(counts, 0.2, seed=2) != first
    capped = held_out_properties(counts, 0.5, seed=1, max_documents=10)
    assert capped == {f"P{n}" for n in range(1, 11)}  # fewer eligible than asked: all of them
    assert held_out_properties(counts, 0.0, seed=1) == frozenset()


def test_ratios_are_checked() -> None:
    assert check_ratios([0.85, 0.1, 0.05]) == RELEASED_RATIOS
    for bad in ([0.7, 0.3], [0.7, 0.2, 0.2], [1.1, -0.1, 0.0]):
        with pytest.raises(ValueError):
            check_ratios(bad)
    with pytest.raises(ValueError):
        held_out_properties({"P1": 1}, 1.5, seed=0)
