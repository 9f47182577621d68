"""Normalized Wikidata tables written by the dump scan (spec §1).

All tables are sharded by entity id (`id` / `subject` / `from_id`), so every table of one
scan is co-partitioned: shard k of `truthy_claims` holds exactly the claims of the entities
in shard k of `entities`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from entbench.schemas.base import column_suffix

#: The typed value columns of a snak, shared by main snaks and qualifiers. Exactly one group is
#: filled, chosen by `value_type` (the datavalue kind); all are null for somevalue/novalue snaks.
SNAK_VALUE_FIELDS: tuple[pa.Field, ...] = (
    pa.field("snaktype", pa.string(), nullable=False),  # value | somevalue | novalue
    pa.field("datatype", pa.string()),  # property datatype as written in the snak (absent before ~2015)
    pa.field("value_type", pa.string()),  # wikibase-entityid | string | time | quantity | ...
    pa.field("item", pa.string()),  # entity id value: Q…, P…, L…, L…-F…, L…-S…, M…
    pa.field("string_value", pa.string()),  # string, external-id, url, commonsMedia, ...
    pa.field("time", pa.string()),  # as written, e.g. +1952-03-11T00:00:00Z, -13798000000-00-00T00:00:00Z
    pa.field("time_precision", pa.int8()),  # 0 (billion years) ... 11 (day) ... 14 (second)
    pa.field("time_calendar", pa.string()),  # QID of the calendar model (Q1985727 Gregorian)
    pa.field("amount", pa.string()),  # decimal as written (exact), e.g. +1.5
    pa.field("unit", pa.string()),  # "1" (unitless) or the unit's QID
    pa.field("lower_bound", pa.string()),
    pa.field("upper_bound", pa.string()),
    pa.field("latitude", pa.float64()),
    pa.field("longitude", pa.float64()),
    pa.field("coord_precision", pa.float64()),  # null where the dump has null
    pa.field("globe", pa.string()),  # QID of the globe (Q2 Earth)
    pa.field("text", pa.string()),  # monolingualtext
    pa.field("text_language", pa.string()),
)

QUALIFIER_TYPE = pa.struct([pa.field("property", pa.string(), nullable=False), *SNAK_VALUE_FIELDS])

TRUTHY_CLAIMS = pa.schema(
    [
        pa.field("subject", pa.string(), nullable=False),
        pa.field("property", pa.string(), nullable=False),
        pa.field("ordinal", pa.int32(), nullable=False),  # position in the property's statement list
        pa.field("statement_id", pa.string()),
        pa.field("rank", pa.string(), nullable=False),  # preferred | normal (truthy never has deprecated)
        *SNAK_VALUE_FIELDS,
        pa.field("qualifiers", pa.list_(pa.field("item", QUALIFIER_TYPE))),
    ]
)

#: The P31/P279 statements that are not truthy (deprecated, or normal where a preferred one exists).
#: Truthy ones are in `truthy_claims`; mGENRE's internal filter reads both (spec §2.1).
OUTRANKED_TYPE_CLAIMS = pa.schema(
    [
        pa.field("subject", pa.string(), nullable=False),
        pa.field("property", pa.string(), nullable=False),  # P31 | P279
        pa.field("ordinal", pa.int32(), nullable=False),  # position in the property's statement list
        pa.field("rank", pa.string(), nullable=False),  # normal | deprecated
        pa.field("item", pa.string()),  # the value's id; null for somevalue/novalue or a non-item value
    ]
)

ALIASES = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("language", pa.string(), nullable=False),
        pa.field("ordinal", pa.int32(), nullable=False),
        pa.field("alias", pa.string(), nullable=False),
    ]
)

SITELINKS = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("site", pa.string(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("badges", pa.list_(pa.string())),
    ]
)

#: `{"redirects": {"from": A, "to": B}}` seen in the dump: A is now B.
REDIRECTS = pa.schema(
    [
        pa.field("from_id", pa.string(), nullable=False),
        pa.field("to_id", pa.string(), nullable=False),
        pa.field("source_offset", pa.int64(), nullable=False),
    ]
)


def entities_schema(languages: Sequence[str]) -> pa.Schema:
    """The `entities` table: one row per entity, label and description per configured language."""
    fields = [
        pa.field("id", pa.string(), nullable=False),
        pa.field("type", pa.string(), nullable=False),  # item | property | lexeme | mediainfo | form | sense
        pa.field("datatype", pa.string()),  # properties only
        pa.field("lastrevid", pa.int64()),
        pa.field("source_offset", pa.int64(), nullable=False),  # byte offset of the line (uncompressed)
    ]
    for lang in languages:
        fields.append(pa.field(f"label_{column_suffix(lang)}", pa.string()))
    for lang in languages:
        fields.append(pa.field(f"description_{column_suffix(lang)}", pa.string()))
    return pa.schema(fields)
