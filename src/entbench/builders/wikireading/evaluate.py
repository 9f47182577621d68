"""`entbench eval wikireading`: Mean F1 of predictions on a built split (Hewlett et al. 2016 §4).

Predictions are JSON lines, one per instance key: `{"key": K, "answer": "…"}` (one value) or
`{"key": K, "answers": ["…", …]}` (a set). A key of the split with no prediction scores 0; a
prediction whose key is not in the split is counted (`predictions_unknown_key`), never scored; a
key predicted twice, or a line that is not such an object, is a data error naming its line and
byte offset. How answers compare, the groups and the bounds: `scoring`.

Memory stays bounded on a full split: the predictions are written to a scratch Parquet file as
they are read, DuckDB joins them with the split's (key, property, answers) columns (spilling
if it must), and the joined rows stream through the pure scorer a batch at a time.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from entbench.builders.wikireading.measures import train_vocabulary
from entbench.builders.wikireading.scoring import (
    PAPER_CLASSIFIER_BOUND,
    PAPER_CLASSIFIER_VOCAB,
    PAPER_SINGLE_VALUE_BOUND,
    PropertyInfo,
    ScoreBoard,
)
from entbench.builders.wikireading.splits import SPLITS
from entbench.engine.build_out import locate_stage
from entbench.engine.duck import connect
from entbench.engine.stage import UpstreamOutput
from entbench.errors import DataError, UserError

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

TARGET = "wikireading"
COMPARISON = (
    "exact string match, case-sensitive, after trimming and collapsing whitespace runs to one space "
    "(both sides); F1 of the predicted answer set against the gold set, averaged over instances"
)
_PREDICTION_SCHEMA = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("answers", pa.list_(pa.string()), nullable=False),
        pa.field("line", pa.int64(), nullable=False),
        pa.field("byte_offset", pa.int64(), nullable=False),
    ]
)
_WRITE_ROWS = 65_536
_READ_ROWS = 8_192


@dataclass(frozen=True)
class Prediction:
    """One line of a predictions file."""

    line: int
    offset: int
    key: str
    answers: tuple[str, ...]


def parse_prediction(raw: bytes, line: int, offset: int, path: str) -> Prediction:
    """One non-blank predictions line, or a `DataError` naming the file, line and offset."""

    def bad(why: str) -> DataError:
        return DataError(f"line {line}: {why}", path=path, offset=offset)

    try:
        record = json.loads(raw)
    except ValueError as exc:
        raise bad(f"not JSON ({exc})") from exc
    if not isinstance(record, dict):
        raise bad('expected an object {"key": …, "answer": …} or {"key": …, "answers": […]}')
    key = record.get("key")
    if not isinstance(key, str) or not key:
        raise bad('"key" must be a non-empty string')
    if ("answer" in record) == ("answers" in record):
        raise bad('give exactly one of "answer" (a string) and "answers" (a list of strings)')
    if "answer" in record:
        answer = record["answer"]
        if not isinstance(answer, str):
            raise bad('"answer" must be a string')
        return Prediction(line, offset, key, (answer,))
    answers = record["answers"]
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise bad('"answers" must be a list of strings')
    return Prediction(line, offset, key, tuple(answers))


def read_predictions(path: Path) -> Iterator[Prediction]:
    """The predictions of a JSON-lines file, in file order (blank lines skipped)."""
    offset = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                yield parse_prediction(raw, number, offset, str(path))
            offset += len(raw)


def _write_predictions(path: Path, parquet: Path) -> int:
    """Spill the predictions to `parquet`; returns how many there are."""
    count = 0
    with pq.ParquetWriter(parquet, _PREDICTION_SCHEMA) as writer:
        batch: list[Prediction] = []
        for prediction in read_predictions(path):
            batch.append(prediction)
            if len(batch) == _WRITE_ROWS:
                writer.write_table(_prediction_table(batch))
                count += len(batch)
                batch = []
        writer.write_table(_prediction_table(batch))
        count += len(batch)
    return count


def _prediction_table(batch: list[Prediction]) -> pa.Table:
    return pa.table(
        {
            "key": [p.key for p in batch],
            "answers": [list(p.answers) for p in batch],
            "line": [p.line for p in batch],
            "byte_offset": [p.offset for p in batch],
        },
        schema=_PREDICTION_SCHEMA,
    )


def property_infos(stats: UpstreamOutput) -> dict[str, PropertyInfo]:
    """Each property's label, §2.4 kind and date flag, from the build's `property_stats`."""
    files = stats.files("property_stats")
    names = pq.read_schema(files[0]).names if files else []
    if "date_property" not in names:
        raise UserError(
            f"{stats.directory}: property statistics without date properties (built by an older "
            "entbench); rebuild with `entbench build wikireading`"
        )
    table = pa.concat_tables(
        pq.read_table(f, columns=["property", "property_label", "kind", "date_property"]) for f in files
    )
    return {
        str(r["property"]): PropertyInfo(str(r["property_label"]), str(r["kind"]), bool(r["date_property"]))
        for r in table.to_pylist()
    }


def evaluate_wikireading(
    *,
    build_out: str | Path,
    split: str,
    predictions: str | Path,
    classifier_vocab: int = PAPER_CLASSIFIER_VOCAB,
) -> dict[str, Any]:
    """Mean F1 of `predictions` on `split` of the WikiReading build in `build_out`: overall, per
    Table 3 group and per property, with the split's single-value and classifier bounds."""
    if split not in SPLITS:
        raise UserError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    if classifier_vocab < 0:
        raise UserError(f"--classifier-vocab must be >= 0, got {classifier_vocab}")
    path = Path(predictions)
    if not path.is_file():
        raise UserError(f"predictions not found: {path}")
    splits = locate_stage(build_out, TARGET, "wikireading")
    properties = property_infos(locate_stage(build_out, TARGET, "wikireading_stats"))
    gold_files = splits.files(split)
    with tempfile.TemporaryDirectory(prefix="entbench-eval-") as scratch:
        spilled = Path(scratch) / "predictions.parquet"
        predicted = _write_predictions(path, spilled)
        con = connect(scratch=Path(scratch), workers=os.cpu_count() or 1, tasks=1, ordered=False)
        try:
            con.read_parquet(list(gold_files)).create_view("gold")
            con.read_parquet(str(spilled)).create_view("pred")
            _check_unique_keys(con, str(path))
            unknown = con.sql("SELECT count(*), min(line) FROM pred ANTI JOIN gold USING (key)").fetchall()[0]
            vocabulary = train_vocabulary(con, splits.files("train"), classifier_vocab)
            board = ScoreBoard(properties, vocabulary)
            answered = _score(con, board, f"{splits.directory}/{split}")
        finally:
            con.close()
    return report(
        board,
        split=split,
        predictions=str(path),
        counts=(predicted, answered, int(unknown[0])),
        first_unknown_line=unknown[1],
        classifier_vocab=classifier_vocab,
        vocabulary_size=len(vocabulary),
    )


def _score(con: duckdb.DuckDBPyConnection, board: ScoreBoard, where: str) -> int:
    """Stream the split's instances joined with their predictions into `board`; returns how many
    instances had a prediction."""
    answered = 0
    reader = con.sql(
        "SELECT g.property, g.answers AS gold, p.answers AS predicted "
        "FROM gold g LEFT JOIN pred p USING (key)"
    ).to_arrow_reader(_READ_ROWS)
    for batch in reader:
        for prop, gold, guess in zip(
            batch.column("property").to_pylist(),
            batch.column("gold").to_pylist(),
            batch.column("predicted").to_pylist(),
            strict=True,
        ):
            if prop not in board.properties:
                raise DataError(
                    f"property {prop} has no row in the build's property statistics (an inconsistent "
                    "build); rebuild with `entbench build wikireading`",
                    path=where,
                )
            board.add(prop, gold, guess)
            answered += guess is not None
    return answered


def _check_unique_keys(con: duckdb.DuckDBPyConnection, path: str) -> None:
    """A key predicted twice is ambiguous: a data error at its second line."""
    row = con.sql(
        "SELECT key, min(line), list(line ORDER BY line)[2], list(byte_offset ORDER BY line)[2] "
        "FROM pred GROUP BY key HAVING count(*) > 1 ORDER BY 3 LIMIT 1"
    ).fetchall()
    if row:
        key, first, line, offset = row[0]
        raise DataError(
            f"line {line}: key {key} is predicted again (first at line {first})", path=path, offset=offset
        )


def report(
    board: ScoreBoard,
    *,
    split: str,
    predictions: str,
    counts: tuple[int, int, int],
    first_unknown_line: int | None,
    classifier_vocab: int,
    vocabulary_size: int,
) -> dict[str, Any]:
    """The JSON report of an evaluation (`counts`: predictions read, split keys predicted,
    predictions whose key is not in the split)."""
    predicted, answered, unknown = counts
    overall = board.overall()
    group_properties = board.group_properties()
    groups = {
        name: {"properties": group_properties[name], **scores.to_json()}
        for name, scores in board.groups().items()
    }
    by_property = sorted(board.by_property.items(), key=lambda item: (-item[1].f1.instances, _pid(item[0])))
    return {
        "split": split,
        "predictions": predictions,
        "comparison": COMPARISON,
        "instances": overall.f1.instances,
        "predictions_read": predicted,
        "instances_predicted": answered,
        "instances_unpredicted": overall.f1.instances - answered,
        "predictions_unknown_key": unknown,
        "first_unknown_key_line": first_unknown_line,
        "mean_f1": overall.f1.value(),
        "groups": groups,
        "bounds": {
            "single_value": {"mean_f1": overall.single_value.value(), "paper": PAPER_SINGLE_VALUE_BOUND},
            "classifier": {
                "vocabulary": classifier_vocab,
                "answers_in_vocabulary": vocabulary_size,
                "mean_f1": overall.classifier.value(),
                "paper": PAPER_CLASSIFIER_BOUND,
                "paper_vocabulary": PAPER_CLASSIFIER_VOCAB,
            },
        },
        "properties": {
            prop: {
                "label": board.properties[prop].label,
                "kind": board.properties[prop].kind,
                "date": board.properties[prop].date,
                **scores.to_json(),
            }
            for prop, scores in by_property
        },
    }


def _pid(prop: str) -> tuple[int, str]:
    digits = prop[1:]
    return (int(digits) if digits.isdigit() else 1 << 62, prop)


def warnings(result: Mapping[str, Any]) -> list[str]:
    """What a user should hear about beside the scores (one line each)."""
    notes = []
    unknown = int(result["predictions_unknown_key"])
    if unknown:
        notes.append(
            f"{unknown:,} prediction(s) name a key not in the {result['split']} split and are not scored "
            f"(first at line {result['first_unknown_key_line']})"
        )
    if result["instances"] == 0:
        notes.append(f"the {result['split']} split is empty: there is nothing to score")
    elif result["instances_unpredicted"]:
        notes.append(
            f"{result['instances_unpredicted']:,} of {result['instances']:,} instances have no prediction "
            "and score 0"
        )
    return notes
