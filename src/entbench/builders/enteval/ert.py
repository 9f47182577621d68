"""ERT: entity relationship typing (EntEval §3.6; spec §8).

"We extract entity relation tuples (entity1, relation, entity2) from Freebase ... We randomly sample
5 instances for each relation type to form our training set and 10 instances per type for
validation and test sets. We use Wikipedia descriptions for each entity in the pair." (§3.6)

Source format read here: one tuple per line, `entity1<TAB>relation<TAB>entity2` (Freebase relation
names such as `internet.website.owner`); blank lines and lines starting with `#` are ignored. The
paper first removed "easy" tuples with a classifier on averaged GloVe name vectors; that filter
needs a trained model and is not reproduced: give the tuples you want sampled.

Sampling: tuples whose two names both have a description are kept (duplicates once); per relation,
in a seeded order, the first 5 go to train, the next 10 to dev, the next 10 to test. A relation with
fewer tuples than 5 + 10 + 10 is left out whole (counted): `ERTEval` numbers its labels from the
train file, so a relation absent from train would break dev and test. Written as `ERT/train.txt`,
`ERT/dev.txt`, `ERT/test.txt`: `relation<TAB>name1<TAB>name2<TAB>description1<TAB>description2`,
lines in a seeded order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.sampling import seeded_order
from entbench.builders.enteval.tsv import clean, tsv

SPLITS = ("train", "dev", "test")
FILES = {split: f"ERT/{split}.txt" for split in SPLITS}


@dataclass(frozen=True)
class RelationTuple:
    """(entity1, relation, entity2) as written in the source."""

    first: str
    relation: str
    second: str


def parse_tuples(lines: Iterable[str]) -> list[RelationTuple]:
    """Tuples of the source (see the module docstring)."""
    tuples: list[RelationTuple] = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        fields = [clean(f) for f in raw.rstrip("\r\n").split("\t")]
        if len(fields) != 3 or not all(fields):
            raise SourceError(
                number, f"expected entity1<TAB>relation<TAB>entity2, got {len(fields)} field(s)"
            )
        if " " in fields[1]:
            raise SourceError(number, f"a relation type has no spaces: {fields[1]!r}")
        tuples.append(RelationTuple(fields[0], fields[1], fields[2]))
    return tuples


@dataclass
class ErtSample:
    """Sampled tuples per split, and the relations left out for having too few tuples."""

    splits: dict[str, list[RelationTuple]] = field(default_factory=dict)
    too_small: list[str] = field(default_factory=list)


def sample(tuples: Sequence[RelationTuple], per_split: Sequence[int], seed: int) -> ErtSample:
    """Per relation, the seeded first `per_split[0]` tuples to train, the next to dev, then test."""
    result = ErtSample({split: [] for split in SPLITS})
    by_relation: dict[str, set[RelationTuple]] = {}
    for t in tuples:
        by_relation.setdefault(t.relation, set()).add(t)
    need = sum(per_split)
    for relation in sorted(by_relation):
        ordered = seeded_order(by_relation[relation], lambda t: (t.relation, t.first, t.second), seed)
        if len(ordered) < need:
            result.too_small.append(relation)
            continue
        start = 0
        for split, size in zip(SPLITS, per_split, strict=True):
            result.splits[split].extend(ordered[start : start + size])
            start += size
    for split in SPLITS:
        result.splits[split] = seeded_order(result.splits[split], _line_key(split), seed)
    return result


def _line_key(split: str) -> Callable[[RelationTuple], tuple[str, ...]]:
    return lambda t: (split, t.relation, t.first, t.second)


def ert_line(t: RelationTuple, describe: Callable[[str], str | None]) -> str:
    """One loader line; both names must have descriptions (the caller kept only those)."""
    first, second = describe(t.first), describe(t.second)
    assert first is not None and second is not None
    return tsv(t.relation, t.first, t.second, first, second)
