"""The `decisions` table of a memorisation audit (`stages.mem_audit`): one row per evaluation row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from entbench.engine.stats import Stats
from entbench.filters.memorization import HEURISTICS, Decision, Item
from entbench.filters.memorization_reasons import NULL_SPAN_OR_LABEL, UNSEEN_LABEL
from entbench.schemas import edge_probing as schema


def decision_table(
    id_fields: Sequence[pa.Field],
    ids: Sequence[Mapping[str, Any]],
    eval_indices: Sequence[int],
    evaluation: Sequence[Item | None],
    copies: Mapping[int, list[int]],
    unseen: Mapping[int, list[str]],
    decisions: Mapping[str, Sequence[Decision]],
    stats: Stats,
) -> pa.Table:
    """One row per evaluation row (per copy): `copies[row]` lists its positions among the tested
    items (none: not tested, for the reason `unseen[row]` gives or a null span or label)."""
    out_schema = schema.mem_decisions_schema(id_fields)
    columns: dict[str, list[Any]] = {name: [] for name in out_schema.names}
    for row, item in enumerate(evaluation):
        positions: list[int | None] = [*copies.get(row, ())] or [None]
        unseen_labels = unseen.get(row, [])
        for copy, position in enumerate(positions):
            for name, value in ids[row].items():
                columns[name].append(value)
            columns["eval_index"].append(eval_indices[row])
            columns["copy"].append(copy)
            columns["spans"].append([] if item is None else list(item.spans))
            columns["labels"].append([] if item is None else list(item.labels))
            columns["in_test"].append(position is not None)
            columns["unseen_labels"].append(unseen_labels)
            for heuristic in HEURISTICS:
                solved: bool | None = None
                if position is None:  # not audited: say why
                    reason = NULL_SPAN_OR_LABEL if item is None else UNSEEN_LABEL
                    detail = ", ".join(unseen_labels)
                else:
                    decision = decisions[heuristic][position]
                    solved, reason, detail = decision.solved, decision.reason, decision.detail
                    stats.add(f"{heuristic}_{reason}")
                columns[heuristic].append(solved)
                columns[f"{heuristic}_reason"].append(reason)
                columns[f"{heuristic}_detail"].append(detail)
    return pa.table({f.name: pa.array(columns[f.name], f.type) for f in out_schema}, schema=out_schema)
