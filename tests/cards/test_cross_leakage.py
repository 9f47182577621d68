"""`entbench audit leakage`: every benchmark built in one directory against every other (issue 36,
item 3). The expected overlaps are counted here from the benchmarks' own Parquet tables with
pyarrow, independently of the audit's DuckDB queries."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import Result

from entbench import api
from entbench.engine.manifest import load_manifest
from entbench.engine.summary import target_stages
from entbench.errors import UserError

CLI = Callable[[list[str]], Result]


def table(out: Path, target: str, stage: str, name: str) -> pa.Table:
    """A benchmark table of the world build, every shard."""
    directory = target_stages(out, target)[stage]
    outputs = load_manifest(directory)["outputs"]
    return pq.read_table(directory if len(outputs) == 1 else directory / name)


def values(t: pa.Table, *columns: str) -> set[Any]:
    return {v for c in columns for v in t.column(c).to_pylist() if v is not None}


def overlap(doc: dict[str, Any], evaluated_table: str, against: str) -> dict[str, Any]:
    (found,) = [o for o in doc["overlaps"] if o["table"] == evaluated_table and o["against"] == against]
    return found


@pytest.fixture(scope="module")
def report(world_out: Path) -> tuple[str, dict[str, Any]]:
    return api.audit_leakage(world_out)


def test_wikireading_test_documents_that_wikient_uses(world_out: Path, run_cli: CLI) -> None:
    result = run_cli(["audit", "leakage", "--from", str(world_out), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["format"] == "entbench.leakage/1"
    found = overlap(doc, "wikireading.test", "wikient")
    assert found["against_role"] == "all" and found["against_tables"] == ["wikient.wikient"]

    test = table(world_out, "wikireading", "wikireading", "test")
    wikient = table(world_out, "wikient", "wikient", "wikient")
    # WikiEnt uses a document as the page of a sentence, or as the linked page it takes a description from.
    used = values(wikient, "page_id", "target_page_id")
    test_documents = values(test, "document_id")
    shared = test_documents & used
    assert len(shared) >= 5
    documents = found["documents"]
    assert documents["wiki"] == "enwiki"
    assert documents["evaluated"] == len(test_documents)
    assert documents["against"] == len(used)
    assert documents["shared"] == len(shared)
    assert documents["evaluated_rows"] == sum(d in shared for d in test.column("document_id").to_pylist())
    assert [e["page_id"] for e in documents["examples"]] == sorted(shared)[:5]
    assert all(e["title"] for e in documents["examples"])
    entities = found["entities"]
    assert entities["shared"] == len(values(test, "qid") & values(wikient, "target_qid"))
    assert found["pairs"] is None  # WikiReading has no mentions

    markdown = run_cli(["audit", "leakage", "--from", str(world_out)]).stdout
    row = next(
        line
        for line in markdown.splitlines()
        if line.startswith("| `wikireading.test` ") and "wikient" in line
    )
    assert f"**{len(shared)}** of {len(test_documents)} ({documents['evaluated_rows']} rows)" in row


def test_hansel_validation_against_the_few_shot_candidates(
    world_out: Path, report: tuple[str, dict[str, Any]]
) -> None:
    _, doc = report
    found = overlap(doc, "hansel.validation", "hansel-fewshot")
    validation = table(world_out, "hansel-train", "hansel", "validation")
    fewshot = table(world_out, "hansel-fewshot", "hansel_fewshot", "fewshot_candidates")
    assert found["documents"] is None  # few-shot candidates come from a corpus, not from pages
    assert found["entities"]["shared"] == len(values(validation, "gold_id") & values(fewshot, "at1"))
    pairs = set(
        zip(validation.column("mention").to_pylist(), validation.column("gold_id").to_pylist(), strict=True)
    )
    candidates = set(
        zip(fewshot.column("mention").to_pylist(), fewshot.column("at1").to_pylist(), strict=True)
    )
    assert found["pairs"]["shared"] == len(pairs & candidates) > 0
    assert found["pairs"]["evaluated"] == len(pairs)


def test_pages_of_two_wikis_are_not_compared(report: tuple[str, dict[str, Any]]) -> None:
    _, doc = report
    found = overlap(doc, "hansel.validation", "wikient")
    assert found["documents"] == {"comparable": False, "reason": "pages of zhwiki against pages of enwiki"}
    assert found["entities"]["comparable"]  # QIDs are the same whatever wiki linked them
    # Within a benchmark, splits are the Mem audits' business: never compared here.
    assert not [o for o in doc["overlaps"] if o["evaluated"] == o["against"]]
    tables = {b["target"]: [t["table"] for t in b["tables"]] for b in doc["benchmarks"]}
    assert tables["wikireading"] == ["wikireading.train", "wikireading.valid", "wikireading.test"]
    assert {n["target"] for n in doc["not_audited"]} >= {"kb", "wikidata", "wikipedia", "alias-table"}


def test_the_new_entity_sets_against_the_benchmarks_that_use_them(
    world_out: Path, report: tuple[str, dict[str, Any]]
) -> None:
    markdown, doc = report
    found = overlap(doc, "series_new.new_entities", "wikient")
    new = values(table(world_out, "kb-series", "series_new", "new_entities"), "qid")
    linked = values(table(world_out, "wikient", "wikient", "wikient"), "target_qid")
    assert found["entities"]["shared"] == len(new & linked) > 0
    assert "### `series_new.new_entities` against wikient" in markdown


def test_a_build_without_benchmarks_or_targets(tmp_path: Path, world_out: Path) -> None:
    with pytest.raises(UserError, match="no target was built there"):
        api.audit_leakage(tmp_path)
    # Only non-benchmark targets: nothing to compare, said so.
    only = tmp_path / "only-kb"
    (only / "targets").mkdir(parents=True)
    shutil.copy(world_out / "targets" / "kb.json", only / "targets" / "kb.json")
    for rel in json.loads((only / "targets" / "kb.json").read_text(encoding="utf-8"))["stages"].values():
        shutil.copytree(world_out / rel, only / rel)
    markdown, doc = api.audit_leakage(only)
    assert doc["benchmarks"] == [] and doc["overlaps"] == []
    assert "No two benchmarks built here carry keys of a kind in common" in markdown
    with pytest.raises(UserError, match="not a store URL"):
        api.audit_leakage("s3://bucket/prefix")
