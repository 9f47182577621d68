"""The native fast path of the Wikidata scan: `entbench._wdscan` column buffers -> Arrow tables.

`_wdscan.Scanner` (src/entbench/_native/wdscan.c) reads entity lines straight into Arrow-layout
buffers. It only takes lines it fully understands and hands every other line back; those go through
the reference decoder (`EntityDecoder` + `ScanRows`), so the two paths together produce exactly the
rows the reference path alone would (tests/builders/wikidata/test_native.py compares them).

The extension is compiled when the package is installed (hatch_build.py). Without a C compiler the
install still succeeds and the scan uses the reference path; `ENTBENCH_NATIVE=0` forces that path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from entbench.builders.wikidata.rows import CLAIMS_MAP_SCHEMA, OFFSET_FIELD
from entbench.engine.shards import column_shards
from entbench.native_ext import load_extension, native_switched_on
from entbench.readers.wikidata_entities import DecodeConfig
from entbench.schemas import wikidata as schema

#: The layout of `Scanner.columns()` this module reads; wdscan.c's `ABI` constant must match, so a
#: stale build (an old .so next to newer sources) is ignored rather than misread.
NATIVE_ABI = 5

_wdscan = load_extension("_wdscan", NATIVE_ABI)

#: Native columns of a snak, named as in `SNAK_VALUE_FIELDS`.
_SNAK_COLUMNS = tuple(f.name for f in schema.SNAK_VALUE_FIELDS)
_ALIASES_SCHEMA = schema.ALIASES.append(OFFSET_FIELD)
_SITELINKS_SCHEMA = schema.SITELINKS.append(OFFSET_FIELD)
_OUTRANKED_SCHEMA = schema.OUTRANKED_TYPE_CLAIMS.append(OFFSET_FIELD)
_MAX_LANGUAGES = 64
_MAX_SITES = 256
#: At most this many scanners per map task (`NativeRows` routes); past it, rows are reordered by
#: shard after the scan instead.
MAX_ROUTES = 256


def native_available() -> bool:
    """Whether the compiled scanner is installed (regardless of `ENTBENCH_NATIVE`)."""
    return _wdscan is not None


def native_enabled(config: DecodeConfig) -> bool:
    """Whether the scan of `config` can take the native path.

    The scanner handles the configurations the stage builds: listed languages, listed sites or
    every site (`*`), every table; partial decodes stay on the reference path.
    """
    if _wdscan is None or not native_switched_on():
        return False
    return (
        len(config.languages) <= _MAX_LANGUAGES
        and (config.sites is None or len(config.sites) <= _MAX_SITES)
        and config.aliases
        and config.claims
        and config.qualifiers
        and config.sitelinks
    )


class NativeRows:
    """The rows of the lines one map task's native scanners accepted, as the reference path's tables.

    Each line goes to the scanner of its shard's group (`shard // shards_per_group`, the sink's
    spill group), so every table comes out already grouped by spill group: the sink then cuts it
    into groups by slicing, where rows in line order had to be copied into group order (a take of
    every column, nested qualifiers included: about a tenth of the map's time after the parse).
    """

    def __init__(
        self,
        languages: Sequence[str],
        sites: Sequence[str] | None,
        num_shards: int,
        shards_per_group: int = 1,
    ) -> None:
        """`sites` None: every site (the `*` setting)."""
        assert _wdscan is not None
        self.languages = tuple(languages)
        self.sites = tuple(sites) if sites is not None else ()
        self.num_shards = num_shards
        self.shards_per_group = max(1, shards_per_group)
        routes = -(-num_shards // self.shards_per_group)
        if routes > MAX_ROUTES:
            routes = 1  # too many scanners for one task: one, and the sink reorders
        self.scanners = [_wdscan.Scanner(self.languages, self.sites, sites is None) for _ in range(routes)]
        self.entity_count = 0

    def scan(
        self, block: bytes | bytearray, base: int, start: int, end: int
    ) -> tuple[int, int, int, list[tuple[int, int, int]]]:
        """Scan block[start:end]: (entity lines, framing opens, framing closes, fallback lines).

        Fallback lines are (offset, line start, line end) in `block`, for the reference decoder.
        """
        if len(self.scanners) == 1:
            result = self.scanners[0].scan(block, base, start, end)
        else:
            result = _wdscan.scan_routed(
                self.scanners, self.num_shards, self.shards_per_group, block, base, start, end
            )
        entities, lines, opens, closes, fallbacks = result
        self.entity_count += entities
        return lines, opens, closes, fallbacks

    def tables(self) -> dict[str, tuple[pa.Table, np.ndarray]]:
        """Every non-empty table with the shard id of each row (the shape of `ScanRows.tables`),
        the rows of each scanner in turn (so grouped by spill group, unless the routing missed).

        The other scanners' rows are appended to the first's in C (`Scanner.absorb`) and exported
        once: building the ~60 Arrow arrays of each scanner in Python cost ~1 ms per scanner and
        task, a fifth of the map's time past the scan with 17 spill groups."""
        first, *rest = self.scanners
        for scanner in rest:
            first.absorb(scanner)
        return self._scanner_tables(first)

    def _scanner_tables(self, scanner: Any) -> dict[str, tuple[pa.Table, np.ndarray]]:
        """The tables of one scanner's rows, each with its rows' shards (from their parsed ids)."""
        cols: dict[str, Any] = scanner.columns()
        ids = _string(cols["e.id"])
        if not len(ids):
            return {}
        offsets = _number(cols["e.offset"], pa.int64())
        entity_shards = column_shards(ids, self.num_shards)
        result: dict[str, tuple[pa.Table, np.ndarray]] = {}
        entity_schema = schema.entities_schema(self.languages)
        entity_arrays = [
            ids,
            _string(cols["e.type"]),
            _string(cols["e.datatype"]),
            _number(cols["e.lastrevid"], pa.int64()),
            offsets,
            *(_string(cols[f"e.label.{i}"]) for i in range(len(self.languages))),
            *(_string(cols[f"e.description.{i}"]) for i in range(len(self.languages))),
        ]
        result["entities"] = (pa.Table.from_arrays(entity_arrays, schema=entity_schema), entity_shards)

        def add_child(
            name: str, prefix: str, table_schema: pa.Schema, middle: Callable[[], list[pa.Array]]
        ) -> None:
            """A per-entity table: its entity's id, the columns `middle` builds, its line's offset."""
            ent = _number(cols[f"{prefix}.ent"], pa.int32())
            if not len(ent):
                return
            arrays = [ids.take(ent), *middle(), offsets.take(ent)]
            shards = entity_shards[ent.to_numpy(zero_copy_only=False)]
            result[name] = (pa.Table.from_arrays(arrays, schema=table_schema), shards)

        def alias_columns() -> list[pa.Array]:
            language = pa.array(self.languages, pa.string()).take(_number(cols["a.lang"], pa.int32()))
            return [language, _number(cols["a.ordinal"], pa.int32()), _string(cols["a.alias"])]

        def sitelink_columns() -> list[pa.Array]:
            site = (
                pa.array(self.sites, pa.string()).take(_number(cols["s.site"], pa.int32()))
                if self.sites
                else _string(cols["s.site_name"])
            )
            badge_offsets, _ = _list_offsets(_number(cols["s.nbadges"], pa.int32()))
            badges = pa.ListArray.from_arrays(badge_offsets, _string(cols["s.badge"]))
            return [site, _string(cols["s.title"]), badges]

        def outranked_columns() -> list[pa.Array]:
            return [
                _string(cols["o.property"]),
                _number(cols["o.ordinal"], pa.int32()),
                _string(cols["o.rank"]),
                _string(cols["o.item"]),
            ]

        def claim_columns() -> list[pa.Array]:
            list_offsets, valid = _list_offsets(_number(cols["c.nquals"], pa.int32()))
            qualifier_values = pa.StructArray.from_arrays(
                [_string(cols["q.property"]), *_snak_arrays(cols, "q.snak.")],
                fields=list(schema.QUALIFIER_TYPE),
            )
            qualifiers = pa.ListArray.from_arrays(
                list_offsets,
                qualifier_values,
                type=pa.list_(pa.field("item", schema.QUALIFIER_TYPE)),
                mask=pa.array(~valid),
            )
            return [
                _string(cols["c.property"]),
                _number(cols["c.ordinal"], pa.int32()),
                _string(cols["c.statement_id"]),
                _string(cols["c.rank"]),
                *_snak_arrays(cols, "c.snak."),
                qualifiers,
            ]

        add_child("aliases", "a", _ALIASES_SCHEMA, alias_columns)
        add_child("sitelinks", "s", _SITELINKS_SCHEMA, sitelink_columns)
        add_child("outranked_type_claims", "o", _OUTRANKED_SCHEMA, outranked_columns)
        add_child("truthy_claims", "c", CLAIMS_MAP_SCHEMA, claim_columns)
        return result


def _validity(nulls: int, valid: bytes) -> pa.Buffer | None:
    return pa.py_buffer(valid) if nulls else None


def _string(col: tuple[Any, ...]) -> pa.Array:
    _kind, n, nulls, valid, offsets, data = col
    buffers = [_validity(nulls, valid), pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.string(), n, buffers, null_count=nulls)


def _number(col: tuple[Any, ...], arrow_type: pa.DataType) -> pa.Array:
    _kind, n, nulls, valid, data = col
    return pa.Array.from_buffers(
        arrow_type, n, [_validity(nulls, valid), pa.py_buffer(data)], null_count=nulls
    )


_SNAK_TYPES = {f.name: f.type for f in schema.SNAK_VALUE_FIELDS}


def _snak_arrays(cols: dict[str, Any], prefix: str) -> list[pa.Array]:
    arrays = []
    for name in _SNAK_COLUMNS:
        arrow_type = _SNAK_TYPES[name]
        col = cols[prefix + name]
        arrays.append(_string(col) if arrow_type == pa.string() else _number(col, arrow_type))
    return arrays


def _list_offsets(counts: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """List offsets from per-row element counts (-1 = a null list) and the rows' validity."""
    values = counts.to_numpy(zero_copy_only=False)
    valid = values >= 0
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(np.where(valid, values, 0), out=offsets[1:])
    return pa.array(offsets), valid
