"""Coarse types and precedence (Hansel Table 2, spec §2.3) on hand-checked entities of the real slice."""

from __future__ import annotations

import itertools
from collections import Counter

import duckdb
import pytest

from entbench.typesys import closure as tc
from entbench.typesys.coarse import (
    DEFAULT_PRECEDENCE,
    coarse_case_sql,
    coarse_label,
    combination,
    combination_sql,
    parse_precedence,
)
from entbench.typesys.qids import sql_string_list
from tests.typesys import kgtk_slices as kg

PRECEDENCE = parse_precedence(DEFAULT_PRECEDENCE)
ROOTS = tuple(r.qid for r in PRECEDENCE)

# Hand-checked in the slice (paths via P31 then P279, labels from the KGTK labels file):
HAND_CHECKED = {
    # Boston -P31-> city of the United States -> human settlement -> geographic region ->
    # geographical object (LOC); ... human settlement -> community -> organization (ORG).
    "Q100": ("LOC", ["Q43229", "Q618123"]),
    # Christmas Eve -P31-> Christian holy day -> religious festival -> festival -> organization
    # (ORG); -P31-> public holiday -> holiday -> recurring event -> event (EVENT).
    "Q106010": ("ORG", ["Q43229", "Q1656682"]),
    # Way of Saint James: long-distance trail -> ... -> facility -> geographical object and
    # organization; pilgrimage -> event. Three roots, LOC wins.
    "Q41150": ("LOC", ["Q43229", "Q618123", "Q1656682"]),
    # Q30095090 (no English label): monograph -> ... -> interlocutor -> person (PER);
    # doctoral thesis -> thesis -> test -> event (EVENT).
    "Q30095090": ("PER", ["Q215627", "Q1656682"]),
    # François Fillon -P31-> human -> person.
    "Q101410": ("PER", ["Q215627"]),
    # white wine -P31-> Q8024923, which reaches none of the four roots.
    "Q10210": ("OTHER", []),
}


def test_parse_precedence_default_is_table_2_in_spec_order() -> None:
    assert [(r.label, r.qid) for r in PRECEDENCE] == [
        ("PER", "Q215627"),
        ("LOC", "Q618123"),
        ("ORG", "Q43229"),
        ("EVENT", "Q1656682"),
    ]


@pytest.mark.parametrize(
    "specs",
    [
        ("PER",),
        ("PER=Q0215627",),
        ("per=Q215627",),
        ("PER=Q215627", "PER=Q618123"),
        ("PER=Q215627", "LOC=Q215627"),
        ("OTHER=Q215627",),
        (),
    ],
)
def test_parse_precedence_rejects_malformed_lists(specs: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        parse_precedence(specs)


def test_sql_case_agrees_with_python_on_every_combination() -> None:
    con = duckdb.connect()
    for size in range(len(ROOTS) + 1):
        for reached in itertools.permutations(ROOTS, size):
            column = sql_string_list(reached) + "::VARCHAR[]"
            label, combo = con.execute(
                f"SELECT {coarse_case_sql(column, PRECEDENCE)}, {combination_sql(column, PRECEDENCE)}"
            ).fetchall()[0]
            assert label == coarse_label(reached, PRECEDENCE)
            assert combo == combination(reached, PRECEDENCE)


@pytest.mark.parametrize("qid", sorted(HAND_CHECKED))
def test_hand_checked_entities(qid: str) -> None:
    label, roots = HAND_CHECKED[qid]
    reached = kg.reached_roots(kg.instance_classes()[qid], ROOTS)
    assert reached == set(roots)
    assert coarse_label(reached, PRECEDENCE) == label


def test_precedence_is_a_parameter() -> None:
    # ORG before LOC turns Boston (a city, also a community) into ORG.
    swapped = parse_precedence(("PER=Q215627", "ORG=Q43229", "LOC=Q618123", "EVENT=Q1656682"))
    boston = kg.reached_roots(kg.instance_classes()["Q100"], ROOTS)
    assert coarse_label(boston, swapped) == "ORG"
    assert coarse_label(boston, PRECEDENCE) == "LOC"
    assert coarse_label(set(), PRECEDENCE, other="MISC") == "MISC"


def test_conflict_and_label_counts_on_the_slice_match_networkx() -> None:
    con = duckdb.connect()
    con.register("claims", kg.claims_table())
    con.execute(f"CREATE TABLE p279 AS {tc.p279_edges_sql('claims')}")
    con.execute(f"CREATE TABLE p31 AS {tc.p31_pairs_sql('claims')}")
    con.execute(f"CREATE TABLE closure AS {tc.downward_closure_sql('p279', ROOTS)}")
    con.execute(
        "CREATE TABLE reached AS SELECT entity, list(root) AS roots "
        f"FROM ({tc.instance_roots_sql('p31', 'closure')}) GROUP BY entity"
    )
    sql_labels = Counter(
        dict(
            con.execute(
                f"SELECT {coarse_case_sql('roots', PRECEDENCE)} AS l, count(*) FROM reached GROUP BY l"
            ).fetchall()
        )
    )
    sql_combos = Counter(
        dict(
            con.execute(
                f"SELECT {combination_sql('roots', PRECEDENCE)} AS c, count(*) FROM reached "
                "WHERE len(roots) > 1 GROUP BY c"
            ).fetchall()
        )
    )
    # The same counted with networkx over every item of the slice (no filter applied).
    combos: Counter[str] = Counter()
    labels: Counter[str] = Counter()
    for classes in kg.instance_classes().values():
        reached = kg.reached_roots(classes, ROOTS)
        if reached:
            labels[coarse_label(reached, PRECEDENCE)] += 1
        if len(reached) > 1:
            combos[combination(reached, PRECEDENCE)] += 1
    assert sql_combos == combos
    assert sql_labels == labels
    # Cities and countries are both LOC and ORG; LOC wins by the default precedence.
    assert combos["LOC+ORG"] == 884
    assert set(combos) == {"LOC+ORG", "ORG+EVENT", "PER+EVENT", "LOC+ORG+EVENT"}
