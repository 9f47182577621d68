"""Train/test memorisation audits (spec §7): `entbench filter mem` and the reusable `MemAuditStage`.

Both run the pure heuristics of `entbench.filters.memorization` (Mem-Exact, Mem-Freq,
Mem-Uniform; Ray Choudhury & Kalra 2023 §3) and write what they decided:

* `run_filter_mem` reads a train and a test file (jiant JSON lines or CoNLL-U) and writes into
  `out/`: `report.json` (`n_test` and the three percentages, as the paper's Table 2), `stats.json`
  (counts, inputs' sha256), `test.parquet` (the items the heuristics ran on),
  `unseen_label.parquet` (items dropped first: a label train never has), and per heuristic
  `<heuristic>/filtered.parquet` + `filtered.jsonl` (the filtered test set, jiant format) and
  `<heuristic>/removed.parquet` (every removed item with its reason), and `README.md`, the run's
  card (`entbench.cards.edge_probing`: the leakage audit, inputs, parameters, rebuild command).
* `MemAuditStage` audits two tables of a built benchmark (a train split and an evaluation split)
  and writes one decision row per evaluation row, the counts in its stats and the percentages in
  its manifest stats and `report.json`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from entbench.builders.shards import atomic_write_text, file_sha256, write_parquet
from entbench.builders.stage import Output, Params, Stage, StageContext
from entbench.builders.stats import Stats
from entbench.cards.edge_probing import filter_mem_card
from entbench.errors import UserError
from entbench.filters.memorization import (
    DEFAULT_SEED,
    HEURISTICS,
    MODES,
    UNSEEN_LABEL,
    AuditResult,
    Item,
    Mode,
    Removal,
    audit,
    audit_with_index,
    build_index,
    percent,
)
from entbench.readers.edge_probing import DEFAULT_NEGATIVE_SEED, EPItem, read_conllu, read_jiant, write_jiant
from entbench.schemas import edge_probing as schema

#: `--input-format` values: jiant JSON lines, or the CoNLL-U task to convert to.
INPUT_FORMATS: Mapping[str, str | None] = {
    "jiant": None,
    "conllu-upos": "pos",
    "conllu-deprel": "dep-cls",
    "conllu-dep-pred": "dep-pred",
}


def _check_mode(mode: str) -> Mode:
    for known in MODES:
        if mode == known:
            return known
    raise UserError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")


def read_items(
    path: str | Path, input_format: str, *, mode: Mode, negative_seed: int = DEFAULT_NEGATIVE_SEED
) -> list[EPItem]:
    """Read an edge-probing split; CoNLL-U token lines follow `mode` (see `readers.edge_probing`)."""
    if input_format not in INPUT_FORMATS:
        raise UserError(f"unknown input format {input_format!r}; expected one of {', '.join(INPUT_FORMATS)}")
    task = INPUT_FORMATS[input_format]
    if task is None:
        return read_jiant(path)
    return read_conllu(path, task, policy=mode, negative_seed=negative_seed)


def _heuristic_item(item: EPItem) -> Item:
    return Item(item.span_texts, item.labels)


@dataclass(frozen=True)
class FilterMemResult:
    """What `run_filter_mem` computed and where it wrote it."""

    out: Path
    result: AuditResult
    report: dict[str, int | float | str]
    stats: dict[str, Any]


def run_filter_mem(
    *,
    train: str | Path,
    test: str | Path,
    out: str | Path,
    input_format: str = "jiant",
    mode: str = "eptest",
    seed: int = DEFAULT_SEED,
    negative_seed: int = DEFAULT_NEGATIVE_SEED,
) -> FilterMemResult:
    """Audit `test` against `train` with the three heuristics and write the report and filtered sets."""
    checked = _check_mode(mode)
    train_items = read_items(train, input_format, mode=checked, negative_seed=negative_seed)
    test_items = read_items(test, input_format, mode=checked, negative_seed=negative_seed)
    result = audit(
        (_heuristic_item(i) for i in train_items),
        [_heuristic_item(i) for i in test_items],
        mode=checked,
        seed=seed,
    )
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    meta = {"entbench.mode": checked, "entbench.seed": str(seed)}
    kept = result.selection.kept
    rows = [(n, i, test_items[i]) for n, i in enumerate(kept)]
    items = _items_table(rows, schema.TEST_ITEMS)
    _write(target / "test.parquet", items, schema.TEST_ITEMS, meta)
    unseen = [(None, i, test_items[i]) for i, _ in result.selection.dropped]
    unseen_reasons = [Removal(UNSEEN_LABEL, label) for _, label in result.selection.dropped]
    _write(
        target / "unseen_label.parquet",
        _items_table(unseen, schema.UNSEEN_LABEL_ITEMS, unseen_reasons),
        schema.UNSEEN_LABEL_ITEMS,
        meta,
    )
    for heuristic in HEURISTICS:
        decisions = result.decisions[heuristic]
        hmeta = {**meta, "entbench.heuristic": heuristic}
        kept_mask = pa.array([d is None for d in decisions], pa.bool_())
        _write(target / heuristic / "filtered.parquet", items.filter(kept_mask), schema.TEST_ITEMS, hmeta)
        write_jiant(
            (item for (_, _, item), d in zip(rows, decisions, strict=True) if d is None),
            target / heuristic / "filtered.jsonl",
        )
        removed = [d for d in decisions if d is not None]
        removed_table = items.filter(pc.invert(kept_mask))
        removed_table = removed_table.append_column(
            schema.REMOVED_ITEMS.field("reason"), pa.array([d.reason for d in removed], pa.string())
        ).append_column(
            schema.REMOVED_ITEMS.field("detail"), pa.array([d.detail for d in removed], pa.string())
        )
        _write(target / heuristic / "removed.parquet", removed_table, schema.REMOVED_ITEMS, hmeta)
    report = result.report()
    stats = {
        "mode": checked,
        "seed": seed,
        "negative_seed": negative_seed,
        "input_format": input_format,
        "train": _file_info(train, len(train_items)),
        "test": _file_info(test, len(test_items)),
        "n_test": result.n_test,
        "unseen_label_drops": len(result.selection.dropped),
        "removed": {h: result.removed(h) for h in HEURISTICS},
        "kept": {h: result.n_test - result.removed(h) for h in HEURISTICS},
    }
    atomic_write_text(target / "stats.json", json.dumps(stats, indent=2) + "\n")
    atomic_write_text(target / "report.json", json.dumps(report, indent=2) + "\n")
    # Edge probing has no build target, so this card is where its leakage audit is read (issue 10).
    atomic_write_text(target / "README.md", filter_mem_card(report, stats, str(out)))
    return FilterMemResult(target, result, report, stats)


def _file_info(path: str | Path, items: int) -> dict[str, Any]:
    p = Path(path)
    return {"path": str(path), "bytes": p.stat().st_size, "sha256": file_sha256(p), "items": items}


def _write(path: Path, table: pa.Table, table_schema: pa.Schema, meta: Mapping[str, str]) -> None:
    write_parquet(table, path, schema=table_schema, metadata={**meta, "entbench.table": path.stem})


def _items_table(
    rows: Sequence[tuple[int | None, int, EPItem]],
    table_schema: pa.Schema,
    reasons: Sequence[Removal] | None = None,
) -> pa.Table:
    """Rows `(item_id, source_index, item)` (plus a reason each) as a table of `table_schema`."""
    items = [item for _, _, item in rows]
    columns: dict[str, list[Any]] = {
        "item_id": [n for n, _, _ in rows],
        "source_index": [i for _, i, _ in rows],
        "sentence_index": [it.sentence_index for it in items],
        "target_index": [it.target_index for it in items],
        "text": [it.text for it in items],
        "span1_start": [it.span1[0] for it in items],
        "span1_end": [it.span1[1] for it in items],
        "span2_start": [None if it.span2 is None else it.span2[0] for it in items],
        "span2_end": [None if it.span2 is None else it.span2[1] for it in items],
        "span1_text": [it.span1_text for it in items],
        "span2_text": [it.span2_text for it in items],
        "labels": [list(it.labels) for it in items],
        "label_is_list": [it.label_is_list for it in items],
        "info": [it.info for it in items],
        "target_info": [it.target_info for it in items],
    }
    if reasons is not None:
        columns["reason"] = [r.reason for r in reasons]
        columns["detail"] = [r.detail for r in reasons]
    return pa.table({f.name: pa.array(columns[f.name], f.type) for f in table_schema}, schema=table_schema)


# --- the stage -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MemAuditParams(Params):
    """`mode`: eptest (EPtest's code, the paper's Table 2) or strict (the paper's prose); `seed`: the
    heuristics' random seed (EPtest: `random.seed(30)`)."""

    mode: str = "eptest"
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
    read in shard order, then row order (the order the eptest draws follow). One output shard:
    the heuristics' draws follow one global test order. Rows whose span or label is null are
    skipped and counted (`*_rows_null`); evaluation rows dropped before the heuristics (a label
    train never has) get a decision row with `in_test` false.

    The constructor arguments enter the fingerprint through `fingerprint_extra`, so changing
    which tables or columns a registered audit reads rebuilds it.
    """

    version = 1
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
        mode = _check_mode(params.mode)
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
        for position, row in enumerate(kept):
            copies.setdefault(row, []).append(position)
        unseen: dict[int, list[str]] = {}
        for k, label in result.selection.dropped:
            unseen.setdefault(present[k], []).append(label)
        records = []
        for row, item in enumerate(evaluation):
            base = {
                **ids[row],
                "eval_index": row,
                "spans": [] if item is None else list(item.spans),
                "labels": [] if item is None else list(item.labels),
                "unseen_labels": unseen.get(row, []),
            }
            positions = copies.get(row, [])
            if not positions:
                records.append({**base, "copy": 0, "in_test": False})
            for copy, position in enumerate(positions):
                record = {**base, "copy": copy, "in_test": True}
                for heuristic in HEURISTICS:
                    decision = result.decisions[heuristic][position]
                    record[heuristic] = decision is not None
                    record[f"{heuristic}_reason"] = None if decision is None else decision.reason
                    record[f"{heuristic}_detail"] = None if decision is None else decision.detail
                records.append(record)
        stats.add("train_items", index.n_items)
        stats.add("eval_rows", len(evaluation))
        stats.add("test_items", result.n_test)
        stats.add(f"dropped_{UNSEEN_LABEL}", len(result.selection.dropped))
        for heuristic in HEURISTICS:
            stats.add(f"removed_{heuristic}", result.removed(heuristic))
        out_schema = schema.mem_decisions_schema(self.id_fields)
        return {"decisions": pa.Table.from_pylist(records, schema=out_schema)}, stats

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
        """Write `report.json` (the `filter mem` report) and add the three percentages to the stats."""
        params = ctx.params
        assert isinstance(params, MemAuditParams)
        n_test = stats.get("test_items", 0)
        report: dict[str, Any] = {"n_test": n_test}
        for heuristic in HEURISTICS:
            report[heuristic] = percent(stats.get(f"removed_{heuristic}", 0), n_test)
        report["mode"] = params.mode
        atomic_write_text(directory / "report.json", json.dumps(report, indent=2) + "\n")
        return {"files": ["report.json"], **{f"{h}_pct": report[h] for h in HEURISTICS}}
