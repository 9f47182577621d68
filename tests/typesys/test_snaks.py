"""TopSnaks (Hansel §3.1 fine types, spec §2.4) over the real KGTK slice, against a Python count."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator

import duckdb
import pytest

from entbench.typesys import snaks as ts
from tests.typesys import kgtk_slices as kg


def reference_order() -> list[tuple[tuple[str, str], int]]:
    """((property, value), distinct entities) sorted as spec §2.4 says, computed in Python."""
    holders: dict[tuple[str, str], set[str]] = defaultdict(set)
    for child, parent in kg.p279_edges():
        holders[("P279", parent)].add(child)
    for item, cls in kg.p31_edges():
        holders[("P31", cls)].add(item)
    counts = {snak: len(entities) for snak, entities in holders.items()}
    return sorted(counts.items(), key=lambda kv: (-kv[1], int(kv[0][0][1:]), int(kv[0][1][1:])))


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    """Every subject of the slice is a KB entity; its P31/P279 values are its snaks."""
    connection = duckdb.connect()
    connection.register("claims", kg.claims_table())
    connection.execute("CREATE TABLE entities AS SELECT DISTINCT subject AS qid FROM claims")
    connection.execute(f"CREATE TABLE entity_snaks AS {ts.entity_snaks_sql('claims', 'entities')}")
    connection.execute(f"CREATE TABLE frequencies AS {ts.snak_frequencies_sql('entity_snaks')}")
    yield connection
    connection.close()


def test_frequencies_are_distinct_entity_counts(con: duckdb.DuckDBPyConnection) -> None:
    got = {(p, v): n for p, v, n in con.execute("SELECT * FROM frequencies").fetchall()}
    assert got == dict(reference_order())
    # Duplicate statements (the slice repeats 7 P31 and 5 P279 pairs) count their entity once.
    pairs = Counter((e, c) for e, c in kg.p31_edges())
    assert any(n > 1 for n in pairs.values())


def test_top_k_order_and_ties(con: duckdb.DuckDBPyConnection) -> None:
    expected = reference_order()
    full = con.execute(f"SELECT * FROM ({ts.top_snaks_sql('frequencies', 100_000)}) ORDER BY rank").fetchall()
    assert [(p, v) for _, p, v, _ in full] == [snak for snak, _ in expected]
    assert [r for r, *_ in full] == list(range(len(expected)))
    # Cut K inside a run of equal counts: the kept ones are those with the smallest
    # (property number, value number), whatever order DuckDB scanned them in.
    counts = [n for _, n in expected]
    k = next(i for i in range(1, len(counts)) if counts[i - 1] == counts[i] and i > 10)
    top = con.execute(f"SELECT rank, property, value FROM ({ts.top_snaks_sql('frequencies', k)})").fetchall()
    assert sorted(top) == [(i, p, v) for i, ((p, v), _) in enumerate(expected[:k])]
    # P31-Q5 (instance of human) is among the most frequent snaks, as in Hansel's Table 6.
    assert ("P31", "Q5") in [snak for snak, _ in expected[:3]]


def test_entity_indices(con: duckdb.DuckDBPyConnection) -> None:
    k = 50
    con.execute(f"CREATE OR REPLACE TABLE top AS {ts.top_snaks_sql('frequencies', k)}")
    got = dict(con.execute(ts.entity_top_snaks_sql("entity_snaks", "top", "entities")).fetchall())
    rank = {snak: i for i, (snak, _) in enumerate(reference_order()[:k])}
    expected: dict[str, set[int]] = defaultdict(set)
    for child, parent in kg.p279_edges():
        if ("P279", parent) in rank:
            expected[child].add(rank[("P279", parent)])
    for item, cls in kg.p31_edges():
        if ("P31", cls) in rank:
            expected[item].add(rank[("P31", cls)])
    subjects = {e for e, _ in (*kg.p279_edges(), *kg.p31_edges())}
    assert set(got) == subjects  # every entity has a row, with an empty list if no TopSnak
    for qid, snaks in got.items():
        assert snaks == sorted(expected.get(qid, set())), qid
    assert any(not s for s in got.values()) and any(len(s) > 1 for s in got.values())
