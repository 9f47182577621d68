"""Helpers for the WikiReading tests: real fixture data, and a generated world for full builds.

The real fixtures give every value kind of spec §6 on real statements, and Q64 ↔ enwiki *Berlin*,
but no WikiReading instance survives on them: apart from Berlin no fixture item has a fixture
article, and Berlin's properties and value items (P31, Q183 Germany, Q11573 metre, …) have no
label in the fixture dump. So the end-to-end tests of a non-empty build (determinism across
worker counts, splits, statistics, exports) run on a world generated here: a Wikidata dump and an
enwiki dump in the real layouts (the XML header is the real fixture's), seeded, a few hundred items.
"""

from __future__ import annotations

import atexit
import bz2
import functools
import gzip
import json
import random
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import pyarrow.parquet as pq

from entbench import api
from entbench.engine.manifest import load_manifest
from tests.builders.kb import support as kb_support
from tests.conftest import SAMPLES_CONFIG

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
WIKIDATA_DUMP = FIXTURES / "wikidata" / "entities-new.json.bz2"
ENWIKI_BERLIN = FIXTURES / "wikipedia" / "enwiki.dbpedia-minidump.part.xml.bz2"
UNIT_LABELS = FIXTURES / "wikireading" / "kgtk-arnold.labels.en.units.tsv"
REAL_TYPE_VOCAB = FIXTURES / "wikireading" / "type.vocab"

ENTITY = "http://www.wikidata.org/entity/"


def quiet_build(
    target: str, out: Path, *, sources: Sequence[str] = (), params: Sequence[str] = (), workers: int = 1
) -> dict[str, Path]:
    """`api.build` without progress bars, log lines or a dataset card (the tests read the tables)."""
    return api.build(
        target,
        config=SAMPLES_CONFIG,
        sources=list(sources),
        params=list(params),
        out=out,
        workers=workers,
        progress=False,
        log=lambda _m: None,
        card=False,
    )


def read_rows(stage_dir: Path, table: str) -> list[dict[str, Any]]:
    """All rows of a table of a finished stage, in shard order."""
    manifest = load_manifest(stage_dir)
    files = [stage_dir / s["file"] for s in manifest["outputs"][table]["shards"]]
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def shard_hashes(stage_dir: Path) -> dict[str, str]:
    """file -> sha256 of every shard and extra file in a stage's manifest."""
    return kb_support.shard_hashes(stage_dir, files=True)


# --- real data ---------------------------------------------------------------------------------
@functools.cache
def real_scans() -> Path:
    """A build directory with the `wikidata` (fixture dump) and `wikipedia` (the enwiki minidump
    holding *Berlin*) stages, built once per test process; copy its `normalized/` into another
    build directory to start from these scans."""
    out = Path(tempfile.mkdtemp(prefix="entbench-wr-real-"))
    atexit.register(shutil.rmtree, out, True)
    quiet_build("wikidata", out, sources=[f"wikidata={WIKIDATA_DUMP}"])
    quiet_build("wikipedia", out, sources=[f"wikipedia={ENWIKI_BERLIN}"])
    return out


def real_scan_dirs() -> dict[str, Path]:
    """Stage directories of `real_scans()`: `wikidata` and `wikipedia`."""
    out = real_scans()
    return {name: next((out / "normalized" / name).glob("v*")) for name in ("wikidata", "wikipedia")}


def claims_by_key(wikidata_dir: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Truthy claims of the real fixture dump by (subject, property), in statement order."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in read_rows(wikidata_dir, "truthy_claims"):
        grouped[(row["subject"], row["property"])].append(row)
    return {k: sorted(v, key=lambda r: r["ordinal"]) for k, v in grouped.items()}


def labels_of(wikidata_dir: Path, *, with_units: bool = True) -> dict[str, str]:
    """English labels of the fixture dump, plus the real unit labels of `fixtures/wikireading`."""
    labels = {r["id"]: r["label_en"] for r in read_rows(wikidata_dir, "entities") if r["label_en"]}
    if with_units:
        for line in UNIT_LABELS.read_text(encoding="utf-8").splitlines()[1:]:
            node, _, value, _ = line.split("\t")
            labels[node] = value[1 : value.rindex("'@")]  # KGTK string literal 'text'@en
    return labels


def raw_entity(qid: str) -> dict[str, Any]:
    """One entity of the real fixture dump as parsed JSON (all ranks, not only truthy)."""
    with bz2.open(WIKIDATA_DUMP, "rt", encoding="utf-8") as f:
        for raw in f:
            line = raw.strip().rstrip(",")
            if line.startswith("{") and f'"id":"{qid}"' in line:
                entity: dict[str, Any] = json.loads(line)
                if entity.get("id") == qid:
                    return entity
    raise KeyError(qid)


def snak_of(mainsnak: dict[str, Any]) -> dict[str, Any]:
    """A raw JSON snak as the typed value columns of `truthy_claims` (test-side, for all ranks)."""
    snak: dict[str, Any] = {"snaktype": mainsnak["snaktype"], "datatype": mainsnak.get("datatype")}
    value = mainsnak.get("datavalue")
    if value is None:
        return snak
    kind, v = value["type"], value["value"]
    snak["value_type"] = kind
    if kind == "time":
        snak.update(time=v["time"], time_precision=v["precision"], time_calendar=v["calendarmodel"])
    elif kind == "quantity":
        unit = v["unit"]
        snak.update(amount=v["amount"], unit=unit[len(ENTITY) :] if unit.startswith(ENTITY) else unit)
    elif kind == "wikibase-entityid":
        snak["item"] = v.get("id") or f"Q{v['numeric-id']}"
    elif kind == "string":
        snak["string_value"] = v
    elif kind == "monolingualtext":
        snak.update(text=v["text"], text_language=v["language"])
    elif kind == "globecoordinate":
        snak.update(latitude=v["latitude"], longitude=v["longitude"])
    return snak


def berlin_text(wikipedia_dir: Path) -> str:
    """The plain text of the real enwiki article *Berlin* (page of Q64)."""
    for row in read_rows(wikipedia_dir, "pages"):
        if row["title"] == "Berlin":
            return str(row["text"])
    raise KeyError("Berlin")


# --- a generated world ---------------------------------------------------------------------------
COUNTRIES = ("Freedonia", "Sylvania", "Genovia", "Latveria", "Ruritania")
CLASSES = ("city", "village", "mountain")


def _label(text: str) -> dict[str, Any]:
    return {"en": {"language": "en", "value": text}}


def _statement(
    qid: str, n: int, prop: str, datatype: str, value: Any, kind: str, rank: str = "normal"
) -> dict[str, Any]:
    snak = {
        "snaktype": "value",
        "property": prop,
        "datavalue": {"value": value, "type": kind},
        "datatype": datatype,
    }
    return {"mainsnak": snak, "type": "statement", "id": f"{qid}${n}", "rank": rank}


def _add(
    claims: dict[str, list[dict[str, Any]]], qid: str, prop: str, value: Any, kind: str, rank: str
) -> None:
    n = sum(len(v) for v in claims.values())
    claims.setdefault(prop, []).append(_statement(qid, n, prop, PROPERTIES[prop][1], value, kind, rank))


def _item_value(qid: str) -> dict[str, Any]:
    return {"entity-type": "item", "numeric-id": int(qid[1:]), "id": qid}


PROPERTIES: dict[str, tuple[str, str]] = {
    "P31": ("instance of", "wikibase-item"),
    "P17": ("country", "wikibase-item"),
    "P571": ("inception", "time"),
    "P1082": ("population", "quantity"),
    "P2044": ("elevation above sea level", "quantity"),
    "P1448": ("official name", "monolingualtext"),
    "P625": ("coordinate location", "globe-coordinate"),
    "P856": ("official website", "url"),
    "P214": ("VIAF ID", "external-id"),
    "P18": ("image", "commonsMedia"),
    **{f"P{900 + k}": (f"rare relation {k}", "wikibase-item") for k in range(20)},
}


def write_world(directory: Path, *, items: int = 240, seed: int = 7) -> tuple[Path, Path]:
    """Write `wikidata.json.gz` and `enwiki.xml.bz2` for `items` items; returns their paths.

    Every item has an enwiki sitelink "Place <n>"; all but every 25th have that article (the rest
    are counted `no_article`); the text mentions some answers verbatim (country, inception year).
    """
    rng = random.Random(seed)
    entities: list[dict[str, Any]] = []
    for pid, (label, datatype) in PROPERTIES.items():
        entities.append(
            {"type": "property", "datatype": datatype, "id": pid, "labels": _label(label), "claims": {}}
        )
    value_items = {f"Q{10 + i}": name for i, name in enumerate(COUNTRIES + CLASSES)}
    value_items["Q11573"] = "metre"
    for qid, name in value_items.items():
        entities.append({"type": "item", "id": qid, "labels": _label(name), "claims": {}, "sitelinks": {}})
    pages: list[tuple[int, str, str]] = []
    for n in range(items):
        qid = f"Q{1000 + n}"
        name = f"Place {n}"
        # Skewed like real categorical properties (most places in one country, most are cities).
        country = f"Q{10 + rng.choices(range(len(COUNTRIES)), weights=(16, 1, 1, 1, 1))[0]}"
        klass = f"Q{15 + rng.choices(range(len(CLASSES)), weights=(10, 1, 1))[0]}"
        year = 1200 + rng.randrange(800)
        claims: dict[str, list[dict[str, Any]]] = {}

        def add(prop: str, value: Any, kind: str, rank: str = "normal") -> None:
            _add(claims, qid, prop, value, kind, rank)  # noqa: B023 - called before the loop moves on

        add("P31", _item_value(klass), "wikibase-entityid")
        if n % 3 == 0:
            add("P31", _item_value(f"Q{15 + (int(klass[1:]) - 14) % len(CLASSES)}"), "wikibase-entityid")
        add("P17", _item_value(country), "wikibase-entityid")
        time = {
            "time": f"+{year:04d}-00-00T00:00:00Z",
            "timezone": 0,
            "before": 0,
            "after": 0,
            "precision": 9,
            "calendarmodel": f"{ENTITY}Q1985727",
        }
        add("P571", time, "time")
        add("P1082", {"amount": f"+{rng.randrange(100, 100000)}", "unit": "1"}, "quantity", "preferred")
        add("P1082", {"amount": f"+{rng.randrange(100, 100000)}", "unit": "1"}, "quantity")  # not truthy
        add("P2044", {"amount": f"+{rng.randrange(0, 3000)}", "unit": f"{ENTITY}Q11573"}, "quantity")
        add("P1448", {"text": name, "language": "en"}, "monolingualtext")
        coordinate = {
            "latitude": round(rng.uniform(-80, 80), 4),
            "longitude": round(rng.uniform(-170, 170), 4),
            "altitude": None,
            "precision": 0.0001,
            "globe": f"{ENTITY}Q2",
        }
        add("P625", coordinate, "globecoordinate")
        add("P856", f"https://place-{n}.example.org/", "string")
        add("P214", str(100000 + n), "string")
        add("P18", f"Place {n}.jpg", "string")
        rare = f"P{900 + rng.randrange(20)}"
        add(rare, _item_value(country), "wikibase-entityid")
        entities.append(
            {
                "type": "item",
                "id": qid,
                "labels": _label(name),
                "claims": claims,
                "sitelinks": {"enwiki": {"site": "enwiki", "title": name, "badges": []}},
                "lastrevid": 1000 + n,
            }
        )
        if n % 25 != 24:
            text = (
                f"'''{name}''' is a {value_items[klass]} in [[{value_items[country]}]]. "
                f"It was founded in {year if n % 2 else 'the old days'}.\n\n"
                f"The place has a harbour. Its people are proud of it.\n\n== History ==\n"
                f"Records of {name} go back a long way."
            )
            pages.append((10 + n, name, text))
    wikidata = directory / "wikidata.json.gz"
    with gzip.GzipFile(wikidata, "wb", mtime=0) as f:
        body = ",\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entities)
        f.write(f"[\n{body}\n]\n".encode())
    header = _real_xml_header()
    blocks = [
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{pid}</id>\n    <revision>\n"
        f"      <id>{pid + 5000}</id>\n      <timestamp>2021-01-01T00:00:00Z</timestamp>\n"
        f"      <contributor>\n        <username>Example</username>\n"
        f"        <id>1</id>\n      </contributor>\n"
        f"      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
        f'      <text bytes="{len(text.encode())}" xml:space="preserve">{escape(text)}</text>\n'
        f"    </revision>\n  </page>\n"
        for pid, title, text in pages
    ]
    wikipedia = directory / "enwiki.xml.bz2"
    with bz2.open(wikipedia, "wb") as f:
        f.write((header + "".join(blocks) + "</mediawiki>\n").encode())
    return wikidata, wikipedia


def _real_xml_header() -> str:
    """`<mediawiki …><siteinfo>…</siteinfo>` of the real enwiki fixture."""
    with bz2.open(ENWIKI_BERLIN, "rt", encoding="utf-8") as f:
        text = f.read(20000)
    end = text.index("</siteinfo>") + len("</siteinfo>")
    return text[:end] + "\n"


def world_build(
    directory: Path, out: Path, *, params: Sequence[str] = (), workers: int = 1, items: int = 240
) -> dict[str, Path]:
    """Build the `wikireading` target on a generated world written into `directory`."""
    wikidata, wikipedia = write_world(directory, items=items)
    return quiet_build(
        "wikireading",
        out,
        sources=[f"wikidata={wikidata}", f"wikipedia={wikipedia}"],
        params=["wikidata.num_shards=3", "wikipedia.num_shards=2", *params],
        workers=workers,
    )


Builder = Callable[..., dict[str, Path]]
