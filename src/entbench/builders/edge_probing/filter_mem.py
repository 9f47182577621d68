"""Train/test memorisation audits (spec §7): `entbench filter mem` (here) and the reusable
`MemAuditStage` (`stages/mem_audit.py`).

Both run the pure heuristics of `entbench.filters.memorization` (Mem-Exact, Mem-Freq,
Mem-Uniform; Ray Choudhury & Kalra 2023 §3) and write what they decided:

* `run_filter_mem` reads a train and a test file (any of `readers.edge_probing.formats`) and
  writes into `out/`: `report.json` (`n_test` and the three percentages, as the paper's Table 2),
  `stats.json` (counts, inputs' sha256), `test.parquet` (the items the heuristics ran on),
  `unseen_label.parquet` (items dropped first: a label train never has), per heuristic
  `<heuristic>/filtered.parquet` + `filtered.jsonl` (the filtered test set, jiant format) and
  `<heuristic>/removed.parquet` (every removed item with its reason), and with `dev_from_train`
  (the paper's 10% rule, `dev_split`) `dev.jsonl` and `train.jsonl`, the split train;
  `entbench.api.filter_mem` then adds `README.md`, the run's card (`entbench.cards.edge_probing`:
  the leakage audit, the paper's Table 2 row when named, inputs, parameters, rebuild command).
* `MemAuditStage` audits two tables of a built benchmark (a train split and an evaluation split)
  and writes one decision row per evaluation row, the counts in its stats and the percentages in
  its manifest stats and `report.json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from entbench.builders.edge_probing.dev_split import DEFAULT_DEV_SEED, check_fraction, split_dev
from entbench.builders.edge_probing.paper_table import PAPER_ROWS, find_row
from entbench.engine.shards import atomic_write_text, file_sha256, write_parquet
from entbench.errors import UserError
from entbench.filters.memorization import (
    DEFAULT_SEED,
    HEURISTICS,
    MODES,
    AuditResult,
    Item,
    Mode,
    audit,
)
from entbench.filters.memorization_reasons import UNSEEN_LABEL
from entbench.readers.edge_probing.conll import converted_tags
from entbench.readers.edge_probing.formats import INPUT_FORMATS, read_edge_probing
from entbench.readers.edge_probing.items import DEFAULT_NEGATIVE_SEED, EPItem, write_jiant
from entbench.schemas import edge_probing as schema


def check_mode(mode: str) -> Mode:
    """`mode` as one of `MODES`, or a user error naming them."""
    for known in MODES:
        if mode == known:
            return known
    raise UserError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")


def read_items(
    path: str | Path, input_format: str, *, mode: Mode, negative_seed: int = DEFAULT_NEGATIVE_SEED
) -> list[EPItem]:
    """Read an edge-probing split; CoNLL-U token lines follow `mode` (see `readers.edge_probing.items`)."""
    return read_edge_probing(path, input_format, policy=mode, negative_seed=negative_seed)


def _paper_row(name: str) -> str:
    """Table 2's spelling of the row `name`, or a user error listing the rows."""
    try:
        return find_row(name).dataset
    except KeyError:
        raise UserError(
            f"no row {name!r} in the paper's Table 2; expected one of {', '.join(PAPER_ROWS)}"
        ) from None


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
    dev_from_train: float | None = None,
    dev_seed: int = DEFAULT_DEV_SEED,
    paper_row: str | None = None,
) -> FilterMemResult:
    """Audit `test` against `train` with the three heuristics and write the report and filtered sets.

    With `dev_from_train`, that share of the train sentences is reserved as dev first (the paper's
    10% rule) and the audit runs against the rest. `paper_row` names the paper's Table 2 row the
    card shows beside this run's figures (`paper_table.PAPER_ROWS`)."""
    checked = check_mode(mode)
    if input_format not in INPUT_FORMATS:
        raise UserError(f"unknown input format {input_format!r}; expected one of {', '.join(INPUT_FORMATS)}")
    row = None if paper_row is None else _paper_row(paper_row)
    if dev_from_train is not None:
        check_fraction(dev_from_train)
    train_items = read_items(train, input_format, mode=checked, negative_seed=negative_seed)
    test_items = read_items(test, input_format, mode=checked, negative_seed=negative_seed)
    split = None
    audit_train = train_items
    if dev_from_train is not None:
        split = split_dev(train_items, dev_from_train, seed=dev_seed, mode=checked)
        audit_train = split.train
    result = audit(
        (_heuristic_item(i) for i in audit_train),
        [_heuristic_item(i) for i in test_items],
        mode=checked,
        seed=seed,
    )
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    for name, split_items in (
        ("dev", None if split is None else split.dev),
        ("train", None if split is None else split.train),
    ):
        if split_items is None:
            # An earlier run's split must not sit beside this run's report.
            (target / f"{name}.jsonl").unlink(missing_ok=True)
        else:
            write_jiant(split_items, target / f"{name}.jsonl")
    meta = {"entbench.mode": checked, "entbench.seed": str(seed)}
    kept = result.selection.kept
    rows = [(n, i, test_items[i]) for n, i in enumerate(kept)]
    items = _items_table(rows, schema.TEST_ITEMS)
    _write(target / "test.parquet", items, schema.TEST_ITEMS, meta)
    unseen = [(None, i, test_items[i]) for i, _ in result.selection.dropped]
    unseen_reasons = [(UNSEEN_LABEL, label) for _, label in result.selection.dropped]
    _write(
        target / "unseen_label.parquet",
        _items_table(unseen, schema.UNSEEN_LABEL_ITEMS, unseen_reasons),
        schema.UNSEEN_LABEL_ITEMS,
        meta,
    )
    for heuristic in HEURISTICS:
        decisions = result.decisions[heuristic]
        hmeta = {**meta, "entbench.heuristic": heuristic}
        kept_mask = pa.array([not d.solved for d in decisions], pa.bool_())
        _write(target / heuristic / "filtered.parquet", items.filter(kept_mask), schema.TEST_ITEMS, hmeta)
        write_jiant(
            (item for (_, _, item), d in zip(rows, decisions, strict=True) if not d.solved),
            target / heuristic / "filtered.jsonl",
        )
        removed = [d for d in decisions if d.solved]
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
        "train_items_audited": result.n_train,
        "dev_from_train": None if split is None else split.stats(),
        "paper_row": row,
        "n_test": result.n_test,
        "unseen_label_drops": len(result.selection.dropped),
        "removed": {h: result.removed(h) for h in HEURISTICS},
        "kept": {h: result.n_test - result.removed(h) for h in HEURISTICS},
    }
    if INPUT_FORMATS[input_format][0] == "conll":
        stats["iob2_converted"] = {"train": converted_tags(train_items), "test": converted_tags(test_items)}
    atomic_write_text(target / "stats.json", json.dumps(stats, indent=2) + "\n")
    atomic_write_text(target / "report.json", json.dumps(report, indent=2) + "\n")
    return FilterMemResult(target, result, report, stats)


def _file_info(path: str | Path, items: int) -> dict[str, Any]:
    p = Path(path)
    return {"path": str(path), "bytes": p.stat().st_size, "sha256": file_sha256(p), "items": items}


def _write(path: Path, table: pa.Table, table_schema: pa.Schema, meta: Mapping[str, str]) -> None:
    write_parquet(table, path, schema=table_schema, metadata={**meta, "entbench.table": path.stem})


def _items_table(
    rows: Sequence[tuple[int | None, int, EPItem]],
    table_schema: pa.Schema,
    reasons: Sequence[tuple[str, str]] | None = None,
) -> pa.Table:
    """Rows `(item_id, source_index, item)` (plus a `(reason, detail)` each) as a `table_schema` table."""
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
        columns["reason"] = [reason for reason, _ in reasons]
        columns["detail"] = [detail for _, detail in reasons]
    return pa.table({f.name: pa.array(columns[f.name], f.type) for f in table_schema}, schema=table_schema)
