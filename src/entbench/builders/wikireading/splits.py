"""Split assignment by document (spec §6; Hewlett et al. 2016 §2.2).

"We assigned all instances for each document randomly to either training (12.97M instances),
validation (1.88M), and test (3.73M) sets following a 70/10/20 distribution. This ensures that,
during validation and testing, all documents are unseen." The public release's counts are 85/10/5
(16,039,400 / 1,886,798 / 941,280), the `released` preset.

"Randomly" here means a stable hash: xxh64 of "<seed>:<document id>" mapped to [0, 1), so a
document's split depends on its id and the seed only, never on shard counts or worker order.

Mode `property-holdout` follows WikiReading Recycled (Dwojak et al. 2020, "Dataset
Construction"): "20% of properties should appear solely in the test set ... articles containing
properties not seen in the remaining subsets were drafted" into test. A share of the properties
(chosen by the same kind of hash, optionally only among properties with at most
`max_documents` documents, as Recycled "chose these properties carefully") is held out, and every
document with a held-out property goes to test, so documents still never straddle splits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import xxhash

if TYPE_CHECKING:  # imported where used: `entbench eval wikireading --help` reads SPLITS only
    import numpy as np
    import pyarrow as pa

SPLITS = ("train", "valid", "test")
PAPER_RATIOS = (0.7, 0.1, 0.2)
RELEASED_RATIOS = (0.85, 0.10, 0.05)

Mode = Literal["document", "property-holdout"]


def check_ratios(ratios: Sequence[float]) -> tuple[float, float, float]:
    """Three non-negative shares summing to 1 (within 1e-9); ValueError otherwise."""
    if len(ratios) != 3:
        raise ValueError(f"ratios must be three numbers (train, valid, test), got {list(ratios)}")
    if any(r < 0 for r in ratios) or abs(sum(ratios) - 1.0) > 1e-9:
        raise ValueError(f"ratios must be >= 0 and sum to 1, got {list(ratios)}")
    return (float(ratios[0]), float(ratios[1]), float(ratios[2]))


def unit_hash(key: str, seed: int) -> float:
    """A stable number in [0, 1) for `key` under `seed` (xxh64, never Python's `hash()`)."""
    return xxhash.xxh64_intdigest(f"{seed}:{key}".encode()) / 2.0**64


def assign_split(document_id: int | str, ratios: Sequence[float], seed: int) -> str:
    """The split of one document under `ratios` (train, valid, test)."""
    u = unit_hash(str(document_id), seed)
    if u < ratios[0]:
        return "train"
    if u < ratios[0] + ratios[1]:
        return "valid"
    return "test"


def held_out_properties(
    document_counts: Mapping[str, int], share: float, seed: int, max_documents: int = 0
) -> frozenset[str]:
    """The properties only the test split may contain.

    k = round(share × number of properties) properties are taken, in the order of their hash
    (`property:<id>` under `seed`), among those with at most `max_documents` documents
    (0 = no limit); fewer if not enough are eligible.
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"holdout share must be within [0, 1], got {share}")
    k = round(share * len(document_counts))
    eligible = [p for p, n in document_counts.items() if max_documents <= 0 or n <= max_documents]
    eligible.sort(key=lambda p: (unit_hash(f"property:{p}", seed), p))
    return frozenset(eligible[:k])


def split_documents(
    document_ids: Sequence[int],
    ratios: Sequence[float],
    seed: int,
    forced_test: frozenset[int] = frozenset(),
) -> np.ndarray:
    """Split index (0 train, 1 valid, 2 test) for each document id; `forced_test` go to test."""
    import numpy as np

    out = np.empty(len(document_ids), dtype=np.int8)
    for i, doc in enumerate(document_ids):
        if doc in forced_test:
            out[i] = 2
        else:
            out[i] = SPLITS.index(assign_split(doc, ratios, seed))
    return out


def assign_splits(
    instances: pa.Table,
    ratios: Sequence[float],
    seed: int,
    held_out: frozenset[str] = frozenset(),
) -> dict[str, pa.Table]:
    """Partition instance rows (with `document_id` and `property` columns) into the three splits.

    Every instance of a document lands in the same split; documents with a property in
    `held_out` go to test.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    ratios = check_ratios(ratios)
    if instances.num_rows == 0:
        return dict.fromkeys(SPLITS, instances)
    doc_column = instances.column("document_id")
    forced: frozenset[int] = frozenset()
    if held_out:
        mask = pc.is_in(instances.column("property"), value_set=pa.array(sorted(held_out), pa.string()))
        forced = frozenset(pc.unique(doc_column.filter(mask)).to_pylist())
    documents = pc.unique(doc_column).to_pylist()
    split_of = dict(zip(documents, split_documents(documents, ratios, seed, forced).tolist(), strict=True))
    row_split = np.fromiter((split_of[d] for d in doc_column.to_pylist()), dtype=np.int8)
    return {name: instances.filter(pa.array(row_split == i)) for i, name in enumerate(SPLITS)}
