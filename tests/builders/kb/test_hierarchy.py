"""`entbench build kb` on the real KGTK class hierarchy (fixtures/wikidata/kgtk-arnold.hierarchy.json.gz).

Every expectation is computed with networkx over the original KGTK edge files
(`tests.typesys.kgtk_slices`), independently of the dump conversion, the scan and DuckDB.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import networkx as nx
import pytest

from entbench.engine.manifest import load_manifest
from entbench.filters.internal import HANSEL_CLASSES, MGENRE_NOPAGE, TABLE7_CLASSES
from entbench.typesys.coarse import DEFAULT_PRECEDENCE, coarse_label, combination, parse_precedence
from tests.builders.kb.support import (
    FIXTURES,
    HIERARCHY_DUMP,
    NEW_DUMP,
    OLD_DUMP,
    build_kb,
    compose,
    read_dump,
    rows,
    stats,
    truthy_items,
)
from tests.typesys import kgtk_slices as kg

PRECEDENCE = parse_precedence(DEFAULT_PRECEDENCE)
ROOTS = tuple(r.qid for r in PRECEDENCE)
ON_HIERARCHY = [f"wikidata_old={HIERARCHY_DUMP}", f"wikidata_new={HIERARCHY_DUMP}"]
NO_SITE = "internal_filter.site="
SCANS = ("wikidata_old", "wikidata_new")


def removed_reference(classes: tuple[str, ...], transitive: bool) -> set[str]:
    members = set().union(*(kg.down(c) for c in classes)) if transitive else set(classes)
    inst, sup = kg.instance_classes(), kg.superclasses()
    return {n for n in kg.all_nodes() if (inst.get(n, set()) | sup.get(n, set())) & members}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kb-hierarchy")


@pytest.fixture(scope="module")
def hierarchy(out: Path) -> dict[str, Path]:
    """The hierarchy dump as both snapshots (so E_new is empty), no site constraint."""
    return build_kb(out, sources=ON_HIERARCHY, params=[NO_SITE])


def test_fixture_dump_is_the_conversion_of_the_slices() -> None:
    script = FIXTURES / "scripts" / "kgtk_to_dump.py"
    result = subprocess.run(
        [sys.executable, str(script), "--check"], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_filter_removes_instances_and_transitive_subclasses(hierarchy: dict[str, Path]) -> None:
    removed = rows(hierarchy["internal_filter"], "removed")
    expected = removed_reference(HANSEL_CLASSES, transitive=True)
    for snapshot in ("old", "new"):
        assert {r["qid"] for r in removed if r["snapshot"] == snapshot} == expected
    kept = {r["qid"] for r in rows(hierarchy["internal_filter"], "kept") if r["snapshot"] == "old"}
    assert kept == kg.all_nodes() - expected  # everything else is kept
    s = stats(hierarchy["internal_filter"])
    assert (
        s["old_dropped_instance_of_internal"] + s["old_dropped_subclass_of_internal"] == len(expected) == 62
    )
    # Per-class counts: entities whose values reach the class (networkx), e.g. Wikimedia category.
    inst, sup = kg.instance_classes(), kg.superclasses()
    for cls in HANSEL_CLASSES:
        n = sum(1 for q in expected if (inst.get(q, set()) | sup.get(q, set())) & kg.down(cls))
        assert s.get(f"old_dropped_class_{cls}", 0) == n, cls
    assert s["old_dropped_class_Q4167836"] == 14


def test_mgenre_preset_on_the_hierarchy(out: Path) -> None:
    dirs = build_kb(out, sources=ON_HIERARCHY, params=["internal_filter.preset=mgenre", NO_SITE])
    removed = {r["qid"] for r in rows(dirs["internal_filter"], "removed") if r["snapshot"] == "new"}
    assert removed == removed_reference(MGENRE_NOPAGE, transitive=False)
    assert len(removed) == 22


def test_table7_preset_on_the_hierarchy(out: Path) -> None:
    """The `table7` classes remove what networkx says they reach, and the per-class stats (the kb
    card's report) say which of them occur and what each holds under it."""
    dirs = build_kb(out, sources=ON_HIERARCHY, params=["internal_filter.preset=table7", NO_SITE])
    removed = {r["qid"] for r in rows(dirs["internal_filter"], "removed") if r["snapshot"] == "new"}
    assert removed == removed_reference(TABLE7_CLASSES, transitive=True)
    s = stats(dirs["internal_filter"])
    values = [v for _, v in {*kg.p31_edges(), *kg.p279_edges()}]
    occurring = []
    for cls in TABLE7_CLASSES:
        assert s[f"new_class_{cls}_item"] == int(cls in kg.all_nodes()), cls
        assert s[f"new_class_{cls}_statements"] == values.count(cls), cls
        assert s[f"new_class_{cls}_subclasses"] == len(kg.down(cls)) - 1, cls
        if values.count(cls):
            occurring.append(cls)
    # Under Wikimedia category here: Wikimedia set category (itself a table7 class) and, through
    # it, Wikimedia films-by-language category.
    assert s["new_class_Q4167836_subclasses"] == 2 and "Q4167836" in occurring


def test_type_closure_equals_networkx(hierarchy: dict[str, Path]) -> None:
    closure: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in rows(hierarchy["type_closure"], "type_closure"):
        closure[(r["snapshot"], r["root"])].add(r["class"])
    for snapshot in ("old", "new"):
        for root in ROOTS:
            assert closure[(snapshot, root)] == kg.down(root), (snapshot, root)


def test_every_entitys_roots_and_coarse_type(hierarchy: dict[str, Path]) -> None:
    got = {r["qid"]: r for r in rows(hierarchy["coarse_types"], "coarse_types")}
    kept = kg.all_nodes() - removed_reference(HANSEL_CLASSES, transitive=True)
    assert set(got) == kept
    inst = kg.instance_classes()
    combos: Counter[str] = Counter()
    for qid in kept:
        reached = kg.reached_roots(inst.get(qid, set()), ROOTS)
        expected_roots = sorted(reached, key=lambda q: int(q[1:]))
        assert got[qid]["roots"] == expected_roots, qid
        assert got[qid]["coarse"] == coarse_label(reached, PRECEDENCE), qid
        if len(reached) > 1:
            combos[combination(reached, PRECEDENCE)] += 1
    s = stats(hierarchy["coarse_types"])
    assert {k.removeprefix("conflict_"): v for k, v in s.items() if k.startswith("conflict_")} == combos
    assert s["conflicts"] == sum(combos.values())
    # Hand-checked (see tests/typesys/test_coarse.py for the paths).
    assert got["Q100"] == {"qid": "Q100", "coarse": "LOC", "roots": ["Q43229", "Q618123"]}
    assert got["Q106010"]["coarse"] == "ORG"
    assert got["Q41150"] == {"qid": "Q41150", "coarse": "LOC", "roots": ["Q43229", "Q618123", "Q1656682"]}
    assert got["Q30095090"]["coarse"] == "PER"
    assert got["Q10210"] == {"qid": "Q10210", "coarse": "OTHER", "roots": []}
    # Items typed through a class on a P279 cycle: "republic" is an instance of "form of state",
    # which sits on the cycle form of state -> political system -> form of government -> form of
    # state, and reaches organization from there.
    on_cycles = {q for c in kg.cycles() for q in c}
    assert len([q for q in kept if inst.get(q, set()) & on_cycles]) == 8
    assert inst["Q7270"] & on_cycles == {"Q183039"}
    assert got["Q7270"] == {"qid": "Q7270", "coarse": "ORG", "roots": ["Q43229"]}


def test_precedence_parameter(out: Path, hierarchy: dict[str, Path]) -> None:
    swapped = "coarse_types.precedence=PER=Q215627,ORG=Q43229,LOC=Q618123,EVENT=Q1656682"
    dirs = build_kb(out, sources=ON_HIERARCHY, params=[NO_SITE, swapped])
    got = {r["qid"]: r["coarse"] for r in rows(dirs["coarse_types"], "coarse_types")}
    assert got["Q100"] == "ORG"  # Boston: LOC and ORG, ORG now first
    default = stats(hierarchy["coarse_types"])
    swapped_stats = stats(dirs["coarse_types"])
    assert swapped_stats["conflict_ORG+LOC"] == default["conflict_LOC+ORG"] == 883
    # Every entity reaching both LOC and ORG moves from LOC to ORG (also the LOC+ORG+EVENT one).
    moved = default["conflict_LOC+ORG"] + default["conflict_LOC+ORG+EVENT"]
    assert swapped_stats["coarse_ORG"] == default["coarse_ORG"] + moved
    assert swapped_stats["coarse_LOC"] == default["coarse_LOC"] - moved


@pytest.fixture(scope="module")
def composed(out: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The real snapshot pair, each dump extended with the hierarchy's entities (ids the snapshot
    already has keep their snapshot document), with the default site constraint."""
    tmp = tmp_path_factory.mktemp("composed")
    old = compose(tmp / "old.json", OLD_DUMP, HIERARCHY_DUMP)
    new = compose(tmp / "new.json", NEW_DUMP, HIERARCHY_DUMP)
    return build_kb(out, sources=[f"wikidata_old={old}", f"wikidata_new={new}"])


def test_snapshot_entities_typed_through_the_real_hierarchy(composed: dict[str, Path]) -> None:
    entities = {r["qid"]: r for r in rows(composed["entity_diff"], "kb_entities")}
    # The hierarchy's entities have no sitelinks, so the KB is the snapshot pair's, as without it.
    assert {q for q, r in entities.items() if r["in_new"]} == {"Q8413", "Q3454165"}
    assert sum(r["in_known"] for r in entities.values()) == 34
    got = {r["qid"]: r for r in rows(composed["coarse_types"], "coarse_types")}
    old, new = read_dump(OLD_DUMP), read_dump(NEW_DUMP)
    hierarchy_nodes = kg.all_nodes()
    # Each composed dump's P279 graph: the slice plus the snapshot's own P279 statements.
    graphs = {}
    for name, dump in (("old", old), ("new", new)):
        graph = kg.graph().copy()
        for other, doc in dump.items().items():
            graph.add_edges_from((other, parent) for parent in truthy_items(doc, "P279"))
        graphs[name] = graph
    for qid, entity in entities.items():
        dump, graph = (old, graphs["old"]) if entity["in_known"] else (new, graphs["new"])
        reached = set()
        for cls in truthy_items(dump.entities[qid], "P31"):
            if cls in graph:
                reached |= set(ROOTS) & (nx.descendants(graph, cls) | {cls})
            elif cls in ROOTS:
                reached.add(cls)
        assert got[qid]["roots"] == sorted(reached, key=lambda q: int(q[1:])), qid
        assert got[qid]["coarse"] == coarse_label(reached, PRECEDENCE), qid
    # Hand-checked: the humans with a zhwiki page (George Washington, IU, Oliver Kahn, Veronica
    # Roth; new: Constantine the Great, Kevin Bacon) are PER through Q5 -> Q215627 of the slice;
    # countries and cities are LOC, all but Denmark also reaching organization (spec §2.3: LOC
    # before ORG keeps them LOC).
    assert "Q5" in hierarchy_nodes
    by_label = defaultdict(set)
    for qid, row in got.items():
        by_label[row["coarse"]].add(qid)
    assert by_label["PER"] == {"Q23", "Q20145", "Q131261", "Q328212", "Q8413", "Q3454165"}
    assert by_label["LOC"] == {"Q31", "Q35", "Q60", "Q64", "Q84", "Q142", "Q145", "Q1040", "Q217447"}
    assert got["Q35"]["roots"] == ["Q618123"]
    s = stats(composed["coarse_types"])
    assert (s["conflicts"], s["conflict_LOC+ORG"], s["coarse_OTHER"]) == (8, 8, 21)


def test_filter_on_the_snapshot_pair_with_the_real_hierarchy(out: Path, composed: dict[str, Path]) -> None:
    # The real snapshot pair, each dump extended with the hierarchy's entities (the `composed`
    # dumps), without a site constraint: the filter removes exactly the items whose truthy P31 or
    # P279 reaches a filter class (networkx over each composed dump's own P279 edges, read with
    # stdlib json) and keeps every other item, the snapshot's real entities included.
    old_path, new_path = (Path(load_manifest(composed[s])["sources"][s]["path"]) for s in SCANS)
    dirs = build_kb(out, sources=[f"wikidata_old={old_path}", f"wikidata_new={new_path}"], params=[NO_SITE])
    removed = rows(dirs["internal_filter"], "removed")
    kept = rows(dirs["internal_filter"], "kept")
    for snapshot, path in (("old", old_path), ("new", new_path)):
        dump = read_dump(path)
        graph = nx.DiGraph()
        for qid, doc in dump.items().items():
            graph.add_edges_from((qid, parent) for parent in truthy_items(doc, "P279"))
        members = set(HANSEL_CLASSES)
        for cls in HANSEL_CLASSES:
            if cls in graph:
                members |= nx.ancestors(graph, cls)  # every class with a P279 path to cls
        internal = {
            qid
            for qid, doc in dump.items().items()
            if (truthy_items(doc, "P31") | truthy_items(doc, "P279")) & members
        }
        got_removed = {r["qid"] for r in removed if r["snapshot"] == snapshot and r["reason"] != "not_item"}
        got_kept = {r["qid"] for r in kept if r["snapshot"] == snapshot}
        assert got_removed == internal
        assert got_kept == set(dump.items()) - internal
        # The hierarchy's 62 internal items, and none of the snapshot's real items.
        assert len(internal) == 62 and not internal & set(
            read_dump(OLD_DUMP if snapshot == "old" else NEW_DUMP).items()
        )
