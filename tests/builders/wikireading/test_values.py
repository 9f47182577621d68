"""Spec §6 value rendering and answer sets on real statements of the fixture dump.

The statements come from the `wikidata` stage's `truthy_claims` (main snaks and their qualifiers),
or, for ranks truthy selection leaves out, straight from the dump's JSON; labels from the same dump
plus the two real unit labels in `fixtures/wikireading/`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from entbench.builders.wikireading.answers import consolidate
from entbench.builders.wikireading.values import (
    RenderOptions,
    decimal_text,
    ordinal,
    render_coordinate,
    render_quantity,
    render_time,
    render_value,
)
from tests.builders.wikireading.support import (
    claims_by_key,
    labels_of,
    raw_entity,
    real_scan_dirs,
    snak_of,
)

Claims = dict[tuple[str, str], list[dict[str, Any]]]


@pytest.fixture(scope="module")
def wikidata_dir() -> Path:
    return real_scan_dirs()["wikidata"]


@pytest.fixture(scope="module")
def claims(wikidata_dir: Path) -> Claims:
    return claims_by_key(wikidata_dir)


@pytest.fixture(scope="module")
def labels(wikidata_dir: Path) -> dict[str, str]:
    return labels_of(wikidata_dir)


def texts(snaks: list[dict[str, Any]], labels: dict[str, str], **options: Any) -> list[str | None]:
    return [render_value(s, labels, RenderOptions(**options)).text for s in snaks]


def qualifier(claims: Claims, subject: str, prop: str, qualifier_prop: str, time: str) -> dict[str, Any]:
    for row in claims[(subject, prop)]:
        for q in row["qualifiers"] or []:
            if q["property"] == qualifier_prop and q["time"] == time:
                return dict(q)
    raise KeyError((subject, prop, qualifier_prop, time))


# --- time ----------------------------------------------------------------------------------------
def test_day_precision_on_real_birth_and_death_dates(claims: Claims, labels: dict[str, str]) -> None:
    # George Washington (Q23): +1732-02-22 / +1799-12-14, precision 11.
    assert texts(claims[("Q23", "P569")], labels) == ["22 February 1732"]
    assert texts(claims[("Q23", "P570")], labels) == ["14 December 1799"]
    # A Julian-calendar date renders as stored (Constantine the Great, Q8413).
    assert claims[("Q8413", "P569")][0]["time_calendar"] == "Q1985786"
    assert texts(claims[("Q8413", "P569")], labels) == ["27 February 272"]


def test_year_precision_including_padded_years(claims: Claims, labels: dict[str, str]) -> None:
    assert claims[("Q64", "P571")][0]["time"] == "+1237-01-01T00:00:00Z"  # precision 9: January 1 is noise
    assert texts(claims[("Q64", "P571")], labels) == ["1237"]
    assert claims[("Q60", "P571")][0]["time"] == "+00000001624-01-01T00:00:00Z"
    assert texts(claims[("Q60", "P571")], labels) == ["1624"]


def test_month_precision_on_real_qualifiers(claims: Claims, labels: dict[str, str]) -> None:
    # London's headquarters (P159) since (P580) July 2002; Karlsruhe's twin town (P190) since
    # October 1998, stored with a day the precision says to ignore.
    assert render_value(qualifier(claims, "Q84", "P159", "P580", "+2002-07-00T00:00:00Z"), labels).text == (
        "July 2002"
    )
    assert render_value(qualifier(claims, "Q1040", "P190", "P580", "+1998-10-01T00:00:00Z"), labels).text == (
        "October 1998"
    )


def test_century_and_month_on_real_statements_truthy_selection_leaves_out() -> None:
    # Constantine's normal-rank birth "+0300" (century) and death "+0337-05" (month) are outranked
    # by preferred day-precision statements, so they are not truthy; they still render per §6.
    entity = raw_entity("Q8413")
    births = [snak_of(s["mainsnak"]) for s in entity["claims"]["P569"] if s["rank"] == "normal"]
    deaths = [snak_of(s["mainsnak"]) for s in entity["claims"]["P570"] if s["rank"] == "normal"]
    assert [b["time_precision"] for b in births] == [7]
    assert [render_value(b, {}).text for b in births] == ["3rd century"]
    assert [d["time_precision"] for d in deaths] == [10, 9]
    assert [render_value(d, {}).text for d in deaths] == ["May 337", "337"]


def test_before_the_common_era_gets_bc(claims: Claims, labels: dict[str, str]) -> None:
    # The Universe (Q1) starts at -13798000000 (precision 3, million years): coarser than spec §6's
    # table, rendered as the stored year by default, or dropped with coarse_time="drop".
    (start,) = claims[("Q1", "P580")]
    assert start["time"] == "-13798000000-00-00T00:00:00Z"
    rendered = render_value(start, labels)
    assert (rendered.text, rendered.note) == ("13798000000 BC", "time_coarse_as_year")
    dropped = render_value(start, labels, RenderOptions(coarse_time="drop"))
    assert (dropped.text, dropped.reason) == (None, "time_too_coarse")
    # Real BC qualifiers of the same item (precision 1 and 0).
    assert render_value(
        qualifier(claims, "Q1", "P793", "P585", "-13700000000-00-00T00:00:00Z"), labels
    ).text == ("13700000000 BC")
    assert render_value(
        qualifier(claims, "Q1", "P793", "P1319", "-16000000000-00-00T00:00:00Z"), labels
    ).text == ("16000000000 BC")


def test_spec_table_for_precisions_the_fixtures_lack() -> None:
    # Spec §6's own examples; no real truthy statement or qualifier has precision 6 or 8, and no
    # real BC date has precision 9-11 in the fixtures.
    assert render_time("+1776-07-04T00:00:00Z", 11).text == "4 July 1776"
    assert render_time("+1776-07-04T00:00:00Z", 10).text == "July 1776"
    assert render_time("+1776-00-00T00:00:00Z", 9).text == "1776"
    assert render_time("+1776-00-00T00:00:00Z", 8).text == "1770s"
    assert render_time("+1776-00-00T00:00:00Z", 7).text == "18th century"
    assert render_time("+1800-00-00T00:00:00Z", 7).text == "18th century"
    assert render_time("+1801-00-00T00:00:00Z", 7).text == "19th century"
    assert render_time("+1776-00-00T00:00:00Z", 6).text == "2nd millennium"
    assert render_time("-0044-03-15T00:00:00Z", 11).text == "15 March 44 BC"
    assert render_time("-0044-03-00T00:00:00Z", 10).text == "March 44 BC"
    assert render_time("-0753-00-00T00:00:00Z", 9).text == "753 BC"
    assert render_time("-0345-00-00T00:00:00Z", 8).text == "340s BC"
    assert render_time("-0500-00-00T00:00:00Z", 7).text == "5th century BC"
    assert render_time("-1500-00-00T00:00:00Z", 6).text == "2nd millennium BC"
    degraded = render_time("+1237-00-00T00:00:00Z", 11)
    assert (degraded.text, degraded.note) == ("1237", "time_precision_degraded")
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111, 112)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th", "112th",
    ]  # fmt: skip


# --- quantity, coordinate, text, strings, items -------------------------------------------------
def test_quantity_with_unit_label_and_unitless(claims: Claims, labels: dict[str, str]) -> None:
    # France's mains voltage: +230 in volts (Q25250); the Universe's mass in kilograms (Q11570).
    assert claims[("Q142", "P2884")][0]["unit"] == "Q25250"
    assert texts(claims[("Q142", "P2884")], labels) == ["230 volt"]
    assert texts(claims[("Q1", "P2067")], labels) == [
        "100000000000000000000000000000000000000000000000000000 kilogram"
    ]
    assert texts(claims[("Q64", "P1082")], labels) == ["3469849"]  # unit "1": no unit
    # Karlsruhe's elevation is in metres (Q11573), whose label the fixtures do not have.
    (first, _second) = claims[("Q1040", "P2044")]
    missing = render_value(first, labels)
    assert (missing.text, missing.reason) == (None, "unit_without_label")


def test_coordinates_monolingual_text_and_strings(claims: Claims, labels: dict[str, str]) -> None:
    assert texts(claims[("Q64", "P625")], labels) == ["52.516666666667, 13.383333333333"]
    assert texts(claims[("Q142", "P625")], labels) == ["47, 2"]  # 47.0, 2.0 without ".0"
    assert texts(claims[("Q64", "P1448")], labels) == ["Berlin"]  # monolingualtext (de)
    assert texts(claims[("Q64", "P856")], labels) == ["http://www.berlin.de/"]  # url
    assert texts(claims[("Q64", "P214")], labels) == ["122530980"]  # external-id
    assert texts(claims[("Q64", "P281")], labels) == ["10115–14199"]  # string


def test_numbers_render_as_plain_decimals() -> None:
    # Exponents are written out (a latitude of 1e-05 is "0.00001"); trailing fractional zeros and
    # the sign of zero go; no digit is rounded away, however many the amount has.
    assert render_coordinate(1e-05, -0.0).text == "0.00001, 0"
    assert render_coordinate(-3.5e-07, 179.99999999999997).text == "-0.00000035, 179.99999999999997"
    assert render_quantity("+1.50", "1", {}).text == render_quantity("+1.5", "1", {}).text == "1.5"
    assert render_quantity("-17.000", "Q25267", {"Q25267": "degree Celsius"}).text == "-17 degree Celsius"
    assert decimal_text("+123456789012345678901234567890.000") == "123456789012345678901234567890"
    assert [decimal_text(t) for t in ("+0.890", "-0.0", "+1E+3", "5.", ".5")] == [
        "0.89",
        "0",
        "1000",
        "5",
        "0.5",
    ]
    for damaged in ("", "abc", "NaN", "Infinity", " 1", "1_0", "1e5000", "+-1"):
        assert decimal_text(damaged) is None, damaged
    bad = render_quantity("twelve", "1", {})
    assert (bad.text, bad.reason) == (None, "malformed_value")


def test_items_render_as_labels_or_are_dropped(claims: Claims, labels: dict[str, str]) -> None:
    assert texts(claims[("Q22", "P17")], labels) == ["United Kingdom"]  # Q145 is in the dump
    dropped = render_value(claims[("Q64", "P17")][0], labels)  # Q183 Germany is not
    assert (dropped.text, dropped.reason) == (None, "no_label")


def test_unsupported_datatypes_and_special_snaks(claims: Claims, labels: dict[str, str]) -> None:
    image = render_value(claims[("Q64", "P18")][0], labels)
    assert (image.text, image.reason) == (None, "unsupported_datatype")  # commonsMedia
    assert render_value(
        claims[("Q64", "P18")][0], labels, RenderOptions(frozenset({"commonsMedia"}))
    ).text == ("Cityscape Berlin.jpg")
    assert render_value(claims[("Q1", "P1419")][0], labels).reason == "somevalue"
    assert render_value(claims[("Q35", "P3238")][0], labels).reason == "novalue"


# --- answer sets -----------------------------------------------------------------------------------
def test_multi_valued_property_becomes_one_answer_set(claims: Claims, labels: dict[str, str]) -> None:
    # Berlin's earliest written records (P1249): two statements, one instance.
    answer = consolidate(claims[("Q64", "P1249")], labels)
    assert answer.answers == ("1237", "1244")
    # Berlin's twin towns (P190): 18 statements; of the towns only London (Q84) has a label in this
    # dump, so the set keeps London and counts the 17 others.
    twins = consolidate(claims[("Q64", "P190")], labels)
    assert twins.answers == ("London",)
    assert twins.dropped == {"no_label": 17}
    assert consolidate(claims[("Q64", "P190")], labels, on_partial="drop").answers == ()


def test_equal_renderings_count_once(claims: Claims, labels: dict[str, str]) -> None:
    # Karlsruhe's area is stated twice as +173.46 in km² (Q712226, not labelled in the fixtures:
    # the label is supplied here so that the unit renders).
    areas = claims[("Q1040", "P2046")]
    assert [a["amount"] for a in areas] == ["+173.46", "+173.46"]
    both = consolidate(areas, {**labels, "Q712226": "square kilometre"})
    assert both.answers == ("173.46 square kilometre",)
    assert both.duplicates == 1
    # France's unemployment (P1198) is stated as "+10" and "+10.0" percent: one number, so one
    # answer (as the release writes numbers: the value, not the precision it was typed with).
    unemployment = claims[("Q142", "P1198")]
    assert [a["amount"] for a in unemployment] == ["+10", "+10.0"]
    assert consolidate(unemployment, labels).answers == ()  # percent (Q11229): no label
    merged = consolidate(unemployment, {**labels, "Q11229": "percent"})
    assert (merged.answers, merged.duplicates) == (("10 percent",), 1)


def test_truthy_selection_is_respected(claims: Claims, labels: dict[str, str]) -> None:
    # Berlin's population: many statements in the dump, one preferred -> one truthy value.
    all_ranks = [s["rank"] for s in raw_entity("Q64")["claims"]["P1082"]]
    assert all_ranks.count("preferred") == 1 and len(all_ranks) > 1
    assert [r["rank"] for r in claims[("Q64", "P1082")]] == ["preferred"]
    assert consolidate(claims[("Q64", "P1082")], labels).answers == ("3469849",)
    # Constantine: the preferred day-precision dates, not the normal-rank century/month ones.
    assert consolidate(claims[("Q8413", "P569")], labels).answers == ("27 February 272",)
    assert consolidate(claims[("Q8413", "P570")], labels).answers == ("22 May 337",)
