"""CERP: contextualized entity relationship prediction on ConceptNet (EntEval §3.4; spec §8).

Source: a ConceptNet 5 assertions file, one assertion per line with five tab-separated columns
`URI, relation, start, end, JSON` whose JSON holds the `surfaceText` the assertion was collected
with, its two concepts in double brackets: `[[gin and vermouth]] can [[make a martini]]`. "We filter
out non-English concepts and relations such as 'related', 'translation', 'synonym', and 'likely to
find'" (§3.4): both concepts must be `/c/en/…`, and relations (`exclude_relations`) and surface
phrases (`exclude_phrases`) are parameters. The paper's further filters on spaCy entity types are
in `enteval.cerp_entities`; they need a trained recogniser (`ner_model`) and are skipped without one.

Negatives and extra positives follow the paper's three rules (§3.4):

1. an entity is replaced by a similar one, by cosine similarity of averaged GloVe vectors (here:
   which of the two is replaced, and which of the `neighbours` most similar surfaces of the same
   relation and slot replaces it, are seeded choices; a surface that would make a known assertion
   is never chosen) -> negative;
2. the relation is negated ("is" -> "is not", `negate`) -> negative;
3. the negatives of rule 1, negated -> positive ("to prevent the 'not' token from being biased").

"In the end, we randomly sample 6000 instances from each class. This ends up yielding a
4000/4000/4000 train/dev/test dataset." Here: min(`per_class`, positives, negatives) of each class
in a seeded order, shuffled together (seeded) and cut into three equal parts.

Written as `CERP/{train,dev,test}.txt`, read by `CERPEval.loadFile` as
`label, s1, e1, s2, e2, sentence = line.strip().split("\\t")`, offsets in `sentence.split()`, end
exclusive.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.sampling import seeded_order, stable_hash
from entbench.builders.enteval.tsv import tsv, words_field
from entbench.builders.enteval.vectors import cosine

SPLITS = ("train", "dev", "test")
FILES = {split: f"CERP/{split}.txt" for split in SPLITS}
_SPAN = re.compile(r"\[\[(.+?)\]\]")
#: Auxiliaries negated by a following "not" (§3.4: "'is' to 'is not'").
_AUXILIARIES = "is|are|was|were|am|can|could|will|would|should|may|might|must|does|do|did"
#: Main verbs of ConceptNet's templates, negated with do-support.
_VERBS = {
    "has": "does not have",
    "have": "do not have",
    "wants": "does not want",
    "want": "do not want",
    "causes": "does not cause",
    "requires": "does not require",
    "needs": "does not need",
    "desires": "does not desire",
    "contains": "does not contain",
}
_NEGATABLE = re.compile(rf"\b({_AUXILIARIES}|{'|'.join(_VERBS)})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Statement:
    """A surface text split around its two concepts: prefix [[a]] middle [[b]] suffix."""

    relation: str
    prefix: str
    first: str
    middle: str
    second: str
    suffix: str

    def key(self) -> tuple[str, ...]:
        """Content key for seeded choices."""
        return (self.relation, self.prefix, self.first, self.middle, self.second, self.suffix)

    def replace(self, slot: int, surface: str) -> Statement:
        """The statement with concept `slot` (0 or 1) replaced."""
        if slot == 0:
            return Statement(self.relation, self.prefix, surface, self.middle, self.second, self.suffix)
        return Statement(self.relation, self.prefix, self.first, self.middle, surface, self.suffix)

    def slot(self, slot: int) -> str:
        """Concept `slot`'s surface."""
        return self.first if slot == 0 else self.second


@dataclass
class ParseStats:
    """Why assertions were left out by `parse_assertions`."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, reason: str) -> None:
        """Count one."""
        self.counts[reason] = self.counts.get(reason, 0) + 1


def parse_assertions(
    lines: Iterable[str], exclude_relations: Sequence[str], exclude_phrases: Sequence[str], stats: ParseStats
) -> list[Statement]:
    """English statements of a ConceptNet assertions file, after the relation and phrase filters."""
    statements: list[Statement] = []
    excluded = set(exclude_relations)
    phrases = [p.casefold() for p in exclude_phrases]
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        fields = raw.rstrip("\r\n").split("\t")
        if len(fields) != 5:
            raise SourceError(number, f"expected 5 tab-separated columns, got {len(fields)}")
        _, relation, start, end, info = fields
        if not (start.startswith("/c/en/") and end.startswith("/c/en/")):
            stats.add("not_english")
            continue
        if relation in excluded:
            stats.add("excluded_relation")
            continue
        try:
            surface = json.loads(info).get("surfaceText")
        except (json.JSONDecodeError, AttributeError) as exc:
            raise SourceError(number, f"the fifth column is not a JSON object ({exc})") from exc
        if not isinstance(surface, str) or len(_SPAN.findall(surface)) != 2:
            stats.add("no_surface_text")
            continue
        if any(p in surface.casefold() for p in phrases):
            stats.add("excluded_phrase")
            continue
        a, b = list(_SPAN.finditer(surface))
        statements.append(
            Statement(
                relation,
                surface[: a.start()],
                a.group(1).strip(),
                surface[a.end() : b.start()],
                b.group(1).strip(),
                surface[b.end() :],
            )
        )
    return statements


def negate(statement: Statement) -> Statement | None:
    """Rule 2: the first auxiliary or template verb outside the concepts negated, or None."""
    for part in ("prefix", "middle", "suffix"):
        text: str = getattr(statement, part)
        found = _NEGATABLE.search(text)
        if found is None:
            continue
        word = found.group(1)
        replacement = _VERBS.get(word.lower(), f"{word} not")
        new = text[: found.start()] + replacement + text[found.end() :]
        return dataclasses.replace(statement, **{part: new})
    return None


@dataclass(frozen=True)
class Instance:
    """A labelled sentence with its two concept spans (token offsets, end exclusive)."""

    label: int
    words: tuple[str, ...]
    first: tuple[int, int]
    second: tuple[int, int]

    def key(self) -> tuple[str, ...]:
        """Content key."""
        return (" ".join(self.words), *(str(x) for x in (*self.first, *self.second)))


def instance(
    statement: Statement, label: int, words: Callable[[str], list[str]], lowercase: bool
) -> Instance | None:
    """Tokenise the five parts separately so the concept spans are exact (None if a concept has no word)."""
    parts = [
        words(p)
        for p in (statement.prefix, statement.first, statement.middle, statement.second, statement.suffix)
    ]
    if lowercase:
        parts = [[w.lower() for w in p] for p in parts]
    if not parts[1] or not parts[3]:
        return None
    a = len(parts[0])
    b = a + len(parts[1]) + len(parts[2])
    flat = tuple(w for p in parts for w in p)
    return Instance(label, flat, (a, a + len(parts[1])), (b, b + len(parts[3])))


class Pool:
    """The surfaces that may replace a concept of one relation and slot, with their mean vectors."""

    #: Approximate (BLAS) cosines within this margin of the k-th best are re-ranked exactly.
    MARGIN = 1e-9

    def __init__(self, surfaces: Sequence[tuple[str, np.ndarray]]) -> None:
        ordered = sorted(surfaces, key=lambda s: s[0])
        self.surfaces = [s for s, _ in ordered]
        self.folded = [s.casefold() for s in self.surfaces]
        self.vectors = [v for _, v in ordered]
        self.matrix = np.stack(self.vectors) if ordered else np.zeros((0, 1))
        self.norms = np.linalg.norm(self.matrix, axis=1) if ordered else np.zeros(0)

    def nearest(self, vector: np.ndarray, excluded: set[str], k: int) -> list[str]:
        """The `k` surfaces most similar to `vector` (cosine), skipping casefolded `excluded` ones.

        A matrix product screens every surface; the ones within `MARGIN` of the k-th are ranked again
        by exactly rounded cosines (ties by surface), so the result does not depend on the CPU's
        summation order.
        """
        if not self.surfaces:
            return []
        denominator = self.norms * float(np.linalg.norm(vector))
        with np.errstate(divide="ignore", invalid="ignore"):
            approx = np.where(
                denominator > 0, (self.matrix @ vector) / np.where(denominator > 0, denominator, 1), -np.inf
            )
        order = np.argsort(-approx, kind="stable")
        eligible = [int(i) for i in order if np.isfinite(approx[i]) and self.folded[i] not in excluded]
        if not eligible:
            return []
        cutoff = approx[eligible[min(k, len(eligible)) - 1]] - self.MARGIN
        close = [i for i in eligible if approx[i] >= cutoff]
        exact = sorted(close, key=lambda i: (-(cosine(self.vectors[i], vector) or -2.0), self.surfaces[i]))
        return [self.surfaces[i] for i in exact[:k]]


def known_index(statements: Iterable[Statement]) -> dict[tuple[str, int, str], set[str]]:
    """For (relation, slot, the other concept casefolded): the casefolded surfaces that would make a
    known assertion if put in `slot` (so rule 1 never turns a true statement into a "negative")."""
    index: dict[tuple[str, int, str], set[str]] = {}
    for s in statements:
        first, second = s.first.casefold(), s.second.casefold()
        index.setdefault((s.relation, 0, second), set()).add(first)
        index.setdefault((s.relation, 1, first), set()).add(second)
    return index


def replacement(
    statement: Statement,
    slot: int,
    pool: Pool,
    vector: np.ndarray,
    known: Mapping[tuple[str, int, str], set[str]],
    neighbours: int,
    seed: int,
) -> str | None:
    """Rule 1: a seeded choice among the `neighbours` surfaces of `pool` most similar to `vector`,
    never the surface itself and never one that makes a known assertion (`known_index`)."""
    other = statement.slot(1 - slot).casefold()
    excluded = {statement.slot(slot).casefold(), *known.get((statement.relation, slot, other), set())}
    top = pool.nearest(vector, excluded, max(1, neighbours))
    if not top:
        return None
    return top[stable_hash(seed, "replacement", *statement.key()) % len(top)]


def thirds(total: int) -> list[int]:
    """Sizes of three equal parts of `total` (the remainder to the earlier parts)."""
    base, extra = divmod(total, 3)
    return [base + (1 if i < extra else 0) for i in range(3)]


def sample(
    positives: Sequence[Instance], negatives: Sequence[Instance], per_class: int, seed: int
) -> dict[str, list[Instance]]:
    """min(per_class, |pos|, |neg|) of each class, seeded, shuffled together, split in thirds."""
    n = min(per_class, len(positives), len(negatives))
    chosen = [
        *seeded_order(positives, Instance.key, seed)[:n],
        *seeded_order(negatives, Instance.key, seed)[:n],
    ]
    shuffled = seeded_order(chosen, lambda i: ("shuffle", str(i.label), *i.key()), seed)
    result: dict[str, list[Instance]] = {}
    start = 0
    for split, size in zip(SPLITS, thirds(len(shuffled)), strict=True):
        result[split] = shuffled[start : start + size]
        start += size
    return result


def cerp_line(item: Instance) -> str:
    """One loader line."""
    return tsv(
        str(item.label),
        str(item.first[0]),
        str(item.first[1]),
        str(item.second[0]),
        str(item.second[1]),
        words_field(item.words),
    )
