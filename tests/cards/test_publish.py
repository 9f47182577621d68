"""`entbench publish`: every target of the demo world as a Hugging Face dataset folder that
`datasets.load_dataset(FOLDER)` reads as it is, splits and rows as built, with a card naming no
local path and a Croissant description that mlcroissant validates and reads (issue 34, item 1)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from entbench import api
from entbench.engine import summary
from entbench.golden import GOLDEN_TARGETS

RunCli = Callable[..., Any]


@pytest.fixture(scope="module")
def published(world_out: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("published")
    return {target: api.publish(target, world_out, base / target).out for target in GOLDEN_TARGETS}


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("target", GOLDEN_TARGETS)
def test_a_published_target_loads_with_datasets_as_built(
    published: dict[str, Path], world_out: Path, target: str, tmp_path: Path
) -> None:
    import datasets

    folder = str(published[target])
    tables = summary.final_tables(world_out, target)
    built = {t.table: t.rows for t in tables}
    expected = sorted((t.table, t.rows) for t in tables if t.rows)
    default = datasets.load_dataset(folder, cache_dir=str(tmp_path))
    loaded: list[tuple[str, int]] = []
    for config in datasets.get_dataset_config_names(folder):
        splits = datasets.load_dataset(folder, config, cache_dir=str(tmp_path))
        loaded += [(split, splits[split].num_rows) for split in splits]
    assert sorted(loaded) == expected  # every table with rows, once, as many rows as built
    card = published[target] / "README.md"
    front = card.read_text(encoding="utf-8").split("---")[1]
    if 'config_name: "default"' in front:  # a benchmark's splits: the default config
        assert {s: default[s].num_rows for s in default} == {s: built[s] for s in default}
        assert set(default) >= {"train"} or len(default) == 1


def test_published_shards_are_the_builds_byte_for_byte(published: dict[str, Path], world_out: Path) -> None:
    folder = published["wikireading"]
    listing = json.loads((world_out / "targets" / "wikireading.json").read_text(encoding="utf-8"))
    manifest = json.loads(
        (world_out / listing["stages"]["wikireading"] / "_MANIFEST.json").read_text(encoding="utf-8")
    )
    for split in ("train", "valid", "test"):
        shards = manifest["outputs"][split]["shards"]
        files = sorted((folder / "data" / "default").glob(f"{split}-*.parquet"))
        assert [f.name for f in files] == [
            s["file"].split("/")[-1].replace("part-", f"{split}-") for s in shards
        ]
        for file, shard in zip(files, shards, strict=True):
            assert hashlib.sha256(file.read_bytes()).hexdigest() == shard["sha256"]
    assert sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.endswith(".png")) == [
        "README.md",
        "croissant.json",
    ]


def test_publish_copies_the_plots_the_build_drew(
    world_out: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from entbench.cards import writer

    def refused(chart: object, path: Path) -> None:
        raise AssertionError(f"{path.name} drawn again")

    monkeypatch.setattr(writer, "draw", refused)
    result = api.publish("wikireading", world_out, tmp_path / "wikireading")
    assert result.card is not None and result.card.plots_failed == {}
    folder = result.out
    built = world_out / "cards" / "wikireading"
    pngs = sorted(p.name for p in folder.glob("*.png"))
    assert pngs and pngs == sorted(p.name for p in built.glob("*.png"))
    for name in pngs:
        assert (folder / name).read_bytes() == (built / name).read_bytes()


@pytest.mark.parametrize("target", ["wikireading", "hansel-train", "wikidata"])
def test_the_card_has_the_hub_front_matter_and_names_no_local_path(
    published: dict[str, Path], world_out: Path, target: str
) -> None:
    from huggingface_hub import DatasetCard

    text = (published[target] / "README.md").read_text(encoding="utf-8")
    data = DatasetCard(text).data.to_dict()
    assert data["pretty_name"] == f"entbench {target}"
    assert "demo" in data["tags"] and data["size_categories"]
    assert data["configs"] and all(c["data_files"] for c in data["configs"])
    assert str(world_out) not in text and "/tmp/" not in text and "pytest" not in text
    assert "## Citation" in text and "@software{entbench," in text
    assert "huggingface-cli upload USER/NAME . --repo-type dataset" in text
    if target == "wikireading":
        assert data["language"] == ["en"] and data["task_categories"] == ["question-answering"]
        assert data["source_datasets"] == ["extended|wikidata", "extended|wikipedia"]
        assert "@inproceedings{hewlett2016wikireading," in text
        assert data["configs"][0]["config_name"] == "default"
    if target == "hansel-train":
        assert data["language"] == ["zh"] and data["task_ids"] == ["entity-linking-retrieval"]
        assert {f["split"] for f in data["configs"][0]["data_files"]} == {"train", "validation"}


@pytest.mark.parametrize("target", GOLDEN_TARGETS)
def test_croissant_json_is_valid_and_reads_the_tables(
    published: dict[str, Path], world_out: Path, target: str
) -> None:
    mlc = pytest.importorskip("mlcroissant")
    dataset = mlc.Dataset(jsonld=str(published[target] / "croissant.json"))  # raises on an invalid one
    doc = json.loads((published[target] / "croissant.json").read_text(encoding="utf-8"))
    tables = [t for t in summary.final_tables(world_out, target) if t.rows]
    record_sets = doc["recordSet"]
    assert sorted(r["@id"].split("/")[1] for r in record_sets) == sorted(t.table for t in tables)
    rows = {
        r["@id"]: int(r["description"].split(": ")[1].split(" rows")[0].replace(",", "")) for r in record_sets
    }
    assert sorted(rows.values()) == sorted(t.rows for t in tables)
    for record_set in record_sets:
        records = dataset.records(record_set["@id"])
        if rows[record_set["@id"]] <= 5000:
            assert sum(1 for _ in records) == rows[record_set["@id"]], record_set["@id"]
        else:
            first = next(iter(records))
            assert set(first) == {f["@id"] for f in record_set["field"]}


def test_publish_from_the_cli_refuses_a_folder_it_did_not_write(
    run_cli: RunCli, world_out: Path, tmp_path: Path
) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me\n", encoding="utf-8")
    refused = run_cli(["publish", "wikient", "--from", str(world_out), "--out", str(tmp_path / "mine")])
    assert refused.exit_code == 2 and "not empty and not an earlier `entbench publish`" in refused.stderr
    assert (tmp_path / "mine" / "notes.txt").is_file()
    done = run_cli(["publish", "wikient", "--from", str(world_out), "--out", str(tmp_path / "pub")])
    assert done.exit_code == 0, done.stderr
    listing = json.loads((world_out / "targets" / "wikient.json").read_text(encoding="utf-8"))
    built = world_out / listing["stages"]["wikient"]
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in built.glob("*.parquet"))
    assert f"wikient/wikient: wikient, {rows:,} rows (data/wikient/wikient-*.parquet)" in done.stdout
    again = run_cli(["publish", "wikient", "--from", str(world_out), "--out", str(tmp_path / "pub")])
    assert again.exit_code == 0, again.stderr  # an earlier publish is replaced


def test_a_dump_is_named_by_its_file_and_dated_by_its_name() -> None:
    from entbench.cards.generic import dump_date, dump_name

    assert dump_name("/data/dumps/wikidata-20210301-all.json.gz") == "wikidata-20210301-all.json.gz"
    assert dump_date("/data/dumps/wikidata-20210301-all.json.gz") == "2021-03-01"
    assert dump_date("zhwiki-20211201-pages-articles-multistream.xml.bz2") == "2021-12-01"
    assert dump_date("latest-all.json.gz") == "–" and dump_date("enwiki-201605.xml.bz2") == "–"
