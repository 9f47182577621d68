"""`entbench filter hansel-hard`: the few-shot ("hard") subset of an entity-linking dataset.

"To obtain a few-shot slice, it is intuitive to subsample TAC-KBP or CLEEK, i.e. removing correct
AT@1 as we do in the human annotation stage" (Hansel, Appendix I). An example is solved by AT@1
when the alias table's top candidate for its (normalised) mention is the gold entity, or, for a
NIL gold, when the table has no candidate at all (an alias table's only way of predicting NIL, as
`entbench eval alias-table` scores it); the subset keeps every other example, its line written
exactly as it was. Table 12 describes a dataset and its subset by mentions, distinct mentions and
documents (In-KB / NIL / total) and distinct In-KB entities; a document is the record's
`document_id`, `doc_id` or `page_id`, else its `source`, else its text (the report says which).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from entbench.builders.alias.lookup import lookup, open_alias_table
from entbench.builders.hansel.release import Line, check_label, is_nil, read_lines
from entbench.errors import UserError

#: Record keys that name a document, in the order they are looked for.
DOCUMENT_KEYS = ("document_id", "doc_id", "page_id", "source", "text")


@dataclass(frozen=True)
class Example:
    """What Table 12 needs of one record, and its line."""

    line: Line
    mention: str
    gold: str
    document: str


@dataclass(frozen=True)
class HardSubset:
    """The filter's outcome: Table 12 for the dataset and its subset, and what was removed."""

    report: dict[str, Any]
    out: Path


def filter_hard(*, dataset: str | Path, build_out: str | Path, target: str, out: str | Path) -> HardSubset:
    """Write the examples of `dataset` that AT@1 does not solve to `out` (JSON lines)."""
    destination = Path(out)
    if destination.resolve() == Path(dataset).resolve():
        raise UserError(f"--out {out} is the dataset itself; write the subset to another file")
    lines = list(read_lines(dataset, ("mention", "gold_id"), what="dataset"))
    key = next((k for k in DOCUMENT_KEYS if lines and all(k in line.record for line in lines)), None)
    examples = [
        Example(
            line,
            line.string("mention"),
            check_label(line, "gold_id"),
            "" if key is None else str(line.record[key]),
        )
        for line in lines
    ]
    tables = open_alias_table(build_out, target)
    keys = tables.normalize([e.mention for e in examples])
    top = lookup(tables, sorted(set(keys)), top=1)
    kept, solved_in_kb, solved_nil = [], 0, 0
    for example, mention_key in zip(examples, keys, strict=True):
        candidates = top.get(mention_key, [])
        if is_nil(example.gold):
            if not candidates:
                solved_nil += 1
                continue
        elif candidates and candidates[0].qid == example.gold:
            solved_in_kb += 1
            continue
        kept.append(example)
    destination.parent.mkdir(parents=True, exist_ok=True)
    tmp = destination.with_name(f".{destination.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as handle:
        for example in kept:
            raw = example.line.raw
            handle.write(raw if raw.endswith(b"\n") else raw + b"\n")
    os.replace(tmp, destination)
    report = {
        "dataset": str(dataset),
        "out": str(destination),
        "alias_table": target,
        "document_key": key,
        "removed": {"at1_correct_in_kb": solved_in_kb, "at1_correct_nil_no_candidate": solved_nil},
        "table12": {
            "dataset": table12(examples, documents=key is not None),
            "few-shot subset": table12(kept, documents=key is not None),
        },
    }
    return HardSubset(report, destination)


def table12(examples: Sequence[Example], *, documents: bool) -> dict[str, Any]:
    """Hansel Table 12's columns: mentions, distinct mentions and (when the records name them)
    documents, each In-KB / NIL / total, and distinct In-KB entities."""
    in_kb = [e for e in examples if not is_nil(e.gold)]
    nil = [e for e in examples if is_nil(e.gold)]

    def split(values: Any) -> dict[str, int]:
        return {
            "in_kb": len({values(e) for e in in_kb}),
            "nil": len({values(e) for e in nil}),
            "total": len({values(e) for e in examples}),
        }

    return {
        "mentions": {"in_kb": len(in_kb), "nil": len(nil), "total": len(examples)},
        "distinct_mentions": split(lambda e: e.mention),
        "documents": split(lambda e: e.document) if documents else None,
        "entities": len({e.gold for e in in_kb}),
    }
