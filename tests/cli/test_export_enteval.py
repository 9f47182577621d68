"""`entbench export enteval`: the WikiEnt TSV and the EntEval task directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import Result

from entbench.builders.enteval.export import WIKIENT_COLUMNS
from tests.builds import build
from tests.world_support import SamplesBuilds

RunCli = Callable[[list[str]], Result]


def quiet(_message: str) -> None:
    """Swallow the builder's log lines."""


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory, fixtures_dir: Path, samples_builds: SamplesBuilds) -> Path:
    """WikiEnt on the constructed world (it has QIDs), and the task files on the bundled config,
    each built where the run's shared builds seeded it (the builds write the listings `export` reads)."""
    base = tmp_path_factory.mktemp("enteval-export")
    world = f"wikipedia={fixtures_dir / 'enteval' / 'enwiki-constructed.xml'}"
    samples_builds.seed(base / "world", "enteval-tasks", sources=[world])
    samples_builds.seed(base / "tasks", "enteval-tasks")
    build("wikient", out=base / "world", sources=[world], progress=False, log=quiet, card=False)
    build("enteval-tasks", out=base / "tasks", progress=False, log=quiet, card=False)
    return base


def test_wikient_tsv(out: Path, tmp_path: Path, run_cli: RunCli) -> None:
    result = run_cli(["export", "enteval", "--from", str(out / "world"), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "wikient.tsv").read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""  # every line ends with "\n"
    fields = [line.split("\t") for line in lines[:-1]]
    assert {len(f) for f in fields} == {7}
    [stage] = sorted((out / "world" / "benchmarks" / "wikient").glob("v*-*"))
    expected = [
        [str(r[c]) if r[c] is not None else "" for c in WIKIENT_COLUMNS]
        for f in sorted(stage.glob("*.parquet"))
        for r in pq.read_table(f).to_pylist()
    ]
    assert fields == expected and len(fields) > 0
    assert f"instances {len(fields)}" in result.output
    for sentence, start, end, mention, qid, title, description in fields:
        words = sentence.split()
        assert " ".join(words) == sentence and " ".join(words[int(start) : int(end)]) == mention
        assert qid == "" or qid.startswith("Q")
        assert title and len(description.split()) <= 100
    assert any(f[4] == "Q145" and f[5] == "United Kingdom" for f in fields)
    # The disambiguation page "Queen" has no item: resolved to an article, kept, and reported.
    assert [f[5] for f in fields if f[4] == ""] == ["Queen"]
    assert "without_target_qid 1" in result.output
    assert "note: 1 of " in result.output and "no item of the wikidata dump has a sitelink" in result.output


def test_tasks_directory(out: Path, tmp_path: Path, run_cli: RunCli) -> None:
    result = run_cli(
        ["export", "enteval", "--from", str(out / "tasks"), "--format", "tasks", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    built = sorted((out / "tasks" / "benchmarks" / "enteval_tasks").glob("v*-*"))[0] / "_enteval"
    copied = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    originals = sorted(p.relative_to(built) for p in built.rglob("*") if p.is_file())
    assert copied == sorted([*originals, Path("TASKS.tsv")])
    for name in originals:
        assert (tmp_path / name).read_bytes() == (built / name).read_bytes()
    listing = (tmp_path / "TASKS.tsv").read_text(encoding="utf-8").splitlines()
    assert listing[0] == "task\tstatus\tlines\tfiles" and len(listing) == 10
    assert all(row.split("\t")[1] == "built" for row in listing[1:])


def test_missing_build_is_a_user_error(tmp_path: Path, run_cli: RunCli) -> None:
    result = run_cli(["export", "enteval", "--from", str(tmp_path), "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "no wikient build found" in result.output
    result = run_cli(
        ["export", "enteval", "--from", str(tmp_path), "--format", "tasks", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2 and "no enteval-tasks build found" in result.output


def test_no_empty_file_warning_when_every_instance_has_a_qid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 32: with every target_qid set, the export warned that "without_target_qid is empty (0
    # records), so its file is empty": a tally, not a file it writes.
    import pyarrow as pa

    from entbench.builders.enteval import export
    from entbench.cli.export_cmd import echo_export

    shard = tmp_path / "part-00000-of-00001.parquet"
    row = {"sentence": "a b", "mention_start": 0, "mention_end": 1, "mention": "a", "target_qid": "Q1"}
    row |= {"target_title": "A", "description": "d"}
    pq.write_table(pa.Table.from_pylist([{c: row[c] for c in WIKIENT_COLUMNS}]), shard)

    class Stage:
        def files(self, table: str) -> list[str]:
            return [str(shard)]

    monkeypatch.setattr(export, "locate_stage", lambda *args: Stage())
    result = export.export_wikient(build_out=tmp_path, out=tmp_path / "out")
    assert result.counts == {"instances": 1}
    echo_export("wikient", "wikient-tsv", result)
    assert "warning" not in capsys.readouterr().err
