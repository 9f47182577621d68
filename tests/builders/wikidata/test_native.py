"""The native fast path of the Wikidata scan (`entbench._wdscan`, wikidata_native.py) against the
reference path (`EntityDecoder` + `ScanRows`).

The contract (wdscan.c's header): the scanner takes only lines it fully understands and hands every
other line back, so for any block, native rows + reference rows of the fallback lines == reference
rows of all lines: every table (sorted by its output key, shards and float signs included), the
stats and the rejects. Checked here on every real fixture dump (two language/site sets), a synthetic
dump with every datavalue type, hand-written quirky lines (alone and among normal lines), random
mutations of real lines (hypothesis), and one end-to-end build whose shard bytes must not depend on
`ENTBENCH_NATIVE`. The share of lines the scanner accepts is pinned per fixture too: a fast path
that silently falls back on everything would pass the equality checks and be useless.
"""

from __future__ import annotations

import io
import json
import os
import sys
from functools import cache
from itertools import pairwise, zip_longest
from pathlib import Path
from types import ModuleType

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import xxhash
from hypothesis import example, given
from hypothesis import strategies as st

from entbench.builders.wikidata.native import NativeRows, _wdscan, native_available
from entbench.builders.wikidata.stages import scan as wikidata_scan
from entbench.engine.manifest import load_manifest
from entbench.engine.shards import column_shards, shards_of
from tests import builds as samples
from tests.builders.kb.support import shard_hashes
from tests.builders.wikidata.native_edge_cases import DESC, EDGE_CASES, replaced
from tests.builders.wikidata.native_support import (
    FIXTURES,
    NORMAL_LINES,
    assert_paths_equal,
    bundled_wikidata_params,
    dump_of,
    entity,
    entity_lines,
    member_spans,
    q,
    read_dump,
    scan_both,
    with_members,
)
from tests.fuzz.budget import fuzz_settings

BUNDLED_LANGUAGES, BUNDLED_SITES, BUNDLED_SHARDS = bundled_wikidata_params()
OTHER_LANGUAGES, OTHER_SITES = ("de", "fr", "zh-hant"), ("dewiki",)
ALL_SITES = ("*",)
CONFIGS = {
    "bundled": (BUNDLED_LANGUAGES, BUNDLED_SITES),
    "de-fr-zhhant": (OTHER_LANGUAGES, OTHER_SITES),
    "all-sites": (BUNDLED_LANGUAGES, ALL_SITES),  # sites = ["*"]: every sitelink, keyed by its site
}

pytestmark = pytest.mark.skipif(
    not native_available() and os.environ.get("ENTBENCH_REQUIRE_NATIVE") != "1",
    reason="entbench._wdscan is not built (no C compiler at install)",
)

# --- real dumps ---------------------------------------------------------------------------------------
#: Every Wikidata dump among the fixtures, with the lowest share of entity lines the native scanner
#: must take itself (measured: the fallbacks are the only line with a `redirects` member, Q1040, in
#: each kb dump, and every line of the `{"entities": …}` wrapper file).
DUMPS = {
    "wikidata/entities-new.json.bz2": 0.98,  # 56 lines, 1 fallback (Q1040 carries "redirects")
    "wikidata/entities-old.json.bz2": 0.97,  # 44 lines, 1 fallback (the same Q1040 line)
    "wikidata/latest-all.2017-03.head-part.json.bz2": 1.0,  # 25 lines, none
    "wikidata/kgtk-arnold.hierarchy.json.gz": 1.0,  # 8,931 lines, none
    "wikidata/labels-en.entity-metadata.jsonl.gz": 1.0,  # 401 lines, none
    "wikidata/entitydata-revisions.jsonl.bz2": 0.0,  # 74 lines, all {"entities": …} wrappers
    "hansel/wikidata-old.json.gz": 1.0,  # 1,416 lines, none
    "hansel/wikidata-new.json.gz": 1.0,  # 1,663 lines, none
}
#: Other JSON fixtures the scan accepts as input (the sniffer wants `[` or `{` first): every line is
#: a reject, so they pin that rejects agree line by line.
NON_DUMP_JSON = [
    "hansel/corpus.jsonl.gz",
    "zh-text/hansel.readme-example.jsonl",
    "enteval/rare.jsonl",
    "enteval/preco-train.jsonl",
    "golden/wikidata.json",
    "golden/kb.json",
]


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("name", sorted(DUMPS))
def test_fixture_dump_paths_agree(name: str, config: str) -> None:
    languages, sites = CONFIGS[config]
    pair = scan_both(read_dump(FIXTURES / name), languages=languages, sites=sites, num_shards=BUNDLED_SHARDS)
    assert_paths_equal(pair, f"{name} ({config})")
    assert pair.lines > 0
    assert pair.native.stats["entities_decoded"] > 0
    assert pair.accepted_share >= DUMPS[name], (
        f"{name}: the native scanner took only {pair.accepted_share:.1%} of {pair.lines} lines "
        f"(fallbacks at {pair.native.fallbacks[:10]})"
    )


def test_fixture_dump_in_small_pieces_at_an_offset() -> None:
    """Scanner calls of a few KB (many `scan` calls on one scanner) and a block not at offset 0."""
    data = read_dump(FIXTURES / "hansel/wikidata-new.json.gz")
    pair = scan_both(
        data,
        languages=BUNDLED_LANGUAGES,
        sites=BUNDLED_SITES,
        num_shards=3,
        base=123_456_789,
        piece_bytes=5000,
    )
    assert_paths_equal(pair)
    assert pair.accepted_share == 1.0
    offsets = pair.native.tables["entities"].column("source_offset")
    assert pc.min(offsets).as_py() >= 123_456_789


@pytest.mark.parametrize("name", NON_DUMP_JSON)
def test_non_dump_json_rejects_agree(name: str) -> None:
    pair = scan_both(read_dump(FIXTURES / name), languages=BUNDLED_LANGUAGES, sites=BUNDLED_SITES)
    assert_paths_equal(pair, name)
    assert pair.lines > 0
    assert len(pair.reference.rejects) == pair.lines, "every line of a non-dump file is a reject"
    assert pair.native.stats["entities_decoded"] == 0


# --- a synthetic dump -----------------------------------------------------------------------------------
def _gen_module() -> ModuleType:
    """`bench/gen_wikidata.py`, imported as bench/ scripts import each other (top-level modules)."""
    bench = Path(__file__).resolve().parents[3] / "bench"
    if str(bench) not in sys.path:
        sys.path.insert(0, str(bench))
    import gen_wikidata

    return gen_wikidata


@pytest.fixture(scope="module")
def synthetic_dump() -> bytes:
    out = io.BytesIO()
    _gen_module().write_dump(out, 300, 11)
    return out.getvalue()


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_synthetic_dump_paths_agree(synthetic_dump: bytes, config: str) -> None:
    languages, sites = CONFIGS[config]
    pair = scan_both(synthetic_dump, languages=languages, sites=sites, num_shards=4)
    assert_paths_equal(pair, f"synthetic ({config})")
    assert pair.lines == 300
    assert pair.native.fallbacks == []
    truthy = pair.native.tables["truthy_claims"]
    value_types = set(truthy.column("value_type").to_pylist())
    assert value_types >= {
        "wikibase-entityid",
        "string",
        "time",
        "quantity",
        "globecoordinate",
        "monolingualtext",
    }
    assert set(truthy.column("snaktype").to_pylist()) == {"value", "somevalue", "novalue"}
    assert set(truthy.column("rank").to_pylist()) == {"normal", "preferred"}
    assert pair.native.tables["outranked_type_claims"].num_rows > 0
    assert len(pc.list_flatten(truthy.column("qualifiers"))) > 0


# --- hand-written edge cases (the lines: native_edge_cases.py) ----------------------------------------
EDGE_LANGUAGES, EDGE_SITES = ("en", "zh", "de"), ("enwiki", "zhwiki", "dewiki")
#: Edge cases that fail today, with why; strict xfails, so a fix makes them fail until removed here.
KNOWN_FAILURES: dict[str, str] = {}
#: Lines that once crashed the scan or differed between the paths (fixed in 9dd0abc), and the
#: reject reason they now get (None: not a reject).
FIXED: dict[str, str | None] = {
    "lastrevid-huge": "schema_mismatch",  # was OverflowError in rows_to_table (both paths)
    "lastrevid-int64-overflow": "schema_mismatch",  # ditto, 2**63
    "lastrevid-below-int64": "schema_mismatch",
    "nesting-5000": "malformed_json",  # was RecursionError out of msgspec (both paths)
    "latitude-minus-zero-int": None,  # was -0.0 natively, 0.0 on the reference path
    "coord-minus-zero-int-in-qualifier": None,
}


def _edge_params() -> list[object]:
    return [
        pytest.param(
            line,
            native,
            id=case_id,
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[case_id])]
            if case_id in KNOWN_FAILURES
            else [],
        )
        for case_id, line, native in EDGE_CASES
    ]


@pytest.mark.parametrize(("line", "native"), _edge_params())
def test_edge_case_paths_agree(line: bytes, native: bool | None) -> None:
    """One quirky line, alone and between normal lines, and alone with every site kept (`*`):
    tables, stats and rejects agree."""
    before = b"[\n" + NORMAL_LINES[0] + b",\n" + NORMAL_LINES[1] + b",\n"
    variants = {
        "alone": (line + b"\n", 0, EDGE_SITES),
        "embedded": (before + line + b",\n" + NORMAL_LINES[2] + b"\n]\n", len(before), EDGE_SITES),
        "all-sites": (line + b"\n", 0, ALL_SITES),
    }
    for variant, (data, offset, sites) in variants.items():
        pair = scan_both(data, languages=EDGE_LANGUAGES, sites=sites, num_shards=3)
        assert_paths_equal(pair, variant)
        assert pair.reference.error is None, f"{variant}: the scan raised {pair.reference.error}"
        assert set(pair.native.fallbacks) <= {offset}, f"{variant}: a normal line next to the case fell back"
        if native:
            assert pair.native.fallbacks == [], f"{variant}: the native scanner should take this line itself"


@pytest.mark.parametrize("case_id", sorted(FIXED))
def test_fixed_lines_are_rejects_or_rows(case_id: str) -> None:
    """The lines that crashed the scan are rejects now; an integer -0 coordinate is +0.0 on both paths."""
    line = next(line for cid, line, _ in EDGE_CASES if cid == case_id)
    pair = scan_both(line + b"\n", languages=EDGE_LANGUAGES, sites=EDGE_SITES, num_shards=3)
    assert_paths_equal(pair)
    reason = FIXED[case_id]
    if reason is not None:
        assert [r["reason"] for r in pair.native.rejects] == [reason]
        assert pair.native.stats["entities_decoded"] == 0
    else:
        assert pair.native.fallbacks == [], "an integer -0 coordinate is for the native scanner"
        claims = pair.native.tables["truthy_claims"].to_pylist()
        coords = [c for c in claims if c["value_type"] == "globecoordinate"]
        coords += [q for c in claims for q in c["qualifiers"] or [] if q["value_type"] == "globecoordinate"]
        zeros = [v for c in coords for v in (c["latitude"], c["longitude"], c["coord_precision"]) if v == 0]
        assert zeros and all(str(v) == "0.0" for v in zeros), zeros


# --- random mutations of real lines ---------------------------------------------------------------------
@cache
def pool() -> list[bytes]:
    """Real entity lines to mutate: small ones of every fixture dump, lines with qualifiers first.

    Made when a test first draws from it, not when the module is imported: reading the dumps costs
    ~1.4 CPU s, which every pytest process collecting this module (each xdist worker, the fuzz
    tests' and the sanitizer run's) paid whether or not it ran a test drawing from them."""

    def pick(name: str, count: int, limit: int, needle: bytes = b"") -> list[bytes]:
        lines = [
            line for line in entity_lines(read_dump(FIXTURES / name)) if needle in line and len(line) <= limit
        ]
        return sorted(lines, key=len)[:count]

    return [
        *pick("wikidata/entities-new.json.bz2", 8, 25_000, b'"qualifiers"'),
        *pick("wikidata/entities-old.json.bz2", 3, 25_000),
        *pick("wikidata/latest-all.2017-03.head-part.json.bz2", 3, 25_000),
        *pick("hansel/wikidata-old.json.gz", 12, 4_000, b'"datavalue"'),
        *pick("hansel/wikidata-new.json.gz", 4, 4_000, b'"sitelinks":{"'),
        *pick("wikidata/kgtk-arnold.hierarchy.json.gz", 6, 4_000, b'"P279"'),
        *pick("wikidata/labels-en.entity-metadata.jsonl.gz", 4, 4_000),
        *pick("wikidata/entitydata-revisions.jsonl.bz2", 3, 4_000),
    ]


#: Bytes worth inserting: JSON structure, escapes, number parts, invalid UTF-8, control characters.
SPECIAL_BYTES = b'"\\,:{}[]0-.eEnu \t\r\n\x00\x01\x7f\x80\xc3\xe4\xed\xf0\xff'
#: JSON texts a member's value may be replaced with (-0, 2**63, 2**70 among them).
VALUES = r"""
    null [] {} [null] [{}] 0 -0 -0.0 1 -1 200 1.5 1e400 5e-324 9223372036854775808 1180591620717411303424
    123456789012345678 true "" "x" "Q5" "Q0" "P31" "preferred" "deprecated" "normal" "value"
    "somevalue" "string" "time" "wikibase-entityid" "globecoordinate" "quantity" "monolingualtext"
    "unknown-type" "http://www.wikidata.org/entity/Q2" "http://x/\nQ1" "\ud800" "\u0041\/"
    {"value":"x"} {"value":{"numeric-id":5}} {"en":{"value":"x"}} {"enwiki":{"title":"T"}}
""".split()  # noqa: SIM905 - one JSON text per word reads better than a column of them


@cache
def _members(line: bytes) -> list[list[tuple[int, int]]]:
    return [members for members in member_spans(line) if members]


@st.composite
def mutated_lines(draw: st.DrawFn) -> bytes:
    """A real line with one structural mutation (or none) and then up to three byte mutations."""
    line = draw(st.sampled_from(pool()))
    objects = _members(line)
    structural = draw(st.sampled_from(["none", "duplicate", "swap", "delete-member", "replace-value"]))
    if structural != "none" and objects:
        members = draw(st.sampled_from(objects))
        i = draw(st.integers(0, len(members) - 1))
        start, end = members[i]
        if structural == "duplicate":  # the member again, right after itself: a duplicate key
            line = line[:end] + b"," + line[start:end] + line[end:]
        elif structural == "swap" and len(members) > 1:
            j = draw(st.integers(0, len(members) - 1).filter(lambda j: j != i))
            (a, b), (c, d) = sorted([members[i], members[j]])
            line = line[:a] + line[c:d] + line[b:c] + line[a:b] + line[d:]
        elif structural == "delete-member":
            if i + 1 < len(members):
                line = line[:start] + line[members[i + 1][0] :]
            elif i > 0:
                line = line[: members[i - 1][1]] + line[end:]
            else:
                line = line[:start] + line[end:]
        elif structural == "replace-value":
            colon = line.find(b":", start, end)
            # the key is a plain string (no colon inside keys of real lines)
            line = line[: colon + 1] + draw(st.sampled_from(VALUES)).encode() + line[end:]
    for _ in range(draw(st.integers(0 if structural != "none" else 1, 3))):
        kind = draw(st.sampled_from(["delete", "insert", "replace", "truncate"]))
        pos = draw(st.integers(0, max(0, len(line) - 1)))
        byte = draw(st.one_of(st.sampled_from(list(SPECIAL_BYTES)), st.integers(0, 255)))
        if kind == "delete":
            line = line[:pos] + line[pos + 1 :]
        elif kind == "insert":
            line = line[:pos] + bytes([byte]) + line[pos:]
        elif kind == "replace":
            line = line[:pos] + bytes([byte]) + line[pos + 1 :]
        else:
            line = line[:pos]
    return line


@fuzz_settings(150)
@given(line=mutated_lines(), all_sites=st.booleans())
def test_mutated_real_lines_paths_agree(line: bytes, all_sites: bool) -> None:
    """Whatever a real line is mutated into, the native path never crashes nor differs."""
    data = dump_of([NORMAL_LINES[0], line, NORMAL_LINES[2]])
    sites = ALL_SITES if all_sites else BUNDLED_SITES
    pair = scan_both(data, languages=BUNDLED_LANGUAGES, sites=sites, num_shards=3)
    assert_paths_equal(pair, f"mutated line {line[:300]!r}")


#: Pieces of a JSON string literal's text: plain ASCII, raw UTF-8 (valid and not), simple escapes,
#: \\u escapes of any code unit (upper and lower case hex), a high surrogate before any unit (a pair
#: or not), bad escapes, control bytes. Runs of them exercise the scanner's escape and UTF-8 loops.
#: Escapes a strict reader refuses, and raw bytes that are not UTF-8 or not allowed in a string.
_BAD_STRING_PIECES = [b"\\x", b"\\u12", b"\\uzz00", b"\\u123g", b"\\u0g00", b"\\ud83d\\ude0x", b"\\"]
_BAD_STRING_PIECES += [b"\xff", b"\xc3", b"\xe4\xb8", b"\x01", b"\t"]
_STRING_PIECES = st.one_of(
    st.text(
        alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\'), max_size=20
    ).map(str.encode),
    st.text(
        alphabet=st.characters(min_codepoint=0x80, exclude_categories=["Cs"]), min_size=1, max_size=6
    ).map(lambda text: text.encode("utf-8")),
    st.integers(0, 0xFFFF).map(lambda unit: b"\\u%04x" % unit),
    st.integers(0, 0xFFFF).map(lambda unit: b"\\u%04X" % unit),
    st.tuples(st.integers(0xD800, 0xDBFF), st.integers(0xD000, 0xE000)).map(
        lambda units: b"\\u%04x\\u%04x" % units
    ),
    st.sampled_from([b'\\"', b"\\\\", b"\\/", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t"]),
    st.sampled_from(_BAD_STRING_PIECES),
)


def _json_string(literal: bytes) -> str | None:
    """The text of a JSON string literal, or None if a strict reader must refuse it (not JSON, not
    UTF-8, or a lone surrogate)."""
    try:
        text = json.loads(literal.decode("utf-8"))
        text.encode("utf-8")
    except (UnicodeError, ValueError):
        return None
    assert isinstance(text, str)
    return text


@fuzz_settings(250)
@given(pieces=st.lists(_STRING_PIECES, max_size=12), kept=st.booleans())
@example(pieces=[b"\\u00e9\\u4e2d", b"\\u123g"], kept=False)
@example(pieces=[b"x", b"\\ud83d\\u0041"], kept=True)
@example(pieces=["\u00e9t\u00e9 ".encode(), b"\xe4\xb8", b"!"], kept=True)
def test_string_literals_paths_agree(pieces: list[bytes], kept: bool) -> None:
    """Any string literal, in a value the scan keeps (a description) or one it skips: the native
    scanner takes the line exactly when the literal is valid, and decodes it as the reference does."""
    literal = b'"' + b"".join(pieces) + b'"'
    where = entity() if kept else with_members(entity(), ("skipped", q("PLACEHOLDER")))
    line = replaced(where, DESC if kept else q("PLACEHOLDER").encode(), literal)
    pair = scan_both(dump_of([line]), languages=BUNDLED_LANGUAGES, sites=BUNDLED_SITES, num_shards=3)
    assert_paths_equal(pair, f"string literal {literal!r}")
    text = _json_string(literal)
    assert (pair.native.fallbacks == []) == (text is not None), f"literal {literal!r}"
    if kept and text is not None:
        assert pair.native.tables["entities"].column("description_en").to_pylist() == [text]


# --- end to end -------------------------------------------------------------------------------------------
def _build_both(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: Path, *params: str, **kwargs: object
) -> tuple[Path, Path]:
    dirs = []
    scanners: list[object] = []

    class CountedNativeRows(wikidata_scan.NativeRows):
        def __init__(self, *args: object) -> None:
            super().__init__(*args)
            scanners.append(self)

    # `--workers 1` runs the map tasks in this process, so the patch and the variable reach them.
    monkeypatch.setattr(wikidata_scan, "NativeRows", CountedNativeRows)
    for flag in ("0", "1"):
        monkeypatch.setenv("ENTBENCH_NATIVE", flag)
        scanners.clear()
        built = samples.build(
            "wikidata",
            sources=[f"wikidata={source}"],
            params=list(params),
            out=tmp_path / f"native-{flag}",
            workers=1,
            progress=False,
            log=lambda _msg: None,
            card=False,
            **kwargs,  # type: ignore[arg-type]
        )
        dirs.append(built["wikidata"])
        assert bool(scanners) == (flag == "1"), f"ENTBENCH_NATIVE={flag}: {len(scanners)} native scanners"
    return dirs[0], dirs[1]


def _assert_same_build(reference: Path, native: Path) -> None:
    assert shard_hashes(reference) == shard_hashes(native)
    assert (reference / "_rejects.jsonl").read_bytes() == (native / "_rejects.jsonl").read_bytes()
    ref_manifest, nat_manifest = load_manifest(reference), load_manifest(native)
    assert ref_manifest["stats"] == nat_manifest["stats"]
    assert ref_manifest["fingerprint"] == nat_manifest["fingerprint"]


def test_build_shards_identical_with_and_without_native(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`entbench build wikidata` on the bundled config's dump: byte-identical shards either way."""
    reference, native = _build_both(monkeypatch, tmp_path, FIXTURES / "wikidata/entities-new.json.bz2")
    _assert_same_build(reference, native)
    assert load_manifest(native)["stats"]["entities_written"] == 56


@pytest.mark.parametrize("sites", ["enwiki,zhwiki", "*"])
def test_build_uncompressed_byte_ranges_with_quirky_lines(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sites: str
) -> None:
    """An uncompressed dump read as several byte ranges, real lines mixed with fallback and rejected
    lines (wrappers, redirects, bad JSON, invalid UTF-8), listed sites or every site (`*`):
    byte-identical shards, rejects and stats."""
    lines = entity_lines(read_dump(FIXTURES / "wikidata/entities-new.json.bz2"))
    lines += entity_lines(read_dump(FIXTURES / "wikidata/entitydata-revisions.jsonl.bz2"))[:10]
    quirky = [line for case_id, line, _ in EDGE_CASES if case_id not in KNOWN_FAILURES]
    mixed = [line for pair in zip_longest(lines, quirky) for line in pair if line is not None]
    source = tmp_path / "mixed.json"
    source.write_bytes(dump_of(mixed))
    assert source.stat().st_size > 3 << 20  # several 1 MB byte ranges
    reference, native = _build_both(
        monkeypatch,
        tmp_path,
        source,
        "wikidata.num_shards=3",
        f"wikidata.sites={sites}",
        max_bad_lines=10_000,
        chunk_mb=1,
    )
    _assert_same_build(reference, native)
    assert load_manifest(native)["stats"]["rejects_lines"] > 0


# --- routing rows by shard ------------------------------------------------------------------------------
@pytest.mark.parametrize("shards_per_group", [1, 2])
def test_native_rows_come_grouped_by_spill_group(synthetic_dump: bytes, shards_per_group: int) -> None:
    """Each line goes to the scanner of its shard's group, so every table's rows come out in group
    order (the sink then cuts them without a copy) and each row's shard is its id's."""
    rows = NativeRows(BUNDLED_LANGUAGES, BUNDLED_SITES, 5, shards_per_group)
    lines, _opens, _closes, fallbacks = rows.scan(synthetic_dump, 0, 0, len(synthetic_dump))
    assert lines == 300
    assert fallbacks == []
    tables = rows.tables()
    assert set(tables) >= {"entities", "truthy_claims", "aliases", "sitelinks"}
    for name, (table, shard_ids) in tables.items():
        groups = shard_ids // shards_per_group
        assert (groups[1:] >= groups[:-1]).all(), f"{name}: rows not grouped by spill group"
        key = "id" if "id" in table.column_names else "subject"
        assert shard_ids.tolist() == shards_of(table.column(key).to_pylist(), 5).tolist(), name


def test_a_line_whose_id_comes_late_is_still_routed_right() -> None:
    """An "id" member past the lookahead sends the line to the first scanner: its rows then break the
    grouping (the sink reorders them), but their shards still come from their parsed ids."""
    lines = entity_lines(read_dump(FIXTURES / "wikidata/entities-new.json.bz2"))[:6]
    first = json.loads(lines[0])
    assert len(first) > 5 and "claims" in first
    moved = {k: v for k, v in first.items() if k != "id"} | {"id": first["id"]}
    late = json.dumps(moved, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    data = dump_of([*lines[1:], late])
    pair = scan_both(data, languages=BUNDLED_LANGUAGES, sites=BUNDLED_SITES, num_shards=3)
    assert_paths_equal(pair)
    assert pair.native.fallbacks == []


def _exported(scanner: object) -> dict[str, tuple[object, ...]]:
    """A scanner's `columns()`, every buffer as bytes (comparable)."""
    return {
        name: tuple(bytes(part) if not isinstance(part, str | int) else part for part in col)
        for name, col in scanner.columns().items()  # type: ignore[attr-defined]
    }


@pytest.mark.parametrize("cuts", [(1,), (7, 8), (3, 11, 12), (5, 9, 17, 30)])
def test_absorbed_scanners_export_what_one_scanner_of_all_lines_does(cuts: tuple[int, ...]) -> None:
    """`Scanner.absorb` appends another scanner's rows column by column: validity bits at any bit
    position, string offsets and child tables' entity indices rebased. Scanning consecutive runs of
    real lines into separate scanners and absorbing them in order must give the very buffers one
    scanner of all the lines gives."""
    lines = entity_lines(read_dump(FIXTURES / "wikidata/entities-new.json.bz2"))[:40]
    bounds = [0, *cuts, len(lines)]
    runs = [dump_of(lines[a:b]) for a, b in pairwise(bounds)]
    whole = _wdscan.Scanner(BUNDLED_LANGUAGES, BUNDLED_SITES)
    for run in runs:
        assert whole.scan(run, 0, 0, len(run))[4] == []
    parts = [_wdscan.Scanner(BUNDLED_LANGUAGES, BUNDLED_SITES) for _ in runs]
    for scanner, run in zip(parts, runs, strict=True):
        scanner.scan(run, 0, 0, len(run))
    for scanner in parts[1:]:
        parts[0].absorb(scanner)
    expected = _exported(whole)
    assert expected["e.id"][1] == 40 and expected["c.ent"][1] > 40
    assert sum(col[2] > 0 for col in expected.values()) >= 10, "validity bits with nulls to shift"
    assert _exported(parts[0]) == expected
    emptied = [_exported(scanner)["e.id"][1] for scanner in parts[1:]]
    assert emptied == [0] * len(emptied), "absorbed scanners are left empty"


def test_absorb_refuses_a_scanner_it_cannot_append() -> None:
    first = _wdscan.Scanner(BUNDLED_LANGUAGES, BUNDLED_SITES)
    with pytest.raises(ValueError, match="same languages"):
        first.absorb(_wdscan.Scanner(BUNDLED_LANGUAGES[:1], BUNDLED_SITES))
    with pytest.raises(ValueError, match="itself"):
        first.absorb(first)
    with pytest.raises(TypeError):
        first.absorb(object())
    exported = _wdscan.Scanner(BUNDLED_LANGUAGES, BUNDLED_SITES)
    exported.columns()
    with pytest.raises(RuntimeError, match="already exported"):
        first.absorb(exported)


@given(st.binary(max_size=100))
@fuzz_settings(200)
def test_routing_hash_is_shard_of_hash(data: bytes) -> None:
    """The scanner's XXH64 is `shards.shard_of`'s (xxhash), at every length (stripes, tails)."""
    assert _wdscan.xxh64(data) == xxhash.xxh64_intdigest(data)


@given(st.lists(st.text(max_size=40), max_size=60), st.integers(1, 300))
@fuzz_settings(200)
def test_id_shards_are_shards_of(ids: list[str], num_shards: int) -> None:
    """The scanned ids' shards (`shards.column_shards`, hashed in C from the Arrow buffers) are
    `shards_of`'s: every key, length and shard count, and a sliced array (an offset) too."""
    array = pa.array(ids, pa.string())
    assert column_shards(array, num_shards).tolist() == shards_of(ids, num_shards).tolist()
    assert column_shards(array.slice(1), num_shards).tolist() == shards_of(ids[1:], num_shards).tolist()


def test_string_shards_refuses_offsets_outside_the_data() -> None:
    """Buffers that do not describe `count` strings are a ValueError, never a read past them."""
    offsets = np.array([0, 2, 9], np.int32).tobytes()
    with pytest.raises(ValueError, match="outside the data"):
        _wdscan.string_shards(offsets, b"Q1Q2", 2, 4)
    with pytest.raises(ValueError, match="shorter than count"):
        _wdscan.string_shards(offsets, b"Q1Q2Q3Q4Q", 3, 4)
    assert (
        np.frombuffer(_wdscan.string_shards(offsets, b"Q1Q2Q3Q4Q", 2, 4), np.int64).tolist()
        == shards_of(["Q1", "Q2Q3Q4Q"], 4).tolist()
    )


# --- the compiled extension ------------------------------------------------------------------------------
def test_native_is_built_when_required() -> None:
    """CI (the Makefile) sets ENTBENCH_REQUIRE_NATIVE=1: there the compiled scanner must be importable."""
    if os.environ.get("ENTBENCH_REQUIRE_NATIVE") != "1":
        pytest.skip("ENTBENCH_REQUIRE_NATIVE is not set")
    assert native_available(), "entbench._wdscan is not built (or is a stale build with another ABI)"
