"""ESR: entity similarity and relatedness on KORE and WikiSRS (EntEval §3.5; spec §8).

KORE (Hoffart et al. 2012) ranks candidate entities by relatedness to a seed entity. Source format
read here: a seed name on a line of its own, then its candidates one per line, each indented (a tab
or spaces), most related first; blank lines are ignored. Every seed has the same number of
candidates (KORE: 21 seeds x 20). Written as `KORE/all.txt`, the layout `KOREEval.loadFile` reads
(`line.split("\\t")` into exactly three fields):

    @@<TAB>seed name<TAB>seed description
    n-1<TAB>candidate 1 name<TAB>description          (most related)
    ...
    0<TAB>candidate n name<TAB>description

The loader ignores the first field of candidate lines and scores position i of n as n-1-i
(`np.arange(n)[::-1]`); writing the same numbers keeps the file self-describing. ("We assign scores
from 20 to 1 accordingly to each entity in the order of similarity", §3.5: the same ranking.) The
loader also stacks all groups into one array, so every written group must have the same size: a
group with an unmatched name is dropped whole, never shortened.

WikiSRS (Newman-Griffis et al. 2018): two tab-separated files with a header row naming the columns
of the two entity names and the mean human score (defaults `Term1`, `Term2`, `Mean`), read by name.
Written as `wikisrs/WikiSRS_relatedness.csv.pro` and `wikisrs/WikiSRS_similarity.csv.pro`, one pair per
line: `score<TAB>name1<TAB>name2<TAB>description1<TAB>description2`, the score with four decimals
as in EntEval's released files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.tsv import clean, tsv

KORE_FILE = "KORE/all.txt"
WIKISRS_FILES = {
    "relatedness": "wikisrs/WikiSRS_relatedness.csv.pro",
    "similarity": "wikisrs/WikiSRS_similarity.csv.pro",
}
HEAD_MARK = "@@"

Describe = Callable[[str], str | None]  # name -> description words joined by spaces, or None


@dataclass(frozen=True)
class KoreGroup:
    """A seed entity and its candidates, most related first."""

    seed: str
    candidates: tuple[str, ...]
    line: int


def parse_kore(lines: Iterable[str]) -> list[KoreGroup]:
    """KORE groups from the source layout (see the module docstring)."""
    groups: list[KoreGroup] = []
    seed: tuple[str, int] | None = None
    candidates: list[str] = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        if raw[0].isspace():
            if seed is None:
                raise SourceError(number, "a candidate line before any seed line")
            candidates.append(clean(raw))
            continue
        if seed is not None:
            groups.append(KoreGroup(seed[0], tuple(candidates), seed[1]))
        seed, candidates = (clean(raw), number), []
    if seed is not None:
        groups.append(KoreGroup(seed[0], tuple(candidates), seed[1]))
    for group in groups:
        if not group.candidates:
            raise SourceError(group.line, f"seed {group.seed!r} has no candidates")
        if len(group.candidates) != len(groups[0].candidates):
            raise SourceError(
                group.line,
                f"seed {group.seed!r} has {len(group.candidates)} candidates, the first seed "
                f"{len(groups[0].candidates)} (the loader needs equal groups)",
            )
    return groups


def kore_lines(groups: Sequence[KoreGroup], describe: Describe) -> tuple[list[str], list[str]]:
    """`KORE/all.txt` lines, and the seeds of the groups dropped for an undescribed name."""
    lines: list[str] = []
    dropped: list[str] = []
    for group in groups:
        names = (group.seed, *group.candidates)
        descriptions = [describe(name) for name in names]
        if any(d is None for d in descriptions):
            dropped.append(group.seed)
            continue
        n = len(group.candidates)
        lines.append(tsv(HEAD_MARK, group.seed, str(descriptions[0])))
        for i, (name, description) in enumerate(zip(group.candidates, descriptions[1:], strict=True)):
            lines.append(tsv(str(n - 1 - i), name, str(description)))
    return lines, dropped


@dataclass(frozen=True)
class ScoredPair:
    """Two entity names and their gold score."""

    score: float
    first: str
    second: str
    line: int


def parse_wikisrs(
    lines: Iterable[str], columns: Sequence[str] = ("Term1", "Term2", "Mean")
) -> list[ScoredPair]:
    """Pairs from a WikiSRS file: a header row, then tab-separated rows; columns found by name."""
    pairs: list[ScoredPair] = []
    index: list[int] | None = None
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        fields = [f.strip() for f in raw.rstrip("\r\n").split("\t")]
        if index is None:
            header = [f.casefold() for f in fields]
            missing = [c for c in columns if c.casefold() not in header]
            if missing:
                raise SourceError(number, f"header lacks column(s) {', '.join(missing)}: {fields}")
            index = [header.index(c.casefold()) for c in columns]
            continue
        if len(fields) <= max(index):
            raise SourceError(number, f"expected at least {max(index) + 1} fields, got {len(fields)}")
        first, second, score = (fields[i] for i in index)
        try:
            value = float(score)
        except ValueError:
            raise SourceError(number, f"score {score!r} is not a number") from None
        if not clean(first) or not clean(second):
            raise SourceError(number, "an empty entity name")
        pairs.append(ScoredPair(value, clean(first), clean(second), number))
    return pairs


def wikisrs_lines(pairs: Sequence[ScoredPair], describe: Describe) -> tuple[list[str], int]:
    """`WikiSRS_*.csv.pro` lines in source order, and how many pairs had an undescribed name."""
    lines: list[str] = []
    dropped = 0
    for pair in pairs:
        first, second = describe(pair.first), describe(pair.second)
        if first is None or second is None:
            dropped += 1
            continue
        lines.append(tsv(f"{pair.score:.4f}", pair.first, pair.second, first, second))
    return lines, dropped
