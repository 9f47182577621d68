"""`entbench export wikireading` on a built (generated, non-empty) WikiReading set.

The real fixtures yield no instance (see `tests/builders/wikireading/support.py`), so the exports
are checked on the generated world; the field semantics on real text are in
`tests/builders/wikireading/test_release.py`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from entbench.builders.wikireading.recycled import underscored
from entbench.builders.wikireading.release import RELEASE_FIELDS
from tests.builders.wikireading.support import read_rows, world_build

SPLIT_FILES = {"train": "train.json", "valid": "validation.json", "test": "test.json"}
RunCli = Callable[[list[str]], Result]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    base = tmp_path_factory.mktemp("wr-export")
    dirs = world_build(base, base / "out", items=120)
    return base / "out", dirs


def vocabulary(path: Path) -> dict[int, str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("0\t!!!TOTAL\t") and lines[1] == "0\t!!!FLAGS\t0"
    return {int(i): token for i, token, _count in (line.split("\t") for line in lines[2:])}


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_wikireading_json_export(
    built: tuple[Path, dict[str, Path]], tmp_path: Path, run_cli: RunCli
) -> None:
    out, dirs = built
    result = run_cli(["export", "wikireading", "--from", str(out), "--out", str(tmp_path / "json")])
    assert result.exit_code == 0, result.output
    document_vocab = vocabulary(tmp_path / "json" / "document.vocab")
    raw_vocab = vocabulary(tmp_path / "json" / "raw_answer.vocab")
    train_words: set[str] = set()
    for split, name in SPLIT_FILES.items():
        rows = read_rows(dirs["wikireading"], split)
        recs = records(tmp_path / "json" / name)
        assert len(recs) == len(rows) > 0
        for row, rec in zip(rows, recs, strict=True):
            assert tuple(rec) == RELEASE_FIELDS
            assert rec["key"] == row["key"]
            assert rec["raw_answers"] == row["answers"]
            for i, word in zip(rec["document_sequence"], rec["string_sequence"], strict=True):
                assert document_vocab[i] == word or (i == 2 and split != "train")
            for i, answer in zip(rec["raw_answer_ids"], rec["raw_answers"], strict=True):
                assert raw_vocab[i] == answer or (i == 2 and split != "train")
            if split == "train":
                train_words.update(rec["string_sequence"])
    # Vocabularies are built on train only.
    assert set(document_vocab.values()) - {"<S>", "</S>", "<UNK>", "<NONE>"} == train_words
    assert vocabulary(tmp_path / "json" / "type.vocab") == {0: "<S>", 1: "</S>", 2: "<UNK>", 3: "<NONE>"}
    # Identical builds export identical bytes.
    again = run_cli(["export", "wikireading", "--from", str(out), "--out", str(tmp_path / "again")])
    assert again.exit_code == 0
    for name in [*SPLIT_FILES.values(), "document.vocab", "answer.vocab", "raw_answer.vocab"]:
        assert (tmp_path / "json" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()


def test_vocabulary_size_limit(built: tuple[Path, dict[str, Path]], tmp_path: Path, run_cli: RunCli) -> None:
    out, _ = built
    args = ["export", "wikireading", "--from", str(out), "--out", str(tmp_path), "--max-document-vocab", "10"]
    assert run_cli(args).exit_code == 0
    assert len(vocabulary(tmp_path / "document.vocab")) == 4 + 10
    assert any(2 in r["document_sequence"] for r in records(tmp_path / "train.json"))


def test_recycled_export(built: tuple[Path, dict[str, Path]], tmp_path: Path, run_cli: RunCli) -> None:
    out, dirs = built
    args = ["export", "wikireading", "--from", str(out), "--format", "recycled", "--out", str(tmp_path)]
    result = run_cli(args)
    assert result.exit_code == 0, result.output
    for split, directory in {"train": "train", "valid": "dev-0", "test": "test-A"}.items():
        rows = read_rows(dirs["wikireading"], split)
        documents: dict[int, list[dict[str, Any]]] = {}
        for row in rows:
            documents.setdefault(row["document_id"], []).append(row)
        inputs = (tmp_path / directory / "in.tsv").read_text(encoding="utf-8").splitlines()
        expected = (tmp_path / directory / "expected.tsv").read_text(encoding="utf-8").splitlines()
        assert len(inputs) == len(expected) == len(documents)  # one line per article
        for (names, _document), answers, group in zip(
            (line.split("\t") for line in inputs), expected, documents.values(), strict=True
        ):
            assert names.split(" ") == [underscored(r["property_label"]) for r in group]
            items = answers.split(" ")
            assert items == [
                f"{underscored(r['property_label'])}={underscored(a)}" for r in group for a in r["answers"]
            ]


def test_export_errors(tmp_path: Path, run_cli: RunCli) -> None:
    missing = run_cli(["export", "wikireading", "--from", str(tmp_path), "--out", str(tmp_path / "x")])
    assert missing.exit_code == 2
    assert "no wikireading build" in missing.output
    bad = run_cli(["export", "wikireading", "--from", str(tmp_path), "--format", "tfrecord", "--out", "x"])
    assert bad.exit_code == 2
