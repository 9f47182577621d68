"""Hansel's validation split and record numbering (spec §5; Hansel §3.2).

"We hold out 1K full documents (9.7K mentions) as the validation set" (Hansel §3.2). Spec §5:
validation = N whole documents chosen by a stable hash of the page id, disjoint from train.
Here the N documents are those with the smallest `xxh64(str(page_id), seed)` among the documents
that have at least one mention (ties, which need equal 64-bit hashes, by page id); a document
without mentions adds nothing to either split. With fewer eligible documents than N, all of them
are validation.

Record ids are `hansel-<split>-N`, N counting from 0 in page-id order, then link order within a
page, so they do not depend on how many shards or workers built them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import xxhash

TRAIN, VALIDATION = "train", "validation"
SPLITS = (TRAIN, VALIDATION)


def document_hash(page_id: int, seed: int) -> int:
    """The stable hash that orders documents for the validation draw."""
    return xxhash.xxh64_intdigest(str(page_id).encode("ascii"), seed=seed)


def validation_documents(mentions_by_page: Mapping[int, int], n: int, seed: int) -> frozenset[int]:
    """The `n` documents with mentions whose hash is smallest (all of them if fewer)."""
    if n < 0:
        raise ValueError("the number of validation documents must be >= 0")
    eligible = sorted(
        (document_hash(page_id, seed), page_id) for page_id, count in mentions_by_page.items() if count > 0
    )
    return frozenset(page_id for _, page_id in eligible[:n])


def first_indices(
    mentions_by_page: Mapping[int, int], validation: Iterable[int]
) -> dict[int, tuple[str, int]]:
    """Per page with mentions: its split and the N of its first record (page-id order per split)."""
    held_out = frozenset(validation)
    next_index = {TRAIN: 0, VALIDATION: 0}
    out: dict[int, tuple[str, int]] = {}
    for page_id in sorted(mentions_by_page):
        count = mentions_by_page[page_id]
        if count <= 0:
            continue
        split = VALIDATION if page_id in held_out else TRAIN
        out[page_id] = (split, next_index[split])
        next_index[split] += count
    return out


#: Page ids hashed per Python call of `assign_documents` (bounds the transient list of ints).
_HASH_CHUNK = 1 << 16


def has_mentions(mentions: np.ndarray) -> np.ndarray:
    """Which documents get a split (`assign_documents`): those with at least one mention."""
    return mentions > 0


def assign_documents(
    page_ids: np.ndarray, mentions: np.ndarray, n: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`validation_documents` and `first_indices` over arrays, for a whole dump's documents: the
    page ids with mentions in ascending order, whether each is held out, and the N of its first
    record. A few bytes per document, where the mappings took ~200 (all of zhwiki: ~1.4M)."""
    if n < 0:
        raise ValueError("the number of validation documents must be >= 0")
    keep = has_mentions(mentions)
    page_ids, mentions = page_ids[keep].astype(np.int64), mentions[keep].astype(np.int64)
    order = np.argsort(page_ids, kind="stable")
    page_ids, mentions = page_ids[order], mentions[order]
    hashes = np.empty(len(page_ids), dtype=np.uint64)
    for begin in range(0, len(page_ids), _HASH_CHUNK):
        chunk = page_ids[begin : begin + _HASH_CHUNK].tolist()
        hashes[begin : begin + len(chunk)] = [document_hash(page_id, seed) for page_id in chunk]
    held_out = np.zeros(len(page_ids), dtype=bool)
    held_out[np.lexsort((page_ids, hashes))[:n]] = True
    firsts = np.empty(len(page_ids), dtype=np.int64)
    for split in (held_out, ~held_out):
        counts = mentions[split]
        firsts[split] = np.cumsum(counts) - counts
    return page_ids, held_out, firsts


def record_id(split: str, index: int) -> str:
    """`hansel-train-17`, `hansel-validation-0`, `hansel-fewshot-3`."""
    return f"hansel-{split}-{index}"
