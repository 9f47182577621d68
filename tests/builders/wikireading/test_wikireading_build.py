"""`entbench build wikireading` end to end.

On the real fixtures (Q64 ↔ enwiki *Berlin*) the join works but no instance survives: Berlin's
properties and value items have no label in the fixture dump, and every other item lacks a fixture
article. Every row is accounted for under a reason. A generated world (see `wikireading_support`)
then checks a non-empty build: determinism across worker counts, disjoint splits, the held-out
properties of `property-holdout`, truncation and the statistics table.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from entbench.builders.wikireading.entropy import classify, scaled_entropy
from entbench.builders.wikireading.splits import SPLITS
from entbench.engine.manifest import load_manifest
from entbench.errors import UserError
from entbench.filters.memorization_reasons import PAIR_IN_TRAIN
from tests.builders.wikireading.support import (
    ENWIKI_BERLIN,
    read_rows,
    real_scans,
    shard_hashes,
    world_build,
)
from tests.builders.wikireading.support import (
    quiet_build as build,
)

WR_STAGES = (
    "wikireading_triples",
    "wikireading_instances",
    "wikireading",
    "wikireading_stats",
    "wikireading_mem_audit_valid",
    "wikireading_mem_audit_test",
)


def stats(stage_dir: Path) -> dict[str, Any]:
    return dict(load_manifest(stage_dir)["stats"])


def dropped(st: dict[str, Any]) -> int:
    return sum(v for k, v in st.items() if k.startswith("dropped_"))


# --- real fixtures --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def berlin_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wr-berlin")
    shutil.copytree(real_scans() / "normalized", out / "normalized")  # the scans are up to date
    return out


@pytest.fixture(scope="module")
def berlin_build(berlin_out: Path) -> dict[str, Path]:
    return build("wikireading", berlin_out, sources=[f"wikipedia={ENWIKI_BERLIN}"])


def test_real_fixtures_every_row_is_accounted_for(berlin_build: dict[str, Path]) -> None:
    triples = stats(berlin_build["wikireading_triples"])
    assert triples["instances_considered"] == dropped(triples) + triples["instances_usable"]
    rows = read_rows(berlin_build["wikireading_triples"], "triples")
    assert len(rows) == triples["instances_considered"] - triples["dropped_no_sitelink"]
    instances = stats(berlin_build["wikireading_instances"])
    assert dropped(instances) + instances.get("instances_written", 0) == len(rows)


def test_real_fixtures_join_q64_with_berlin(berlin_build: dict[str, Path]) -> None:
    pages = {r["title"]: r for r in read_rows(berlin_build["wikipedia"], "pages")}
    assert "Berlin" in pages and not pages["Berlin"]["is_redirect"]
    rows = read_rows(berlin_build["wikireading_triples"], "triples")
    berlin = [r for r in rows if r["qid"] == "Q64"]
    assert {r["site_title"] for r in berlin} == {"Berlin"}
    others = [r for r in rows if r["qid"] != "Q64"]
    assert not any(r["site_title"] in pages for r in others)  # no other fixture item has an article
    instances = stats(berlin_build["wikireading_instances"])
    # Q64 reached its article; its rows are then lost to labels and values, counted as such.
    assert instances["dropped_no_article"] == len(others)
    assert instances["items_no_article"] == len({r["qid"] for r in others})
    by_reason = Counter(r["drop_reason"] for r in berlin)
    assert by_reason[None] == 0
    assert instances["dropped_property_without_label"] == by_reason["property_without_label"]
    assert instances["dropped_no_renderable_value"] == by_reason["no_renderable_value"]
    # Berlin's P17/P131 name Q183 (no label), its P2044 is in metres (no label).
    assert {r["property"] for r in berlin if r["drop_reason"] == "no_renderable_value"} == {
        "P17",
        "P131",
        "P2044",
    }
    for split in SPLITS:
        assert read_rows(berlin_build["wikireading"], split) == []


def test_bundled_config_builds(tmp_path: Path) -> None:
    # `make wikireading`: the bundled enwiki fixture has none of the fixture items' articles.
    dirs = build("wikireading", tmp_path / "out")
    assert set(WR_STAGES) <= set(dirs)
    instances = stats(dirs["wikireading_instances"])
    assert instances.get("instances_written", 0) == 0
    assert instances["dropped_no_article"] == len(read_rows(dirs["wikireading_triples"], "triples"))
    assert (dirs["wikireading_stats"] / "_DATASET_CARD.md").is_file()


@pytest.mark.parametrize(
    "param",
    [
        "wikireading_triples.site=dewiki",
        "wikireading_triples.language=fr",
        "wikireading.ratios=0.5,0.5",
        "wikireading.preset=nope",
        "wikireading.mode=random",
        "wikireading_instances.max_document_words=-1",
    ],
)
def test_bad_parameters_are_user_errors(berlin_build: dict[str, Path], berlin_out: Path, param: str) -> None:
    # The scans are up to date in `berlin_out`; the bad parameter stops the build at its stage.
    with pytest.raises(UserError):
        build("wikireading", berlin_out, sources=[f"wikipedia={ENWIKI_BERLIN}"], params=[param])


# --- a generated, non-empty world ----------------------------------------------------------------
@pytest.fixture(scope="module")
def world_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("wr-world")


@pytest.fixture(scope="module")
def world(world_dir: Path) -> dict[str, Path]:
    return world_build(world_dir, world_dir / "out", workers=1)


def test_byte_identical_across_worker_counts(world: dict[str, Path], world_dir: Path, tmp_path: Path) -> None:
    # The scans are copied; every WikiReading stage is rebuilt with two worker processes.
    shutil.copytree(world_dir / "out" / "normalized", tmp_path / "out" / "normalized")
    two = world_build(tmp_path, tmp_path / "out", workers=2)
    for stage in WR_STAGES:
        assert shard_hashes(world[stage]) == shard_hashes(two[stage]), stage
        assert load_manifest(world[stage])["fingerprint"] == load_manifest(two[stage])["fingerprint"]


def test_world_splits_are_disjoint_and_complete(world: dict[str, Path]) -> None:
    instances = read_rows(world["wikireading_instances"], "instances")
    assert instances
    splits = {name: read_rows(world["wikireading"], name) for name in SPLITS}
    documents = {name: {r["document_id"] for r in rows} for name, rows in splits.items()}
    assert not documents["train"] & documents["valid"]
    assert not documents["train"] & documents["test"]
    assert not documents["valid"] & documents["test"]
    keys = [r["key"] for rows in splits.values() for r in rows]
    assert len(keys) == len(set(keys)) == len(instances)
    for rows in splits.values():
        for r in rows:
            assert r["key"] == f"{r['qid']}-{r['property']}"
            assert r["question"] == r["property_label"]
            assert r["answers"]
    # Truthy selection: population has a preferred and a normal statement; one answer remains.
    populations = [r for rows in splits.values() for r in rows if r["property"] == "P1082"]
    assert populations and all(len(r["answers"]) == 1 for r in populations)


def test_world_statistics_match_the_splits(world: dict[str, Path]) -> None:
    splits = {name: read_rows(world["wikireading"], name) for name in SPLITS}
    table = {r["property"]: r for r in read_rows(world["wikireading_stats"], "property_stats")}
    by_property: dict[str, Counter[str]] = {}
    train_answers: dict[str, Counter[str]] = {}
    for name, rows in splits.items():
        for r in rows:
            by_property.setdefault(r["property"], Counter())[name] += 1
            if name == "train":
                train_answers.setdefault(r["property"], Counter()).update(r["answers"])
    assert set(table) == set(by_property)
    kinds = set()
    for prop, row in table.items():
        assert (row["train_instances"], row["valid_instances"], row["test_instances"]) == (
            by_property[prop]["train"],
            by_property[prop]["valid"],
            by_property[prop]["test"],
        )
        if prop in train_answers:
            expected = scaled_entropy(train_answers[prop].values())
            assert row["scaled_entropy"] == pytest.approx(expected)
            assert row["kind"] == classify(expected)
        kinds.add(row["kind"])
    assert kinds == {"categorical", "relational"}  # the skewed country/class vs the unique values
    manifest = stats(world["wikireading_stats"])
    assert manifest["categorical_instance_share"] + manifest["relational_instance_share"] == pytest.approx(
        1.0
    )
    card = (world["wikireading_stats"] / "_DATASET_CARD.md").read_text(encoding="utf-8")
    assert "56.7%" in card and f"{manifest['train_instances']:,}" in card
    assert "Mem-Exact" not in card  # the one Mem-Exact figure per split is the audit's (leakage section)


def test_mem_audit_agrees_with_the_statistics(world: dict[str, Path]) -> None:
    # The statistics count an evaluation instance whose (question, sorted answers) occurs in train
    # (spec §7, the question as the span). The audit (strict mode, the default in builds) solves
    # by Mem-Exact only those whose question has that one answer set in train, and says of the
    # others that the pair occurs with other answer sets: together, exactly the same instances.
    summary = stats(world["wikireading_stats"])
    for split in ("valid", "test"):
        audit = stats(world[f"wikireading_mem_audit_{split}"])
        decisions = read_rows(world[f"wikireading_mem_audit_{split}"], "decisions")
        assert audit["eval_rows"] == summary[f"{split}_instances"]
        assert {d["key"] for d in decisions} == {r["key"] for r in read_rows(world["wikireading"], split)}
        assert len(decisions) == len({d["key"] for d in decisions})  # strict: one row per instance
        pair_in_train = {d["key"] for d in decisions if d["mem_exact_reason"] in PAIR_IN_TRAIN}
        assert len(pair_in_train) == summary[f"mem_exact_{split}"] > 0
        solved = {d["key"] for d in decisions if d["mem_exact"]}
        assert solved < pair_in_train and audit["removed_mem_exact"] == len(solved)
        # The argmax answer set of a question is the only one when there is only one (Mem-Freq).
        assert solved <= {d["key"] for d in decisions if d["mem_freq"]}
        assert all(
            d["mem_exact_reason"] and d["mem_freq_reason"] and d["mem_uniform_reason"] for d in decisions
        )
        report = json.loads((world[f"wikireading_mem_audit_{split}"] / "_report.json").read_text())
        assert report["n_test"] == audit["test_items"] and report["mode"] == "strict"


def test_property_holdout_build(world: dict[str, Path], world_dir: Path) -> None:
    dirs = world_build(world_dir, world_dir / "out", params=["wikireading.preset=recycled"])
    held = set(json.loads((dirs["wikireading"] / "_held_out_properties.json").read_text()))
    assert held and len(held) == stats(dirs["wikireading"])["held_out_properties"]
    splits = {name: read_rows(dirs["wikireading"], name) for name in SPLITS}
    assert not held & {r["property"] for r in splits["train"] + splits["valid"]}
    assert held <= {r["property"] for r in splits["test"]}
    documents = {name: {r["document_id"] for r in rows} for name, rows in splits.items()}
    assert not (documents["train"] | documents["valid"]) & documents["test"]
    table = {r["property"]: r for r in read_rows(dirs["wikireading_stats"], "property_stats")}
    assert {p for p, r in table.items() if r["test_only"]} >= held


def test_truncation_keeps_the_first_words(world: dict[str, Path], world_dir: Path) -> None:
    dirs = world_build(world_dir, world_dir / "out", params=["wikireading_instances.max_document_words=6"])
    rows = read_rows(dirs["wikireading_instances"], "instances")
    assert rows and all(len(r["document"].split()) <= 6 for r in rows)
    assert stats(dirs["wikireading_instances"])["documents_truncated"] == len(
        {r["document_id"] for r in rows}
    )


def test_released_preset_sets_the_public_ratios(world: dict[str, Path], world_dir: Path) -> None:
    dirs = world_build(world_dir, world_dir / "out", params=["wikireading.preset=released"])
    params = load_manifest(dirs["wikireading"])["params"]
    assert (params["preset"], params["ratios"], params["mode"]) == ("released", [0.85, 0.1, 0.05], "document")
    counts = stats(dirs["wikireading"])
    assert counts["train_documents"] > counts["valid_documents"] > 0
    paper = stats(world["wikireading"])
    assert sum(counts[f"{s}_documents"] for s in SPLITS) == sum(paper[f"{s}_documents"] for s in SPLITS)
