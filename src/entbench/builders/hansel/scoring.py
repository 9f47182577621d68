"""`entbench eval hansel`: a linker's predictions scored against a Hansel-format gold file.

Hansel reports R@1 over In-KB mentions ("In-KB", Tables 3 and 5) and, on its test slices, R@1 with
NIL, where a NIL prediction must carry the gold's coarse type (`NIL_PER`, …; "With-NIL", Table 5):

* `accuracy`: over gold records whose `gold_id` is a QID, the share whose `pred_id` is that QID;
* `accuracy_with_nil` (only when the gold has NIL records): over all records, the share whose
  `pred_id` equals `gold_id`, a typed NIL matching only the same typed NIL;
  `accuracy_with_untyped_nil`: the same where any NIL prediction (`NIL`, `NIL_<TYPE>`) matches a
  NIL gold.

Both are also given per coarse type (a NIL gold's type is its label's; an In-KB gold's type is
its entity's `type` in the KB file given with `--kb`, else In-KB records are left out of the
breakdown and counted in `in_kb_without_type`), per `source` (the host of a URL, or the value
itself) and per `domain`, for the keys the gold file has. Predictions are `{"id", "pred_id"}`
lines; every gold record needs exactly one, and a prediction for an id the gold does not have is
an error (a file for another set).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from entbench.builders.hansel.release import check_label, is_nil, nil_type, read_lines
from entbench.errors import DataError


@dataclass(frozen=True)
class Scored:
    """One gold record with its prediction and the groups it counts in."""

    gold: str
    pred: str
    type: str | None
    source: str | None
    domain: str | None

    @property
    def in_kb(self) -> bool:
        """Whether the gold is a KB entity (not NIL)."""
        return not is_nil(self.gold)


def score(gold: str | Path, predictions: str | Path, kb: str | Path | None = None) -> dict[str, Any]:
    """The scores of `predictions` on `gold` (see the module docstring), as a JSON-able report."""
    golds: dict[str, tuple[str, str | None, str | None]] = {}
    for line in read_lines(gold, ("id", "gold_id"), what="gold file"):
        record_id = line.string("id")
        if record_id in golds:
            raise line.error(f"id {record_id!r} repeats")
        source = line.record.get("source")
        domain = line.record.get("domain")
        golds[record_id] = (
            check_label(line, "gold_id"),
            None if source is None else source_group(str(source)),
            None if domain is None else str(domain),
        )
    preds: dict[str, str] = {}
    for line in read_lines(predictions, ("id", "pred_id"), what="predictions file"):
        record_id = line.string("id")
        if record_id not in golds:
            raise line.error(f"id {record_id!r} is not in the gold file {gold}")
        if record_id in preds:
            raise line.error(f"id {record_id!r} is predicted twice")
        preds[record_id] = check_label(line, "pred_id", allow_untyped_nil=True)
    missing = [record_id for record_id in golds if record_id not in preds]
    if missing:
        raise DataError(
            f"{len(missing):,} of {len(golds):,} gold records have no prediction (first: {missing[0]})",
            path=str(predictions),
        )
    types = kb_types(kb, {g for g, _, _ in golds.values() if not is_nil(g)}) if kb is not None else {}
    rows = [
        Scored(g, preds[i], nil_type(g) if is_nil(g) else types.get(g), source, domain)
        for i, (g, source, domain) in golds.items()
    ]
    report: dict[str, Any] = {"gold": str(gold), "predictions": str(predictions), **metrics(rows)}
    report["types_from"] = "NIL labels and the KB file" if kb is not None else "NIL labels only (no --kb)"
    report["in_kb_without_type"] = sum(r.in_kb and r.type is None for r in rows)
    report["by_type"] = grouped(rows, lambda r: r.type)
    for key in ("source", "domain"):
        if any(getattr(r, key) is not None for r in rows):
            report[f"by_{key}"] = grouped(rows, lambda r, k=key: getattr(r, k))
    return report


def metrics(rows: Sequence[Scored]) -> dict[str, Any]:
    """Counts, `accuracy` (In-KB R@1) and, when there are NIL golds, the with-NIL accuracies."""
    in_kb = [r for r in rows if r.in_kb]
    nil = [r for r in rows if not r.in_kb]
    right_in_kb = sum(r.pred == r.gold for r in in_kb)
    out: dict[str, Any] = {
        "records": len(rows),
        "in_kb": len(in_kb),
        "nil": len(nil),
        "accuracy": right_in_kb / len(in_kb) if in_kb else None,
        "accuracy_with_nil": None,
        "accuracy_with_untyped_nil": None,
    }
    if nil:
        out["accuracy_with_nil"] = (right_in_kb + sum(r.pred == r.gold for r in nil)) / len(rows)
        out["accuracy_with_untyped_nil"] = (right_in_kb + sum(is_nil(r.pred) for r in nil)) / len(rows)
    return out


def grouped(rows: Sequence[Scored], key: Any) -> dict[str, dict[str, Any]]:
    """`metrics` per value of `key(row)` (rows whose key is None are left out), keys sorted."""
    groups: dict[str, list[Scored]] = {}
    for row in rows:
        value = key(row)
        if value is not None:
            groups.setdefault(str(value), []).append(row)
    return {name: metrics(groups[name]) for name in sorted(groups)}


def source_group(source: str) -> str:
    """What `by_source` groups a record under: a URL's host, or the source as written."""
    parsed = urllib.parse.urlparse(source)
    if parsed.scheme in ("http", "https") and parsed.hostname:
        return parsed.hostname
    return source


def kb_types(kb: str | Path, qids: Iterable[str]) -> dict[str, str]:
    """The coarse `type` of each of `qids` in a `kb.jsonl` file (`entbench export hansel-kb`)."""
    wanted = set(qids)
    found: dict[str, str] = {}
    for line in read_lines(kb, ("id", "type"), what="KB file"):
        qid = line.string("id")
        if qid in wanted:
            found[qid] = line.string("type")
    return found
