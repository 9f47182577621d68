"""The Hansel scorer's rules on small files in the release layout (the demo world's test sets are
scored in tests/cli/test_hansel_test_sets.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from entbench.builders.hansel.scoring import score, source_group
from entbench.errors import DataError, UserError

#: Hansel-format records (the official training record's text; golds of both kinds).
TEXT = "丹尼尔·马克·内斯特（Daniel Mark Nestor，），原名达尼耶尔·内斯托罗维奇"
GOLD = [
    {
        "id": "g0",
        "text": TEXT,
        "start": 0,
        "end": 9,
        "mention": TEXT[0:9],
        "gold_id": "Q60874",
        "source": "https://news.example.org/a",
        "domain": "news",
    },
    {
        "id": "g1",
        "text": TEXT,
        "start": 0,
        "end": 9,
        "mention": TEXT[0:9],
        "gold_id": "Q42",
        "source": "https://news.example.org/b",
        "domain": "news",
    },
    {
        "id": "g2",
        "text": TEXT,
        "start": 0,
        "end": 9,
        "mention": TEXT[0:9],
        "gold_id": "NIL_PER",
        "source": "weibo",
        "domain": "social media",
    },
    {
        "id": "g3",
        "text": TEXT,
        "start": 0,
        "end": 9,
        "mention": TEXT[0:9],
        "gold_id": "NIL_ORG",
        "source": "weibo",
        "domain": "social media",
    },
]


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_typed_and_untyped_nil(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.jsonl", GOLD)
    preds = write(
        tmp_path / "p.jsonl",
        [
            {"id": "g0", "pred_id": "Q60874"},
            {"id": "g1", "pred_id": "NIL"},
            {"id": "g2", "pred_id": "NIL"},
            {"id": "g3", "pred_id": "NIL_ORG"},
        ],
    )
    report = score(gold, preds)
    assert (report["records"], report["in_kb"], report["nil"]) == (4, 2, 2)
    assert report["accuracy"] == 0.5  # g0 right, g1 predicted NIL
    assert report["accuracy_with_nil"] == 0.5  # g0, g3 (an untyped NIL never matches NIL_PER)
    assert report["accuracy_with_untyped_nil"] == 0.75
    assert set(report["by_type"]) == {"PER", "ORG"}  # no --kb: In-KB golds have no type
    assert report["by_type"]["ORG"]["accuracy_with_nil"] == 1.0 and report["in_kb_without_type"] == 2
    assert set(report["by_source"]) == {"news.example.org", "weibo"}
    assert (
        report["by_domain"]["news"]["accuracy"] == 0.5
        and report["by_domain"]["news"]["accuracy_with_nil"] is None
    )


def test_without_nil_or_source_keys(tmp_path: Path) -> None:
    gold = write(
        tmp_path / "gold.jsonl",
        [{k: v for k, v in r.items() if k not in ("source", "domain")} for r in GOLD[:2]],
    )
    preds = write(tmp_path / "p.jsonl", [{"id": "g1", "pred_id": "Q42"}, {"id": "g0", "pred_id": "Q1"}])
    report = score(gold, preds)
    assert report["accuracy"] == 0.5 and report["accuracy_with_nil"] is None and report["nil"] == 0
    assert "by_source" not in report and "by_domain" not in report and report["by_type"] == {}


@pytest.mark.parametrize(
    ("preds", "message"),
    [
        ([{"id": "g0", "pred_id": "Q1"}, {"id": "g0", "pred_id": "Q2"}], "predicted twice"),
        ([{"id": "g0", "pred_id": "Berlin"}], "neither a QID nor"),
        ([{"id": "g0"}], "lacks pred_id"),
        ([{"id": "gX", "pred_id": "Q1"}], "is not in the gold file"),
    ],
)
def test_bad_predictions_are_data_errors(tmp_path: Path, preds: list[dict[str, Any]], message: str) -> None:
    gold = write(tmp_path / "gold.jsonl", GOLD)
    with pytest.raises(DataError, match=message):
        score(gold, write(tmp_path / "p.jsonl", preds))


def test_bad_gold_files(tmp_path: Path) -> None:
    preds = write(tmp_path / "p.jsonl", [{"id": "g0", "pred_id": "Q1"}])
    with pytest.raises(DataError, match="id 'g0' repeats"):
        score(write(tmp_path / "gold.jsonl", [GOLD[0], GOLD[0]]), preds)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(GOLD[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"at byte offset \d+: line 2 is not JSON"):
        score(broken, preds)
    with pytest.raises(UserError, match="gold file not found"):
        score(tmp_path / "none.jsonl", preds)


def test_source_groups() -> None:
    assert source_group("https://www.1905.com/news/2021/1.shtml") == "www.1905.com"
    assert source_group("SohuNews") == "SohuNews"
    assert source_group("") == ""
