"""Wikidata values as the human-readable strings WikiReading answers are made of (spec §6).

Hewlett et al. 2016 §2.2: "all elements in each instance are human-readable strings ... The only
modification we made to these strings was to convert timestamps into a human-readable format
(e.g., '4 July 1776')." Spec §6 fixes the rest:

* item → its label in the site language (no label: the value is dropped, reason `no_label`);
* time by precision: 11 "4 July 1776", 10 "July 1776", 9 "1776", 8 "1770s", 7 "18th century",
  6 "2nd millennium"; years before the common era get the suffix " BC";
* quantity → the amount without "+", followed by the unit's label when the unit is an item;
* monolingualtext → its text; globecoordinate → "lat, lon"; string/external-id/url → as is.

Numbers (amounts and coordinates) are written as plain decimals, the way the released answer
vocabulary writes them (digit and "." tokens; no exponent token such as "1e" or "e-05"), and as
the number they are rather than the precision they were typed with: "+1.50" and "+1.5" are the
same value, so they render alike ("1.5") and a set holding both keeps one answer.

A snak is a mapping with the typed value columns of `schemas.wikidata.SNAK_VALUE_FIELDS`, so main
snaks (rows of `truthy_claims`) and qualifiers (its `qualifiers` structs) render the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal, NewType

#: A Wikidata entity id such as "Q64" or "P17" (qwikidata's `ItemId`/`PropertyId` idea).
EntityId = NewType("EntityId", str)

#: Datatypes rendered by default: exactly those spec §6 names. commonsMedia, geo-shape,
#: tabular-data, math, musical-notation, lexemes and properties as values are dropped
#: (reason `unsupported_datatype`); the released answer vocabulary has no file-name tokens such
#: as "jpg", so the original dataset left media files out too.
DEFAULT_DATATYPES: tuple[str, ...] = (
    "wikibase-item",
    "time",
    "quantity",
    "monolingualtext",
    "globe-coordinate",
    "string",
    "external-id",
    "url",
)

#: The datatype a value implies when the snak does not say (dumps before ~2015 omit it). A plain
#: string value is ambiguous (string, external-id, commonsMedia, url…), so it maps to nothing.
_DATATYPE_OF_VALUE = {
    "time": "time",
    "quantity": "quantity",
    "monolingualtext": "monolingualtext",
    "globecoordinate": "globe-coordinate",
}

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

_TIME = re.compile(r"^([+-])(\d+)-(\d{2})-(\d{2})T")

#: Decimal exponents beyond this are not expanded (a number of more than ~1,000 digits is a damaged
#: value, not a quantity); Wikidata amounts never carry an exponent at all.
MAX_DECIMAL_EXPONENT = 1000
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")

CoarseTime = Literal["year", "drop"]


@dataclass(frozen=True)
class RenderOptions:
    """How values are rendered. `coarse_time` says what happens to times less precise than a
    millennium (precision < 6, which spec §6 does not name): render the stored year ("year", the
    default, e.g. the Universe's start time "13798000000 BC") or drop them ("drop")."""

    datatypes: frozenset[str] = frozenset(DEFAULT_DATATYPES)
    coarse_time: CoarseTime = "year"


@dataclass(frozen=True)
class Rendered:
    """A rendered value (`text`), or why there is none (`reason`). `note` names a rendering
    decision worth counting (e.g. `time_coarse_as_year`) even when the value was kept."""

    text: str | None
    reason: str | None = None
    note: str | None = None


def effective_datatype(snak: Mapping[str, Any], property_datatype: str | None = None) -> str | None:
    """The snak's datatype: as written, else the property's declared datatype, else implied by the
    value (an entity id value implies wikibase-item for Q ids, wikibase-property for P ids)."""
    datatype = snak.get("datatype")
    if datatype:
        return str(datatype)
    if property_datatype:
        return property_datatype
    value_type = snak.get("value_type")
    if value_type == "wikibase-entityid":
        item = str(snak.get("item") or "")
        return {"Q": "wikibase-item", "P": "wikibase-property"}.get(item[:1])
    return _DATATYPE_OF_VALUE.get(str(value_type))


def render_value(
    snak: Mapping[str, Any],
    labels: Mapping[str, str],
    options: RenderOptions | None = None,
    property_datatype: str | None = None,
) -> Rendered:
    """Render one snak's value as spec §6 says, or say why it is dropped.

    `labels` maps entity ids to their label in the site language (for item values and units).
    somevalue/novalue snaks are never values (spec §1): reasons `somevalue`, `novalue`.
    """
    options = options or RenderOptions()
    snaktype = snak.get("snaktype")
    if snaktype != "value":
        return Rendered(None, str(snaktype or "no_snaktype"))
    datatype = effective_datatype(snak, property_datatype)
    if datatype is None:
        return Rendered(None, "unknown_datatype")
    if datatype not in options.datatypes:
        return Rendered(None, "unsupported_datatype")
    value_type = snak.get("value_type")
    if value_type == "wikibase-entityid":
        item = snak.get("item")
        label = labels.get(str(item)) if item else None
        return Rendered(label) if label else Rendered(None, "no_label")
    if value_type == "string":
        text = snak.get("string_value")
        return Rendered(str(text)) if text is not None else Rendered(None, "malformed_value")
    if value_type == "monolingualtext":
        text = snak.get("text")
        return Rendered(str(text)) if text is not None else Rendered(None, "malformed_value")
    if value_type == "time":
        return render_time(snak.get("time"), snak.get("time_precision"), options.coarse_time)
    if value_type == "quantity":
        return render_quantity(snak.get("amount"), snak.get("unit"), labels)
    if value_type == "globecoordinate":
        return render_coordinate(snak.get("latitude"), snak.get("longitude"))
    return Rendered(None, "unsupported_value_type")


def render_time(time: Any, precision: Any, coarse_time: CoarseTime = "year") -> Rendered:
    """A Wikidata time value by its precision (spec §6), e.g. ("+1776-07-04T00:00:00Z", 11) ->
    "4 July 1776", ("-0044-03-15T00:00:00Z", 10) -> "March 44 BC".

    The calendar model is not converted: a Julian date renders as stored. A day-precision value
    with a zero day or month is rendered at the precision it actually has (note
    `time_precision_degraded`); precisions finer than a day render the day
    (`time_finer_than_day`).
    """
    if not isinstance(time, str) or precision is None:
        return Rendered(None, "malformed_value")
    match = _TIME.match(time)
    if match is None:
        return Rendered(None, "malformed_value")
    sign, year_text, month_text, day_text = match.groups()
    year, month, day = int(year_text), int(month_text), int(day_text)
    bc = " BC" if sign == "-" and year > 0 else ""
    prec = int(precision)
    note: str | None = None
    if prec > 11:
        prec, note = 11, "time_finer_than_day"
    if prec == 11 and day == 0:
        prec, note = 10, "time_precision_degraded"
    if prec == 10 and not 1 <= month <= 12:
        prec, note = 9, "time_precision_degraded"
    if prec == 11:
        return Rendered(f"{day} {MONTHS[month - 1]} {year}{bc}", note=note)
    if prec == 10:
        return Rendered(f"{MONTHS[month - 1]} {year}{bc}", note=note)
    if prec == 9:
        return Rendered(f"{year}{bc}", note=note)
    if prec == 8:
        return Rendered(f"{year // 10 * 10}s{bc}")
    if prec == 7:
        return Rendered(f"{ordinal(_ceil_div(year, 100))} century{bc}")
    if prec == 6:
        return Rendered(f"{ordinal(_ceil_div(year, 1000))} millennium{bc}")
    if coarse_time == "drop":
        return Rendered(None, "time_too_coarse")
    return Rendered(f"{year}{bc}", note="time_coarse_as_year")


def render_quantity(amount: Any, unit: Any, labels: Mapping[str, str]) -> Rendered:
    """The amount as a plain decimal (`decimal_text`: no "+", no trailing fractional zeros), then
    the unit's label when the unit is an item ("+34" in Q11573 -> "34 metre", "+10.0" -> "10"); a
    unit item without a label drops the value (`unit_without_label`), since the bare number would
    be a different answer, and an amount that is not a decimal number is `malformed_value`."""
    if not isinstance(amount, str) or not amount:
        return Rendered(None, "malformed_value")
    number = decimal_text(amount)
    if number is None:
        return Rendered(None, "malformed_value")
    if unit is None or str(unit) == "1":
        return Rendered(number)
    unit_id = str(unit).rsplit("/", 1)[-1]  # tolerate the full entity URI form
    label = labels.get(unit_id)
    if not label:
        return Rendered(None, "unit_without_label")
    return Rendered(f"{number} {label}")


def render_coordinate(latitude: Any, longitude: Any) -> Rendered:
    """ "lat, lon" in decimal degrees: the shortest digits that read back as the stored double,
    written positionally ("0.00001", never "1e-05"; "47", never "47.0")."""
    if latitude is None or longitude is None:
        return Rendered(None, "malformed_value")
    lat, lon = decimal_text(repr(float(latitude))), decimal_text(repr(float(longitude)))
    if lat is None or lon is None:
        return Rendered(None, "malformed_value")
    return Rendered(f"{lat}, {lon}")


def decimal_text(text: str) -> str | None:
    """A decimal number as the release writes it: positional, without "+", without trailing
    fractional zeros and without a sign on zero ("+1.50" -> "1.5", "+10.0" -> "10", "1e-05" ->
    "0.00001", "-0.0" -> "0"); None if `text` is not a finite decimal number. Exact: no digit of
    the number is rounded away, however many it has."""
    if _DECIMAL.fullmatch(text) is None:
        return None
    value = Decimal(text)
    if not value.is_finite() or abs(int(value.as_tuple().exponent)) > MAX_DECIMAL_EXPONENT:
        return None
    digits = format(value, "f")
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    return "0" if digits in ("-0", "") else digits


def ordinal(n: int) -> str:
    """English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 102nd."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _ceil_div(a: int, b: int) -> int:
    # The n-th century is years (n-1)*100+1 .. n*100, so year 1800 is in the 18th, 1801 in the 19th.
    return max(1, -(-a // b))
