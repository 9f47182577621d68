"""ET on ultra-fine entity typing input the project has never seen: every example of each split is
a line, the mention and its types kept, `labels.txt` the given types file; the release's U+00A0
inside tokens; and the errors a damaged input gives."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from entbench.builders.enteval import et
from entbench.builders.enteval.errors import SourceError
from tests.builders.enteval import loader_formats as loaders
from tests.builds import build
from tests.conftest import SAMPLES_CONFIG
from tests.world_support import SamplesBuilds

RunCli = Callable[[list[str]], Result]
NBSP = "\u00a0"
TYPES = ["person", "politician", "leader", "location", "city", "organization", "company", "event", "year"]
CROWD: dict[str, list[dict[str, Any]]] = {
    "train": [
        {
            "annot_id": "t1",
            "mention_span": "Angela Merkel",
            "left_context_token": ["On", "Monday", ","],
            "right_context_token": ["met", "the", "press", "."],
            "y_str": ["person", "politician", "leader"],
        },
        {  # the release's quirk: U+00A0 inside a token (before and inside the mention)
            "annot_id": "t2",
            "mention_span": f"Lake{NBSP}Geneva",
            "left_context_token": ["about", f"10{NBSP}km", "from"],
            "right_context_token": [",", "they", "said"],
            "y_str": ["location", "location"],  # listed twice: written once
        },
    ],
    "dev": [
        {
            "annot_id": "d1",
            "mention_span": "the company",
            "left_context_token": [],
            "right_context_token": ["grew", "fast"],
            "y_str": ["organization", "company"],
        },
        {  # no type: cannot be a line
            "annot_id": "d2",
            "mention_span": "it",
            "left_context_token": ["and"],
            "right_context_token": ["rained"],
            "y_str": [],
        },
    ],
    "test": [
        {
            "annot_id": "x1",
            "mention_span": "1999",
            "left_context_token": ["In"],
            "right_context_token": [",", "Zürich", "grew", "."],
            "y_str": ["year", "event"],
        }
    ],
}


def quiet(_message: str) -> None:
    """Swallow the builder's log lines."""


def write_release(root: Path, crowd: dict[str, list[dict[str, Any]]], types: list[str]) -> tuple[Path, Path]:
    """A `crowd/` directory and `ontology/types.txt` laid out as the release has them."""
    (root / "crowd").mkdir(parents=True)
    (root / "ontology").mkdir()
    for split, rows in crowd.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (root / "crowd" / f"{split}.json").write_text(text, encoding="utf-8")
    (root / "ontology" / "types.txt").write_text("".join(t + "\n" for t in types), encoding="utf-8")
    return root / "crowd", root / "ontology" / "types.txt"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("ultrafine")
    samples_builds.seed(root / "out", "enteval-tasks")  # only ET's stages are built
    crowd, types = write_release(root / "release", CROWD, TYPES)
    params = [f"enteval_et.source={crowd}", f"enteval_et.types={types}", "enteval_et.lowercase=false"]
    dirs = build("enteval-tasks", out=root / "out", params=params, progress=False, log=quiet, card=False)
    stats = json.loads((dirs["enteval_et"] / "_MANIFEST.json").read_text(encoding="utf-8"))["stats"]
    return {"dir": dirs["enteval_tasks"] / "_enteval" / "ET", "stats": stats, "types": types}


def test_every_example_keeps_its_mention_and_types(built: dict[str, Any]) -> None:
    labels, splits = loaders.read_et(built["dir"])
    assert (built["dir"] / "labels.txt").read_bytes() == built["types"].read_bytes()
    assert labels == TYPES
    read = {"train": splits["train"], "dev": splits["valid"], "test": splits["test"]}
    for split, rows in CROWD.items():
        kept = [r for r in rows if r["y_str"]]
        assert len(read[split]) == len(kept)
        for row, (words, s, e, ids) in zip(kept, read[split], strict=True):
            assert words[s:e] == row["mention_span"].split()  # U+00A0 cuts, as str.split() does
            assert [labels[i] for i in ids] == list(dict.fromkeys(row["y_str"]))
            given = [*row["left_context_token"], row["mention_span"], *row["right_context_token"]]
            assert words == " ".join(given).split()


def test_whitespace_inside_tokens_is_cut_and_counted(built: dict[str, Any]) -> None:
    _, splits = loaders.read_et(built["dir"])
    words, s, e, _ = splits["train"][1]
    assert words == ["about", "10", "km", "from", "Lake", "Geneva", ",", "they", "said"]
    assert (s, e) == (4, 6)
    stats = built["stats"]
    assert stats["tokens_with_whitespace"] == 2 and stats["duplicate_types"] == 1
    assert stats["dropped_no_type"] == 1 and stats["labels"] == len(TYPES)
    assert [stats[f"instances_written_{s}"] for s in ("train", "dev", "test")] == [2, 1, 1]


def test_lowercase_follows_the_parameter(
    built: dict[str, Any], tmp_path: Path, samples_builds: SamplesBuilds
) -> None:
    crowd, types = write_release(tmp_path / "release", CROWD, TYPES)
    samples_builds.seed(tmp_path / "out", "enteval-tasks")
    params = [f"enteval_et.source={crowd}", f"enteval_et.types={types}"]
    dirs = build("enteval-tasks", out=tmp_path / "out", params=params, progress=False, log=quiet, card=False)
    _, splits = loaders.read_et(dirs["enteval_tasks"] / "_enteval" / "ET")
    words, s, e, _ = splits["train"][0]
    assert words[s:e] == ["angela", "merkel"]
    labels, _ = loaders.read_et(dirs["enteval_tasks"] / "_enteval" / "ET")
    assert labels == TYPES  # types are labels: never lowercased


def test_types_file_rules() -> None:
    assert et.parse_types(["a", "b c", "", ""]) == ["a", "b c"]
    with pytest.raises(SourceError, match="line 2: type 'a' is listed twice"):
        et.parse_types(["a", "a"])
    with pytest.raises(SourceError, match="line 2: an empty line inside"):
        et.parse_types(["a", "", "b"])
    with pytest.raises(SourceError, match="line 1: type 'a\\\\tb'"):
        et.parse_types(["a\tb"])


def test_damaged_inputs_are_errors(tmp_path: Path, run_cli: RunCli) -> None:
    def run(crowd: Path, types: Path) -> Result:
        command = ["build", "enteval-tasks", "--out", str(tmp_path / "out"), "--no-progress"]
        command += ["--config", str(SAMPLES_CONFIG)]
        return run_cli(
            [*command, "--param", f"enteval_et.source={crowd}", "--param", f"enteval_et.types={types}"]
        )

    unknown = {**CROWD, "test": [{**CROWD["test"][0], "y_str": ["year", "epoch"]}]}
    crowd, types = write_release(tmp_path / "unknown", unknown, TYPES)
    result = run(crowd, types)
    assert result.exit_code == 1
    assert (
        f"{crowd / 'test.json'} at byte offset 0: line 1: type 'epoch' is not in the types file"
        in result.output
    )
    broken = tmp_path / "broken"
    crowd, types = write_release(broken, CROWD, TYPES)
    with open(crowd / "dev.json", "a", encoding="utf-8") as f:
        f.write('{"annot_id": "d3", "mention_span": "x", "left_context_token": "not a list"}\n')
    result = run(crowd, types)
    assert result.exit_code == 1 and "line 3: left_context_token must be a list of strings" in result.output
    (crowd / "dev.json").unlink()
    result = run(crowd, types)
    assert result.exit_code == 2 and f"{crowd} has no dev.json" in result.output
