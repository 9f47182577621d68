"""Run the Wikidata scan's map step on a block of dump bytes, on the reference path alone or on the
native fast path plus its fallbacks, and compare the two (tests/builders/wikidata/test_native.py).

Both runs go through the real `WikidataScan._map` (line stripping, framing lines, trailing commas,
stats, rejects, the `_emit` that merges both paths' tables): only `ENTBENCH_NATIVE` differs, and
the native run records which lines its scanner handed back. Every emitted slice carries its shard
in a `_shard` column, so routing is compared too; each table is then sorted by its output sort key
(plus `_offset`, which the map tables carry) with `prepare_rows`.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from entbench.builders.wikidata.native import NativeRows
from entbench.builders.wikidata.rows import OFFSET_COLUMN
from entbench.builders.wikidata.stages import scan as wikidata_scan
from entbench.builders.wikidata.stages.scan import WikidataScan, WikidataScanParams
from entbench.engine.dump_scan import Rejects
from entbench.engine.shards import DuplicateKeyError, prepare_rows
from entbench.engine.stage import BucketSink, BuildOptions, MapTask, SourceInfo, StageContext

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
SHARD_COLUMN = "_shard"


@cache
def bundled_wikidata_params() -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """`[params.wikidata]` of the bundled config: languages, sites, num_shards."""
    config = tomllib.loads((FIXTURES / "entbench.toml").read_text(encoding="utf-8"))
    params = config["params"]["wikidata"]
    return tuple(params["languages"]), tuple(params["sites"]), int(params["num_shards"])


@cache
def read_dump(path: Path) -> bytes:
    """A fixture file's bytes, decompressed (.gz, .bz2)."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        return gzip.decompress(raw)
    if path.suffix == ".bz2":
        return bz2.decompress(raw)
    return raw


@dataclass
class ScanResult:
    """What one map task produced: sorted tables, stats, rejects, and (native run) fallback offsets."""

    tables: dict[str, pa.Table]
    stats: dict[str, int]
    rejects: list[dict[str, Any]]
    fallbacks: list[int] = field(default_factory=list)
    native_used: bool = False
    #: `Type: message` of an exception the map task raised (then there are no tables or rejects).
    error: str | None = None


@dataclass
class PathPair:
    """The reference run and the native(+fallback) run of one block."""

    reference: ScanResult
    native: ScanResult

    @property
    def lines(self) -> int:
        return int(self.reference.stats.get("lines_total", 0))

    @property
    def accepted_share(self) -> float:
        """The share of entity lines the native scanner took itself (1.0 when there are none)."""
        return 1.0 - len(self.native.fallbacks) / self.lines if self.lines else 1.0


class _CollectSink(BucketSink):
    def __init__(self) -> None:
        self.parts: dict[str, list[pa.Table]] = {}

    def emit(self, table: str, shard: int, batch: pa.RecordBatch | pa.Table) -> None:
        rows = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
        rows = rows.append_column(SHARD_COLUMN, pa.array(np.full(rows.num_rows, shard, dtype=np.int64)))
        self.parts.setdefault(table, []).append(rows)


class _RecordingNativeRows(NativeRows):
    """NativeRows that remembers the offsets of the lines it handed back to the reference path."""

    instances: list[_RecordingNativeRows] = []  # noqa: RUF012 - per run, reset by `scan_block`

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fallback_offsets: list[int] = []
        _RecordingNativeRows.instances.append(self)

    def scan(
        self, block: bytes | bytearray, base: int, start: int, end: int
    ) -> tuple[int, int, int, list[tuple[int, int, int]]]:
        result = super().scan(block, base, start, end)
        self.fallback_offsets.extend(offset for offset, _, _ in result[3])
        return result


@contextmanager
def _native_env(enabled: bool) -> Iterator[None]:
    old = os.environ.get("ENTBENCH_NATIVE")
    os.environ["ENTBENCH_NATIVE"] = "1" if enabled else "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ["ENTBENCH_NATIVE"]
        else:
            os.environ["ENTBENCH_NATIVE"] = old


def scan_block(
    data: bytes,
    *,
    native: bool,
    languages: Sequence[str],
    sites: Sequence[str],
    num_shards: int = 4,
    base: int = 0,
    piece_bytes: int | None = None,
) -> ScanResult:
    """`WikidataScan._map` on `data` (a decompressed block starting at stream offset `base`);
    `sites` may be `("*",)` (every site)."""
    stage = WikidataScan("wikidata")
    params = WikidataScanParams(languages=tuple(languages), sites=tuple(sites), num_shards=num_shards)
    sink = _CollectSink()
    written: dict[str, str] = {}

    def write_rejects(rejects: Rejects, _ctx: StageContext, task: MapTask) -> None:
        # `Rejects.write` without the file and fsync: the same text, kept in memory.
        text = rejects.text()
        text.encode("utf-8")  # what writing the file would do (a lone surrogate would raise)
        written[f"{task.task_id}.rejects.jsonl"] = text

    _RecordingNativeRows.instances = []
    source = SourceInfo("wikidata", "/nonexistent/dump.json", "dump.json", len(data), "0" * 64)
    ctx = StageContext(
        stage="wikidata",
        params=params,
        num_shards=num_shards,
        sources={"wikidata": source},
        inputs={},
        workdir="/nonexistent/workdir",  # nothing is written: rejects are captured
        options=BuildOptions(workers=1, progress=False),
    )
    task = MapTask("b00000000", {"offset": base, "compressed_delta": len(data)}, data)
    patches = [
        mock.patch.object(wikidata_scan, "NativeRows", _RecordingNativeRows),
        mock.patch.object(Rejects, "write", write_rejects),
    ]
    if piece_bytes is not None:
        patches.append(mock.patch.object(wikidata_scan, "NATIVE_PIECE_BYTES", piece_bytes))
    with ExitStack() as stack:
        stack.enter_context(_native_env(native))
        for patch in patches:
            stack.enter_context(patch)
        try:
            stats = stage.map(ctx, task, sink, lambda _units, _items: None)
        except Exception as exc:  # compared between the paths, and reported by the tests
            instances = _RecordingNativeRows.instances
            _RecordingNativeRows.instances = []
            return ScanResult({}, {}, [], native_used=bool(instances), error=f"{type(exc).__name__}: {exc}")
    assert list(written) == ["b00000000.rejects.jsonl"], f"rejects written to {list(written)}"
    # One record per "\n" (not splitlines(): a record may hold U+2028, U+0085, … raw).
    rejects = [json.loads(line) for line in written["b00000000.rejects.jsonl"].split("\n") if line]
    instances = _RecordingNativeRows.instances
    _RecordingNativeRows.instances = []
    schemas = stage.map_schemas(params)
    tables = {}
    for output in stage.outputs(params):
        parts = sink.parts.get(output.name)
        if not parts:
            continue
        table_schema = schemas[output.name].append(pa.field(SHARD_COLUMN, pa.int64(), nullable=False))
        keys = list(output.sort_by)
        if OFFSET_COLUMN in table_schema.names:
            keys.append(OFFSET_COLUMN)
        tables[output.name] = _sorted(pa.concat_tables(parts), table_schema, keys)
    unknown = set(sink.parts) - set(tables)
    assert not unknown, f"rows emitted for undeclared tables {sorted(unknown)}"
    return ScanResult(
        tables=tables,
        stats=dict(stats),
        rejects=rejects,
        fallbacks=[offset for rows in instances for offset in rows.fallback_offsets],
        native_used=bool(instances),
    )


def _sorted(table: pa.Table, table_schema: pa.Schema, keys: Sequence[str]) -> pa.Table:
    try:
        return prepare_rows(table, table_schema, keys)
    except DuplicateKeyError:
        # Two rows on one key (one line holding one id twice): order ties by the whole row.
        table = table.select(table_schema.names).cast(table_schema)
        rows = table.to_pylist()
        order = sorted(range(len(rows)), key=lambda i: json.dumps(rows[i], sort_keys=True, default=repr))
        table = table.take(pa.array(order, pa.int64()))
        return table.sort_by([(k, "ascending") for k in keys]).combine_chunks()


def scan_both(
    data: bytes,
    *,
    languages: Sequence[str],
    sites: Sequence[str],
    num_shards: int = 4,
    base: int = 0,
    piece_bytes: int | None = None,
) -> PathPair:
    """The reference run and the native(+fallback) run of the same block."""
    kwargs: dict[str, Any] = {
        "languages": languages,
        "sites": sites,
        "num_shards": num_shards,
        "base": base,
        "piece_bytes": piece_bytes,
    }
    reference = scan_block(data, native=False, **kwargs)
    native = scan_block(data, native=True, **kwargs)
    assert not reference.native_used, "ENTBENCH_NATIVE=0 still made a native scanner"
    assert native.native_used, "the native scanner was not used (not built, or native_enabled said no)"
    return PathPair(reference, native)


# --- comparison -------------------------------------------------------------------------------------
def diff_paths(pair: PathPair) -> list[str]:
    """Every difference between the two runs, described (empty when they agree)."""
    ref, nat = pair.reference, pair.native
    problems: list[str] = []
    if ref.error != nat.error:
        problems.append(f"errors differ: reference {ref.error!r}, native {nat.error!r}")
    if set(ref.tables) != set(nat.tables):
        problems.append(f"tables: reference {sorted(ref.tables)} != native {sorted(nat.tables)}")
    for name in sorted(set(ref.tables) & set(nat.tables)):
        problem = diff_tables(name, ref.tables[name], nat.tables[name])
        if problem:
            problems.append(problem)
    if ref.stats != nat.stats:
        keys = sorted(set(ref.stats) | set(nat.stats))
        changed = {
            k: (ref.stats.get(k), nat.stats.get(k)) for k in keys if ref.stats.get(k) != nat.stats.get(k)
        }
        problems.append(f"stats differ (reference, native): {changed}")
    if ref.rejects != nat.rejects:
        problems.append(f"rejects differ:\n  reference {ref.rejects[:3]}\n  native    {nat.rejects[:3]}")
    return problems


def assert_paths_equal(pair: PathPair, context: str = "") -> None:
    """Tables (values, float signs, shards), stats and rejects of both runs are identical."""
    problems = diff_paths(pair)
    if problems:
        head = f"{context}: " if context else ""
        fallbacks = f" (native fallback lines at offsets {pair.native.fallbacks[:10]})"
        raise AssertionError(
            head + "native path differs from the reference" + fallbacks + "\n" + "\n".join(problems)
        )


def diff_tables(name: str, ref: pa.Table, nat: pa.Table) -> str | None:
    """None if equal (including the sign of zeros), else where the first difference is."""
    if ref.schema != nat.schema:
        return f"{name}: schemas differ\n  reference {ref.schema}\n  native    {nat.schema}"
    if ref.equals(nat):
        for column in ref.column_names:
            if not _has_float(ref.schema.field(column).type):
                continue  # no sign to compare (and no copy of the column made to find that out)
            ref_bits, nat_bits = _float_sign_bits(ref.column(column)), _float_sign_bits(nat.column(column))
            if ref_bits != nat_bits:
                return (
                    f"{name}.{column}: equal values but different float signs (-0.0 vs 0.0)\n"
                    + _first_row_diff(ref, nat, column)
                )
        return None
    if ref.num_rows != nat.num_rows:
        head = f"{name}: {ref.num_rows} reference rows, {nat.num_rows} native rows"
    else:
        head = f"{name}: {ref.num_rows} rows each, values differ"
    return head + "\n" + _first_row_diff(ref, nat)


def _first_row_diff(ref: pa.Table, nat: pa.Table, float_column: str | None = None) -> str:
    ref_rows, nat_rows = ref.to_pylist(), nat.to_pylist()
    for i in range(max(len(ref_rows), len(nat_rows))):
        a = ref_rows[i] if i < len(ref_rows) else None
        b = nat_rows[i] if i < len(nat_rows) else None
        if _canonical(a) != _canonical(b):
            if a is not None and b is not None:
                cols = [k for k in a if _canonical(a[k]) != _canonical(b[k])]
                detail = "; ".join(f"{k}: reference {a[k]!r} != native {b[k]!r}" for k in cols)
                return (
                    f"  first differing row {i}: {detail}\n"
                    f"  reference row {_short(a)}\n  native row    {_short(b)}"
                )
            return f"  first differing row {i}:\n  reference row {_short(a)}\n  native row    {_short(b)}"
    return f"  no row differs in Python values ({float_column or 'structure/metadata'})"


def _canonical(value: Any) -> Any:
    """Python values with floats by their bits (so -0.0 != 0.0)."""
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def _short(row: Any, limit: int = 600) -> str:
    text = repr(row)
    return text if len(text) <= limit else text[:limit] + "…"


def _float_sign_bits(column: pa.ChunkedArray | pa.Array) -> list[bool]:
    """The sign bits of every float in a column, nested lists and structs included, in order."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    kind = array.type
    if pa.types.is_floating(kind):
        return [bool(b) for b in np.signbit(pc.fill_null(array, 1.0).to_numpy(zero_copy_only=False))]
    if pa.types.is_struct(kind):
        bits: list[bool] = []
        for i in range(kind.num_fields):
            if _has_float(kind.field(i).type):
                bits.extend(_float_sign_bits(pc.struct_field(array, [i])))
        return bits
    if pa.types.is_list(kind) and _has_float(kind.value_type):
        return _float_sign_bits(pc.list_flatten(array))
    return []


def _has_float(kind: pa.DataType) -> bool:
    if pa.types.is_floating(kind):
        return True
    if pa.types.is_struct(kind):
        return any(_has_float(kind.field(i).type) for i in range(kind.num_fields))
    if pa.types.is_list(kind):
        return _has_float(kind.value_type)
    return False


# --- entity lines -----------------------------------------------------------------------------------
def entity_lines(data: bytes) -> list[bytes]:
    """The entity lines of a dump: stripped, framing lines dropped, trailing comma removed."""
    lines = []
    for line in data.split(b"\n"):
        stripped = line.strip()
        if stripped in (b"", b"[", b"]", b"\xef\xbb\xbf["):
            continue
        lines.append(stripped[:-1] if stripped.endswith(b",") else stripped)
    return lines


def dump_of(lines: Sequence[bytes]) -> bytes:
    """Lines framed as a real dump: `[`, entity lines ending in `,` but the last, `]`."""
    return b"[\n" + b",\n".join(lines) + b"\n]\n"


def member_spans(line: bytes) -> list[list[tuple[int, int]]]:
    """For every JSON object in `line`: its members' [start, end) byte spans (`"key": value`).

    A small scanner of the JSON text, tolerant of junk: it tracks strings and nesting only.
    """
    objects: list[list[tuple[int, int]]] = []
    stack: list[tuple[str, list[tuple[int, int]] | None, int]] = []  # (kind, members, member start)
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch == 0x22:  # a string
            if stack and stack[-1][0] == "{" and stack[-1][2] < 0:
                kind, members, _ = stack[-1]
                stack[-1] = (kind, members, i)
            j = i + 1
            while j < n and line[j] != 0x22:
                j += 2 if line[j] == 0x5C else 1
            i = j + 1
            continue
        if ch in b"{[":
            stack.append((chr(ch), [] if ch == 0x7B else None, -1))
        elif ch in b",}]":
            if stack and stack[-1][0] == "{" and stack[-1][2] >= 0:
                kind, members, start = stack[-1]
                assert members is not None
                end = i
                while end > start and line[end - 1] in b" \t":
                    end -= 1
                members.append((start, end))
                stack[-1] = (kind, members, -1)
            if ch in b"}]" and stack:
                kind, members, _ = stack.pop()
                if members:
                    objects.append(members)
        i += 1
    return objects


# --- hand-written entity lines ------------------------------------------------------------------------
# Every builder takes raw JSON texts, so a test can put any token anywhere (null, a number, an
# escaped string, a duplicate member); `None` drops a member.
def obj(*members: tuple[str, str]) -> str:
    """A JSON object from raw (key, value) texts, in order; keys may repeat or hold escapes."""
    return "{" + ",".join(f'"{key}":{value}' for key, value in members) + "}"


def q(text: str) -> str:
    """A JSON string literal (non-ASCII kept raw, as UTF-8)."""
    return json.dumps(text, ensure_ascii=False)


def _members(defaults: dict[str, str | None], raw: dict[str, str | None]) -> list[tuple[str, str]]:
    merged = {**defaults, **raw}
    return [(k, v) for k, v in merged.items() if v is not None]


def dv(kind: str, *members: tuple[str, str]) -> str:
    """A datavalue `{"value": {members}, "type": kind}`."""
    return obj(("value", obj(*members)), ("type", q(kind)))


def item_dv(*members: tuple[str, str]) -> str:
    return dv("wikibase-entityid", *members)


ITEM_DV = item_dv(("entity-type", q("item")), ("numeric-id", "5"), ("id", q("Q5")))
STRING_DV = obj(("value", q("Berlin.jpg")), ("type", q("string")))
TIME_VALUE = {
    "time": q("+1999-01-01T00:00:00Z"),
    "timezone": "0",
    "before": "0",
    "after": "0",
    "precision": "11",
    "calendarmodel": q("http://www.wikidata.org/entity/Q1985727"),
}
QUANTITY_VALUE = {
    "amount": q("+12"),
    "unit": q("http://www.wikidata.org/entity/Q11573"),
    "upperBound": q("+13"),
    "lowerBound": q("+11"),
}
COORD_VALUE = {
    "latitude": "52.5",
    "longitude": "13.4",
    "altitude": "null",
    "precision": "0.0001",
    "globe": q("http://www.wikidata.org/entity/Q2"),
}
MONO_VALUE = {"text": q("Berlin"), "language": q("de")}
TIME_DV = dv("time", *TIME_VALUE.items())
QUANTITY_DV = dv("quantity", *QUANTITY_VALUE.items())
COORD_DV = dv("globecoordinate", *COORD_VALUE.items())
MONO_DV = dv("monolingualtext", *MONO_VALUE.items())


def snak(
    prop: str = "P31", value: str | None = ITEM_DV, dtype: str = "wikibase-item", **raw: str | None
) -> str:
    """A snak; `raw` members (JSON texts) override or drop (None) the defaults."""
    defaults = {"snaktype": q("value"), "property": q(prop), "datavalue": value, "datatype": q(dtype)}
    return obj(*_members(defaults, raw))


def statement(
    main: str | None = None, rank_name: str = "normal", sid: str = "Q1$1", **raw: str | None
) -> str:
    """A statement; `raw` members (JSON texts: rank, id, qualifiers, …) override or drop the defaults."""
    defaults = {
        "mainsnak": main if main is not None else snak(),
        "type": q("statement"),
        "id": q(sid),
        "rank": q(rank_name),
        "references": "[]",
    }
    return obj(*_members(defaults, raw))


def claims(*groups: tuple[str, list[str]]) -> str:
    """A claims map: (property, statements) in order (a property may repeat)."""
    return obj(*((prop, "[" + ",".join(sts) + "]") for prop, sts in groups))


LABELS = obj(
    ("en", obj(("language", q("en")), ("value", q("Berlin")))),
    ("de", obj(("language", q("de")), ("value", q("Berlin")))),
    ("zh", obj(("language", q("zh")), ("value", q("柏林")))),
)
DESCRIPTIONS = obj(("en", obj(("language", q("en")), ("value", q("capital of Germany")))))
ALIASES = obj(
    (
        "en",
        "["
        + obj(("language", q("en")), ("value", q("Berlin, Germany")))
        + ","
        + obj(("value", q("BER")))
        + "]",
    ),
    ("fr", "[" + obj(("value", q("Berlin"))) + "]"),
)
SITELINKS = obj(
    ("dewiki", obj(("site", q("dewiki")), ("title", q("Berlin")), ("badges", "[]"))),
    ("enwiki", obj(("site", q("enwiki")), ("title", q("Berlin")), ("badges", '["Q17437796","Q17437798"]'))),
    ("zhwiki", obj(("site", q("zhwiki")), ("title", q("柏林")))),
)
QUALIFIER = obj(("P580", "[" + snak("P580", TIME_DV, "time") + "]"))
QUALIFIERS_2 = obj(
    (
        "P580",
        "[" + snak("P580", TIME_DV, "time") + "," + snak("P580", None, "time", snaktype=q("somevalue")) + "]",
    ),
    ("P642", "[" + snak("P642", ITEM_DV) + "]"),
)
CLAIMS = claims(
    ("P31", [statement(sid="Q1$a"), statement(snak(value=item_dv(("id", q("Q515")))), sid="Q1$b")]),
    ("P18", [statement(snak("P18", STRING_DV, "commonsMedia"), sid="Q1$c", qualifiers=QUALIFIERS_2)]),
    ("P585", [statement(snak("P585", TIME_DV, "time"), sid="Q1$d")]),
    ("P1082", [statement(snak("P1082", QUANTITY_DV, "quantity"), sid="Q1$e", qualifiers=QUALIFIER)]),
    ("P625", [statement(snak("P625", COORD_DV, "globe-coordinate"), sid="Q1$f")]),
    ("P1448", [statement(snak("P1448", MONO_DV, "monolingualtext"), sid="Q1$g")]),
    ("P279", [statement(snak("P279"), "deprecated", "Q1$h"), statement(snak("P279"), sid="Q1$i")]),
)


def entity(ident: str = "Q1", **raw: str | None) -> bytes:
    """An entity line (UTF-8); `raw` members (JSON texts) override, drop (None) or add members."""
    defaults = {
        "type": q("item"),
        "id": q(ident),
        "labels": LABELS,
        "descriptions": DESCRIPTIONS,
        "aliases": ALIASES,
        "claims": CLAIMS,
        "sitelinks": SITELINKS,
        "lastrevid": "123",
    }
    return obj(*_members(defaults, raw)).encode("utf-8")


def with_members(line: bytes, *members: tuple[str, str]) -> bytes:
    """`line` (an object) with raw members appended before its closing brace."""
    extra = ",".join(f'"{k}":{v}' for k, v in members)
    return line[:-1] + b"," + extra.encode("utf-8") + b"}"


def with_statements(*sts: str, prop: str = "P31") -> bytes:
    """An entity whose only claims are `sts` under `prop`."""
    return entity(claims=claims((prop, list(sts))))


def _value_entity(
    prop: str, kind: str, dtype: str, defaults: dict[str, str], raw: dict[str, str | None]
) -> bytes:
    value = dv(kind, *_members(defaults, raw))
    return entity(claims=claims((prop, [statement(snak(prop, value, dtype))])))


def time_value(**raw: str | None) -> bytes:
    return _value_entity("P585", "time", "time", TIME_VALUE, raw)


def quantity(**raw: str | None) -> bytes:
    return _value_entity("P1082", "quantity", "quantity", QUANTITY_VALUE, raw)


def coord(**raw: str | None) -> bytes:
    return _value_entity("P625", "globecoordinate", "globe-coordinate", COORD_VALUE, raw)


def mono(**raw: str | None) -> bytes:
    return _value_entity("P1448", "monolingualtext", "monolingualtext", MONO_VALUE, raw)


def ref(*members: tuple[str, str]) -> bytes:
    """An entity whose P31 (kept), P279 (kept and deprecated) and a qualifier hold the reference `members`."""
    value = item_dv(*members)
    return entity(
        claims=claims(
            (
                "P31",
                [statement(snak("P31", value), qualifiers=obj(("P642", "[" + snak("P642", value) + "]")))],
            ),
            (
                "P279",
                [
                    statement(snak("P279", value), sid="Q1$p"),
                    statement(snak("P279", value), "deprecated", "Q1$q"),
                ],
            ),
        )
    )


def sitelink(**raw: str | None) -> bytes:
    return entity(
        sitelinks=obj(
            ("enwiki", obj(*_members({"site": q("enwiki"), "title": q("Berlin"), "badges": "[]"}, raw)))
        )
    )


def qualified(qualifiers: str) -> bytes:
    """An entity whose first P31 statement has `qualifiers` (raw JSON)."""
    return entity(claims=claims(("P31", [statement(qualifiers=qualifiers), statement(sid="Q1$z")])))


NORMAL_LINES = [
    entity("Q100"),
    entity(
        "P200",
        type=q("property"),
        datatype=q("wikibase-item"),
        claims=claims(("P1629", [statement(snak("P1629", item_dv(("id", q("Q7")))), sid="P200$x")])),
    ),
    entity("Q300", claims="{}", aliases="{}", sitelinks="{}", descriptions="[]"),
]
