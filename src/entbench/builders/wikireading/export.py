"""`entbench export wikireading`: a build's WikiReading splits in the original file formats.

* `wikireading-json` (the google-research-datasets/wiki-reading release): `train.json`,
  `validation.json`, `test.json` (one JSON object per line with exactly the release's fields,
  `entbench.builders.wikireading.release`) and `document.vocab`, `answer.vocab`, `raw_answer.vocab`,
  `type.vocab` built on the train split. Two passes: the first tokenizes every document once and
  spills token strings to a scratch file while counting the train vocabularies; the second maps
  tokens to ids.
* `recycled` (WikiReading Recycled): `train/`, `dev-0/`, `test-A/`, each with `in.tsv` and
  `expected.tsv`, one line per article with all its properties (`entbench.builders.wikireading.recycled`).

Rows are read in shard order, then in the tables' (document_id, property) order, so the files are
byte-identical for identical builds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

import msgspec
import pyarrow.parquet as pq

from entbench.builders.wikireading.recycled import SPLIT_DIRS, expected_line, in_line
from entbench.builders.wikireading.release import (
    TextRecord,
    Tokenizer,
    Vocabulary,
    VocabularyCounts,
    release_record,
    text_record,
)
from entbench.builders.wikireading.splits import SPLITS
from entbench.engine.build_out import locate_stage
from entbench.engine.export import ExportResult
from entbench.engine.stage import UpstreamOutput
from entbench.errors import UserError

FORMATS = ("wikireading-json", "recycled")
RELEASE_FILES = {"train": "train.json", "valid": "validation.json", "test": "test.json"}
TARGET = "wikireading"
STAGE = "wikireading"


def iter_rows(splits: UpstreamOutput, split: str, columns: list[str]) -> Iterator[dict[str, Any]]:
    """The rows of one split, in shard order then row order."""
    for path in splits.files(split):
        parquet = pq.ParquetFile(path)
        for batch in parquet.iter_batches(columns=columns, batch_size=4096):
            yield from batch.to_pylist()


def export_wikireading(
    *,
    build_out: str | Path,
    fmt: str,
    out: str | Path,
    max_document_vocab: int = 0,
    max_answer_vocab: int = 0,
    max_raw_answer_vocab: int = 0,
    progress: Callable[[str], None] | None = None,
) -> ExportResult:
    """Export the WikiReading splits of `build_out` as `fmt` into `out` (created if needed)."""
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    for name, value in (
        ("--max-document-vocab", max_document_vocab),
        ("--max-answer-vocab", max_answer_vocab),
        ("--max-raw-answer-vocab", max_raw_answer_vocab),
    ):
        if value < 0:
            raise UserError(f"{name} must be >= 0 (0 = no limit), got {value}")
    splits = locate_stage(build_out, TARGET, STAGE)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer()
    say = progress or (lambda _msg: None)
    if fmt == "recycled":
        return _export_recycled(splits, target, tokenizer, say)
    limits = (max_document_vocab, max_answer_vocab, max_raw_answer_vocab)
    return _export_release(splits, target, tokenizer, limits, say)


def _export_release(
    splits: UpstreamOutput,
    target: Path,
    tokenizer: Tokenizer,
    limits: tuple[int, int, int],
    say: Callable[[str], None],
) -> ExportResult:
    result = ExportResult(target)
    scratch = target / ".export-tmp"
    scratch.mkdir(exist_ok=True)
    counts = VocabularyCounts.empty()
    # msgspec writes exactly what json.dumps(obj, ensure_ascii=False, separators=(",", ":")) writes
    # for the records' strings and integers (every escape alike), in a quarter of its time.
    encoder = msgspec.json.Encoder()
    columns = ["key", "document_id", "question", "answers", "document"]
    try:
        for split in SPLITS:
            say(f"tokenizing {split}")
            last_id: int | None = None
            document = None
            with open(scratch / f"{split}.jsonl", "wb") as spill:
                for row in iter_rows(splits, split, columns):
                    new_document = row["document_id"] != last_id
                    if new_document or document is None:
                        document = tokenizer.document(row["document"])
                        last_id = row["document_id"]
                    record = text_record(row["key"], document, row["question"], row["answers"], tokenizer)
                    if split == "train":
                        counts.add(record, new_document)
                    spill.write(encoder.encode(record.to_json()) + b"\n")
        vocabs = (
            Vocabulary(counts.document, limits[0]),
            Vocabulary(counts.answer, limits[1]),
            Vocabulary(counts.raw_answer, limits[2]),
        )
        for split in SPLITS:
            say(f"writing {RELEASE_FILES[split]}")
            n = 0
            with (
                open(scratch / f"{split}.jsonl", "rb") as spill,
                _atomic_open(target / RELEASE_FILES[split]) as f,
            ):
                for line in spill:
                    record = TextRecord.from_json(msgspec.json.decode(line))
                    obj = release_record(record, *vocabs)
                    f.write(encoder.encode(obj).decode("utf-8") + "\n")
                    n += 1
            result.counts[split] = n
            result.files.append(RELEASE_FILES[split])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    named = {
        "document.vocab": vocabs[0],
        "answer.vocab": vocabs[1],
        "raw_answer.vocab": vocabs[2],
        "type.vocab": Vocabulary({}),  # no tagger without a model: only the special ids
    }
    for name, vocab in named.items():
        with _atomic_open(target / name) as f:
            f.write("\n".join(vocab.lines()) + "\n")
        result.files.append(name)
    return result


def _export_recycled(
    splits: UpstreamOutput, target: Path, tokenizer: Tokenizer, say: Callable[[str], None]
) -> ExportResult:
    result = ExportResult(target)
    columns = ["document_id", "property_label", "answers", "document"]
    for split in SPLITS:
        say(f"writing {SPLIT_DIRS[split]}/")
        directory = target / SPLIT_DIRS[split]
        directory.mkdir(exist_ok=True)
        n = 0
        with _atomic_open(directory / "in.tsv") as fin, _atomic_open(directory / "expected.tsv") as fexp:
            for rows in _by_document(iter_rows(splits, split, columns)):
                labels = [r["property_label"] for r in rows]
                fin.write(in_line(labels, rows[0]["document"], tokenizer) + "\n")
                fexp.write(expected_line([(r["property_label"], r["answers"]) for r in rows]) + "\n")
                n += 1
        result.counts[split] = n
        result.files += [f"{SPLIT_DIRS[split]}/in.tsv", f"{SPLIT_DIRS[split]}/expected.tsv"]
    return result


def _by_document(rows: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Consecutive rows of one document (tables are sorted by document_id within a shard)."""
    group: list[dict[str, Any]] = []
    for row in rows:
        if group and row["document_id"] != group[0]["document_id"]:
            yield group
            group = []
        group.append(row)
    if group:
        yield group


@contextlib.contextmanager
def _atomic_open(path: Path) -> Iterator[TextIO]:
    """Write to a temp file and rename it into place on success (no half-written export files)."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
