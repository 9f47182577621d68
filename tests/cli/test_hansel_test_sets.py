"""Hansel test sets on the demo world: its annotation file (`fixtures/hansel/annotations.jsonl`)
through `export hansel-test` into the release's Hansel-FS/ZS files, `eval hansel` on them, and
`filter hansel-hard` on the exported validation set (Hansel §3.3-3.4, Tables 1, 5 and 12).

Expectations are recomputed here from the annotation file, the build's own tables (read with
pyarrow) and the alias table's rows, not through the functions under test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest
from click.testing import CliRunner

from entbench.engine.summary import target_stages
from entbench.filters.mentions import MentionNormalizer
from tests.conftest import FIXTURES

ANNOTATIONS = FIXTURES / "hansel" / "annotations.jsonl"
PREDICTIONS = FIXTURES / "hansel" / "predictions-zs-at1.jsonl"
RELEASE_KEYS = ["id", "text", "start", "end", "mention", "gold_id", "source", "domain"]


def table(directory: Path, name: str | None = None) -> list[dict[str, Any]]:
    where = directory if name is None else directory / name
    rows: list[dict[str, Any]] = ds.dataset(str(where), format="parquet").to_table().to_pylist()
    return rows


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def keys_in_order(line: str) -> list[str]:
    pairs: list[tuple[str, Any]] = json.loads(line, object_pairs_hook=list)
    return [k for k, _ in pairs]


@pytest.fixture(scope="module")
def exported(world_out: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from entbench.cli import commands  # noqa: F401 - registers the commands
    from entbench.cli.app import cli

    out = tmp_path_factory.mktemp("hansel-test")
    runner = CliRunner()
    for args in (
        [
            "export",
            "hansel-test",
            "--from",
            str(world_out),
            "--annotations",
            str(ANNOTATIONS),
            "--out",
            str(out),
        ],
        ["export", "hansel-kb", "--from", str(world_out), "--format", "jsonl", "--out", str(out)],
        ["export", "hansel-train", "--from", str(world_out), "--format", "jsonl", "--out", str(out)],
    ):
        result = runner.invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return out


def test_the_demo_annotations_become_release_files(world_out: Path, exported: Path) -> None:
    annotations = jsonl(ANNOTATIONS)
    fewshot = {r["id"]: r for r in table(target_stages(world_out, "hansel-fewshot")["hansel_fewshot"])}
    pool = {r["id"]: r for r in table(target_stages(world_out, "hansel-zeroshot")["hansel_zeroshot"])}
    kb = {r["id"]: r for r in table(target_stages(world_out, "hansel-kb")["hansel_kb"])}
    # What the export must keep: few-shot annotations whose gold is not the record's AT@1, in
    # candidate order; every zero-shot annotation, in pool order.
    expected_fs = []
    for a in sorted(
        (a for a in annotations if a["candidate"].startswith("hansel-fewshot-")),
        key=lambda a: int(a["candidate"].rsplit("-", 1)[1]),
    ):
        record = fewshot[a["candidate"]]
        if a["gold_id"] == record["at1"]:
            continue
        start, end = a.get("start", record["start"]), a.get("end", record["end"])
        expected_fs.append((record["text"], start, end, record["text"][start:end], a["gold_id"], a["source"]))
    expected_zs = [
        (a["text"], a["start"], a["end"], a["mention"], a["gold_id"], a["source"])
        for a in sorted(
            (a for a in annotations if a["candidate"].startswith("hansel-zeroshot-")),
            key=lambda a: int(a["candidate"].rsplit("-", 1)[1]),
        )
    ]
    assert len(expected_fs) == 2 and len(expected_zs) == 6  # 5 few-shot examples had a right AT@1
    for name, expected, tag in (
        ("hansel-few-shot.jsonl", expected_fs, "fs"),
        ("hansel-zero-shot.jsonl", expected_zs, "zs"),
    ):
        lines = (exported / name).read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines]
        assert all(keys_in_order(line) == RELEASE_KEYS for line in lines)
        assert [r["id"] for r in records] == [f"hansel-eval-{tag}-{n}" for n in range(len(expected))]
        got = [(r["text"], r["start"], r["end"], r["mention"], r["gold_id"], r["source"]) for r in records]
        assert got == expected
        for r in records:
            assert r["text"][r["start"] : r["end"]] == r["mention"] and r["domain"] == "wikipedia"
            assert r["gold_id"].startswith("NIL_") or r["gold_id"] in kb
    assert all(a["candidate"] in fewshot or a["candidate"] in pool for a in annotations)
    table1 = json.loads((exported / "table1.json").read_text(encoding="utf-8"))
    assert table1["dropped"] == {"fs_at1_correct": 5} and table1["annotations"] == len(annotations)
    assert table1["table1"]["hansel-fs"] == {
        "mentions": {"in_kb": 1, "nil": 1, "total": 2},
        "documents": {"in_kb": 1, "nil": 1, "total": 2},
        "entities": {"e_known": 1, "e_new": 0, "total": 1},
    }
    zs = table1["table1"]["hansel-zs"]
    assert zs["mentions"] == {"in_kb": 5, "nil": 1, "total": 6}
    assert zs["entities"] == {"e_known": 0, "e_new": 5, "total": 5}  # the pool is E_new
    assert zs["documents"]["total"] == len({a["source"] for a in annotations if "zeroshot" in a["candidate"]})


def test_kb_export_holds_every_gold(world_out: Path, exported: Path) -> None:
    lines = (exported / "kb.jsonl").read_text(encoding="utf-8").splitlines()
    kb = [json.loads(line) for line in lines]
    assert keys_in_order(lines[0]) == [
        "id",
        "title",
        "text",
        "url",
        "label",
        "description",
        "aliases",
        "type",
        "split",
    ]
    assert [r["id"] for r in kb] == sorted(r["id"] for r in kb)
    ids = {r["id"] for r in kb}
    for name in ("train.jsonl", "validation.jsonl", "hansel-few-shot.jsonl", "hansel-zero-shot.jsonl"):
        golds = {r["gold_id"] for r in jsonl(exported / name)}
        assert {g for g in golds if not g.startswith("NIL_")} <= ids, name
    stage = table(target_stages(world_out, "hansel-kb")["hansel_kb"])
    assert len(kb) == len(stage) and sum(bool(r["text"]) for r in kb) == 7


def test_eval_gives_one_on_the_gold_and_the_share_on_a_half_right_file(
    exported: Path, tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    gold_path = exported / "hansel-zero-shot.jsonl"
    gold = jsonl(gold_path)
    perfect = tmp_path / "perfect.jsonl"
    perfect.write_text("".join(json.dumps({"id": r["id"], "pred_id": r["gold_id"]}) + "\n" for r in gold))
    result = run_cli(["eval", "hansel", "--gold", str(gold_path), "--predictions", str(perfect)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["accuracy"] == report["accuracy_with_nil"] == report["accuracy_with_untyped_nil"] == 1.0
    assert (report["records"], report["in_kb"], report["nil"]) == (6, 5, 1)
    assert report["by_domain"]["wikipedia"]["accuracy"] == 1.0
    assert set(report["by_source"]) == {"zh.wikipedia.org"}
    # Every second record wrong (an In-KB gold predicted as another entity, a NIL as another type).
    half = tmp_path / "half.jsonl"
    wrong = {"NIL_ORG": "NIL_PER"}
    lines = []
    for n, r in enumerate(gold):
        pred = r["gold_id"] if n % 2 == 0 else wrong.get(r["gold_id"], "Q64")
        lines.append(json.dumps({"id": r["id"], "pred_id": pred}))
    half.write_text("\n".join(lines) + "\n")
    report = json.loads(
        run_cli(["eval", "hansel", "--gold", str(gold_path), "--predictions", str(half)]).output
    )
    right = [n % 2 == 0 for n in range(len(gold))]
    in_kb = [ok for ok, r in zip(right, gold, strict=True) if not r["gold_id"].startswith("NIL_")]
    assert report["accuracy"] == sum(in_kb) / len(in_kb)
    assert report["accuracy_with_nil"] == sum(right) / len(right) == 0.5


def at1(world_out: Path) -> tuple[dict[str, str], MentionNormalizer]:
    """The demo alias table's rank-1 candidate per mention, read from its rows, and its normaliser."""
    alias_dir = target_stages(world_out, "hansel-kb")["hansel_alias_table"]
    top = {r["mention"]: r["qid"] for r in table(alias_dir) if r["rank"] == 1}
    return top, MentionNormalizer.from_json(json.loads((alias_dir / "_normalization.json").read_text()))


def test_eval_per_type_with_the_kb_and_the_at1_baseline(
    world_out: Path, exported: Path, run_cli: Callable[..., Any]
) -> None:
    """The shipped predictions are the alias table's AT@1 (NIL when it has no candidate): on
    Hansel-ZS it gets every In-KB mention and, untyped, the NIL one (Table 5's AT columns)."""
    gold_path = exported / "hansel-zero-shot.jsonl"
    top, normalizer = at1(world_out)
    gold = jsonl(gold_path)
    keys = normalizer.many([r["mention"] for r in gold])
    assert jsonl(PREDICTIONS) == [
        {"id": r["id"], "pred_id": top.get(k, "NIL")} for r, k in zip(gold, keys, strict=True)
    ]
    args = ["eval", "hansel", "--gold", str(gold_path), "--predictions", str(PREDICTIONS)]
    result = run_cli([*args, "--kb", str(exported / "kb.jsonl")])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    kb = {r["id"]: r["type"] for r in jsonl(exported / "kb.jsonl")}
    types: dict[str, int] = {}
    for r in jsonl(gold_path):
        t = r["gold_id"].removeprefix("NIL_") if r["gold_id"].startswith("NIL_") else kb[r["gold_id"]]
        types[t] = types.get(t, 0) + 1
    assert {t: v["records"] for t, v in report["by_type"].items()} == types
    assert report["in_kb_without_type"] == 0
    assert report["accuracy"] == 1.0 and report["accuracy_with_untyped_nil"] == 1.0
    assert report["accuracy_with_nil"] == 5 / 6  # AT@1 predicts an untyped NIL
    without_kb = json.loads(run_cli(args).output)
    assert without_kb["in_kb_without_type"] == 5 and set(without_kb["by_type"]) == {"ORG"}


def test_filter_hansel_hard_keeps_exactly_the_wrong_at1(
    world_out: Path, exported: Path, tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    dataset = exported / "validation.jsonl"
    out = tmp_path / "hard.jsonl"
    result = run_cli(
        [
            "filter",
            "hansel-hard",
            "--dataset",
            str(dataset),
            "--from",
            str(world_out),
            "--out",
            str(out),
            "--json",
        ]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    # The alias table read here directly: rank-1 candidate of each normalised mention.
    top, normalizer = at1(world_out)
    lines = dataset.read_bytes().splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    keys = normalizer.many([r["mention"] for r in records])
    wrong = [line for line, r, k in zip(lines, records, keys, strict=True) if top.get(k) != r["gold_id"]]
    kept = out.read_bytes().splitlines(keepends=True)
    assert kept == wrong  # the lines themselves, in order
    assert 0 < len(kept) < len(lines)  # a proper, non-empty subset
    assert report["removed"] == {
        "at1_correct_in_kb": len(lines) - len(kept),
        "at1_correct_nil_no_candidate": 0,
    }
    subset = report["table12"]["few-shot subset"]
    kept_records = [json.loads(line) for line in kept]
    assert subset["mentions"] == {"in_kb": len(kept), "nil": 0, "total": len(kept)}
    assert subset["distinct_mentions"]["total"] == len({r["mention"] for r in kept_records})
    assert subset["entities"] == len({r["gold_id"] for r in kept_records})
    assert report["table12"]["dataset"]["mentions"]["total"] == len(lines)


def test_filter_hansel_hard_on_the_zero_shot_slice(
    world_out: Path, exported: Path, tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    """Every ZS mention of the demo has its gold as AT@1, and the NIL one no candidate: nothing is
    hard; the table says so rather than failing."""
    out = tmp_path / "zs-hard.jsonl"
    dataset = exported / "hansel-zero-shot.jsonl"
    result = run_cli(
        ["filter", "hansel-hard", "--dataset", str(dataset), "--from", str(world_out), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == b"" and "0 of 6 examples" in result.output
    assert "1 NIL without a candidate" in result.output and "documents by source" in result.output


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            {"candidate": "hansel-fewshot-999", "gold_id": "Q1", "source": "", "domain": ""},
            "no few-shot record",
        ),
        (
            {"candidate": "hansel-train-1", "gold_id": "Q1", "source": "", "domain": ""},
            "neither hansel-fewshot-N",
        ),
        (
            {"candidate": "hansel-fewshot-7", "gold_id": "Q999999999999", "source": "", "domain": ""},
            "not an entity of the KB",
        ),
        (
            {"candidate": "hansel-fewshot-7", "gold_id": "NIL_THING", "source": "", "domain": ""},
            "neither a QID nor",
        ),
        (
            {
                "candidate": "hansel-fewshot-7",
                "gold_id": "NIL_PER",
                "start": 5,
                "end": 500,
                "source": "",
                "domain": "",
            },
            "not a non-empty span",
        ),
        (
            {
                "candidate": "hansel-zeroshot-4",
                "gold_id": "NIL_PER",
                "text": "费曼",
                "start": 0,
                "end": 2,
                "mention": "曼",
                "source": "",
                "domain": "",
            },
            "is not text[0:2]",
        ),
        (
            {"candidate": "hansel-zeroshot-4", "gold_id": "NIL_PER", "source": "", "domain": ""},
            "'text' must be",
        ),
        ({"candidate": "hansel-fewshot-7", "gold_id": "NIL_PER", "domain": ""}, "lacks source"),
    ],
)
def test_bad_annotations_are_data_errors_naming_the_line(
    world_out: Path, tmp_path: Path, run_cli: Callable[..., Any], line: dict[str, Any], message: str
) -> None:
    path = tmp_path / "annotations.jsonl"
    first = jsonl(ANNOTATIONS)[0]
    path.write_text(
        json.dumps(first, ensure_ascii=False) + "\n" + json.dumps(line, ensure_ascii=False) + "\n"
    )
    offset = len((json.dumps(first, ensure_ascii=False) + "\n").encode())
    result = run_cli(
        [
            "export",
            "hansel-test",
            "--from",
            str(world_out),
            "--annotations",
            str(path),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert result.exit_code == 1, result.output
    assert f"{path} at byte offset {offset}: line 2" in result.output and message in result.output


def test_a_candidate_annotated_twice_is_an_error(
    world_out: Path, tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    path = tmp_path / "annotations.jsonl"
    first = ANNOTATIONS.read_text(encoding="utf-8").splitlines()[0]
    path.write_text(first + "\n" + first + "\n", encoding="utf-8")
    result = run_cli(
        [
            "export",
            "hansel-test",
            "--from",
            str(world_out),
            "--annotations",
            str(path),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert result.exit_code == 1 and "annotated twice" in result.output


def test_eval_input_errors(exported: Path, tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    gold = exported / "hansel-zero-shot.jsonl"
    records = jsonl(gold)
    partial = tmp_path / "partial.jsonl"
    partial.write_text(json.dumps({"id": records[0]["id"], "pred_id": "Q1"}) + "\n")
    result = run_cli(["eval", "hansel", "--gold", str(gold), "--predictions", str(partial)])
    assert result.exit_code == 1 and "5 of 6 gold records have no prediction" in result.output
    stranger = tmp_path / "stranger.jsonl"
    stranger.write_text(json.dumps({"id": "hansel-eval-fs-0", "pred_id": "Q1"}) + "\n")
    result = run_cli(["eval", "hansel", "--gold", str(gold), "--predictions", str(stranger)])
    assert result.exit_code == 1 and "is not in the gold file" in result.output
    missing = run_cli(
        ["eval", "hansel", "--gold", str(tmp_path / "none.jsonl"), "--predictions", str(stranger)]
    )
    assert missing.exit_code == 2 and "gold file not found" in missing.output


def test_alias_table_recall_on_the_few_shot_slice(
    world_out: Path, exported: Path, run_cli: Callable[..., Any]
) -> None:
    """Hansel Table 5's AT columns: on Hansel-FS, AT@1 is never right (the slice's definition)."""
    args = ["eval", "alias-table", "--dataset", str(exported / "hansel-few-shot.jsonl")]
    result = run_cli([*args, "--from", str(world_out), "--target", "hansel-kb"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["records"], report["in_kb"], report["nil"]) == (2, 1, 1)
    assert report["in_kb_recall"]["R@1"] == 0.0 and report["in_kb_recall"]["R@10"] == 1.0
