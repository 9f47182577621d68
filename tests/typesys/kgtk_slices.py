"""The real KGTK "Arnold" class-hierarchy slices (fixtures/wikidata/kgtk-arnold.slice.*.tsv.gz) and an
independent networkx reference for `Type` (Hansel §3.1), shared by the kb tests.

The reference closes P279 with networkx's graph reachability, not SQL: `Type(e, r)` iff some P31
class of `e` is `r` or has a directed P279 path to `r`.
"""

from __future__ import annotations

import csv
import gzip
from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import networkx as nx
import pyarrow as pa

WIKIDATA = Path(__file__).resolve().parents[2] / "fixtures" / "wikidata"
HIERARCHY_DUMP = WIKIDATA / "kgtk-arnold.hierarchy.json.gz"


def _rows(name: str) -> list[list[str]]:
    with gzip.open(WIKIDATA / name, "rt", encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(reader)  # header
        return [row for row in reader if row]


@cache
def p279_edges() -> tuple[tuple[str, str], ...]:
    """(child, parent) for every P279 edge of the slice (duplicates kept, as in the file)."""
    return tuple((row[1], row[3]) for row in _rows("kgtk-arnold.slice.P279.tsv.gz"))


@cache
def p31_edges() -> tuple[tuple[str, str], ...]:
    """(item, class) for every P31 edge of the slice."""
    return tuple((row[1], row[3]) for row in _rows("kgtk-arnold.slice.P31.tsv.gz"))


@cache
def labels() -> dict[str, str]:
    """English labels as written in KGTK ('text'@en)."""
    return {row[0]: row[2] for row in _rows("kgtk-arnold.slice.labels.en.tsv.gz")}


@cache
def graph() -> nx.DiGraph:
    """P279 as a directed graph child -> parent."""
    g = nx.DiGraph()
    g.add_edges_from(p279_edges())
    return g


def instance_classes() -> dict[str, set[str]]:
    """item -> its P31 classes."""
    out: dict[str, set[str]] = defaultdict(set)
    for item, cls in p31_edges():
        out[item].add(cls)
    return out


def superclasses() -> dict[str, set[str]]:
    """class -> its direct P279 values."""
    out: dict[str, set[str]] = defaultdict(set)
    for child, parent in p279_edges():
        out[child].add(parent)
    return out


def all_nodes() -> set[str]:
    """Every QID in either edge file (the entities of the converted dump)."""
    return {q for edge in (*p279_edges(), *p31_edges()) for q in edge}


@cache
def down(root: str) -> frozenset[str]:
    """The root and every class with a P279 path to it (networkx reachability)."""
    g = graph()
    return frozenset({root} | (nx.ancestors(g, root) if root in g else set()))


def reached_roots(classes: Iterable[str], roots: Iterable[str]) -> set[str]:
    """The roots r with Type(e, r) for an entity whose P31 classes are `classes`."""
    classes = set(classes)
    return {r for r in roots if classes & down(r)}


def cycles() -> list[set[str]]:
    """The strongly connected components of P279 with more than one class (the cycles)."""
    return [c for c in nx.strongly_connected_components(graph()) if len(c) > 1]


def claims_table() -> pa.Table:
    """Both edge files as rows shaped like the normalized `truthy_claims` (subject, property, item)."""
    rows = [(c, "P279", p) for c, p in p279_edges()] + [(e, "P31", c) for e, c in p31_edges()]
    return pa.table(
        {
            "subject": [r[0] for r in rows],
            "property": [r[1] for r in rows],
            "item": [r[2] for r in rows],
        }
    )
