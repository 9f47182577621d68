"""`entbench eval wikireading` on the demo world's WikiReading build (Hewlett et al. 2016 §4).

Predictions are made from the built splits themselves, so every expected score is known exactly:
the gold sets score 1, the first gold value of every instance scores the mean of 2/(1+|gold|),
and a prediction for only some keys scores the others 0.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

Run = Callable[[list[str]], Any]


def stage_dir(out: Path, stage: str) -> Path:
    return out / json.loads((out / "targets" / "wikireading.json").read_text())["stages"][stage]


def split_rows(out: Path, split: str) -> list[dict[str, Any]]:
    directory = stage_dir(out, "wikireading") / split
    return [
        r
        for f in sorted(directory.glob("part-*.parquet"))
        for r in pq.read_table(f, columns=["key", "property", "answers"]).to_pylist()
    ]


def write(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def evaluate(run_cli: Run, out: Path, predictions: Path, *extra: str) -> dict[str, Any]:
    result = run_cli(["eval", "wikireading", "--from", str(out), "--predictions", str(predictions), *extra])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def mean(terms: Sequence[Fraction], n: int) -> float:
    return float(sum(terms, Fraction(0)) / n)


@pytest.fixture(scope="module")
def test_rows(world_out: Path) -> list[dict[str, Any]]:
    rows = split_rows(world_out, "test")
    assert len(rows) > 100  # the demo world's test split is real and non-empty
    return rows


def test_gold_sets_score_one(
    world_out: Path, test_rows: list[dict[str, Any]], run_cli: Run, tmp_path: Path
) -> None:
    gold = write(tmp_path / "gold.jsonl", [{"key": r["key"], "answers": r["answers"]} for r in test_rows])
    report = evaluate(run_cli, world_out, gold)
    assert report["mean_f1"] == 1.0
    assert report["instances"] == report["instances_predicted"] == len(test_rows)
    assert set(report["groups"]) == {"categorical", "relational", "date"}
    assert all(g["mean_f1"] == 1.0 for g in report["groups"].values() if g["instances"])
    assert all(p["mean_f1"] == 1.0 for p in report["properties"].values())


def test_first_gold_value_scores_the_mean_of_two_over_one_plus_gold_exactly(
    world_out: Path, test_rows: list[dict[str, Any]], run_cli: Run, tmp_path: Path
) -> None:
    first = write(tmp_path / "first.jsonl", [{"key": r["key"], "answer": r["answers"][0]} for r in test_rows])
    report = evaluate(run_cli, world_out, first)
    n = len(test_rows)
    expected = mean([Fraction(2, 1 + len(r["answers"])) for r in test_rows], n)
    assert report["mean_f1"] == expected < 1.0  # some test answers are sets of several values
    # One gold value is the best a single-value answer can do: the single-value bound.
    assert report["bounds"]["single_value"] == {"mean_f1": expected, "paper": 0.963}


def test_half_the_keys_score_half(
    world_out: Path, test_rows: list[dict[str, Any]], run_cli: Run, tmp_path: Path
) -> None:
    half = test_rows[::2]
    n = len(test_rows)
    gold = evaluate(
        run_cli,
        world_out,
        write(tmp_path / "g.jsonl", [{"key": r["key"], "answers": r["answers"]} for r in half]),
    )
    assert gold["mean_f1"] == len(half) / n
    first = evaluate(
        run_cli,
        world_out,
        write(tmp_path / "f.jsonl", [{"key": r["key"], "answer": r["answers"][0]} for r in half]),
    )
    assert first["mean_f1"] == mean([Fraction(2, 1 + len(r["answers"])) for r in half], n)
    assert (first["instances_predicted"], first["instances_unpredicted"]) == (len(half), n - len(half))


def test_groups_and_properties_follow_the_property_statistics(
    world_out: Path, test_rows: list[dict[str, Any]], run_cli: Run, tmp_path: Path
) -> None:
    stats_dir = stage_dir(world_out, "wikireading_stats")
    table = {
        r["property"]: r
        for f in sorted(stats_dir.glob("part-*.parquet"))
        for r in pq.read_table(f).to_pylist()
    }
    first = write(tmp_path / "first.jsonl", [{"key": r["key"], "answer": r["answers"][0]} for r in test_rows])
    report = evaluate(run_cli, world_out, first)
    per_property = Counter(r["property"] for r in test_rows)
    assert {p: v["instances"] for p, v in report["properties"].items()} == dict(per_property)
    for prop, scores in report["properties"].items():
        assert (scores["label"], scores["kind"], scores["date"]) == (
            table[prop]["property_label"],
            table[prop]["kind"],
            table[prop]["date_property"],
        )
        mine = [r for r in test_rows if r["property"] == prop]
        assert scores["mean_f1"] == mean([Fraction(2, 1 + len(r["answers"])) for r in mine], len(mine))
    for group in ("categorical", "relational"):
        members = [r for r in test_rows if table[r["property"]]["kind"] == group]
        assert report["groups"][group]["instances"] == len(members) > 0
    dates = [r for r in test_rows if table[r["property"]]["date_property"]]
    assert report["groups"]["date"]["instances"] == len(dates) > 0  # birth dates, inceptions, …
    assert report["groups"]["date"]["mean_f1"] == mean(
        [Fraction(2, 1 + len(r["answers"])) for r in dates], len(dates)
    )
    assert report["groups"]["categorical"]["instances"] + report["groups"]["relational"]["instances"] == len(
        test_rows
    )


def test_classifier_bound_counts_instances_with_a_gold_value_among_the_top_train_answers(
    world_out: Path, test_rows: list[dict[str, Any]], run_cli: Run, tmp_path: Path
) -> None:
    train = Counter(a for r in split_rows(world_out, "train") for a in r["answers"])
    ranked = [a for a, _ in sorted(train.items(), key=lambda kv: (-kv[1], kv[0]))]
    empty = write(tmp_path / "none.jsonl", [])
    for size in (1, 25, 50_000):
        vocabulary = set(ranked[:size])
        expected = mean(
            [Fraction(2, 1 + len(r["answers"])) for r in test_rows if vocabulary & set(r["answers"])],
            len(test_rows),
        )
        report = evaluate(run_cli, world_out, empty, "--classifier-vocab", str(size))
        assert report["bounds"]["classifier"]["mean_f1"] == expected
        assert report["bounds"]["classifier"]["answers_in_vocabulary"] == len(vocabulary)
        assert report["mean_f1"] == 0.0
    # The default (the paper's 50,000) is the bound the statistics stage recorded for the card.
    figures = json.loads((stage_dir(world_out, "wikireading_stats") / "_paper_statistics.json").read_text())
    default = evaluate(run_cli, world_out, empty)
    assert figures["build"]["classifier_bound"] == default["bounds"]["classifier"]["mean_f1"]
    assert figures["build"]["single_value_bound"] == default["bounds"]["single_value"]["mean_f1"]


def test_other_splits_and_unknown_keys(
    world_out: Path, test_rows: list[dict[str, Any]], run_cli: Run, tmp_path: Path
) -> None:
    valid = split_rows(world_out, "valid")
    mixed = [{"key": r["key"], "answers": r["answers"]} for r in valid] + [
        {"key": r["key"], "answer": r["answers"][0]} for r in test_rows[:3]
    ]
    path = write(tmp_path / "valid.jsonl", mixed)
    result = run_cli(
        ["eval", "wikireading", "--from", str(world_out), "--split", "valid", "--predictions", str(path)]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["split"], report["instances"], report["mean_f1"]) == ("valid", len(valid), 1.0)
    assert report["predictions_unknown_key"] == 3 and report["first_unknown_key_line"] == len(valid) + 1
    assert "3 prediction(s) name a key not in the valid split" in result.stderr


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"key": "Q1-P31", "answer": "human"}', "{not json"], "line 2: not JSON"),
        (
            ['{"key": "Q1-P31", "answer": "human"}', "", '{"key": "Q1-P31", "answers": []}'],
            "line 3: key Q1-P31 is predicted again (first at line 1)",
        ),
        (['{"answer": "human"}'], 'line 1: "key" must be a non-empty string'),
        (['{"key": "Q1-P31", "answer": "a", "answers": ["a"]}'], "give exactly one of"),
        (['{"key": "Q1-P31", "answers": "human"}'], '"answers" must be a list of strings'),
        (['{"key": "Q1-P31", "answer": 7}'], '"answer" must be a string'),
        (['["Q1-P31", "human"]'], "expected an object"),
    ],
)
def test_damaged_predictions_are_data_errors(
    world_out: Path, run_cli: Run, tmp_path: Path, lines: list[str], message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_cli(["eval", "wikireading", "--from", str(world_out), "--predictions", str(path)])
    assert result.exit_code == 1
    assert str(path) in result.output and message in result.output
    assert "Traceback" not in result.output
    if "predicted again" in message:
        assert "at byte offset 38" in result.output  # the third line starts after 37 + 1 bytes


def test_user_errors(world_out: Path, run_cli: Run, tmp_path: Path) -> None:
    missing = run_cli(
        ["eval", "wikireading", "--from", str(world_out), "--predictions", str(tmp_path / "nope.jsonl")]
    )
    assert missing.exit_code == 2 and "predictions not found" in missing.output
    empty = write(tmp_path / "p.jsonl", [])
    no_build = run_cli(["eval", "wikireading", "--from", str(tmp_path), "--predictions", str(empty)])
    assert no_build.exit_code == 2 and "no wikireading build" in no_build.output
    bad_split = run_cli(
        ["eval", "wikireading", "--from", str(world_out), "--split", "dev", "--predictions", str(empty)]
    )
    assert bad_split.exit_code == 2
