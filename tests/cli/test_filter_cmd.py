"""`entbench filter mem` end to end on real UD English EWT (train vs dev)."""

from __future__ import annotations

import gzip
import hashlib
import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result

from entbench.readers.edge_probing.items import read_conllu, read_jiant, write_jiant
from tests.filters.test_memorization_ewt import PINNED

EWT = Path(__file__).resolve().parents[2] / "fixtures" / "ud-ewt"
HEURISTICS = ("mem_exact", "mem_freq", "mem_uniform")
RunCli = Callable[[list[str]], Result]


def digests(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def filter_mem(run_cli: RunCli, out: Path, *extra: str, version: str = "v2.2") -> Result:
    return run_cli(
        [
            "filter",
            "mem",
            "--train",
            str(EWT / version / "en_ewt-ud-train.conllu.gz"),
            "--test",
            str(EWT / version / "en_ewt-ud-dev.conllu.gz"),
            "--out",
            str(out),
            *extra,
        ]
    )


@pytest.fixture(scope="module")
def pos_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    """One run on EWT v2.2 pos shared by the tests that only read its outputs (it takes seconds)."""
    from entbench.cli import commands  # noqa: F401 - registers the commands
    from entbench.cli.app import cli

    def run(args: list[str]) -> Result:
        return CliRunner().invoke(cli, args, catch_exceptions=False)

    out = tmp_path_factory.mktemp("pos") / "out"
    return out, filter_mem(run, out, "--input-format", "conllu-upos")


@pytest.mark.slow  # the shared full-EWT run
def test_report_is_the_contract_and_matches_the_pinned_numbers(pos_run: tuple[Path, Result]) -> None:
    out, result = pos_run
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert list(report) == ["n_test", "mem_exact", "mem_freq", "mem_uniform", "mode"]
    n_test, exact, freq, uniform = PINNED["v2.2", "pos", "eptest"]
    assert report == {
        "n_test": n_test,
        "mem_exact": 90.42,
        "mem_freq": 42.42,
        "mem_uniform": 48.41,
        "mode": "eptest",
    }
    assert (exact, freq, uniform) == (22740, 10668, 12174)
    assert "Mem-Exact       22740    25150    90.42" in result.output
    assert "Mem-Uniform     12174    25150    48.41" in result.output


@pytest.mark.slow  # the shared full-EWT run
def test_filtered_plus_removed_is_the_test_set_and_every_removal_has_a_reason(
    pos_run: tuple[Path, Result],
) -> None:
    out, _ = pos_run
    stats = json.loads((out / "stats.json").read_text())
    test_ids = pq.read_table(out / "test.parquet").column("item_id").to_pylist()
    unseen = pq.read_table(out / "unseen_label.parquet")
    assert len(test_ids) + unseen.num_rows == stats["test"]["items"] == 25_150
    for heuristic in HEURISTICS:
        kept = pq.read_table(out / heuristic / "filtered.parquet")
        removed = pq.read_table(out / heuristic / "removed.parquet")
        kept_ids = kept.column("item_id").to_pylist()
        removed_ids = removed.column("item_id").to_pylist()
        assert sorted(kept_ids + removed_ids) == test_ids
        assert removed.num_rows == stats["removed"][heuristic]
        assert all(removed.column("reason").to_pylist()) and all(removed.column("detail").to_pylist())
        jiant = read_jiant(out / heuristic / "filtered.jsonl")
        assert [(it.span1, it.labels) for it in jiant] == list(
            zip(
                zip(
                    kept.column("span1_start").to_pylist(), kept.column("span1_end").to_pylist(), strict=True
                ),
                (tuple(x) for x in kept.column("labels").to_pylist()),
                strict=True,
            )
        )


# A dev-sized real pair for the checks that need no full run: v2.2 dev as "train", v2.16 dev as "test".
SMALL_TRAIN = EWT / "v2.2" / "en_ewt-ud-dev.conllu.gz"
SMALL_TEST = EWT / "v2.16" / "en_ewt-ud-dev.conllu.gz"


def small(run_cli: RunCli, out: Path, train: Path, test: Path, *extra: str) -> Result:
    result = run_cli(["filter", "mem", "--train", str(train), "--test", str(test), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def deprel_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small pair's `conllu-deprel` run (default mode), shared by the tests that read it."""
    from entbench.cli import commands  # noqa: F401 - registers the commands
    from entbench.cli.app import cli

    def run(args: list[str]) -> Result:
        return CliRunner().invoke(cli, args, catch_exceptions=False)

    out = tmp_path_factory.mktemp("deprel") / "out"
    small(run, out, SMALL_TRAIN, SMALL_TEST, "--input-format", "conllu-deprel")
    return out


@pytest.mark.parametrize("mode", ["eptest", "strict"])
def test_running_twice_gives_identical_files(tmp_path: Path, run_cli: RunCli, mode: str) -> None:
    args = ("--input-format", "conllu-upos", "--mode", mode)
    small(run_cli, tmp_path / "a", SMALL_TRAIN, SMALL_TEST, *args)
    first = digests(tmp_path / "a")
    assert len(first) == 2 + 2 + 3 * 3 + 1  # report, stats, test, unseen_label, 3 per heuristic, card
    small(run_cli, tmp_path / "a", SMALL_TRAIN, SMALL_TEST, *args)
    assert digests(tmp_path / "a") == first


def test_the_card_holds_the_leakage_audit_and_a_command_that_rewrites_it(
    deprel_run: Path, run_cli: RunCli
) -> None:
    """Edge probing has no build target: `OUT/README.md` is its card, with the Mem-Exact overlap."""
    out = deprel_run
    report = json.loads((out / "report.json").read_text())
    stats = json.loads((out / "stats.json").read_text())
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "## Leakage audit" in card and "Mode `eptest`" in card
    for key, title in (("mem_exact", "Mem-Exact"), ("mem_freq", "Mem-Freq"), ("mem_uniform", "Mem-Uniform")):
        row = f"| {title} | {stats['removed'][key]:,} | {report['n_test']:,} | {report[key]:.2f}% |"
        assert row in card
    assert stats["removed"]["mem_exact"] > 0  # v2.2 dev and v2.16 dev share many (word, relation) pairs
    assert f"the {stats['unseen_label_drops']:,} test items whose label never occurs" in card
    for split, path in (("train", SMALL_TRAIN), ("test", SMALL_TEST)):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert f"| {split} | `{path}` | {path.stat().st_size:,} | `{digest}` |" in card
    # The card's command writes the same files again (the card included).
    [command] = [line for line in card.splitlines() if line.startswith("entbench filter mem ")]
    before = digests(out)
    assert run_cli(shlex.split(command)[1:]).exit_code == 0
    assert digests(out) == before


def test_gzipped_jiant_input_gives_the_conllu_decisions(
    tmp_path: Path, run_cli: RunCli, deprel_run: Path
) -> None:
    paths = []
    for source in (SMALL_TRAIN, SMALL_TEST):
        plain = tmp_path / f"{source.parent.name}.jsonl"
        write_jiant(read_conllu(source, "dep-cls"), plain)
        packed = tmp_path / f"{source.parent.name}.jsonl.gz"
        packed.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
        paths.append(packed)
    small(run_cli, tmp_path / "jiant", paths[0], paths[1])
    jiant_report = json.loads((tmp_path / "jiant" / "report.json").read_text())
    assert jiant_report == json.loads((deprel_run / "report.json").read_text())
    stats = json.loads((tmp_path / "jiant" / "stats.json").read_text())
    unseen = pq.read_table(tmp_path / "jiant" / "unseen_label.parquet")
    assert jiant_report["n_test"] + unseen.num_rows == stats["test"]["items"] == 23_146
    assert unseen.num_rows > 0  # v2.2 dev lacks some of v2.16's relations: dropped first, with reason
    assert set(unseen.column("reason").to_pylist()) == {"label_unseen_in_train"}
    for heuristic in HEURISTICS:
        columns = ["span1_text", "span2_text", "labels", "reason"]
        jiant = pq.read_table(tmp_path / "jiant" / heuristic / "removed.parquet", columns=columns)
        conllu = pq.read_table(deprel_run / heuristic / "removed.parquet", columns=columns)
        assert jiant.equals(conllu)


def test_user_and_data_errors_exit_cleanly(tmp_path: Path, run_cli: RunCli) -> None:
    missing = run_cli(
        ["filter", "mem", "--train", str(tmp_path / "nope"), "--test", "x", "--out", str(tmp_path)]
    )
    assert missing.exit_code == 2
    conllu = EWT / "v2.2" / "en_ewt-ud-dev.conllu.gz"
    wrong_format = run_cli(
        ["filter", "mem", "--train", str(conllu), "--test", str(conllu), "--out", str(tmp_path)]
    )
    assert wrong_format.exit_code == 1
    assert "at byte offset 0" in wrong_format.output and "--input-format" in wrong_format.output
    assert "Traceback" not in wrong_format.output
