"""`entbench build wikireading` on its real fixture world (`make wikireading`, golden `wikireading`).

The world (fixtures/wikireading/PROVENANCE.md, written by fixtures/scripts/wikireading_fixture.py):
the real 2017 dump line of Q64 with its real enwiki article *Berlin* (page 3354), the only real
item-article pair in fixtures/, plus label-only documents carrying the real English labels of its
properties and values. One document, so one split: under the default seed and 70/10/20 the hash
sends page 3354 to **train**, and valid and test are empty. Every expected answer below was read
by hand off the Q64 line.
"""

from __future__ import annotations

import bz2
import gzip
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from entbench.builders.golden import golden_sources
from entbench.builders.manifest import load_manifest
from entbench.wikireading.splits import PAPER_RATIOS, SPLITS, assign_split
from tests.builders.wikireading_support import FIXTURES, berlin_text, quiet_build, read_rows

WORLD = FIXTURES / "wikireading"
SCRIPT = FIXTURES / "scripts" / "wikireading_fixture.py"
BERLIN_PAGE = 3354


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The golden `wikireading` build: the bundled config with the world's two sources."""
    return quiet_build(
        "wikireading", tmp_path_factory.mktemp("wr-fixture"), sources=golden_sources("wikireading")
    )


@pytest.fixture(scope="module")
def rows(world: dict[str, Path]) -> dict[str, list[dict[str, Any]]]:
    return {split: read_rows(world["wikireading"], split) for split in SPLITS}


def answers_by_property(rows: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    return {r["property"]: list(r["answers"]) for r in rows["train"]}


def test_golden_and_make_use_the_world() -> None:
    sources = dict(s.split("=", 1) for s in golden_sources("wikireading"))
    assert sources == {
        "wikidata": str(WORLD / "wikidata.json.gz"),
        "wikipedia": str(WORLD / "enwiki.xml.bz2"),
    }
    makefile = (FIXTURES.parent / "Makefile").read_text(encoding="utf-8")
    assert "--source wikidata=fixtures/wikireading/wikidata.json.gz" in makefile
    assert "--source wikipedia=fixtures/wikireading/enwiki.xml.bz2" in makefile


def test_fixture_files_are_what_the_script_writes() -> None:
    spec = importlib.util.spec_from_file_location("wikireading_fixture", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main(["--check"]) == 0


def test_the_world_is_q64_and_its_real_article() -> None:
    with gzip.open(WORLD / "wikidata.json.gz", "rt", encoding="utf-8") as f:
        lines = [line.rstrip(",\n") for line in f if line.startswith("{")]
    entities = [json.loads(line) for line in lines]
    with_claims = [e for e in entities if e.get("claims")]
    assert [e["id"] for e in with_claims] == ["Q64"]
    assert with_claims[0]["sitelinks"]["enwiki"]["title"] == "Berlin"
    # Every other document is label-only: type, id, an English label (and a property's datatype).
    for e in entities:
        if e["id"] != "Q64":
            assert set(e) <= {"type", "id", "labels", "datatype"} and set(e["labels"]) == {"en"}
    # The Q64 line is byte for byte the one of the real 2017 dump head.
    q64 = next(line for line in lines if '"id":"Q64"' in line[:40])
    head = bz2.decompress((FIXTURES / "wikidata" / "latest-all.2017-03.head-part.json.bz2").read_bytes())
    assert f"\n{q64},\n".encode() in head
    # The one <page> block is byte for byte the Berlin block of the real DBpedia enwiki minidump.
    world_xml = bz2.decompress((WORLD / "enwiki.xml.bz2").read_bytes())
    real_xml = bz2.decompress((FIXTURES / "wikipedia" / "enwiki.dbpedia-minidump.part.xml.bz2").read_bytes())
    blocks = re.findall(rb"<page>.*?</page>\n", world_xml, flags=re.S)
    assert len(blocks) == 1 and b"<title>Berlin</title>" in blocks[0] and blocks[0] in real_xml
    assert world_xml.startswith(real_xml[: real_xml.index(b"</siteinfo>")])


def test_instances_land_in_the_split_the_hash_sends_berlin_to(
    world: dict[str, Path], rows: dict[str, list[dict[str, Any]]]
) -> None:
    assert assign_split(BERLIN_PAGE, PAPER_RATIOS, 0) == "train"
    assert len(rows["train"]) == 51 and rows["valid"] == [] and rows["test"] == []
    assert {(r["qid"], r["document_id"]) for r in rows["train"]} == {("Q64", BERLIN_PAGE)}
    stats = load_manifest(world["wikireading"])["stats"]
    assert (stats["train_documents"], stats["valid_documents"], stats["test_documents"]) == (1, 0, 0)
    for r in rows["train"]:
        assert r["key"] == f"Q64-{r['property']}" and r["question"] == r["property_label"]


def test_answers_are_rendered_from_real_statements(rows: dict[str, list[dict[str, Any]]]) -> None:
    answers = answers_by_property(rows)
    questions = {r["property"]: r["question"] for r in rows["train"]}
    assert answers["P625"] == ["52.516666666667, 13.383333333333"]  # globe-coordinate
    assert answers["P571"] == ["1237"]  # inception, time precision 9
    assert answers["P1249"] == ["1237", "1244"]  # two statements, one answer set
    assert answers["P1448"] == ["Berlin"] and answers["P1813"] == ["B"]  # monolingualtext
    assert answers["P856"] == ["http://www.berlin.de/"]  # url
    assert answers["P214"] == ["122530980"]  # external-id
    assert answers["P281"] == ["10115–14199"]  # string
    assert answers["P190"] == ["Warsaw", "Jakarta", "Tokyo", "London", "Paris"]  # item labels, in order
    assert questions["P190"] == "sister city" and questions["P1082"] == "population"
    # Truthy: population has 32 statements, one preferred (a unitless quantity, so no unit label).
    assert answers["P1082"] == ["3469849"]
    assert answers["P898"] == ["bɛɐ̯ˈliːn"]  # preferred of three IPA transcriptions
    # P31: 9 normal and 2 deprecated statements; the deprecated "municipality of Germany" (Q262166,
    # labelled) is not an answer, and two normal values have no real label.
    assert answers["P31"] == [
        "seat of government",
        "metropolis",
        "big city",
        "state of Germany",
        "city with millions of inhabitants",
        "city-state",
        "city",
    ]


def test_losses_are_counted_by_reason(world: dict[str, Path]) -> None:
    triples = {r["property"]: r for r in read_rows(world["wikireading_triples"], "triples")}
    stats = load_manifest(world["wikireading_triples"])["stats"]
    assert stats["instances_considered"] == len(triples) == 87
    assert stats["instances_usable"] == 51 and stats["dropped_no_renderable_value"] == 36
    # Country: the preferred Q183 (Germany) has no real English label in fixtures/, and the
    # normal-rank "Soviet occupation zone (Germany)" (labelled) is not truthy, so nothing is left.
    assert triples["P17"]["drop_reason"] == "no_renderable_value" and triples["P17"]["answers"] == []
    # Elevation in metres and area in km²: the units have no real label, so neither renders.
    assert stats["values_dropped_unit_without_label"] == 2
    assert {triples["P2044"]["drop_reason"], triples["P2046"]["drop_reason"]} == {"no_renderable_value"}
    # Commons media (image, flag image, coat of arms, locator maps, banner, audio, collage).
    assert stats["values_dropped_unsupported_datatype"] == 8
    instances = load_manifest(world["wikireading_instances"])["stats"]
    assert instances["instances_written"] == 51 and instances["documents_written"] == 1


def test_every_document_is_the_real_article(
    world: dict[str, Path], rows: dict[str, list[dict[str, Any]]]
) -> None:
    text = berlin_text(world["wikipedia"])
    assert text.startswith("Berlin ( , ) is the capital and largest city of Germany")
    assert all(r["document"] == text for r in rows["train"])
