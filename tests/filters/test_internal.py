"""The Wikimedia-internal filter rules (spec §2.1) on the real KGTK hierarchy slice and real sitelinks."""

from __future__ import annotations

import bz2
import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from entbench.filters import internal
from entbench.typesys import closure as tc
from tests.typesys import kgtk_slices as kg

#: spec §2.1, copied from mGENRE's NOPAGE list in `scripts_mgenre/preprocess_wikidata.py`.
SPEC_NOPAGE = [
    "Q4167836",
    "Q24046192",
    "Q20010800",
    "Q11266439",
    "Q11753321",
    "Q19842659",
    "Q21528878",
    "Q17362920",
    "Q14204246",
    "Q21025364",
    "Q17442446",
    "Q26267864",
    "Q4663903",
    "Q15184295",
]


def test_class_sets_and_presets() -> None:
    assert list(internal.MGENRE_NOPAGE) == SPEC_NOPAGE
    assert "Q4167410" not in internal.MGENRE_NOPAGE  # commented out in mGENRE
    assert list(internal.HANSEL_CLASSES) == [*SPEC_NOPAGE, "Q4167410", "Q13406463"]
    assert internal.PRESETS["hansel"] == {
        "classes": internal.HANSEL_CLASSES,
        "transitive": True,
        "site": "zhwiki",
        "site_from": "new",
        "ranks": "truthy",
    }
    assert internal.PRESETS["mgenre"] == {
        "classes": internal.MGENRE_NOPAGE,
        "transitive": False,
        "site": "*wiki",
        "site_from": "own",
        "ranks": "all",  # mGENRE reads P31/P279 statements of every rank
    }


def test_table7_classes_are_the_checked_ones(fixtures_dir: Path) -> None:
    """Every `table7` class has a real English label naming a Wikimedia-internal class in the KGTK
    label lines kept for the check, except Wikimedia module (checked from knowledge only, and in
    mGENRE's list); the unchecked QIDs of Table 7 stay out."""
    path = fixtures_dir / "wikidata" / "kgtk-arnold.labels.en.table7.tsv"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "node1\tlabel\tnode2\tid"
    labels = {node: value for node, _, value, _ in (line.split("\t") for line in lines[1:])}
    assert set(internal.TABLE7_CLASSES) == set(labels) | {"Q15184295"}
    assert "Q15184295" in internal.MGENRE_NOPAGE
    for qid, label in labels.items():
        assert label.endswith("'@en") and ("Wikimedia" in label or "metacategory" in label), (qid, label)
    assert labels["Q4167836"] == "'Wikimedia category'@en"
    assert not set(internal.TABLE7_CLASSES) & set(internal.TABLE7_UNVERIFIED)
    assert len(internal.TABLE7_UNVERIFIED) == len(set(internal.TABLE7_UNVERIFIED)) == 28
    assert internal.PRESETS["table7"] == {**internal.PRESETS["hansel"], "classes": internal.TABLE7_CLASSES}


@pytest.mark.parametrize("bad", ["zh wiki", "zhwiki'; DROP TABLE x; --", "zh.wiki"])
def test_site_must_be_a_site_id_or_glob(bad: str) -> None:
    with pytest.raises(ValueError):
        internal.check_site(bad)
    assert internal.check_site("") == ""
    assert internal.check_site("zh_yuewiki") == "zh_yuewiki"


def real_site_keys(fixtures_dir: Path) -> list[str]:
    """Every sitelink key of the real new snapshot dump."""
    keys: set[str] = set()
    with bz2.open(fixtures_dir / "wikidata" / "entities-new.json.bz2", "rt", encoding="utf-8") as f:
        for raw in f:
            line = raw.strip().rstrip(",")
            if line in ("[", "]"):
                continue
            doc = json.loads(line)
            if isinstance(doc.get("sitelinks"), dict):
                keys.update(doc["sitelinks"])
    return sorted(keys)


def test_any_wiki_glob_is_mgenres_endswith_rule(fixtures_dir: Path) -> None:
    keys = real_site_keys(fixtures_dir)
    con = duckdb.connect()
    con.register("sitelinks", pa.table({"site": keys}))
    for site in ("*wiki", "zhwiki", "zh_yuewiki"):
        cond = internal.site_condition_sql(site)
        got = sorted(r[0] for r in con.execute(f"SELECT site FROM sitelinks WHERE {cond}").fetchall())
        if site == "*wiki":
            assert got == [k for k in keys if k.endswith("wiki")]  # mGENRE: k.endswith("wiki")
            # The real keys include non-Wikipedia projects the rule lets through and ones it does not.
            assert "commonswiki" in got and "enwikiquote" not in got and "enwikiquote" in keys
        else:
            assert got == ([site] if site in keys else [])


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    """The slice as claims, and every node as an item entity."""
    connection = duckdb.connect()
    connection.register("claims", kg.claims_table())
    nodes = sorted(kg.all_nodes())
    connection.register("entities", pa.table({"id": nodes, "type": ["item"] * len(nodes)}))
    connection.execute(f"CREATE TABLE p279 AS {tc.p279_edges_sql('claims')}")
    yield connection
    connection.close()


def decide(con: duckdb.DuckDBPyConnection, classes: tuple[str, ...], transitive: bool) -> dict[str, tuple]:
    closure = tc.downward_closure_sql("p279", classes) if transitive else tc.roots_sql(classes)
    con.execute(f"CREATE OR REPLACE TEMP TABLE closure AS {closure}")
    con.execute(f"CREATE OR REPLACE TEMP TABLE hits AS {internal.internal_hits_sql('claims', 'closure')}")
    rows = con.execute(internal.decisions_sql("entities", "hits", None)).fetchall()
    return {qid: (reason, classes) for qid, reason, classes in rows}


def reference(classes: tuple[str, ...], transitive: bool) -> dict[str, str]:
    """qid -> reason for removed items, from networkx reachability (or direct membership)."""
    members = set().union(*(kg.down(c) for c in classes)) if transitive else set(classes)
    inst, sup = kg.instance_classes(), kg.superclasses()
    out = {}
    for node in kg.all_nodes():
        if inst.get(node, set()) & members:
            out[node] = internal.Reason.INSTANCE_OF_INTERNAL.value
        elif sup.get(node, set()) & members:
            out[node] = internal.Reason.SUBCLASS_OF_INTERNAL.value
    return out


def test_hansel_removes_instances_and_transitive_subclasses(con: duckdb.DuckDBPyConnection) -> None:
    got = decide(con, internal.HANSEL_CLASSES, transitive=True)
    removed = {q: reason for q, (reason, _) in got.items() if reason is not None}
    assert removed == reference(internal.HANSEL_CLASSES, transitive=True)
    assert len(removed) == 62 and len(got) == len(kg.all_nodes())
    # Hand-checked: "Category:United States" is an instance of Wikimedia category, itself a
    # subclass of Wikimedia internal item (Q17442446), so it reaches both filter classes;
    # "Wikimedia films-by-language category" is a subclass of a subclass of Wikimedia category
    # (via Q59542487), so only the transitive rule removes it.
    assert got["Q1410960"] == ("instance_of_internal", ["Q4167836", "Q17442446"])
    assert got["Q104370472"][0] == "subclass_of_internal"
    assert "Q4167836" in got["Q104370472"][1]
    # Everything else is kept, e.g. Boston and Arnold Schwarzenegger's class "human".
    assert got["Q100"] == (None, None) and got["Q5"] == (None, None)
    # Class lists are in QID-number order.
    for _, classes in got.values():
        if classes:
            assert classes == sorted(classes, key=lambda q: int(q[1:]))


def test_mgenre_removes_exactly_direct_nopage_members(con: duckdb.DuckDBPyConnection) -> None:
    got = decide(con, internal.MGENRE_NOPAGE, transitive=False)
    removed = {q: reason for q, (reason, _) in got.items() if reason is not None}
    assert removed == reference(internal.MGENRE_NOPAGE, transitive=False)
    assert len(removed) == 22
    # Not removed by mGENRE's rules: the transitive subclass above, and disambiguation pages
    # (Q4167410 is commented out of NOPAGE).
    assert "Q104370472" not in removed
    disambiguation = [e for e, c in kg.p31_edges() if c == "Q4167410"]
    assert disambiguation and not set(disambiguation) & set(removed)


def test_non_items_and_site_constraint_reasons(con: duckdb.DuckDBPyConnection) -> None:
    # A property among the entities is dropped as not_item even though it has no claims; with a
    # site constraint and no sitelinks at all, every remaining item is dropped as no_site.
    con.execute("CREATE OR REPLACE TEMP TABLE with_prop AS SELECT id, type FROM entities")
    con.execute("INSERT INTO with_prop VALUES ('P31', 'property')")
    con.execute("CREATE OR REPLACE TEMP TABLE site_ok (qid VARCHAR)")
    decide(con, internal.HANSEL_CLASSES, transitive=True)
    rows = con.execute(internal.decisions_sql("with_prop", "hits", "site_ok")).fetchall()
    reasons = {qid: reason for qid, reason, _ in rows}
    assert reasons["P31"] == "not_item"
    assert reasons["Q1410960"] == "instance_of_internal"  # the class rule comes before the site
    assert reasons["Q100"] == "no_site"
    assert None not in reasons.values()


def test_site_joined_in_a_query_of_its_own_gives_the_same_decisions(con: duckdb.DuckDBPyConnection) -> None:
    # `internal_filter` joins the site constraint first (`sited_entities_sql`), so that no query
    # probes two hash tables (a DuckDB memory cap holds then): the decisions must not change.
    con.execute("CREATE OR REPLACE TEMP TABLE with_prop AS SELECT id, type FROM entities")
    con.execute("INSERT INTO with_prop VALUES ('P31', 'property')")
    con.execute("CREATE OR REPLACE TEMP TABLE site_ok AS SELECT id AS qid FROM entities WHERE id < 'Q5'")
    decide(con, internal.HANSEL_CLASSES, transitive=True)
    together = sorted(con.execute(internal.decisions_sql("with_prop", "hits", "site_ok")).fetchall())
    con.execute(f"CREATE TEMP TABLE sited AS {internal.sited_entities_sql('with_prop', 'site_ok')}")
    apart = sorted(con.execute(internal.decisions_sql("sited", "hits", "site_ok", sited=True)).fetchall())
    assert apart == together
    reasons = {reason for _, reason, _ in together}
    assert {None, "no_site", "not_item", "instance_of_internal"} <= reasons  # every rule is exercised
