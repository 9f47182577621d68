"""`MemAuditStage`: the memorisation audit (spec §7) of a built benchmark's evaluation split against
its training split, with the heuristics `entbench filter mem` runs (`builders.edge_probing.filter_mem`).

It writes one decision row per evaluation row, the counts in its stats and the percentages in its
manifest stats and `_report.json`. WikiReading and Hansel register one per audited pair.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from entbench.builders.edge_probing.filter_mem import check_mode
from entbench.engine.shards import atomic_write_text
from entbench.engine.stage import Output, Params, Stage, StageContext
from entbench.engine.stats import Stats
from entbench.errors import UserError
from entbench.filters.memorization import (
    DEFAULT_SEED,
    HEURISTICS,
    MODES,
    Item,
    audit_with_index,
    build_index,
    percent,
)
from entbench.filters.memorization_reasons import NULL_SPAN_OR_LABEL, UNSEEN_LABEL
from entbench.schemas import edge_probing as schema

#: The audit's report (`filter mem`'s `report.json`), a sidecar: `_` keeps Parquet readers off it.
REPORT_FILE = "_report.json"


@dataclass(frozen=True)
class MemAuditParams(Params):
    """`mode`: strict (the paper's prose; the default of audits inside builds, whose labels are
    entities or answer sets) or eptest (EPtest's code, the paper's Table 2; the default of `entbench
    filter mem`); `seed`: the heuristics' random seed (EPtest: `random.seed(30)`)."""

    mode: str = "strict"
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")


class MemAuditStage(Stage):
    """Audit a built benchmark's evaluation split for train memorisation (Mem-Exact/Freq/Uniform).

    Construct one per audited pair and register it, e.g. in a Hansel builder::

        register_stage(MemAuditStage(
            "hansel_mem_audit",
            train=("hansel_train", "examples"),
            evaluation=("hansel_validation", "examples"),
            span_columns=("mention",),
            label_column="qid",
            id_fields=(pa.field("id", pa.string(), nullable=False),),
        ))

    `span_columns` are one or two columns (their values as strings are the span texts);
    `label_column` holds a string or a list of strings; `id_fields` name and type the evaluation
    table's identifying columns, copied into the `decisions` table. Train and evaluation rows are
    read in shard order, then row order (the order the draws follow). One output shard: the
    heuristics' draws follow one global test order. Every decision row says why, per heuristic
    (`<heuristic>_reason`, codes in `entbench.filters.memorization_reasons`), and the stats count
    each heuristic's reasons (`<heuristic>_<reason>`). Rows whose span or label is null are
    skipped and counted (`*_rows_null`); evaluation rows dropped before the heuristics (a label
    train never has) get a decision row with `in_test` false; the heuristic columns of both are
    null, their reasons `span_or_label_null` and `label_unseen_in_train`.

    The constructor arguments enter the fingerprint through `fingerprint_extra`, so changing
    which tables or columns a registered audit reads rebuilds it.
    """

    version = 3  # 2: a reason on every decision, kept ones too; 3: `_report.json`
    layer = "benchmarks"
    params_type = MemAuditParams
    default_num_shards = 1
    description = "Train/test memorisation audit (Mem-Exact, Mem-Freq, Mem-Uniform)"
    progress_items = "items"

    def __init__(
        self,
        name: str,
        *,
        train: tuple[str, str],
        evaluation: tuple[str, str],
        span_columns: Sequence[str],
        label_column: str,
        id_fields: Sequence[pa.Field],
    ) -> None:
        super().__init__(name)
        if len(span_columns) not in (1, 2):
            raise ValueError(f"{name}: one or two span columns, got {list(span_columns)}")
        if not id_fields:
            raise ValueError(f"{name}: id_fields must name the evaluation table's identifying columns")
        self.train = train
        self.evaluation = evaluation
        self.span_columns = tuple(span_columns)
        self.label_column = label_column
        self.id_fields = tuple(id_fields)
        self.inputs = tuple(dict.fromkeys((train[0], evaluation[0])))

    def fingerprint_extra(self) -> dict[str, Any]:
        """The tables and columns this instance audits."""
        return {
            "train": list(self.train),
            "evaluation": list(self.evaluation),
            "span_columns": list(self.span_columns),
            "label_column": self.label_column,
            "id_fields": [f"{f.name}:{f.type}" for f in self.id_fields],
        }

    def outputs(self, params: Params) -> list[Output]:
        """One table, `decisions`, keyed by the evaluation order (and EPtest's duplicate copies)."""
        return [Output("decisions", schema.mem_decisions_schema(self.id_fields), ("eval_index", "copy"))]

    def shard(self, ctx: StageContext, shard: int) -> tuple[dict[str, pa.Table], Stats]:
        """Index train, read the evaluation split, run the heuristics, emit a decision per row."""
        params = ctx.params
        assert isinstance(params, MemAuditParams)
        stats = Stats()
        mode = check_mode(params.mode)
        train_items = (
            item for _, item in self._rows(ctx, self.train, (), stats, "train") if item is not None
        )
        index = build_index(train_items, mode)
        ids: list[dict[str, Any]] = []
        evaluation: list[Item | None] = []
        for row_ids, item in self._rows(
            ctx, self.evaluation, [f.name for f in self.id_fields], stats, "eval"
        ):
            ids.append(row_ids)
            evaluation.append(item)
        present = [i for i, item in enumerate(evaluation) if item is not None]
        present_items = [item for item in evaluation if item is not None]
        result = audit_with_index(index, present_items, seed=params.seed)
        kept = [present[k] for k in result.selection.kept]
        copies: dict[int, list[int]] = {}
        for k, row in enumerate(kept):
            copies.setdefault(row, []).append(k)
        unseen: dict[int, list[str]] = {}
        for k, label in result.selection.dropped:
            unseen.setdefault(present[k], []).append(label)
        out_schema = schema.mem_decisions_schema(self.id_fields)
        columns: dict[str, list[Any]] = {name: [] for name in out_schema.names}
        for row, item in enumerate(evaluation):
            positions: list[int | None] = [*copies.get(row, ())] or [None]
            unseen_labels = unseen.get(row, [])
            for copy, position in enumerate(positions):
                for name, value in ids[row].items():
                    columns[name].append(value)
                columns["eval_index"].append(row)
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
                        decision = result.decisions[heuristic][position]
                        solved, reason, detail = decision.solved, decision.reason, decision.detail
                        stats.add(f"{heuristic}_{reason}")
                    columns[heuristic].append(solved)
                    columns[f"{heuristic}_reason"].append(reason)
                    columns[f"{heuristic}_detail"].append(detail)
        stats.add("train_items", index.n_items)
        stats.add("eval_rows", len(evaluation))
        stats.add("test_items", result.n_test)
        stats.add(f"dropped_{UNSEEN_LABEL}", len(result.selection.dropped))
        for heuristic in HEURISTICS:
            stats.add(f"removed_{heuristic}", result.removed(heuristic))
        table = pa.table({f.name: pa.array(columns[f.name], f.type) for f in out_schema}, schema=out_schema)
        return {"decisions": table}, stats

    def _rows(
        self,
        ctx: StageContext,
        ref: tuple[str, str],
        id_columns: Sequence[str],
        stats: Stats,
        split: str,
    ) -> Iterator[tuple[dict[str, Any], Item | None]]:
        """(ids, item) per row of an upstream table, in shard order; item None if span/label is null."""
        stage, table = ref
        columns = list(dict.fromkeys([*id_columns, *self.span_columns, self.label_column]))
        for path in ctx.inputs[stage].files(table):
            parquet = pq.ParquetFile(path)
            missing = [c for c in columns if c not in parquet.schema_arrow.names]
            if missing:
                raise UserError(f"{self.stage_name}: {stage}.{table} has no column(s) {missing} ({path})")
            for batch in parquet.iter_batches(columns=columns):
                data = batch.to_pydict()
                for r in range(batch.num_rows):
                    spans = [data[c][r] for c in self.span_columns]
                    label = data[self.label_column][r]
                    labels = (label,) if isinstance(label, str) else tuple(label or ())
                    ok = bool(labels) and all(v is not None for v in (*spans, *labels))
                    if not ok:
                        stats.add(f"{split}_rows_null")
                    item = Item(tuple(str(s) for s in spans), tuple(str(lb) for lb in labels)) if ok else None
                    yield {c: data[c][r] for c in id_columns}, item

    def finalize(self, ctx: StageContext, directory: Path, stats: Stats) -> dict[str, Any]:
        """Write `_report.json` (the `filter mem` report) and add the three percentages to the stats."""
        params = ctx.params
        assert isinstance(params, MemAuditParams)
        n_test = stats.get("test_items", 0)
        report: dict[str, Any] = {"n_test": n_test}
        for heuristic in HEURISTICS:
            report[heuristic] = percent(stats.get(f"removed_{heuristic}", 0), n_test)
        report["mode"] = params.mode
        atomic_write_text(directory / REPORT_FILE, json.dumps(report, indent=2) + "\n")
        return {"files": [REPORT_FILE], **{f"{h}_pct": report[h] for h in HEURISTICS}}
