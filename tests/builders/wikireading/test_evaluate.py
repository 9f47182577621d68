"""`evaluate`'s readers on their own: prediction lines and the property statistics of a build."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench.builders.wikireading.evaluate import parse_prediction, property_infos, read_predictions
from entbench.builders.wikireading.scoring import PropertyInfo
from entbench.engine.stage import UpstreamOutput
from entbench.errors import DataError, UserError
from entbench.schemas import wikireading as schema


def test_prediction_lines_in_both_shapes(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"key": "Q64-P17", "answer": "Germany"}\n\n{"key": "Q1-P31", "answers": ["a", "b"]}\n')
    found = list(read_predictions(path))
    assert [(p.line, p.offset, p.key, p.answers) for p in found] == [
        (1, 0, "Q64-P17", ("Germany",)),
        (3, 41, "Q1-P31", ("a", "b")),
    ]
    with pytest.raises(DataError, match=r"p.jsonl at byte offset 7: line 2: not JSON"):
        parse_prediction(b"\xff\xfe", 2, 7, str(path))


def _stats_stage(tmp_path: Path, table: pa.Table) -> UpstreamOutput:
    path = tmp_path / "part-00000-of-00001.parquet"
    pq.write_table(table, path)
    return UpstreamOutput(
        "wikireading_stats", str(tmp_path), "f" * 64, "0" * 64, {"property_stats": (str(path),)}
    )


def test_property_information_comes_from_property_stats(tmp_path: Path) -> None:
    row = {
        "property": "P569",
        "property_label": "date of birth",
        "instances": 4,
        "train_instances": 4,
        "valid_instances": 0,
        "test_instances": 0,
        "distinct_answers": 4,
        "scaled_entropy": 1.0,
        "kind": "relational",
        "verbatim_share": 0.5,
        "test_answers": 0,
        "test_answers_unseen": 0,
        "test_unseen_share": None,
        "test_only": False,
        "datatype": "time",
        "date_property": True,
    }
    stage = _stats_stage(tmp_path, pa.Table.from_pylist([row], schema=schema.PROPERTY_STATS))
    assert property_infos(stage) == {"P569": PropertyInfo("date of birth", "relational", True)}
    older = tmp_path / "older"
    older.mkdir()
    before = pa.Table.from_pylist([row], schema=schema.PROPERTY_STATS).drop_columns(
        ["datatype", "date_property"]
    )
    with pytest.raises(UserError, match="rebuild with `entbench build wikireading`"):
        property_infos(_stats_stage(older, before))
