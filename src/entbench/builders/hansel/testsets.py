"""`entbench export hansel-test`: annotators' decisions on the candidates -> Hansel-FS and Hansel-ZS.

The annotation file is what annotators fill in from a build's candidates: JSON lines, one object
per annotated example (a candidate left out is an example the annotators removed):

* `candidate`: `hansel-fewshot-N` (a few-shot record of `hansel_fewshot`) or `hansel-zeroshot-N`
  (an entity of the zero-shot pool, `hansel_zeroshot`);
* `gold_id`: the entity, a QID of the KB (`hansel_kb`), or `NIL_PER`, `NIL_LOC`, `NIL_ORG`,
  `NIL_EVENT`, `NIL_OTHER` for an entity outside it, typed (Hansel §3.3);
* `source`: the URL the text comes from; `domain`: its kind (`news`, `social media`, …);
* few-shot, optionally `start` and `end`: the corrected mention boundary, code-point offsets into
  the record's `text` (Hansel §3.3: annotators "modify the incorrect mention boundary");
* zero-shot: `text`, `start` and `end`, the context the annotator found for the entity (or an
  adversarial one: the same or a similar mention of another entity, Hansel §3.4) and the
  mention's code-point offsets in it; `mention`, if given, must equal `text[start:end]`.

Other keys are ignored. A few-shot candidate is annotated at most once; a pool entity may have
several examples.

Few-shot examples whose gold is the record's AT@1 (`at1`, the candidate with the highest prior
that annotators were shown) are dropped: "If the candidate with the highest prior (AT@1) is
correct, then the example is discarded" (§3.3), which is what makes Hansel-FS few-shot. A NIL gold
is never AT@1. The export writes `hansel-few-shot.jsonl` and `hansel-zero-shot.jsonl` (for the
slices the file annotates) in the release's key order (`id, text, start, end, mention, gold_id,
source, domain`), ids `hansel-eval-fs-N` in candidate order and `hansel-eval-zs-N` in pool order
(then annotation order), and `table1.json`: per slice the columns of Hansel's Table 1 (mentions
and documents, In-KB / NIL / total; distinct gold entities in E_known / E_new / total). A
document is a few-shot record's corpus document, and a zero-shot example's `source` (its text when
the source is empty).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from entbench.builders.hansel.records import record_line
from entbench.builders.hansel.release import Line, check_label, is_nil, read_lines
from entbench.engine.build_out import locate_stage
from entbench.engine.export import ExportResult
from entbench.engine.stage import UpstreamOutput
from entbench.errors import DataError
from entbench.schemas.hansel import KNOWN, NEW, TEST_RECORD_KEYS

FEWSHOT, ZEROSHOT = "fs", "zs"
SLICES = {
    FEWSHOT: ("hansel-fewshot-", "hansel-fewshot", "hansel_fewshot", "fewshot_candidates"),
    ZEROSHOT: ("hansel-zeroshot-", "hansel-zeroshot", "hansel_zeroshot", "zeroshot_pool"),
}
FILES = {FEWSHOT: "hansel-few-shot.jsonl", ZEROSHOT: "hansel-zero-shot.jsonl"}
TABLE1_FILE = "table1.json"
REQUIRED = ("candidate", "gold_id", "source", "domain")


@dataclass
class Example:
    """One release record and what Table 1 counts it under."""

    order: tuple[int, int]
    record: dict[str, Any]
    document: str


@dataclass
class TestSets:
    """What the export wrote, with Table 1 per slice and the drops by reason."""

    result: ExportResult
    table1: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)


def export_hansel_test(*, build_out: str | Path, annotations: str | Path, out: str | Path) -> TestSets:
    """Turn `annotations` on `build_out`'s candidates into the release's FS/ZS files in `out`."""
    lines = list(read_lines(annotations, REQUIRED, what="annotation file"))
    by_slice: dict[str, list[tuple[Line, int]]] = {FEWSHOT: [], ZEROSHOT: []}
    for line in lines:
        name, index = _candidate(line)
        by_slice[name].append((line, index))
    wanted = [name for name, rows in by_slice.items() if rows]
    if not wanted:
        raise DataError("no annotation in the file", path=str(annotations))
    stages = {name: locate_stage(build_out, SLICES[name][1], SLICES[name][2]) for name in wanted}
    kb = _kb_splits(
        locate_stage(build_out, SLICES[wanted[0]][1], "hansel_kb"),
        {check_label(line, "gold_id") for line in lines},
    )
    done = TestSets(ExportResult(Path(out)))
    examples: dict[str, list[Example]] = {}
    if by_slice[FEWSHOT]:
        examples[FEWSHOT] = _fewshot(by_slice[FEWSHOT], stages[FEWSHOT], kb, done.dropped)
    if by_slice[ZEROSHOT]:
        examples[ZEROSHOT] = _zeroshot(by_slice[ZEROSHOT], stages[ZEROSHOT], kb)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    for name, rows in examples.items():
        rows.sort(key=lambda e: e.order)
        for n, example in enumerate(rows):
            example.record["id"] = f"hansel-eval-{name}-{n}"
        _write(target / FILES[name], (record_line(e.record, TEST_RECORD_KEYS) for e in rows))
        done.result.files.append(FILES[name])
        done.result.counts[f"hansel-{name}"] = len(rows)
        done.table1[f"hansel-{name}"] = table1(rows, kb)
    report = {"table1": done.table1, "dropped": done.dropped, "annotations": len(lines)}
    _write(target / TABLE1_FILE, [json.dumps(report, indent=2, sort_keys=True)])
    done.result.files.append(TABLE1_FILE)
    return done


def _candidate(line: Line) -> tuple[str, int]:
    """The slice and number of the line's `candidate`."""
    candidate = line.string("candidate")
    for name, (prefix, *_rest) in SLICES.items():
        number = candidate.removeprefix(prefix)
        if number != candidate and number.isdigit() and str(int(number)) == number:
            return name, int(number)
    raise line.error(f"candidate {candidate!r} is neither hansel-fewshot-N nor hansel-zeroshot-N")


def _kb_splits(kb: UpstreamOutput, labels: Iterable[str]) -> dict[str, str]:
    """`known`/`new` of each gold QID found in the KB."""
    qids = pa.array(sorted(label for label in labels if not is_nil(label)), pa.string())
    found: dict[str, str] = {}
    for path in kb.files("kb"):
        table = pq.read_table(path, columns=["id", "split"])
        table = table.filter(pc.is_in(table.column("id"), value_set=qids))
        found.update(zip(table.column("id").to_pylist(), table.column("split").to_pylist(), strict=True))
    return found


def _gold(line: Line, kb: Mapping[str, str]) -> str:
    gold = check_label(line, "gold_id")
    if not is_nil(gold) and gold not in kb:
        raise line.error(
            f"gold_id {gold} is not an entity of the KB (hansel_kb); label an entity outside it NIL_<TYPE>"
        )
    return gold


def _span(line: Line, text: str, default: tuple[int, int] | None) -> tuple[int, int]:
    """The mention's offsets: the line's `start`/`end`, or `default` when it has neither."""
    if default is not None and "start" not in line.record and "end" not in line.record:
        return default
    start, end = line.integer("start"), line.integer("end")
    if not 0 <= start < end <= len(text):
        raise line.error(
            f"mention [{start}, {end}) is not a non-empty span of a text of {len(text)} code points"
        )
    return start, end


def _release(line: Line, text: str, span: tuple[int, int], gold: str) -> dict[str, Any]:
    start, end = span
    return {
        "id": "",
        "text": text,
        "start": start,
        "end": end,
        "mention": text[start:end],
        "gold_id": gold,
        "source": line.string("source", allow_empty=True),
        "domain": line.string("domain", allow_empty=True),
    }


def _fewshot(
    rows: Sequence[tuple[Line, int]], stage: UpstreamOutput, kb: Mapping[str, str], dropped: dict[str, int]
) -> list[Example]:
    columns = ["example_index", "text", "start", "end", "doc_id", "at1"]
    records = {
        int(r["example_index"]): r
        for path in stage.files("fewshot_candidates")
        for r in pq.read_table(path, columns=columns).to_pylist()
    }
    seen: set[int] = set()
    out = []
    for line, index in rows:
        record = records.get(index)
        if record is None:
            raise line.error(f"the build has no few-shot record hansel-fewshot-{index} ({stage.directory})")
        if index in seen:
            raise line.error(f"hansel-fewshot-{index} is annotated twice")
        seen.add(index)
        gold = _gold(line, kb)
        span = _span(line, record["text"], (record["start"], record["end"]))
        if gold == record["at1"]:
            dropped["fs_at1_correct"] = dropped.get("fs_at1_correct", 0) + 1
            continue
        example = _release(line, record["text"], span, gold)
        out.append(Example((index, line.number), example, f"doc:{record['doc_id']}"))
    dropped.setdefault("fs_at1_correct", 0)
    return out


def _zeroshot(
    rows: Sequence[tuple[Line, int]], stage: UpstreamOutput, kb: Mapping[str, str]
) -> list[Example]:
    pool = {
        int(index)
        for path in stage.files("zeroshot_pool")
        for index in pq.read_table(path, columns=["pool_index"]).column(0).to_pylist()
    }
    out = []
    for line, index in rows:
        if index not in pool:
            raise line.error(f"the build's zero-shot pool has no hansel-zeroshot-{index} ({stage.directory})")
        gold = _gold(line, kb)
        text = line.string("text")
        span = _span(line, text, None)
        if "mention" in line.record and line.record["mention"] != text[span[0] : span[1]]:
            raise line.error(f"mention {line.record['mention']!r} is not text[{span[0]}:{span[1]}]")
        example = _release(line, text, span, gold)
        out.append(Example((index, line.number), example, example["source"] or f"text:{text}"))
    return out


def table1(examples: Sequence[Example], kb: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """Hansel Table 1's columns of one slice."""
    in_kb = [e for e in examples if not is_nil(e.record["gold_id"])]
    nil = [e for e in examples if is_nil(e.record["gold_id"])]
    entities = {e.record["gold_id"] for e in in_kb}
    return {
        "mentions": {"in_kb": len(in_kb), "nil": len(nil), "total": len(examples)},
        "documents": {
            "in_kb": len({e.document for e in in_kb}),
            "nil": len({e.document for e in nil}),
            "total": len({e.document for e in examples}),
        },
        "entities": {
            "e_known": sum(kb[q] == KNOWN for q in entities),
            "e_new": sum(kb[q] == NEW for q in entities),
            "total": len(entities),
        },
    }


def _write(path: Path, lines: Iterable[str]) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        for line in lines:
            handle.write(line + "\n")
    os.replace(tmp, path)
