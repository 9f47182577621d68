"""TopSnaks, Hansel's fine types (Hansel §3.1 "Fine Types", appendix C; spec §2.4).

"TopSnaks are defined as top 10,000 property-value pairs, i.e. (p, e2) tuples, sorted by entity
frequency in KB. An example TopSnak is P31-Q5, which means 'instance of human'." (Hansel §3.1)

Spec §2.4 makes this exact: a snak is a (property, item value) pair of a truthy statement whose
value is an item; its frequency is the number of *distinct* E_known entities having it; the
TopSnaks are the K most frequent, ties broken by (property number, value number) ascending, so
the order never depends on how the rows were scanned. A TopSnak's `rank` is its 0-based position
in that order, and an entity's fine types are the ranks of the TopSnaks it has, ascending.
"""

from __future__ import annotations

from entbench.typesys.qids import qid_number_sql


def entity_snaks_sql(claims: str, entities: str) -> str:
    """Distinct `(qid, property, value)` of the entities listed in `entities` (column `qid`).

    Only truthy statements with an item value count (spec §2.4); somevalue/novalue snaks and
    values that are properties, lexemes or other entity kinds do not.
    """
    return (
        "SELECT DISTINCT c.subject AS qid, c.property, c.item AS value "
        f"FROM {claims} AS c SEMI JOIN {entities} AS e ON e.qid = c.subject "
        "WHERE c.item IS NOT NULL AND starts_with(c.item, 'Q')"
    )


def snak_frequencies_sql(entity_snaks: str) -> str:
    """`(property, value, entity_count)`: distinct entities per snak (rows are already distinct)."""
    return f"SELECT property, value, count(*) AS entity_count FROM {entity_snaks} GROUP BY property, value"


def top_snaks_sql(frequencies: str, k: int) -> str:
    """The `k` most frequent snaks as `(rank, property, value, entity_count)`, rank 0-based.

    Order: entity_count descending, then property number, value number (spec §2.4); the id
    strings break the (impossible for canonical ids) remaining ties so the order is total.
    """
    order = f"entity_count DESC, {qid_number_sql('property')}, {qid_number_sql('value')}, property, value"
    return (
        "SELECT rank, property, value, entity_count FROM ("
        f"SELECT CAST(row_number() OVER (ORDER BY {order}) - 1 AS INTEGER) AS rank, "
        f"property, value, entity_count FROM {frequencies}"
        f") WHERE rank < {int(k)}"
    )


def entity_top_snaks_sql(entity_snaks: str, top: str, entities: str) -> str:
    """`(qid, snaks)` for every entity in `entities`: the ranks of its TopSnaks, ascending
    (an empty list when it has none)."""
    return (
        "SELECT e.qid, coalesce(s.snaks, []::INTEGER[]) AS snaks "
        f"FROM {entities} AS e LEFT JOIN ("
        "SELECT es.qid, list(t.rank ORDER BY t.rank) AS snaks "
        f"FROM {entity_snaks} AS es JOIN {top} AS t ON t.property = es.property AND t.value = es.value "
        "GROUP BY es.qid"
        ") AS s ON s.qid = e.qid"
    )
