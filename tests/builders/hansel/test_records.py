"""The official record shape: keys, order, separators, no ASCII escaping (spec §5)."""

from __future__ import annotations

import json

import pytest

from entbench.builders.hansel.records import record_line
from entbench.schemas.hansel import RECORD_KEYS
from tests.builders.hansel.support import official_lines


def test_the_official_record_round_trips_byte_for_byte() -> None:
    (line,) = official_lines()
    row = json.loads(line)
    assert tuple(row) == RECORD_KEYS
    assert row["text"][row["start"] : row["end"]] == row["mention"]
    assert record_line(row) == line


def test_extra_columns_are_left_out_and_order_is_the_official_one() -> None:
    row = json.loads(official_lines()[0])
    shuffled = {"page_id": 1, **{k: row[k] for k in reversed(RECORD_KEYS)}, "example_index": 89}
    assert record_line(shuffled) == official_lines()[0]


def test_a_span_that_does_not_spell_the_mention_is_refused() -> None:
    row = json.loads(official_lines()[0])
    with pytest.raises(ValueError, match="mention"):
        record_line({**row, "start": row["start"] + 1})
