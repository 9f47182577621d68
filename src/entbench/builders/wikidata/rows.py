"""Decoded entities -> Arrow tables, with as little per-value Python work as possible.

The scan's hot path is not JSON decoding (msgspec does that in C) but turning millions of decoded
snaks into columns. Each snak is taken apart right after its entity is decoded, while its objects
are still in cache: one tuple of the shared columns, and one `astuple` (C) of its value appended
to the list of its datavalue kind. At the end each kind's columns are built in one `pa.array`
call and scattered into otherwise-null columns with `replace_with_mask`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from msgspec.structs import astuple

from entbench.engine.shards import shard_of
from entbench.engine.stage import BucketSink
from entbench.readers.wikidata_entities import (
    CoordDV,
    EntityDecoder,
    EntityIdDV,
    EntityRef,
    MonoDV,
    QuantityDV,
    StringDV,
    TimeDV,
    entity_type_of,
    ref_id,
)
from entbench.schemas import wikidata as schema

OFFSET_COLUMN = "_offset"
OFFSET_FIELD = pa.field(OFFSET_COLUMN, pa.int64(), nullable=False)

#: Per datavalue kind: its `value_type` name and the columns its `astuple(value)` fills, in order
#: (None skips a tuple position).
_KINDS: dict[type, tuple[str, tuple[str | None, ...]]] = {
    EntityIdDV: ("wikibase-entityid", ("item", None, None)),
    StringDV: ("string", ("string_value",)),
    TimeDV: ("time", ("time", "time_precision", "time_calendar")),
    QuantityDV: ("quantity", ("amount", "unit", "upper_bound", "lower_bound")),
    CoordDV: ("globecoordinate", ("latitude", "longitude", "coord_precision", "globe")),
    MonoDV: ("monolingualtext", ("text", "text_language")),
}
_VALUE_TYPE_NAMES = pa.array([None, *(name for name, _ in _KINDS.values())], pa.string())
_URI_COLUMNS = frozenset(["time_calendar", "unit", "globe"])  # URIs reduced to their last segment (a QID)
_URI_PREFIX = r"^https?://.*/"
_FIELD_TYPES = {f.name: f.type for f in schema.SNAK_VALUE_FIELDS}
#: Properties whose outranked statements are kept too (`outranked_type_claims`).
TYPE_PROPERTIES = frozenset(["P31", "P279"])


class SnakColumns:
    """Accumulates the `SNAK_VALUE_FIELDS` columns of a sequence of snaks.

    Only what varies is appended per snak: the value (as a tuple, per kind) and, where asked, the
    datatype. `snaktype` is "value" unless recorded otherwise, so it costs nothing per snak.
    """

    __slots__ = ("datatypes", "kinds", "n", "odd_snaktypes", "unsupported")

    def __init__(self, *, per_snak_datatype: bool) -> None:
        self.n = 0
        self.datatypes: list[str | None] | None = [] if per_snak_datatype else None
        # kind -> (positions, value tuples)
        self.kinds: dict[type, tuple[list[int], list[Any]]] = {kind: ([], []) for kind in _KINDS}
        self.odd_snaktypes: dict[int, str] = {}
        self.unsupported: dict[int, str] = {}

    def add(self, snak: Any) -> None:
        """Append one snak (call right after decoding, while its objects are in cache)."""
        pos = self.n
        self.n = pos + 1
        if self.datatypes is not None:
            self.datatypes.append(snak.datatype)
        if snak.snaktype != "value":
            self.odd_snaktypes[pos] = snak.snaktype
        dv = snak.datavalue
        if dv is None:
            if snak.unsupported_type is not None:
                self.unsupported[pos] = snak.unsupported_type
            return
        kind = type(dv)
        positions, values = self.kinds[kind]
        positions.append(pos)
        values.append(dv.value if kind is StringDV else astuple(dv.value))

    def arrays(self, datatype: pa.Array | None = None) -> list[pa.Array]:
        """The columns in schema order (`datatype` given when it is not recorded per snak)."""
        n = self.n
        if n == 0:
            return [pa.array([], f.type) for f in schema.SNAK_VALUE_FIELDS]
        columns: dict[str, pa.Array] = {
            "snaktype": _with_exceptions(pa.repeat("value", n) if n else None, n, self.odd_snaktypes),
            "datatype": datatype if datatype is not None else pa.array(self.datatypes, pa.string()),
        }
        codes = np.zeros(n, dtype=np.int8)
        for code, (kind, (_type_name, names)) in enumerate(_KINDS.items(), start=1):
            positions_list, values = self.kinds[kind]
            if not positions_list:
                continue
            positions = np.array(positions_list, dtype=np.int64)
            codes[positions] = code
            # Row i of the output takes value index[i] of this kind, or null.
            index = np.full(n, -1, dtype=np.int32)
            index[positions] = np.arange(len(positions), dtype=np.int32)
            take_index = pa.array(index, mask=index < 0)
            parts = [values] if kind is StringDV else list(zip(*values, strict=True))
            for name, part in zip(names, parts, strict=True):
                if name is None:
                    continue
                column = _fill_numeric_ids(part, values) if name == "item" else part
                array = _typed_array(column, _FIELD_TYPES[name])
                if name in _URI_COLUMNS:
                    array = pc.replace_substring_regex(array, _URI_PREFIX, "")
                columns[name] = array.take(take_index)
        columns["value_type"] = _with_exceptions(_VALUE_TYPE_NAMES.take(pa.array(codes)), n, self.unsupported)
        return [columns.get(f.name, pa.nulls(n, f.type)) for f in schema.SNAK_VALUE_FIELDS]


def _with_exceptions(base: Any, n: int, exceptions: dict[int, str]) -> pa.Array:
    """A string column equal to `base` except at the positions in `exceptions` (rare)."""
    array = pa.array(base, pa.string()) if not isinstance(base, pa.Array) else base.cast(pa.string())
    if not exceptions:
        return array
    positions = sorted(exceptions)
    mask = np.zeros(n, dtype=bool)
    mask[positions] = True
    replacements = pa.array([exceptions[p] for p in positions], pa.string())
    return pc.replace_with_mask(array, pa.array(mask), replacements)


def _fill_numeric_ids(ids: Sequence[Any], values: list[tuple[Any, ...]]) -> Sequence[Any]:
    """Entity references written with only `numeric-id` (2014-2016 dumps) get their id rebuilt."""
    if None not in ids:
        return ids
    filled = list(ids)
    position = -1
    try:
        while True:  # list.index scans in C: only the (rare) missing ids cost Python work
            position = filled.index(None, position + 1)
            _, numeric_id, entity_type = values[position]
            filled[position] = ref_id(EntityRef(None, numeric_id, entity_type))
    except ValueError:
        return filled


def _typed_array(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, arrow_type)
    except (pa.ArrowInvalid, OverflowError):
        # A value outside the column's range (e.g. a nonsense time precision) becomes null
        # rather than failing the whole block.
        return pa.array([_in_range(v, arrow_type) for v in values], arrow_type)


def _in_range(value: Any, arrow_type: pa.DataType) -> Any:
    try:
        pa.array([value], arrow_type)
    except (pa.ArrowInvalid, OverflowError):
        return None
    return value


class ClaimRows:
    """Truthy statements of one shard.

    What is constant within a property's statements (subject, property, rank, datatype, source
    offset) is stored once per group and expanded with `take`; per statement only its ordinal, id
    and snak value are appended.
    """

    __slots__ = (
        "groups",
        "main",
        "ordinals",
        "qualifier_groups",
        "qualifier_offsets",
        "qualifier_valid",
        "qualifiers",
        "statement_ids",
    )

    def __init__(self) -> None:
        self.groups: list[tuple[str, str, str, str | None, int, int, int]] = []
        self.ordinals: list[int] = []  # per statement: its position among the property's statements
        self.statement_ids: list[str | None] = []
        self.main = SnakColumns(per_snak_datatype=False)
        self.qualifiers = SnakColumns(per_snak_datatype=True)
        self.qualifier_groups: list[tuple[str, int]] = []  # (qualifier property, number of snaks)
        self.qualifier_offsets: list[int] = [0]
        self.qualifier_valid: list[bool] = []

    def __len__(self) -> int:
        return len(self.ordinals)

    def table(self) -> tuple[pa.Table, np.ndarray]:
        """The rows as a `truthy_claims` table plus the `_offset` column, and each row's shard."""
        subject, prop, rank, datatype, offsets, shards, counts = zip(*self.groups, strict=True)
        expand = _repeat_index(counts)
        if self.qualifier_groups:
            qprops, qcounts = zip(*self.qualifier_groups, strict=True)
            qualifier_property = pa.array(qprops, pa.string()).take(_repeat_index(qcounts))
        else:
            qualifier_property = pa.array([], pa.string())
        qualifier_values = pa.StructArray.from_arrays(
            [qualifier_property, *self.qualifiers.arrays()], fields=list(schema.QUALIFIER_TYPE)
        )
        qualifiers = pa.ListArray.from_arrays(
            pa.array(self.qualifier_offsets, pa.int32()),
            qualifier_values,
            type=pa.list_(pa.field("item", schema.QUALIFIER_TYPE)),
            mask=pc.invert(pa.array(self.qualifier_valid, pa.bool_())),
        )
        arrays = [
            pa.array(subject, pa.string()).take(expand),
            pa.array(prop, pa.string()).take(expand),
            pa.array(self.ordinals, pa.int32()),
            pa.array(self.statement_ids, pa.string()),
            pa.array(rank, pa.string()).take(expand),
            *self.main.arrays(datatype=pa.array(datatype, pa.string()).take(expand)),
            qualifiers,
            pa.array(offsets, pa.int64()).take(expand),
        ]
        row_shards = np.repeat(np.asarray(shards, dtype=np.int64), np.asarray(counts, dtype=np.int64))
        return pa.Table.from_arrays(arrays, schema=CLAIMS_MAP_SCHEMA), row_shards


def _repeat_index(counts: Sequence[int]) -> pa.Array:
    """[0]*counts[0] + [1]*counts[1] + …, as an Arrow index array."""
    return pa.array(np.repeat(np.arange(len(counts), dtype=np.int32), np.asarray(counts, dtype=np.int64)))


CLAIMS_MAP_SCHEMA = schema.TRUTHY_CLAIMS.append(OFFSET_FIELD)


class ScanRows:
    """The rows of one map task, converted to Arrow in bulk at the end and only then split by shard.

    Building one table per output table (not one per shard) keeps pyarrow's per-call overhead
    independent of the shard count; each row carries its shard id (the last tuple element, or per
    claim group) and `emit` cuts the tables into zero-copy slices per shard.
    """

    def __init__(
        self, languages: Sequence[str], sites: Sequence[str], num_shards: int, decoder: EntityDecoder
    ) -> None:
        self.languages = tuple(languages)
        self.sites = tuple(sites)
        self.all_sites = "*" in self.sites
        self.num_shards = num_shards
        self.types = decoder.types
        self.entities: list[tuple[Any, ...]] = []
        self.aliases: list[tuple[Any, ...]] = []
        self.claims = ClaimRows()
        self.sitelinks: list[tuple[Any, ...]] = []
        self.outranked: list[tuple[Any, ...]] = []
        self.redirects: list[tuple[Any, ...]] = []
        self.entity_count = 0
        self.redirect_count = 0

    def add_entity(self, ent: Any, offset: int) -> None:
        """Add the rows of one decoded entity."""
        ident: str = ent.id
        shard = shard_of(ident, self.num_shards)
        self.entity_count += 1
        lang_fields = self.types.lang_fields
        labels = ent.labels if ent.labels is not None and not isinstance(ent.labels, list) else None
        descs = (
            ent.descriptions
            if ent.descriptions is not None and not isinstance(ent.descriptions, list)
            else None
        )
        self.entities.append(
            (
                ident,
                entity_type_of(ent),
                ent.datatype,
                ent.lastrevid,
                offset,
                *[_lang_value(labels, a) for a in lang_fields],
                *[_lang_value(descs, a) for a in lang_fields],
                shard,
            )
        )
        aliases = getattr(ent, "aliases", None)
        if aliases is not None and not isinstance(aliases, list):
            out = self.aliases
            for lang, attr in zip(self.languages, lang_fields, strict=True):
                values = getattr(aliases, attr)
                if values:
                    out.extend((ident, lang, i, v.value, offset, shard) for i, v in enumerate(values))
        claims = getattr(ent, "claims", None) or getattr(ent, "statements", None)
        if claims and not isinstance(claims, list):
            self._add_claims(ident, claims, offset, shard, self.claims, self.outranked)
        sitelinks = getattr(ent, "sitelinks", None)
        if sitelinks and not isinstance(sitelinks, list):
            out = self.sitelinks
            if self.all_sites:
                for site in sorted(sitelinks):
                    link = sitelinks[site]
                    out.append((ident, site, link.title, link.badges, offset, shard))
            else:
                for site, attr in zip(self.sites, self.types.site_fields, strict=True):
                    link = getattr(sitelinks, attr)
                    if link is not None:
                        out.append((ident, site, link.title, link.badges, offset, shard))

    @staticmethod
    def _add_claims(
        ident: str,
        claims: dict[str, list[Any]],
        offset: int,
        shard: int,
        out: ClaimRows,
        outranked: list[tuple[Any, ...]],
    ) -> None:
        """Truthy statements (spec §1): per property, the preferred ones if any, else the normal ones.

        "Truthy statements represent statements that have the best non-deprecated rank for a given
        property. Namely, if there is a preferred statement for a property P, then only preferred
        statements for P will be considered truthy. Otherwise, all normal-rank statements for P are
        considered truthy." (Wikibase RDF dump format documentation)
        """
        groups = out.groups
        ordinals = out.ordinals
        statement_ids = out.statement_ids
        main = out.main
        main_kinds = main.kinds
        qualifier_columns = out.qualifiers
        add_qualifier = qualifier_columns.add
        qualifier_groups = out.qualifier_groups
        qualifier_offsets = out.qualifier_offsets
        qualifier_valid = out.qualifier_valid
        string_kind = StringDV
        for prop, statements in claims.items():
            best = "normal"
            for st in statements:
                if st.rank == "preferred":
                    best = "preferred"
                    break
            count = 0
            datatype = None
            keep_outranked = prop in TYPE_PROPERTIES
            for i, st in enumerate(statements):
                if st.rank != best:
                    if keep_outranked:
                        outranked.append((ident, prop, i, st.rank, _item_id(st.mainsnak), offset, shard))
                    continue
                snak = st.mainsnak
                if not count:
                    datatype = snak.datatype
                count += 1
                # The main snak, inlined from SnakColumns.add (this loop runs once per statement).
                pos = len(ordinals)
                ordinals.append(i)
                statement_ids.append(st.id)
                if snak.snaktype != "value":
                    main.odd_snaktypes[pos] = snak.snaktype
                dv = snak.datavalue
                if dv is not None:
                    kind = type(dv)
                    positions, values = main_kinds[kind]
                    positions.append(pos)
                    values.append(dv.value if kind is string_kind else astuple(dv.value))
                elif snak.unsupported_type is not None:
                    main.unsupported[pos] = snak.unsupported_type
                quals = getattr(st, "qualifiers", None)
                if quals and not isinstance(quals, list):
                    for qprop, snaks in quals.items():
                        qualifier_groups.append((qprop, len(snaks)))
                        for q in snaks:
                            add_qualifier(q)
                    qualifier_valid.append(True)
                    qualifier_offsets.append(qualifier_columns.n)
                else:
                    qualifier_valid.append(False)
                    qualifier_offsets.append(qualifier_offsets[-1])
            if count:
                groups.append((ident, prop, best, datatype, offset, shard, count))
        main.n = len(ordinals)

    def add_redirect(self, from_id: str, to_id: str, offset: int) -> None:
        """Record `from_id` -> `to_id` (routed by `from_id`)."""
        self.redirect_count += 1
        self.redirects.append((from_id, to_id, offset, shard_of(from_id, self.num_shards)))

    def tables(self) -> dict[str, tuple[pa.Table, np.ndarray]]:
        """Every non-empty table of the task with the shard id of each row."""
        result: dict[str, tuple[pa.Table, np.ndarray]] = {}
        entity_schema = schema.entities_schema(self.languages)
        for name, rows, table_schema in (
            ("entities", self.entities, entity_schema),
            ("aliases", self.aliases, schema.ALIASES.append(OFFSET_FIELD)),
            ("sitelinks", self.sitelinks, schema.SITELINKS.append(OFFSET_FIELD)),
            ("outranked_type_claims", self.outranked, schema.OUTRANKED_TYPE_CLAIMS.append(OFFSET_FIELD)),
            ("redirects", self.redirects, schema.REDIRECTS),
        ):
            if rows:
                result[name] = rows_to_table(rows, table_schema)
        if len(self.claims):
            result["truthy_claims"] = self.claims.table()
        return result

    def emit(self, sink: BucketSink) -> None:
        """Hand every table to the sink with its rows' shards (`emit_tables`)."""
        emit_tables(sink, [self.tables()])


#: Tables by name, each with the shard id of every row (`ScanRows.tables`, `NativeRows.tables`).
ShardedTables = dict[str, tuple[pa.Table, np.ndarray]]


def emit_tables(sink: BucketSink, parts: Sequence[ShardedTables]) -> None:
    """Hand the rows of several row builders to the sink, table by table, with their shards.

    Each builder's rows go in their own call: the native scan's come grouped by spill group and
    are cut without a copy, which the reference path's rows put in front would undo (a reducer
    sorts its shard by a unique key, so the order rows are spilled in never shows)."""
    for name in sorted({name for part in parts for name in part}):
        for part in parts:
            if name in part:
                table, shards = part[name]
                if table.num_rows:
                    sink.emit_sharded(name, table, shards)


def _item_id(snak: Any) -> str | None:
    """The entity id a snak's value names, or None (somevalue, novalue, another value type)."""
    dv = snak.datavalue
    return ref_id(dv.value) if type(dv) is EntityIdDV else None


def _lang_value(container: Any, attr: str) -> str | None:
    if container is None:
        return None
    value = getattr(container, attr)
    return None if value is None else str(value.value)


def rows_to_table(rows: list[tuple[Any, ...]], table_schema: pa.Schema) -> tuple[pa.Table, np.ndarray]:
    """Row tuples (schema columns, then the shard id) to a table and the rows' shard ids."""
    *columns, shards = zip(*rows, strict=True)
    arrays = [pa.array(col, type=f.type) for col, f in zip(columns, table_schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=table_schema), np.asarray(shards, dtype=np.int64)
