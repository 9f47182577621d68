"""`entbench export hansel-train --format jsonl`: the official record format (spec §5)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from entbench.builders.hansel.records import record_line
from tests.builders.hansel.build_support import PAIR, build, rows
from tests.conftest import SAMPLES_CONFIG

OFFICIAL = Path(__file__).resolve().parents[2] / "fixtures" / "zh-text" / "hansel.readme-example.jsonl"


@pytest.fixture(scope="module")
def build_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the fixture world's build directory (so this module's builds change nothing shared)."""
    world = build()["hansel"].parents[2]
    out = tmp_path_factory.mktemp("export") / "build"
    shutil.copytree(world, out)
    return out


def build_and_export(run_cli: Callable[..., Any], build_out: Path, dest: Path, *params: str) -> Any:
    # No card: the tests read the export only.
    args = ["build", "hansel-train", "--out", str(build_out), "--config", str(SAMPLES_CONFIG), "--no-card"]
    for source in PAIR:
        args += ["--source", source]
    for param in params:
        args += ["--param", param]
    assert run_cli(args).exit_code == 0
    return run_cli(
        ["export", "hansel-train", "--from", str(build_out), "--format", "jsonl", "--out", str(dest)]
    )


def keys_in_order(line: str) -> list[str]:
    pairs: list[tuple[str, Any]] = json.loads(line, object_pairs_hook=list)
    return [k for k, _ in pairs]


def test_export_writes_the_official_format(
    run_cli: Callable[..., Any], build_out: Path, tmp_path: Path
) -> None:
    result = build_and_export(run_cli, build_out, tmp_path / "jsonl")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "jsonl").iterdir()) == ["train.jsonl", "validation.jsonl"]
    official_keys = keys_in_order(OFFICIAL.read_text(encoding="utf-8").splitlines()[0])
    stage = build()["hansel"]
    for split in ("train", "validation"):
        raw = (tmp_path / "jsonl" / f"{split}.jsonl").read_bytes()
        text = raw.decode("utf-8")
        assert "\\u" not in text and any("\u4e00" <= ch <= "\u9fff" for ch in text)  # raw UTF-8
        lines = text.split("\n")
        assert lines[-1] == ""  # one object per line, newline-terminated
        lines = lines[:-1]
        table = sorted(rows(stage, split), key=lambda r: r["example_index"])
        assert len(lines) == len(table) > 0
        for n, (line, row) in enumerate(zip(lines, table, strict=True)):
            assert keys_in_order(line) == official_keys
            record = json.loads(line)
            assert record["id"] == f"hansel-{split}-{n}"
            assert record["text"][record["start"] : record["end"]] == record["mention"]
            assert line == record_line(row)
        assert f"{split} {len(lines):,}" in result.output


def test_export_does_not_depend_on_the_shard_count(
    run_cli: Callable[..., Any], build_out: Path, tmp_path: Path
) -> None:
    two = build_and_export(run_cli, build_out, tmp_path / "a")
    three = build_and_export(run_cli, build_out, tmp_path / "b", "hansel.num_shards=3")
    assert two.exit_code == three.exit_code == 0
    for name in ("train.jsonl", "validation.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_user_errors(run_cli: Callable[..., Any], tmp_path: Path) -> None:
    missing = run_cli(["export", "hansel-train", "--from", str(tmp_path), "--out", str(tmp_path / "x")])
    assert missing.exit_code == 2 and "no hansel-train build found" in missing.output
    fmt = run_cli(
        ["export", "hansel-train", "--from", str(tmp_path), "--format", "csv", "--out", str(tmp_path)]
    )
    assert fmt.exit_code == 2


def build_and_export_kb(run_cli: Callable[..., Any], build_out: Path, dest: Path, *params: str) -> Any:
    args = ["build", "hansel-kb", "--out", str(build_out), "--config", str(SAMPLES_CONFIG)]
    for source in PAIR:
        args += ["--source", source]
    for param in params:
        args += ["--param", param]
    assert run_cli(args).exit_code == 0
    return run_cli(["export", "hansel-kb", "--from", str(build_out), "--format", "jsonl", "--out", str(dest)])


def test_kb_export_is_the_stage_in_id_order_whatever_the_shards(
    run_cli: Callable[..., Any], build_out: Path, tmp_path: Path
) -> None:
    two = build_and_export_kb(run_cli, build_out, tmp_path / "a")
    three = build_and_export_kb(run_cli, build_out, tmp_path / "b", "hansel_kb.num_shards=3")
    assert two.exit_code == three.exit_code == 0, two.output
    raw = (tmp_path / "a" / "kb.jsonl").read_bytes()
    assert raw == (tmp_path / "b" / "kb.jsonl").read_bytes()
    text = raw.decode("utf-8")
    assert "\\u" not in text and text.endswith("\n")
    lines = text.splitlines()
    stage = {r["id"]: r for r in rows(build()["hansel_kb"], "kb")}
    assert len(lines) == len(stage) and f"entities {len(stage):,}" in two.output
    assert "7 of" in two.output  # the note: entities with a first paragraph
    ids = []
    for line in lines:
        assert keys_in_order(line) == [
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
        record = json.loads(line)
        ids.append(record["id"])
        assert record == {k: stage[record["id"]][k] for k in record}
    assert ids == sorted(ids)


def test_kb_export_user_errors(run_cli: Callable[..., Any], tmp_path: Path) -> None:
    missing = run_cli(["export", "hansel-kb", "--from", str(tmp_path), "--out", str(tmp_path / "x")])
    assert missing.exit_code == 2 and "no hansel-kb build found" in missing.output
    tests = run_cli(
        [
            "export",
            "hansel-test",
            "--from",
            str(tmp_path),
            "--annotations",
            str(tmp_path / "a.jsonl"),
            "--out",
            str(tmp_path),
        ]
    )
    assert tests.exit_code == 2 and "annotation file not found" in tests.output
