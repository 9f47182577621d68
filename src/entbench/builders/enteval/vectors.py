"""Word vectors in GloVe's text format, and the averaged-vector cosine EntEval uses.

EntEval §3.2 (CAP): "we compute cosine similarity of mentions by averaging GloVe word vectors";
§3.4 (CERP): negatives are entities of "similar ... averaged GloVe embeddings". A line is a word
and its d numbers separated by spaces; a few GloVe words contain spaces themselves, so the last d
fields are the vector and the rest is the word. Only the words a task needs are kept.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from entbench.builders.enteval.errors import SourceError


class VectorsError(SourceError):
    """A malformed vectors line; `line` is its 1-based number."""


def parse_vectors(lines: Iterable[str], wanted: set[str] | None = None) -> dict[str, np.ndarray]:
    """Vectors of the `wanted` words (all words when None), float64; the first line fixes d."""
    vectors: dict[str, np.ndarray] = {}
    dim = 0
    for number, raw in enumerate(lines, 1):
        fields = raw.rstrip("\n").rstrip("\r").split(" ")
        if not raw.strip():
            continue
        if dim == 0:
            dim = len(fields) - 1
            if dim < 1:
                raise VectorsError(number, "a vector line needs a word and at least one number")
        if len(fields) < dim + 1:
            raise VectorsError(number, f"expected a word and {dim} numbers, got {len(fields)} fields")
        word = " ".join(fields[: len(fields) - dim])
        if wanted is not None and word not in wanted:
            continue
        try:
            vector = np.array([float(x) for x in fields[len(fields) - dim :]], dtype=np.float64)
        except ValueError as exc:
            raise VectorsError(number, f"not a number ({exc})") from exc
        vectors.setdefault(word, vector)  # the first occurrence wins, as a dict built in file order
    return vectors


def lookup(word: str, vectors: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """A word's vector: as written, else lowercased (cased and uncased GloVe both work)."""
    found = vectors.get(word)
    return found if found is not None else vectors.get(word.lower())


def average(words: Sequence[str], vectors: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """The mean vector of the words that have one (None if none has), each component an exactly
    rounded sum (`math.fsum`) divided by the count, so it is the same on every machine."""
    found = [v for v in (lookup(w, vectors) for w in words) if v is not None]
    if not found:
        return None
    stacked = np.stack(found)
    return np.array([math.fsum(column) / len(found) for column in stacked.T.tolist()], dtype=np.float64)


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """The exactly rounded dot product (no BLAS: its summation order depends on the CPU)."""
    return math.fsum((a * b).tolist())


def cosine(a: np.ndarray, b: np.ndarray) -> float | None:
    """Cosine similarity from exactly rounded sums, clamped to [-1, 1]; None for a zero vector."""
    squares = dot(a, a) * dot(b, b)
    if squares == 0.0:
        return None
    return max(-1.0, min(1.0, dot(a, b) / math.sqrt(squares)))
