"""The demo world with no flags: `entbench export enteval --format tasks` writes the directories of
all ten tasks `ZeweiChu/EntEval:enteval/engine.py` evaluates, each file read back by a reader written
from the loaders (`loader_formats`), ET and EFP among them; and the card sets the build beside the
paper's Table 1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.builders.enteval import loader_formats as loaders

RunCli = Callable[[list[str]], Result]
#: engine.py's task -> the directory it opens under task_path.
LOADER_DIRS = {
    "CAPsame": "CAP/same",
    "CAPnext": "CAP/next",
    "ERT": "ERT",
    "EFP": "EFP",
    "ET": "ET",
    "CERP": "CERP",
    "Rare": "rare",
    "ConllYago": "conll-yago",
    "WikiSRS": "wikisrs",
    "KORE": "KORE",
}


@pytest.fixture(scope="module")
def exported(world_out: Path, tmp_path_factory: pytest.TempPathFactory, run_cli: RunCli) -> Path:
    out = tmp_path_factory.mktemp("world-tasks")
    result = run_cli(["export", "enteval", "--from", str(world_out), "--format", "tasks", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def run_cli() -> RunCli:
    from click.testing import CliRunner

    from entbench.cli import commands  # noqa: F401 - registers commands
    from entbench.cli.app import cli

    return lambda args: CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_every_task_directory_is_written_and_read_back(exported: Path) -> None:
    for task, directory in LOADER_DIRS.items():
        assert (exported / directory).is_dir(), f"{task}: no {directory}/"
    counts = {
        "CAPsame": sum(
            len(loaders.read_cap(exported / f"CAP/same/{s}.txt")) for s in ("train", "dev", "test")
        ),
        "CAPnext": sum(
            len(loaders.read_cap(exported / f"CAP/next/{s}.txt")) for s in ("train", "dev", "test")
        ),
        "ERT": sum(len(loaders.read_ert(exported / f"ERT/{s}.txt")) for s in ("train", "dev", "test")),
        "CERP": sum(len(loaders.read_cerp(exported / f"CERP/{s}.txt")) for s in ("train", "dev", "test")),
        "Rare": sum(
            len(loaders.read_rare(exported / f"rare/{s}.txt")[0]) for s in ("train", "valid", "test")
        ),
        "ConllYago": sum(
            len(loaders.read_conll_yago(exported / f"conll-yago/{s}.final.txt")[0])
            for s in ("train", "testa", "testb")
        ),
        "WikiSRS": sum(
            len(loaders.read_wikisrs(exported / f"wikisrs/WikiSRS_{kind}.csv.pro"))
            for kind in ("relatedness", "similarity")
        ),
        "KORE": len(loaders.read_kore(exported / "KORE/all.txt")[0]),
    }
    assert all(n > 0 for n in counts.values()), counts
    listing = (exported / "TASKS.tsv").read_text(encoding="utf-8").splitlines()[1:]
    assert sorted(row.split("\t")[0] for row in listing) == sorted(
        ["cap", "cerp", "conll_yago", "efp", "ert", "et", "kore", "rare", "wikisrs"]
    )
    assert {row.split("\t")[1] for row in listing} == {"built"}


def test_et_files(exported: Path, fixtures_dir: Path) -> None:
    labels, splits = loaders.read_et(exported / "ET")
    types = fixtures_dir / "enteval" / "world" / "ultrafine" / "ontology" / "types.txt"
    assert (exported / "ET" / "labels.txt").read_bytes() == types.read_bytes()
    for split, rows in splits.items():
        assert rows, f"ET/{split}.txt is empty"
        for words, s, e, ids in rows:
            assert 0 <= s < e <= len(words) and ids
            assert all(w == w.lower() for w in words)  # lowercase, as the other tasks
    assert len(labels) == len(set(labels)) > 0


def test_efp_files(exported: Path) -> None:
    splits = loaders.read_efp(exported / "EFP")
    claims = set()
    for split, rows in splits.items():
        assert rows, f"EFP/{split}.txt is empty"
        for label, words, s, e in rows:
            assert label in ("SUPPORTS", "REFUTES") and 0 <= s < e <= len(words)
            claims.add(" ".join(words))
    assert len(claims) == sum(len(rows) for rows in splits.values())  # no claim in two splits
    # The real FEVER lines are among the inputs: one of them is written (NEI never).
    assert any(
        c.startswith(("nikolaj coster-waldau", "liverpool f.c.", "beyoncé", "peggy sue")) for c in claims
    )


def test_the_card_sets_the_build_beside_table_1(world_out: Path) -> None:
    card = (world_out / "cards" / "enteval-tasks" / "README.md").read_text(encoding="utf-8")
    assert "| ET | ET |" in card and "| EFP | EFP |" in card and "1,998 | 1,998 | 1,998 | 10,331 |" in card
    assert "not configured" not in card
    assert "beside the paper's 13,374" in card and "were **skipped**" in card
    assert "NED: the prior-only accuracy" in card and "beside the paper's 58.2%" in card
