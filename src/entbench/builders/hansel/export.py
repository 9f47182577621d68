"""`entbench export hansel-train|hansel-kb`: a build's Hansel sets and KB as JSON lines.

`hansel-train --format jsonl` writes `train.jsonl` and `validation.jsonl`: one object per line with
exactly the keys `id, text, start, end, mention, gold_id`, in that order, UTF-8 without ASCII
escaping (`hansel.records`). Lines are in record-number order (`hansel-train-0`, `-1`, …): the
shards are each sorted by (page id, link ordinal), which is the numbering order, and are merged on
it, so the files are byte-identical for identical builds whatever their shard count.

`hansel-kb --format jsonl` writes `kb.jsonl`: one entity per line with the keys `id, title, text,
url, label, description, aliases, type, split` (`schemas.hansel.KB_KEYS`), in QID order as
strings (the shards' own order, merged), so again independent of the shard count.
"""

from __future__ import annotations

import heapq
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from entbench.builders.hansel.records import record_line
from entbench.builders.hansel.splits import SPLITS
from entbench.engine.build_out import locate_stage
from entbench.engine.export import ExportResult
from entbench.engine.stage import UpstreamOutput
from entbench.errors import UserError
from entbench.schemas.hansel import KB_KEYS, RECORD_KEYS

FORMATS = ("jsonl",)
TARGET = "hansel-train"
STAGE = "hansel"
KB_TARGET = "hansel-kb"
KB_STAGE = "hansel_kb"
KB_FILE = "kb.jsonl"


def iter_records(splits: UpstreamOutput, split: str) -> Iterator[dict[str, Any]]:
    """The records of one split in record-number order (a merge of the sorted shards)."""
    columns = [*RECORD_KEYS, "example_index"]

    def shard_rows(path: str) -> Iterator[tuple[int, dict[str, Any]]]:
        for batch in pq.ParquetFile(path).iter_batches(columns=columns, batch_size=4096):
            for row in batch.to_pylist():
                yield row["example_index"], row

    merged = heapq.merge(*(shard_rows(p) for p in splits.files(split)), key=lambda item: item[0])
    for expected, (index, row) in enumerate(merged):
        if index != expected:
            raise UserError(f"{split}: record {expected} is missing (found {row['id']}); rebuild the stage")
        yield row


def export_hansel_train(*, build_out: str | Path, fmt: str, out: str | Path) -> ExportResult:
    """Write `train.jsonl` and `validation.jsonl` of `build_out`'s hansel-train build into `out`."""
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    splits = locate_stage(build_out, TARGET, STAGE)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    result = ExportResult(target)
    for split in SPLITS:
        name = f"{split}.jsonl"
        path = target / name
        tmp = path.with_name(f".{name}.tmp-{os.getpid()}")
        count = 0
        with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
            for row in iter_records(splits, split):
                handle.write(record_line(row) + "\n")
                count += 1
        os.replace(tmp, path)
        result.counts[split] = count
        result.files.append(name)
    return result


def iter_kb(kb: UpstreamOutput) -> Iterator[dict[str, Any]]:
    """The KB's rows in `id` order (a merge of the shards, each sorted by `id`)."""

    def shard_rows(path: str) -> Iterator[dict[str, Any]]:
        for batch in pq.ParquetFile(path).iter_batches(columns=list(KB_KEYS), batch_size=4096):
            yield from batch.to_pylist()

    return heapq.merge(*(shard_rows(p) for p in kb.files("kb")), key=lambda row: str(row["id"]))


def export_hansel_kb(*, build_out: str | Path, fmt: str, out: str | Path) -> ExportResult:
    """Write `kb.jsonl` of `build_out`'s hansel-kb build into `out`."""
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    kb = locate_stage(build_out, KB_TARGET, KB_STAGE)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    result = ExportResult(target)
    path = target / KB_FILE
    tmp = path.with_name(f".{KB_FILE}.tmp-{os.getpid()}")
    counts = {"entities": 0, "with_text": 0}
    with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        for row in iter_kb(kb):
            handle.write(json.dumps({key: row[key] for key in KB_KEYS}, ensure_ascii=False) + "\n")
            counts["entities"] += 1
            counts["with_text"] += bool(row["text"])
    os.replace(tmp, path)
    result.counts["entities"] = counts["entities"]
    result.files.append(KB_FILE)
    result.notes.append(
        f"{counts['with_text']:,} of {counts['entities']:,} entities have a first paragraph; the others "
        "have no page in the wiki's dump (the card's text_status counts say why) and keep their "
        "Wikidata label and description"
    )
    return result
