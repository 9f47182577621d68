"""Coarse entity types (Hansel §3.1, Table 2; spec §2.3) and their precedence.

Hansel Table 2 defines PER(e) = Type(e, Q215627) (person), LOC(e) = Type(e, Q618123)
(geographical object), ORG(e) = Type(e, Q43229) (organization), EVENT(e) = Type(e, Q1656682)
(event), and OTHER(e) for all other entities. The paper calls the categories orthogonal, but in
Wikidata an entity can reach several roots (a city is both a geographic location and, as a
municipality, an organization). Spec §2.3 fixes one label per entity by precedence
`PER > LOC > ORG > EVENT` (LOC before ORG keeps countries and cities LOC, as Hansel merges
GPE/LOC/FAC into LOC) and keeps every root reached in a list column.

A precedence is written as `LABEL=QID` items, highest first; it is a stage parameter.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from entbench.typesys.qids import is_qid, sql_string

#: Hansel Table 2, in the default precedence of spec §2.3.
DEFAULT_PRECEDENCE: tuple[str, ...] = ("PER=Q215627", "LOC=Q618123", "ORG=Q43229", "EVENT=Q1656682")
#: The label of entities reaching none of the roots.
OTHER = "OTHER"
LABEL_PATTERN = re.compile(r"[A-Z][A-Z0-9_]*")


@dataclass(frozen=True)
class CoarseRoot:
    """One coarse type: its label and the root class whose `Type` defines it."""

    label: str
    qid: str


def parse_precedence(specs: Sequence[str], other: str = OTHER) -> tuple[CoarseRoot, ...]:
    """Parse `LABEL=QID` items (highest precedence first); ValueError on a malformed list."""
    roots: list[CoarseRoot] = []
    for spec in specs:
        label, sep, qid = spec.partition("=")
        label, qid = label.strip(), qid.strip()
        if not sep or not LABEL_PATTERN.fullmatch(label) or not is_qid(qid):
            raise ValueError(f"precedence items must look like PER=Q215627, got {spec!r}")
        roots.append(CoarseRoot(label, qid))
    if not roots:
        raise ValueError("precedence must name at least one root")
    labels = [r.label for r in roots]
    qids = [r.qid for r in roots]
    if len(set(labels)) != len(labels) or len(set(qids)) != len(qids):
        raise ValueError(f"precedence repeats a label or a root: {list(specs)}")
    if other in labels:
        raise ValueError(f"the fallback label {other!r} cannot also be a root's label")
    return tuple(roots)


def coarse_label(reached: Collection[str], precedence: Sequence[CoarseRoot], other: str = OTHER) -> str:
    """The label of the highest-precedence root among the `reached` root QIDs, else `other`."""
    for root in precedence:
        if root.qid in reached:
            return root.label
    return other


def combination(reached: Collection[str], precedence: Sequence[CoarseRoot]) -> str:
    """The labels of the reached roots in precedence order joined by `+` (e.g. `LOC+ORG`)."""
    return "+".join(root.label for root in precedence if root.qid in reached)


def coarse_case_sql(roots_column: str, precedence: Sequence[CoarseRoot], other: str = OTHER) -> str:
    """A SQL CASE giving `coarse_label` of a `list<string>` column of reached root QIDs."""
    whens = " ".join(
        f"WHEN list_contains({roots_column}, {sql_string(r.qid)}) THEN {sql_string(r.label)}"
        for r in precedence
    )
    return f"CASE {whens} ELSE {sql_string(other)} END"


def combination_sql(roots_column: str, precedence: Sequence[CoarseRoot]) -> str:
    """SQL for `combination` of a `list<string>` column of reached root QIDs."""
    parts = ", ".join(
        f"CASE WHEN list_contains({roots_column}, {sql_string(r.qid)}) THEN {sql_string(r.label)} END"
        for r in precedence
    )
    return f"concat_ws('+', {parts})"
