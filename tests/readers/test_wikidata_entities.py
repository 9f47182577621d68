"""The typed decoder and row builder on real Wikidata entity lines: every quirk of spec §1."""

from __future__ import annotations

import bz2
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from entbench.builders.wikidata.rows import ScanRows
from entbench.builders.wikidata.stages.scan import WikidataScanParams
from entbench.engine.stage import BucketSink
from entbench.readers.wikidata_entities import (
    DecodeConfig,
    EntityDecoder,
    LineRejected,
    entity_type_of,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wikidata"
DUMPS = [
    "entities-old.json.bz2",
    "entities-new.json.bz2",
    "latest-all.2017-03.head-part.json.bz2",
    "entitydata-revisions.jsonl.bz2",
]


def entity_lines(name: str) -> Iterator[bytes]:
    """The entity lines of a fixture dump, stripped of framing and trailing commas."""
    with bz2.open(FIXTURES / name) as f:
        for raw in f:
            line = raw.strip()
            if line in (b"[", b"]", b""):
                continue
            yield line[:-1] if line.endswith(b",") else line


def line_for(name: str, entity_id: str) -> bytes:
    """The first line of dump `name` whose entity id is `entity_id`."""
    for line in entity_lines(name):
        doc = json.loads(line)
        doc = next(iter(doc["entities"].values())) if "entities" in doc else doc
        if doc.get("id") == entity_id:
            return line
    raise KeyError(entity_id)


class CaptureSink(BucketSink):
    """Collects emitted batches per table."""

    def __init__(self) -> None:
        self.tables: dict[str, list[pa.Table]] = {}

    def emit(self, table: str, shard: int, batch: pa.RecordBatch | pa.Table) -> None:
        self.tables.setdefault(table, []).append(
            pa.table(batch) if isinstance(batch, pa.RecordBatch) else batch
        )

    def rows(self, table: str) -> list[dict[str, Any]]:
        return [row for t in self.tables.get(table, []) for row in t.to_pylist()]


PARAMS = WikidataScanParams(languages=("en", "zh"), sites=("enwiki", "zhwiki"), num_shards=1)


def rows_of(*lines: bytes, params: WikidataScanParams = PARAMS) -> CaptureSink:
    """Decode lines and build their rows exactly as a scan map task does."""
    decoder = EntityDecoder(params.decode_config())
    rows = ScanRows(params.languages, params.sites, 1, decoder)
    for offset, line in enumerate(lines):
        decoded = decoder.decode(line)
        for ent in decoded.entities:
            rows.add_entity(ent, offset)
        for from_id, to_id in decoded.redirects:
            rows.add_redirect(from_id, to_id, offset)
    sink = CaptureSink()
    rows.emit(sink)
    return sink


def claims_by(sink: CaptureSink, prop: str) -> list[dict[str, Any]]:
    return [r for r in sink.rows("truthy_claims") if r["property"] == prop]


@pytest.mark.parametrize("name", DUMPS)
def test_every_real_line_decodes_on_the_fast_path(name: str) -> None:
    decoder = EntityDecoder(PARAMS.decode_config())
    n = 0
    for line in entity_lines(name):
        decoded = decoder.decode(line)
        assert not decoded.slow_path
        assert len(decoded.entities) == 1
        n += 1
    assert n > 20


def test_numeric_id_only_references_get_their_id_rebuilt() -> None:
    # Q131261 (Oliver Kahn) in the old dump: P31 is written as {"entity-type": "item", "numeric-id": 5}.
    line = line_for("entities-old.json.bz2", "Q131261")
    assert b'"numeric-id":5}' in line.replace(b" ", b"")
    p31 = claims_by(rows_of(line), "P31")
    assert [c["item"] for c in p31] == ["Q5"]
    assert p31[0]["value_type"] == "wikibase-entityid"


def test_php_escaped_slashes_and_uris_become_qids() -> None:
    # The 2017 dump lines escape "/" as "\/"; globe and unit URIs reduce to QIDs.
    line = line_for("latest-all.2017-03.head-part.json.bz2", "Q64")
    assert b"\\/" in line
    sink = rows_of(line)
    (coord,) = claims_by(sink, "P625")
    assert coord["value_type"] == "globecoordinate"
    assert coord["latitude"] == pytest.approx(52.516666666667)
    assert coord["longitude"] == pytest.approx(13.383333333333)
    assert coord["coord_precision"] == pytest.approx(0.016666666666667)
    assert coord["globe"] == "Q2"
    (area,) = claims_by(sink, "P2046")
    assert (area["amount"], area["unit"]) == ("+891.68", "Q712226")
    urls = [c["string_value"] for c in sink.rows("truthy_claims") if c["datatype"] == "url"]
    assert urls and all("\\/" not in u and u.startswith("http") for u in urls)


def test_exponent_floats_parse() -> None:
    lines = [line for line in entity_lines("latest-all.2017-03.head-part.json.bz2") if b"e-" in line]
    assert lines, "the 2017 dump has exponent floats such as 1.0e-5"
    precisions = [
        c["coord_precision"]
        for c in rows_of(*lines).rows("truthy_claims")
        if c["value_type"] == "globecoordinate" and c["coord_precision"] is not None
    ]
    assert any(p < 1e-3 for p in precisions)


def test_empty_maps_written_as_lists_are_empty() -> None:
    decoder = EntityDecoder(PARAMS.decode_config())
    found = 0
    for name in DUMPS:
        for line in entity_lines(name):
            doc = json.loads(line)
            doc = next(iter(doc["entities"].values())) if "entities" in doc else doc
            empty = [k for k in ("aliases", "claims", "statements", "sitelinks") if doc.get(k) == []]
            if not empty:
                continue
            found += 1
            sink = rows_of(line)
            if "aliases" in empty:
                assert not sink.rows("aliases")
            if "claims" in empty and "statements" not in doc:
                assert not sink.rows("truthy_claims")
            assert decoder.decode(line).entities[0].id == doc["id"]
    assert found >= 2


def test_redirect_documents_are_recorded() -> None:
    line = line_for("entities-old.json.bz2", "Q1040")
    sink = rows_of(line)
    assert [(r["from_id"], r["to_id"]) for r in sink.rows("redirects")] == [("Q32063953", "Q1040")]
    assert [e["id"] for e in sink.rows("entities")] == ["Q1040"]


def test_bare_redirect_stub_is_a_redirect_not_an_entity() -> None:
    sink = rows_of(b'{"type":"item","redirects":{"from":"Q32063953","to":"Q1040"}}')
    assert sink.rows("entities") == []
    assert [(r["from_id"], r["to_id"]) for r in sink.rows("redirects")] == [("Q32063953", "Q1040")]


def test_mediainfo_statements_are_claims() -> None:
    line = line_for("entitydata-revisions.jsonl.bz2", "M56656949")
    sink = rows_of(line)
    (entity,) = sink.rows("entities")
    assert entity["type"] == "mediainfo"
    (p571,) = claims_by(sink, "P571")
    assert p571["subject"] == "M56656949"
    assert (p571["time"], p571["time_precision"], p571["time_calendar"]) == (
        "+2012-01-19T00:00:00Z",
        11,
        "Q1985727",
    )


def test_lexemes_properties_and_senses() -> None:
    decoder = EntityDecoder(PARAMS.decode_config())
    types = {}
    for line in entity_lines("entitydata-revisions.jsonl.bz2"):
        ent = decoder.decode(line).entities[0]
        types[ent.id] = entity_type_of(ent)
    assert types["L42"] == "lexeme"
    assert types["P17"] == "property"
    assert types["L525-S1"] == "sense"  # the sense document has no "type": inferred from its id
    assert types["Q64"] == "item"
    sink = rows_of(line_for("entitydata-revisions.jsonl.bz2", "P17"))
    assert sink.rows("entities")[0]["datatype"] == "wikibase-item"


def test_deep_time_kept_verbatim() -> None:
    sink = rows_of(line_for("entities-old.json.bz2", "Q1"))
    times = {c["time"] for c in sink.rows("truthy_claims") if c["value_type"] == "time"}
    qualifier_times = {
        q["time"]
        for c in sink.rows("truthy_claims")
        for q in (c["qualifiers"] or [])
        if q["value_type"] == "time"
    }
    assert "-13798000000-00-00T00:00:00Z" in times | qualifier_times


def test_null_coordinate_precision() -> None:
    line = line_for("entities-new.json.bz2", "Q64")
    mutated = line.replace(b'"precision":0.016666666666667', b'"precision":null', 1)
    assert mutated != line
    (coord,) = claims_by(rows_of(mutated), "P625")
    assert coord["coord_precision"] is None
    assert coord["latitude"] == pytest.approx(52.516666666667)


def test_labels_descriptions_sitelinks_for_configured_languages_and_sites() -> None:
    sink = rows_of(line_for("entities-new.json.bz2", "Q64"))
    (berlin,) = sink.rows("entities")
    assert berlin["label_en"] == "Berlin"
    assert berlin["label_zh"] == "柏林"
    assert berlin["description_en"]
    sites = {(r["site"], r["title"]) for r in sink.rows("sitelinks")}
    assert sites == {("enwiki", "Berlin"), ("zhwiki", "柏林")}
    languages = {r["language"] for r in sink.rows("aliases")}
    assert languages <= {"en", "zh"}


def test_all_sites_when_asked() -> None:
    params = WikidataScanParams(languages=("en",), sites=("*",), num_shards=1)
    line = line_for("entities-new.json.bz2", "Q64")
    sites = {r["site"] for r in rows_of(line, params=params).rows("sitelinks")}
    assert len(sites) == len(json.loads(line)["sitelinks"]) > 100


def test_unknown_datavalue_type_keeps_the_snak_without_value() -> None:
    line = line_for("entities-new.json.bz2", "Q64")
    doc = json.loads(line)
    doc["claims"]["P2046"][0]["mainsnak"]["datavalue"]["type"] = "future-type"
    decoder = EntityDecoder(PARAMS.decode_config())
    decoded = decoder.decode(json.dumps(doc).encode())
    assert decoded.slow_path and decoded.unsupported_values == 1
    sink = rows_of(json.dumps(doc).encode())
    (area,) = claims_by(sink, "P2046")
    assert area["value_type"] == "future-type"
    assert area["amount"] is None


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"type":"item","id":"Q1","labels":{', "malformed_json"),
        (b'{"type":"item","id":"Q1","labels":{"en":{"value":"\xff\xfe"}}}', "invalid_utf8"),
        (b'["not", "an", "entity"]', "not_an_entity"),
        (b'{"hello":"world"}', "not_an_entity"),
        (b'{"type":"item","id":"not an id"}', "invalid_id"),
        (b'{"type":"item","id":"Q1","labels":{"en":{"value":5}}}', "schema_mismatch"),
        (b'{"entities":{"Q404":{"id":"Q404","missing":""}}}', "missing_entity"),
    ],
)
def test_rejected_lines_name_their_reason(line: bytes, reason: str) -> None:
    decoder = EntityDecoder(DecodeConfig(languages=("en",), sites=("enwiki",)))
    with pytest.raises(LineRejected) as info:
        decoder.decode(line)
    assert info.value.reason == reason
