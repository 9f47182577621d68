"""Built shards in the ecosystem: Hugging Face `datasets`, DuckDB and Polars read the same rows.

The `kb` target on the real fixtures covers every column shape the builders write: nested
`list<struct<…>>` qualifiers, lists of strings, int8/int32/int64, doubles, booleans and nulls.
`datasets` runs offline with a temporary cache (`HF_DATASETS_OFFLINE=1`), as a user without
network would load a build; rows are compared in shard order against pyarrow's reading.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest

from entbench.engine.manifest import load_manifest
from tests import builds as samples
from tests.world_support import SamplesBuilds


@pytest.fixture(scope="module")
def tables(
    tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds
) -> list[tuple[str, list[str], dict[str, Any]]]:
    """(stage.table, shard files, output entry) of every table of the `kb` target's stages."""
    out = tmp_path_factory.mktemp("kb")
    samples_builds.seed(out, "kb")
    dirs = samples.build("kb", out=out, progress=False, log=lambda _m: None, card=False)
    found = []
    for stage, directory in sorted(dirs.items()):
        manifest = load_manifest(directory)
        for table, output in sorted(manifest["outputs"].items()):
            if output["rows"]:
                files = [str(directory / s["file"]) for s in output["shards"]]
                found.append((f"{stage}.{table}", files, output))
    return found


def reference(files: list[str]) -> list[dict[str, Any]]:
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def test_the_build_covers_nested_and_scalar_columns(
    tables: list[tuple[str, list[str], dict[str, Any]]],
) -> None:
    types = {field["type"] for _, _, output in tables for field in output["schema"]}
    assert any(t.startswith("list<item: struct<") for t in types)
    assert {"string", "int64", "int32", "bool", "double", "list<item: string>"} <= types
    assert len(tables) >= 12
    # Shards without rows (a footer, no row group) sit among full ones: readers must take both.
    assert any(s["rows"] == 0 for _, _, output in tables for s in output["shards"])


def test_hugging_face_datasets_reads_the_same_rows(
    tables: list[tuple[str, list[str], dict[str, Any]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    for name, files, output in tables:
        ds = datasets.load_dataset(
            "parquet", data_files=files, split="train", cache_dir=str(tmp_path / "cache")
        )
        assert ds.num_rows == output["rows"], name
        assert ds.column_names == [f["name"] for f in output["schema"]], name
        assert ds.to_list() == reference(files), name


def test_duckdb_reads_the_same_rows(tables: list[tuple[str, list[str], dict[str, Any]]]) -> None:
    con = duckdb.connect(config={"threads": 1})
    try:
        for name, files, output in tables:
            listing = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
            rows = con.sql(f"SELECT * FROM read_parquet([{listing}])").to_arrow_table().to_pylist()
            assert len(rows) == output["rows"], name
            assert rows == reference(files), name
    finally:
        con.close()


def test_polars_reads_the_same_rows(tables: list[tuple[str, list[str], dict[str, Any]]]) -> None:
    for name, files, output in tables:
        frame = pl.read_parquet(files)
        assert frame.height == output["rows"], name
        assert frame.columns == [f["name"] for f in output["schema"]], name
        assert json.loads(json.dumps(frame.to_dicts())) == json.loads(json.dumps(reference(files))), name
