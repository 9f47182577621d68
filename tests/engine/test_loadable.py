"""Every table of a build loads as it is, with the readers users reach for (issue 19, item 4):
pyarrow (`pq.read_table` and `pyarrow.dataset` on the table's directory), Polars on its Parquet files
and Hugging Face `datasets` with the call the dataset card prints. Sidecar files (`_MANIFEST.json`,
`_rejects.jsonl`, `_report.json`, …) start with `_`, which pyarrow skips; an empty shard has no row
group, which HF skips.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from entbench.engine.manifest import load_manifest
from entbench.golden import GOLDEN_TARGETS
from tests.builds import build
from tests.world_support import SamplesBuilds

LAYERS = ("normalized", "derived", "benchmarks")


def stage_dirs(out: Path) -> list[Path]:
    """Every complete stage directory of a build."""
    return sorted(
        d for layer in LAYERS for d in (out / layer).glob("*/v*-*") if (d / "_MANIFEST.json").is_file()
    )


def table_dirs(stage: Path) -> dict[str, Path]:
    """Each table of a stage and the directory holding its shards."""
    outputs = load_manifest(stage)["outputs"]
    return {table: stage if len(outputs) == 1 else stage / table for table in outputs}


def test_every_file_beside_the_shards_starts_with_an_underscore(world_out: Path) -> None:
    for stage in stage_dirs(world_out):
        for path in stage.rglob("*"):
            rel = path.relative_to(stage)
            if path.is_file() and path.suffix != ".parquet":
                assert any(part.startswith("_") for part in rel.parts), f"{stage}: {rel}"


def test_every_table_loads_whole_with_pyarrow_and_polars(world_out: Path) -> None:
    checked = 0
    for stage in stage_dirs(world_out):
        outputs = load_manifest(stage)["outputs"]
        for table, where in table_dirs(stage).items():
            rows = outputs[table]["rows"]
            assert pq.read_table(where).num_rows == rows, where
            assert ds.dataset(where).to_table().num_rows == rows, where
            assert pl.read_parquet(f"{where}/*.parquet").height == rows, where
            checked += 1
    assert checked > 40


@pytest.mark.parametrize("target", GOLDEN_TARGETS)
def test_the_cards_hugging_face_call_loads_the_target(world_out: Path, target: str, tmp_path: Path) -> None:
    """The `datasets.load_dataset` lines of the card, run as printed from the build directory."""
    datasets = pytest.importorskip("datasets")
    readme = (world_out / "cards" / target / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", readme, re.S)
    assert code is not None
    calls = re.findall(r"^(\w+) = datasets\.load_dataset\((.*)\)$", code.group(1), re.M)
    assert calls
    for name, arguments in calls:
        loaded = eval(
            f"datasets.load_dataset({arguments}, cache_dir={str(tmp_path)!r})",
            {"datasets": datasets},
        )
        files = re.findall(r'"([^"]+/\*\.parquet)"', arguments)
        expected = sum(pq.read_table(str(world_out / f).rsplit("/", 1)[0]).num_rows for f in files)
        found = sum(split.num_rows for split in loaded.values()) if name == "splits" else loaded.num_rows
        assert found == expected > 0, (target, name)


@pytest.fixture(autouse=True)
def _from_the_build_directory(world_out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The card's paths are relative to the build directory, as a user runs them there."""
    monkeypatch.chdir(world_out)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_empty_tables_are_named_and_left_out_of_the_hugging_face_call(
    tmp_path: Path, samples_builds: SamplesBuilds
) -> None:
    """HF refuses a split without examples (huggingface/datasets#8401): on the test samples, where
    no WikiReading instance survives, the card names the empty splits and loads none with HF, and
    pyarrow reads each as an empty table of its schema."""
    samples_builds.seed(tmp_path / "out", "wikireading")  # the build below writes the card
    dirs = build("wikireading", out=tmp_path / "out", progress=False, log=lambda _m: None)
    readme = (tmp_path / "out" / "cards" / "wikireading" / "README.md").read_text(encoding="utf-8")
    assert "Empty here: `train`, `valid`, `test`." in readme
    assert "cannot load a table with no rows" in readme
    assert "splits = datasets.load_dataset" not in readme
    for split, where in table_dirs(dirs["wikireading"]).items():
        table = pq.read_table(where)
        assert table.num_rows == 0 and "question" in table.schema.names, split
