"""The downward P279 closure (Hansel §3.1 `Type`) on the real KGTK hierarchy slice, against networkx."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import duckdb
import pyarrow as pa
import pytest

from entbench.typesys import closure as tc
from entbench.typesys.coarse import DEFAULT_PRECEDENCE
from tests.typesys import kgtk_slices as kg

ROOTS = tuple(spec.partition("=")[2] for spec in DEFAULT_PRECEDENCE)


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    """DuckDB with the slice as `claims` in the normalized truthy_claims shape (subject, property, item)."""
    connection = duckdb.connect()
    connection.register("claims_arrow", kg.claims_table())
    connection.execute("CREATE TABLE claims AS SELECT * FROM claims_arrow")
    connection.execute(f"CREATE TABLE p279 AS {tc.p279_edges_sql('claims')}")
    connection.execute(f"CREATE TABLE p31 AS {tc.p31_pairs_sql('claims')}")
    yield connection
    connection.close()


def closure_sets(con: duckdb.DuckDBPyConnection, roots: tuple[str, ...]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for root, cls in con.execute(tc.downward_closure_sql("p279", roots)).fetchall():
        out[root].add(cls)
    return out


def test_edges_are_the_distinct_slice_edges(con: duckdb.DuckDBPyConnection) -> None:
    # The slice repeats 5 P279 edges (same pair, two statement ids); edges are distinct pairs.
    assert len(kg.p279_edges()) == 6074
    got = set(con.execute("SELECT child, parent FROM p279").fetchall())
    assert got == set(kg.p279_edges())
    assert con.execute("SELECT count(*) FROM p279").fetchall()[0][0] == len(set(kg.p279_edges())) == 6069


def test_closure_of_the_coarse_roots_equals_networkx(con: duckdb.DuckDBPyConnection) -> None:
    got = closure_sets(con, ROOTS)
    for root in ROOTS:
        assert got[root] == kg.down(root), root
    # The slice is rich enough for this to mean something: hundreds of classes under LOC and ORG.
    assert len(got["Q618123"]) > 1000 and len(got["Q43229"]) > 1000


def test_closure_terminates_and_is_exact_inside_cycles(con: duckdb.DuckDBPyConnection) -> None:
    cycles = kg.cycles()
    # networkx finds these P279 cycles in the real slice (e.g. lecturer <-> university teacher).
    assert {"Q1569495", "Q1622272"} in cycles
    assert len(cycles) == 5
    # Root the walk *inside* each cycle: every member reaches every other one, and nothing else
    # beyond what networkx reaches.
    members = tuple(sorted(q for c in cycles for q in c))
    got = closure_sets(con, members)
    for member in members:
        assert got[member] == kg.down(member), member
        cycle = next(c for c in cycles if member in c)
        assert cycle <= got[member]


def test_closure_rows_are_distinct(con: duckdb.DuckDBPyConnection) -> None:
    sql = tc.downward_closure_sql("p279", ROOTS)
    query = f"SELECT count(*), count(DISTINCT (root, class)) FROM ({sql})"
    total, distinct = con.execute(query).fetchall()[0]
    assert total == distinct == sum(len(kg.down(r)) for r in ROOTS)


def test_every_items_roots_equal_networkx(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"CREATE OR REPLACE TEMP TABLE closure AS {tc.downward_closure_sql('p279', ROOTS)}")
    reached: dict[str, set[str]] = defaultdict(set)
    for entity, root in con.execute(tc.instance_roots_sql("p31", "closure")).fetchall():
        reached[entity].add(root)
    items = kg.instance_classes()
    assert len(items) == 5394
    expected = {e: kg.reached_roots(classes, ROOTS) for e, classes in items.items()}
    assert {e: r for e, r in expected.items() if r} == dict(reached)
    # Items typed through a class inside a P279 cycle are among them.
    in_cycles = {q for c in kg.cycles() for q in c}
    through_cycle = [e for e, classes in items.items() if classes & in_cycles]
    assert through_cycle and all(reached.get(e, set()) == expected[e] for e in through_cycle)


def test_roots_only_is_the_direct_relation(con: duckdb.DuckDBPyConnection) -> None:
    rows = con.execute(tc.roots_sql(("Q5", "Q215627"))).fetchall()
    assert sorted(rows) == [("Q215627", "Q215627"), ("Q5", "Q5")]
    assert con.execute(tc.roots_sql(())).fetchall() == []


def test_somevalue_and_non_item_values_are_not_edges() -> None:
    con = duckdb.connect()
    claims = pa.table(
        {
            "subject": ["Q1", "Q1", "Q2", "P31", "Q3"],
            "property": ["P279", "P279", "P279", "P279", "P31"],
            "item": ["Q2", None, "P5", "Q7", "Q9"],
        }
    )
    con.register("claims", claims)
    assert con.execute(tc.p279_edges_sql("claims")).fetchall() == [("Q1", "Q2")]
    assert con.execute(tc.p31_pairs_sql("claims")).fetchall() == [("Q3", "Q9")]
