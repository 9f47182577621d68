"""Fuzzing the Wikidata entity decoder with mutations of real entity lines (spec §1).

Every line of the real fixture dumps is a seed. Mutations are byte-level (bit flips, cuts,
insertions, duplicated slices, truncation) or structural (a value somewhere in the entity replaced
by a JSON value of another type, a key dropped or renamed, PHP-style escaping). Whatever comes out,
the scan's per-line path — decode, then turn the entities into rows — either succeeds or rejects
the line with a named reason (`LineRejected`); it never raises anything else.
"""

from __future__ import annotations

import bz2
import functools
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entbench.builders.wikidata.rows import ScanRows
from entbench.builders.wikidata.stages.scan import WikidataScanParams
from entbench.engine.stage import BucketSink
from entbench.readers import wikidata_entities
from entbench.readers.wikidata_entities import EntityDecoder, LineRejected

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wikidata"
DUMPS = (
    "entities-old.json.bz2",
    "entities-new.json.bz2",
    "latest-all.2017-03.head-part.json.bz2",
    "entitydata-revisions.jsonl.bz2",
)
PARAMS = WikidataScanParams(languages=("en", "zh"), sites=("enwiki", "zhwiki"), num_shards=4)
#: The reject reasons the decoder can give, read off its source (a new reason needs no test edit).
REASONS = frozenset(
    re.findall(r'LineRejected\(\s*"([a-z0-9_]+)"', Path(wikidata_entities.__file__).read_text())
)


@functools.cache
def real_lines() -> tuple[bytes, ...]:
    """Every entity line of the real fixture dumps (framing and trailing commas removed)."""
    lines = []
    for name in DUMPS:
        with bz2.open(FIXTURES / name) as f:
            for raw in f:
                line = raw.strip()
                if line not in (b"[", b"]", b""):
                    lines.append(line[:-1] if line.endswith(b",") else line)
    return tuple(lines)


class NullSink(BucketSink):
    """Takes the rows a scan task emits and checks they are Arrow data routed to a valid shard."""

    def __init__(self) -> None:
        self.rows = 0

    def emit(self, table: str, shard: int, batch: pa.RecordBatch | pa.Table) -> None:
        assert 0 <= shard < PARAMS.num_shards
        self.rows += batch.num_rows


def scan_line(line: bytes) -> str:
    """What the scan does with one line: 'ok' or the reject reason; anything else propagates."""
    decoder = EntityDecoder(PARAMS.decode_config())
    rows = ScanRows(PARAMS.languages, PARAMS.sites, PARAMS.num_shards, decoder)
    try:
        decoded = decoder.decode(line)
    except LineRejected as exc:
        assert exc.reason in REASONS, exc.reason
        assert isinstance(exc.detail, str)
        return exc.reason
    for ent in decoded.entities:
        rows.add_entity(ent, 0)
    for from_id, to_id in decoded.redirects:
        rows.add_redirect(from_id, to_id, 0)
    rows.emit(NullSink())
    return "ok"


# --- byte-level mutations ---------------------------------------------------------------------------
@st.composite
def byte_mutations(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(real_lines())))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(("flip", "delete", "insert", "duplicate", "truncate", "splice")))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "delete":
            del data[pos : pos + draw(st.integers(1, 16))]
        elif kind == "insert":
            data[pos:pos] = draw(
                st.sampled_from([b'"', b"{", b"}", b"[", b"]", b",", b":", b"\\", b"\xff", b"\x00"])
            )
        elif kind == "duplicate":
            data[pos:pos] = data[pos : pos + draw(st.integers(1, 64))]
        elif kind == "truncate":
            del data[pos:]
        else:  # splice the tail of another real line
            other = draw(st.sampled_from(real_lines()))
            data[pos:] = other[draw(st.integers(0, max(0, len(other) - 1))) :]
    return bytes(data)


# --- structural mutations ---------------------------------------------------------------------------
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*prefix, i))
    return found


@st.composite
def structural_mutations(draw: st.DrawFn) -> bytes:
    doc = json.loads(draw(st.sampled_from(real_lines())))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        key = path[-1]
        action = draw(st.sampled_from(("replace", "drop", "rename")))
        if action == "replace":
            parent[key] = draw(JSON_VALUES)
        elif action == "drop" or isinstance(parent, list):
            del parent[key]
        else:
            parent[draw(st.text(min_size=1, max_size=8))] = parent.pop(key)
    text = json.dumps(doc, ensure_ascii=draw(st.booleans()), separators=(",", ":"))
    if draw(st.booleans()):
        text = text.replace("/", "\\/")  # PHP-style escaped slashes, as in real dumps
    return text.encode("utf-8", "surrogatepass")


#: 100 fresh examples per run and mutator (a structural one costs tens of ms: the whole entity is
#: re-encoded); test_the_mutations_reach_acceptance_and_several_rejections checks that they reach
#: both outcomes, and repeated runs (CI, every `make test`) keep trying new ones.
SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@pytest.mark.parametrize("bad_type", [[], ["string"], {}, {"a": 1}, 5, True])
def test_datavalue_type_that_is_not_a_string_is_rejected(bad_type: Any) -> None:
    """Found by the structural fuzzer: a list/dict `type` once raised TypeError in the slow path's
    set lookup (crashing the scan task); any non-string type is now a `schema_mismatch` reject."""
    line = next(line for line in real_lines() if b'"type":"wikibase-entityid"' in line)
    doc = json.loads(line)
    claims = doc.get("claims") or next(iter(doc["entities"].values()))["claims"]
    statement = next(iter(claims.values()))[0]
    statement["mainsnak"]["datavalue"]["type"] = bad_type
    assert scan_line(json.dumps(doc).encode()) == "schema_mismatch"


def test_every_real_seed_line_scans() -> None:
    assert len(real_lines()) > 100
    assert {scan_line(line) for line in real_lines()} == {"ok"}
    assert {"malformed_json", "invalid_utf8", "not_an_entity", "invalid_id", "schema_mismatch"} <= REASONS


@SETTINGS
@given(byte_mutations())
def test_byte_mutations_are_scanned_or_rejected_with_a_reason(line: bytes) -> None:
    scan_line(line)


@SETTINGS
@given(structural_mutations())
def test_structural_mutations_are_scanned_or_rejected_with_a_reason(line: bytes) -> None:
    scan_line(line)


def test_the_mutations_reach_acceptance_and_several_rejections() -> None:
    """The fuzzers are not stuck on one path: a fixed-seed sample both parses and rejects."""
    outcomes: Counter[str] = Counter()

    @settings(
        max_examples=150,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.one_of(byte_mutations(), structural_mutations()))
    def collect(line: bytes) -> None:
        outcomes[scan_line(line)] += 1

    collect()
    assert outcomes["ok"] > 0
    assert {"malformed_json", "schema_mismatch"} <= set(outcomes), outcomes
