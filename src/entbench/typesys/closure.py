"""The transitive `Type` relation of Hansel §3.1, computed downward from a few root classes.

Hansel §3.1 defines

    R(e1, P31, e2) => Type(e1, e2)
    Type(e1, e2) and R(e2, P279, e3) => Type(e1, e3)

so `Type(e, r)` holds iff some truthy P31 value of `e` is `r` or a (transitive) P279-subclass of
`r`. Spec §2.3: rather than closing every class upward (all ancestors of all classes, ~15x more
rows), we walk P279 *downward* from the few roots we ask about (the coarse-type roots, or the
Wikimedia-internal filter classes) and then join P31 once.

The walk is a recursive CTE with `UNION` (not `UNION ALL`): DuckDB then adds only rows not
already in the result, so the recursion stops on P279 cycles (real Wikidata has them, e.g.
Q1569495 <-> Q1622272 in the KGTK slice) and the result is exactly the set of reachable pairs.

Every function returns SQL text over relations the caller names; the edges relation should be a
materialised table (the recursive step scans it once per level).
"""

from __future__ import annotations

from collections.abc import Sequence

from entbench.typesys.qids import sql_string

#: Wikidata's "subclass of" and "instance of" properties.
SUBCLASS_OF = "P279"
INSTANCE_OF = "P31"


def item_values_sql(claims: str, prop: str) -> str:
    """Distinct `(subject, item)` pairs of truthy `prop` statements whose value is an item.

    `claims` has the columns of the normalized `truthy_claims` table; somevalue/novalue snaks
    have a NULL `item` (spec §1) and never count as a value.
    """
    return (
        f"SELECT DISTINCT subject, item FROM {claims} "
        f"WHERE property = {sql_string(prop)} AND item IS NOT NULL "
        "AND starts_with(subject, 'Q') AND starts_with(item, 'Q')"
    )


def p279_edges_sql(claims: str) -> str:
    """`(child, parent)` edges: `child` has a truthy P279 ("subclass of") value `parent`."""
    return f"SELECT subject AS child, item AS parent FROM ({item_values_sql(claims, SUBCLASS_OF)})"


def p31_pairs_sql(claims: str) -> str:
    """`(entity, class)` pairs: `entity` has a truthy P31 ("instance of") value `class`."""
    return f'SELECT subject AS entity, item AS "class" FROM ({item_values_sql(claims, INSTANCE_OF)})'


def roots_sql(roots: Sequence[str]) -> str:
    """`(root, class)` with each root as its own class: the non-transitive "closure"."""
    if not roots:
        return 'SELECT NULL::VARCHAR AS root, NULL::VARCHAR AS "class" WHERE false'
    values = ", ".join(f"({sql_string(r)})" for r in roots)
    return f'SELECT root, root AS "class" FROM (VALUES {values}) AS r(root)'


def downward_closure_sql(edges: str, roots: Sequence[str]) -> str:
    """`(root, class)` for every class that is a root or a transitive P279-subclass of one.

    Reflexive (each root is its own class) and exact on cycles. `edges` has `(child, parent)`.
    """
    return (
        'WITH RECURSIVE down(root, "class") AS ('
        f"{roots_sql(roots)} "
        "UNION "
        f'SELECT d.root, e.child FROM down AS d JOIN {edges} AS e ON e.parent = d."class"'
        ') SELECT root, "class" FROM down'
    )


def instance_roots_sql(instances: str, closure: str) -> str:
    """Distinct `(entity, root)` with `Type(entity, root)`: a P31 class of the entity is in the
    closure of `root`. `instances` has `(entity, class)`, `closure` has `(root, class)`."""
    return (
        f'SELECT DISTINCT i.entity, c.root FROM {instances} AS i JOIN {closure} AS c ON c."class" = i."class"'
    )
