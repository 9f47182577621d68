"""Wikidata item ids (QIDs): validation, numeric order, and safe SQL literals."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

QID_PATTERN = re.compile(r"Q[1-9][0-9]*")
PID_PATTERN = re.compile(r"P[1-9][0-9]*")


def is_qid(value: str) -> bool:
    """Whether `value` is a canonical item id such as `Q42` (no leading zeros, no prefix)."""
    return QID_PATTERN.fullmatch(value) is not None


def check_qids(values: Sequence[str], what: str) -> tuple[str, ...]:
    """`values` as a tuple if every one is a canonical QID and none repeats, else a ValueError."""
    bad = [v for v in values if not is_qid(v)]
    if bad:
        raise ValueError(f"{what}: not item ids (Q…): {bad}")
    if len(set(values)) != len(values):
        raise ValueError(f"{what}: repeated ids in {list(values)}")
    return tuple(values)


def qid_number(qid: str) -> int:
    """The number of an entity id: `Q42` -> 42, `P31` -> 31."""
    return int(qid[1:])


def qid_sorted(qids: Iterable[str]) -> list[str]:
    """Ids in numeric order (`Q5` before `Q43229`), the order used for every id list we write."""
    return sorted(qids, key=lambda q: (q[:1], qid_number(q)))


def qid_number_sql(column: str) -> str:
    """SQL for the number of an id column (`Q42` -> 42; NULL where it is not `X<digits>`)."""
    return f"TRY_CAST(substr({column}, 2) AS BIGINT)"


def sql_string(value: str) -> str:
    """A SQL string literal (single quotes doubled)."""
    return "'" + value.replace("'", "''") + "'"


def sql_string_list(values: Iterable[str]) -> str:
    """A SQL list literal of strings, e.g. `['Q5', 'Q215627']` (DuckDB list syntax)."""
    return "[" + ", ".join(sql_string(v) for v in values) + "]"
