"""Hand-written quirky Wikidata entity lines for the native scanner's differential tests
(`test_native.py`): each case is (id, line, native), where `native` says whether the C scanner must
take the line itself (True), must hand it back to the reference path (False), or may do either
(None). Data only; the tests that scan them are in `test_native.py`."""

from __future__ import annotations

from tests.builders.wikidata.native_support import (
    CLAIMS,
    COORD_DV,
    ITEM_DV,
    MONO_DV,
    QUALIFIER,
    QUALIFIERS_2,
    QUANTITY_DV,
    SITELINKS,
    STRING_DV,
    TIME_DV,
    claims,
    coord,
    dv,
    entity,
    item_dv,
    mono,
    obj,
    q,
    qualified,
    quantity,
    ref,
    sitelink,
    snak,
    statement,
    time_value,
    with_members,
    with_statements,
)


def uri_cases() -> list[tuple[str, bytes, bool | None]]:
    values = {
        "wikidata": q("http://www.wikidata.org/entity/Q1985727"),
        "https": q("https://x/y/Q2"),
        "no-slash": q("http://x"),
        "empty-host": q("http:///"),
        "just-scheme": q("http://"),
        "number": q("1"),
        "empty": q(""),
        "escaped-newline": q("http://x/a\nQ3"),
        "escaped-newline-after": q("http://x/Q3\n/b"),
        "escaped-slashes": '"http:\\/\\/www.wikidata.org\\/entity\\/Q1"',
        "uppercase-scheme": q("HTTP://x/Q1"),
        "ftp": q("ftp://x/Q1"),
        "single-slash": q("http:/x/Q1"),
        "trailing-slash": q("https://x/Q1/"),
        "unicode": q("http://x/é/Q1"),
        "cr": q("http://x/\rQ1"),
        "line-separator": q("http://x/\u2028/Q1"),
        "nul": q("http://x/\u0000/Q1"),
    }
    builders = {
        "calendar": lambda v: time_value(calendarmodel=v),
        "unit": lambda v: quantity(unit=v),
        "globe": lambda v: coord(globe=v),
    }
    return [
        (f"uri-{name}-{kind}", build(value), None)
        for name, value in values.items()
        for kind, build in builders.items()
    ]


def replaced(line: bytes, old: bytes, new: bytes) -> bytes:
    assert old in line
    return line.replace(old, new, 1)


DESC = b'"capital of Germany"'

#: (case id, line, whether the native scanner must take the line itself). True pins that the case
#: exercises the native parser, not only the fallback (equality through a fallback is trivial);
#: None = either way (lines the scanner is meant to leave to the reference path, mostly).
EDGE_CASES: list[tuple[str, bytes, bool | None]] = [
    ("normal", entity(), True),
    # entity references written with only numeric-id (2014-2016 dumps), every entity-type
    *(
        (f"ref-numeric-{name}", ref(*etype, ("numeric-id", "42")), True)
        for name, etype in (
            ("item", [("entity-type", q("item"))]),
            ("property", [("entity-type", q("property"))]),
            ("lexeme", [("entity-type", q("lexeme"))]),
            ("mediainfo", [("entity-type", q("mediainfo"))]),
            ("entity-schema", [("entity-type", q("entity-schema"))]),
            ("form", [("entity-type", q("form"))]),
            ("unknown-type", [("entity-type", q("unknown"))]),
            ("empty-type", [("entity-type", q(""))]),
            ("null-type", [("entity-type", "null")]),
            ("no-type", []),
        )
    ),
    ("ref-numeric-type-after-number", ref(("numeric-id", "42"), ("entity-type", q("property"))), True),
    ("ref-numeric-zero", ref(("numeric-id", "0")), None),
    ("ref-numeric-negative", ref(("numeric-id", "-7")), None),
    ("ref-numeric-minus-zero", ref(("numeric-id", "-0")), None),
    ("ref-numeric-18-digits", ref(("numeric-id", "999999999999999999")), None),
    ("ref-numeric-19-digits", ref(("numeric-id", str(2**63 - 1))), None),
    ("ref-numeric-huge", ref(("numeric-id", str(2**70))), None),
    ("ref-numeric-float", ref(("numeric-id", "5.0")), None),
    ("ref-numeric-string", ref(("numeric-id", q("5"))), None),
    ("ref-numeric-null", ref(("entity-type", q("item")), ("numeric-id", "null")), True),
    ("ref-empty-id-with-numeric", ref(("entity-type", q("item")), ("numeric-id", "42"), ("id", q(""))), None),
    ("ref-empty-id-alone", ref(("id", q(""))), None),
    ("ref-null-id-with-numeric", ref(("id", "null"), ("numeric-id", "42")), True),
    (
        "ref-id-and-numeric-disagree",
        ref(("entity-type", q("item")), ("numeric-id", "42"), ("id", q("Q7"))),
        True,
    ),
    ("ref-empty-object", ref(), True),
    ("ref-id-is-number", ref(("id", "5")), None),
    ("ref-duplicate-id", ref(("id", q("Q5")), ("id", q("Q6"))), None),
    ("ref-duplicate-numeric-id", ref(("numeric-id", "5"), ("numeric-id", "6")), None),
    (
        "ref-not-object",
        with_statements(statement(snak(value=obj(("value", q("Q5")), ("type", q("wikibase-entityid")))))),
        None,
    ),
    # empty maps written as [] (PHP), lists that are not empty
    ("labels-list", entity(labels="[]"), True),
    ("descriptions-list", entity(descriptions="[]"), True),
    ("aliases-list", entity(aliases="[]"), True),
    ("sitelinks-list", entity(sitelinks="[]"), True),
    ("claims-list", entity(claims="[]"), True),
    (
        "all-maps-list",
        entity(labels="[]", descriptions="[]", aliases="[]", sitelinks="[]", claims="[]"),
        True,
    ),
    ("labels-nonempty-list", entity(labels='[{"language":"en","value":"x"}]'), None),
    ("claims-nonempty-list", entity(claims="[1,2]"), None),
    ("alias-language-list-empty", entity(aliases=obj(("en", "[]"))), True),
    ("label-entry-list", entity(labels=obj(("en", "[]"))), None),
    ("labels-string", entity(labels=q("x")), None),
    ("badges-absent-title-absent", sitelink(title=None, badges=None), True),
    ("label-absent-value", entity(labels=obj(("en", obj(("language", q("en")))))), True),
    ("alias-absent-value", entity(aliases=obj(("en", "[" + obj(("language", q("en"))) + "]"))), True),
    ("snak-empty-object", with_statements(statement(main="{}")), True),
    ("qualifier-snak-empty-object", qualified(obj(("P1", "[{}]"))), True),
    # sitelinks (with sites = ["*"] every key is a row)
    (
        "sitelink-unlisted-null",
        entity(sitelinks=obj(("frwiki", "null"), ("enwiki", obj(("title", q("B")))))),
        None,
    ),
    (
        "sitelink-unlisted-dup",
        entity(sitelinks=obj(("frwiki", obj(("title", q("A")))), ("frwiki", "{}"))),
        None,
    ),
    ("sitelink-empty-key", entity(sitelinks=obj(("", obj(("title", q("A")))))), None),
    ("sitelink-escaped-key", entity(sitelinks=obj(("fr\\u0077iki", obj(("title", q("A")))))), None),
    ("sitelink-raw-utf8-key", entity(sitelinks=obj(("вики", obj(("title", q("A")))))), True),
    ("sitelink-not-object", entity(sitelinks=obj(("frwiki", q("A")))), None),
    ("sitelink-title-escapes", entity(sitelinks=obj(("enwiki", obj(("title", '"A\\u00e9\\/B"'))))), True),
    (
        "sitelinks-300",
        entity(sitelinks=obj(*((f"s{i}wiki", obj(("title", q(str(i))))) for i in range(300)))),
        True,
    ),
    ("sitelinks-empty-object", entity(sitelinks="{}"), True),
    (
        "sitelinks-first",
        b'{"sitelinks":' + SITELINKS.encode() + b"," + entity(sitelinks=None)[1:],
        True,
    ),
    # nulls of nullable fields
    ("type-null", entity(type="null"), True),
    ("datatype-null", entity(datatype="null"), True),
    ("lastrevid-null", entity(lastrevid="null"), True),
    ("labels-null", entity(labels="null"), True),
    ("descriptions-null", entity(descriptions="null"), True),
    ("aliases-null", entity(aliases="null"), True),
    ("sitelinks-null", entity(sitelinks="null"), True),
    ("claims-null", entity(claims="null"), True),
    ("label-entry-null", entity(labels=obj(("en", "null"), ("zh", "null"))), True),
    ("alias-language-null", entity(aliases=obj(("en", "null"))), True),
    ("sitelink-null", entity(sitelinks=obj(("enwiki", "null"))), None),  # listed sites: taken; "*": not
    ("statement-id-null", with_statements(statement(id="null")), True),
    ("statement-id-absent", with_statements(statement(id=None)), True),
    ("snak-datatype-null", with_statements(statement(snak(datatype="null"))), True),
    ("snak-datatype-absent", with_statements(statement(snak(datatype=None))), True),
    ("datavalue-null", with_statements(statement(snak(datavalue="null"))), True),
    ("datavalue-absent", with_statements(statement(snak(datavalue=None))), True),
    ("snaktype-absent", with_statements(statement(snak(snaktype=None))), True),
    ("property-absent", with_statements(statement(snak(property=None))), True),
    ("time-precision-null", time_value(precision="null"), True),
    ("time-calendar-null", time_value(calendarmodel="null"), True),
    ("time-precision-absent", time_value(precision=None, calendarmodel=None), True),
    ("quantity-unit-bounds-null", quantity(unit="null", upperBound="null", lowerBound="null"), True),
    ("quantity-unit-bounds-absent", quantity(upperBound=None, lowerBound=None, unit=None), True),
    ("coord-nulls", coord(latitude="null", longitude="null", precision="null", globe="null"), True),
    ("coord-absent", coord(latitude=None, longitude=None, precision=None, globe=None), True),
    ("mono-language-null", mono(language="null"), True),
    ("mono-absent", mono(text=None, language=None), True),
    ("time-absent", time_value(time=None), True),
    ("amount-absent", quantity(amount=None), True),
    # nulls (and wrong types) of non-nullable fields
    ("id-null", entity(id="null"), None),
    ("rank-null", with_statements(statement(rank="null")), None),
    ("snaktype-null", with_statements(statement(snak(snaktype="null"))), None),
    ("property-null", with_statements(statement(snak(property="null"))), None),
    ("time-null", time_value(time="null"), None),
    ("amount-null", quantity(amount="null"), None),
    ("upper-bound-number", quantity(upperBound="13"), None),
    ("text-null", mono(text="null"), None),
    ("badges-null", sitelink(badges="null"), None),
    ("title-null", sitelink(title="null"), None),
    ("label-value-null", entity(labels=obj(("en", obj(("language", q("en")), ("value", "null"))))), None),
    ("alias-entry-null", entity(aliases=obj(("en", "[null]"))), None),
    ("mainsnak-null", with_statements(statement(mainsnak="null")), None),
    ("mainsnak-absent", with_statements(statement(mainsnak=None)), None),
    ("statement-group-null", entity(claims=obj(("P31", "null"))), None),
    ("qualifiers-null", qualified("null"), None),
    ("qualifier-snaks-null", qualified(obj(("P580", "null"))), None),
    (
        "datavalue-type-null",
        with_statements(statement(snak(datavalue=obj(("value", q("x")), ("type", "null"))))),
        None,
    ),
    (
        "datavalue-value-null",
        with_statements(statement(snak(datavalue=obj(("value", "null"), ("type", q("string")))))),
        None,
    ),
    (
        "string-value-number",
        with_statements(statement(snak(datavalue=obj(("value", "5"), ("type", q("string")))))),
        None,
    ),
    ("badge-not-string", sitelink(badges="[5]"), None),
    ("snak-not-object", with_statements(statement(main="[]")), None),
    # statements (MediaInfo) instead of claims, or both
    ("statements-instead-of-claims", entity(claims=None, statements=CLAIMS), True),
    ("claims-and-empty-statements", entity(statements="{}"), None),
    ("empty-claims-and-statements", entity(claims="{}", statements=CLAIMS), None),
    ("claims-list-and-statements", entity(claims="[]", statements=CLAIMS), None),
    ("claims-null-and-statements", entity(claims="null", statements=CLAIMS), None),
    (
        "claims-and-statements-both-full",
        entity(statements=claims(("P18", [statement(snak("P18", STRING_DV, "string"))]))),
        None,
    ),
    # redirects, missing, wrappers
    ("redirect-stub", b'{"redirects":{"from":"Q11","to":"Q1"}}', None),
    ("redirect-with-entity", entity(redirects=obj(("from", q("Q11")), ("to", q("Q1")))), None),
    ("redirect-empty-from", entity(redirects=obj(("from", q("")), ("to", q("Q1")))), None),
    ("redirects-null", entity(redirects="null"), None),
    ("missing", b'{"id":"Q404","missing":""}', None),
    ("missing-null", entity(missing="null"), None),
    ("wrapper-one", b'{"entities":{"Q1":' + entity() + b"}}", None),
    ("wrapper-two", b'{"entities":{"Q1":' + entity() + b',"Q2":' + entity("Q2") + b"}}", None),
    ("wrapper-empty", b'{"entities":{}}', None),
    ("wrapper-null", entity(entities="null"), None),
    ("wrapper-redirect", b'{"entities":{"Q11":{"redirects":{"from":"Q11","to":"Q1"}}}}', None),
    # duplicate keys
    ("dup-entity-id-same", with_members(entity(), ("id", q("Q1"))), None),
    ("dup-entity-id-other", with_members(entity(), ("id", q("Q2"))), None),
    (
        "dup-claims-property",
        entity(claims=claims(("P31", [statement()]), ("P31", [statement(sid="Q1$2")]))),
        None,
    ),
    (
        "dup-qualifier-property",
        qualified(obj(("P580", "[" + snak("P580") + "]"), ("P580", "[" + snak("P580") + "]"))),
        None,
    ),
    (
        "dup-label-language",
        entity(labels=obj(("en", obj(("value", q("a")))), ("en", obj(("value", q("b")))))),
        None,
    ),
    (
        "dup-label-language-unconfigured",
        entity(labels=obj(("fr", obj(("value", q("a")))), ("fr", obj(("value", q("b")))))),
        True,
    ),
    ("dup-label-value", entity(labels=obj(("en", obj(("value", q("a")), ("value", q("b")))))), None),
    (
        "dup-rank",
        with_statements(obj(("mainsnak", snak()), ("rank", q("preferred")), ("rank", q("normal")))),
        None,
    ),
    ("dup-statement-id", with_statements(obj(("mainsnak", snak()), ("id", q("a")), ("id", q("b")))), None),
    (
        "dup-mainsnak",
        with_statements(obj(("mainsnak", snak()), ("mainsnak", snak(datavalue=STRING_DV)))),
        None,
    ),
    (
        "dup-qualifiers",
        with_statements(obj(("mainsnak", snak()), ("qualifiers", QUALIFIER), ("qualifiers", "{}"))),
        None,
    ),
    (
        "dup-snaktype",
        with_statements(
            statement(obj(("snaktype", q("value")), ("snaktype", q("novalue")), ("datavalue", ITEM_DV)))
        ),
        None,
    ),
    (
        "dup-datavalue",
        with_statements(
            statement(obj(("property", q("P31")), ("datavalue", ITEM_DV), ("datavalue", STRING_DV)))
        ),
        None,
    ),
    (
        "dup-snak-datatype",
        with_statements(statement(obj(("datatype", q("a")), ("datavalue", ITEM_DV), ("datatype", q("b"))))),
        None,
    ),
    (
        "dup-datavalue-value",
        with_statements(
            statement(snak(datavalue=obj(("value", q("a")), ("value", q("b")), ("type", q("string")))))
        ),
        None,
    ),
    (
        "dup-datavalue-type",
        with_statements(
            statement(snak(datavalue=obj(("value", q("a")), ("type", q("string")), ("type", q("time")))))
        ),
        None,
    ),
    ("dup-time-precision", time_value(precision='11,"precision":9'), None),
    (
        "dup-sitelink-site",
        entity(sitelinks=obj(("enwiki", obj(("title", q("A")))), ("enwiki", obj(("title", q("B")))))),
        None,
    ),
    ("dup-sitelink-title", sitelink(title=q("A") + ',"title":' + q("B")), None),
    ("dup-sitelink-badges", sitelink(badges='["Q1"],"badges":["Q2"]'), None),
    ("dup-alias-language", entity(aliases=obj(("en", '[{"value":"a"}]'), ("en", '[{"value":"b"}]'))), None),
    ("dup-labels-member", with_members(entity(), ("labels", obj(("en", obj(("value", q("other"))))))), None),
    ("dup-claims-member", with_members(entity(), ("claims", "{}")), None),
    ("dup-lastrevid", with_members(entity(), ("lastrevid", "999")), None),
    ("dup-type", with_members(entity(), ("type", q("property"))), None),
    ("dup-datatype", with_members(entity(datatype=q("a")), ("datatype", q("b"))), None),
    ("dup-unknown-member", with_members(entity(), ("pageid", "1"), ("pageid", "2")), True),
    # escaped keys
    ("escaped-key-claims", entity(claims=None, **{"cla\\u0069ms": CLAIMS}), None),
    ("escaped-key-language", entity(labels=obj(("e\\u006e", obj(("value", q("escaped")))))), None),
    ("escaped-key-id", entity(id=None, **{"\\u0069d": q("Q1")}), None),
    ("escaped-key-value", entity(labels=obj(("en", obj(("v\\u0061lue", q("escaped")))))), None),
    ("escaped-key-unknown", with_members(entity(), ("pa\\u0067eid", "1")), None),
    ("escaped-key-in-skipped-object", with_members(entity(), ("extra", obj(("\\u0061", "1")))), None),
    # strings: escapes, surrogates, raw UTF-8, invalid UTF-8, control characters
    (
        "escapes-in-values",
        entity(labels=obj(("en", obj(("value", '"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\u4e2d\\u0000"'))))),
        True,
    ),
    ("surrogate-pair", entity(labels=obj(("en", obj(("value", '"\\ud83d\\ude00 \\uD834\\uDD1E"'))))), True),
    ("lone-high-surrogate", entity(labels=obj(("en", obj(("value", '"a\\ud83dz"'))))), None),
    ("lone-low-surrogate", entity(labels=obj(("en", obj(("value", '"a\\ude00z"'))))), None),
    ("high-surrogate-then-bmp", entity(labels=obj(("en", obj(("value", '"\\ud83d\\u0041"'))))), None),
    ("high-surrogate-at-end", entity(labels=obj(("en", obj(("value", '"\\ud83d"'))))), None),
    ("lone-surrogate-in-skipped", with_members(entity(), ("title", '"\\udc00"')), None),
    ("lone-surrogate-in-statement-id", with_statements(statement(id='"\\ud800"')), None),
    ("bad-escape", entity(labels=obj(("en", obj(("value", '"\\x41"'))))), None),
    ("short-unicode-escape", entity(labels=obj(("en", obj(("value", '"\\u12"'))))), None),
    (
        "raw-utf8-everywhere",
        entity(
            labels=obj(("zh", obj(("value", q("北京 😀 Zürich"))))),
            sitelinks=obj(("zhwiki", obj(("title", q("北京"))))),
        ),
        True,
    ),
    ("raw-utf8-key", with_members(entity(), ("ключ", q("значение"))), True),
    (
        "raw-utf8-language-key",
        entity(labels=obj(("zh", obj(("value", q("x")))), ("中", obj(("value", q("y")))))),
        True,
    ),
    ("noncharacters", entity(labels=obj(("en", obj(("value", q("\ufffe\uffff\U0010ffff")))))), True),
    ("invalid-utf8-in-value", replaced(entity(), DESC, b'"capital \xff of Germany"'), None),
    ("invalid-utf8-in-skipped", with_members(entity(), ("title", '"\xc3("')), None),
    ("invalid-utf8-in-key", replaced(with_members(entity(), ("k", "1")), b'"k":1', b'"k\xe2\x82":1'), None),
    ("overlong-utf8", replaced(entity(), DESC, b'"\xc0\xaf"'), None),
    ("overlong-utf8-3-bytes", replaced(entity(), DESC, b'"\xe0\x80\xaf"'), None),
    ("utf8-surrogate-bytes", replaced(entity(), DESC, b'"\xed\xa0\x80"'), None),
    ("utf8-beyond-u10ffff", replaced(entity(), DESC, b'"\xf4\x90\x80\x80"'), None),
    ("truncated-utf8", replaced(entity(), DESC, b'"\xe4\xb8"'), None),
    ("raw-tab-in-string", replaced(entity(), DESC, b'"capital\tof"'), None),
    ("raw-control-in-skipped", with_members(entity(), ("title", '"\x01"')), None),
    ("raw-del-in-string", replaced(entity(), DESC, b'"capital\x7fof"'), True),
    ("raw-cr-in-string", replaced(entity(), DESC, b'"capital\rof"'), None),
    ("raw-nul-outside-string", replaced(entity(), b',"lastrevid"', b',\x00"lastrevid"'), None),
    # datavalues
    (
        "unknown-datavalue-type",
        with_statements(statement(snak(datavalue=obj(("value", q("x")), ("type", q("musical-notation")))))),
        None,
    ),
    (
        "unknown-datavalue-type-in-qualifier",
        qualified(obj(("P1", "[" + snak("P1", obj(("value", "{}"), ("type", q("wikibase-lexeme")))) + "]"))),
        None,
    ),
    (
        "unknown-datavalue-type-deprecated",
        with_statements(statement(snak(datavalue=obj(("value", "1"), ("type", q("x")))), "deprecated")),
        None,
    ),
    (
        "datavalue-type-first",
        with_statements(statement(snak(datavalue=obj(("type", q("string")), ("value", q("first")))))),
        True,
    ),
    (
        "datavalue-type-last",
        with_statements(
            statement(snak(datavalue=obj(("value", q("last")), ("foo", "1"), ("type", q("string")))))
        ),
        True,
    ),
    (
        "datavalue-type-first-object-value",
        time_value()
        .replace(b'"value":{"time"', b'"type":"time","value":{"time"')
        .replace(b'},"type":"time"}', b"}}"),
        True,
    ),
    ("datavalue-no-type", with_statements(statement(snak(datavalue=obj(("value", q("x")))))), None),
    ("datavalue-no-value", with_statements(statement(snak(datavalue=obj(("type", q("string")))))), None),
    ("datavalue-empty", with_statements(statement(snak(datavalue="{}"))), None),
    (
        "datavalue-type-number",
        with_statements(statement(snak(datavalue=obj(("value", q("x")), ("type", "5"))))),
        None,
    ),
    (
        "datavalue-type-list",
        with_statements(statement(snak(datavalue=obj(("value", q("x")), ("type", "[]"))))),
        None,
    ),
    (
        "datavalue-kind-mismatch",
        with_statements(statement(snak(datavalue=obj(("value", q("x")), ("type", q("time")))))),
        None,
    ),
    ("unsupported-type-member", with_statements(statement(snak(unsupported_type=q("x")))), None),
    (
        "somevalue-novalue",
        with_statements(
            statement(snak(datavalue=None, snaktype=q("somevalue"))),
            statement(snak(datavalue=None, snaktype=q("novalue")), sid="Q1$n"),
        ),
        True,
    ),
    ("odd-snaktype", with_statements(statement(snak(snaktype=q("weird")))), True),
    # ranks
    (
        "preferred-after-normal",
        with_statements(
            statement(sid="Q1$1"),
            statement(sid="Q1$2"),
            statement(snak(value=item_dv(("id", q("Q9")))), "preferred", "Q1$3"),
            statement(sid="Q1$4"),
        ),
        True,
    ),
    (
        "preferred-after-normal-p279",
        with_statements(
            statement(snak("P279"), sid="Q1$1"),
            statement(snak("P279"), "preferred", "Q1$2"),
            statement(snak("P279"), "deprecated", "Q1$3"),
            prop="P279",
        ),
        True,
    ),
    (
        "preferred-after-normal-other-property",
        with_statements(
            statement(snak("P18", STRING_DV, "string")),
            statement(snak("P18", STRING_DV, "string"), "preferred", "Q1$2"),
            prop="P18",
        ),
        True,
    ),
    (
        "preferred-after-normal-with-qualifiers",
        with_statements(
            statement(qualifiers=QUALIFIERS_2),
            statement(rank_name="preferred", sid="Q1$2", qualifiers=QUALIFIER),
            statement(rank_name="preferred", sid="Q1$3"),
        ),
        True,
    ),
    (
        "preferred-first",
        with_statements(
            statement(rank_name="preferred"),
            statement(sid="Q1$2"),
            statement(rank_name="deprecated", sid="Q1$3"),
        ),
        True,
    ),
    ("deprecated-p31", with_statements(statement(rank_name="deprecated")), True),
    (
        "deprecated-p31-numeric",
        with_statements(
            statement(snak(value=item_dv(("numeric-id", "3"))), "deprecated"), statement(sid="Q1$2")
        ),
        True,
    ),
    (
        "deprecated-p31-somevalue",
        with_statements(statement(snak(datavalue=None, snaktype=q("somevalue")), "deprecated")),
        True,
    ),
    (
        "deprecated-p31-string-value",
        with_statements(statement(snak(value=STRING_DV, dtype="string"), "deprecated")),
        True,
    ),
    ("deprecated-p31-empty-ref", with_statements(statement(snak(value=item_dv()), "deprecated")), True),
    (
        "deprecated-p31-with-qualifiers",
        with_statements(
            statement(rank_name="deprecated", qualifiers=QUALIFIERS_2),
            statement(sid="Q1$2", qualifiers=QUALIFIER),
        ),
        True,
    ),
    (
        "unusual-rank",
        with_statements(
            statement(rank_name="Preferred"), statement(rank_name="", sid="Q1$2"), statement(sid="Q1$3")
        ),
        True,
    ),
    ("unusual-rank-only", with_statements(statement(rank_name="best"), prop="P18"), True),
    ("rank-absent", with_statements(statement(rank=None)), True),
    (
        "rank-absent-and-preferred",
        with_statements(statement(rank=None), statement(rank_name="preferred", sid="Q1$2")),
        True,
    ),
    ("rank-not-string", with_statements(statement(rank="1")), None),
    (
        "rank-escaped-preferred",
        with_statements(statement(sid="Q1$1"), statement(sid="Q1$2", rank='"pref\\u0065rred"')),
        True,
    ),
    (
        "all-deprecated",
        with_statements(
            statement(rank_name="deprecated"), statement(rank_name="deprecated", sid="Q1$2"), prop="P18"
        ),
        True,
    ),
    ("statement-not-object", with_statements('"x"'), None),
    ("empty-statement-group", entity(claims=obj(("P31", "[]"))), True),
    ("empty-property-key", entity(claims=obj(("", "[" + statement() + "]"))), None),
    # qualifiers
    ("qualifiers-list", qualified("[]"), True),
    ("qualifiers-nonempty-list", qualified("[1]"), True),
    ("qualifiers-empty-object", qualified("{}"), True),
    ("qualifiers-empty-snak-list", qualified(obj(("P1", "[]"))), True),
    ("qualifiers-two-properties", qualified(QUALIFIERS_2), True),
    (
        "qualifiers-every-kind",
        qualified(
            obj(
                *(
                    (p, "[" + snak(p, v, "x") + "]")
                    for p, v in (
                        ("P1", ITEM_DV),
                        ("P2", STRING_DV),
                        ("P3", TIME_DV),
                        ("P4", QUANTITY_DV),
                        ("P5", COORD_DV),
                        ("P6", MONO_DV),
                    )
                )
            )
        ),
        True,
    ),
    (
        "qualifier-datatypes-differ",
        qualified(
            obj(
                (
                    "P1",
                    "["
                    + snak("P1", STRING_DV, "string")
                    + ","
                    + snak("P1", STRING_DV, "url")
                    + ","
                    + snak("P1", STRING_DV, datatype="null")
                    + "]",
                )
            )
        ),
        True,
    ),
    ("qualifier-empty-key", qualified(obj(("", "[" + snak() + "]"))), None),
    (
        "qualifiers-64-properties",
        qualified(obj(*((f"P{i}", "[" + snak(f"P{i}") + "]") for i in range(1, 65)))),
        None,
    ),
    (
        "qualifiers-65-properties",
        qualified(obj(*((f"P{i}", "[" + snak(f"P{i}") + "]") for i in range(1, 66)))),
        None,
    ),
    ("qualifier-not-object", qualified(obj(("P1", "[1]"))), None),
    # datatypes differing within one property (the reference stores the first kept one per group)
    (
        "datatype-differs",
        with_statements(
            statement(snak(dtype="wikibase-item")),
            statement(snak(dtype="string"), sid="Q1$2"),
            statement(snak(dtype="wikibase-item"), sid="Q1$3"),
        ),
        True,
    ),
    (
        "datatype-first-null",
        with_statements(statement(snak(datatype="null")), statement(snak(dtype="string"), sid="Q1$2")),
        True,
    ),
    (
        "datatype-first-absent",
        with_statements(statement(snak(datatype=None)), statement(snak(dtype="string"), sid="Q1$2")),
        True,
    ),
    (
        "datatype-later-null",
        with_statements(statement(snak(dtype="string")), statement(snak(datatype="null"), sid="Q1$2")),
        True,
    ),
    (
        "datatype-empty-then-other",
        with_statements(statement(snak(dtype="")), statement(snak(dtype="x"), sid="Q1$2")),
        True,
    ),
    (
        "datatype-outranked-first",
        with_statements(
            statement(snak(dtype="external-id"), "deprecated"),
            statement(snak(dtype="string"), sid="Q1$2"),
            statement(snak(dtype="url"), sid="Q1$3"),
        ),
        True,
    ),
    (
        "datatype-preferred-restart",
        with_statements(
            statement(snak(dtype="a")),
            statement(snak(dtype="b"), "preferred", "Q1$2"),
            statement(snak(dtype="c"), "preferred", "Q1$3"),
        ),
        True,
    ),
    # time precision
    ("time-precision-200", time_value(precision="200"), None),
    ("time-precision-minus-200", time_value(precision="-200"), None),
    ("time-precision-127", time_value(precision="127"), True),
    ("time-precision-minus-128", time_value(precision="-128"), True),
    ("time-precision-128", time_value(precision="128"), None),
    ("time-precision-float", time_value(precision="1.0"), None),
    ("time-precision-string", time_value(precision=q("11")), None),
    ("time-precision-exponent", time_value(precision="1e1"), None),
    ("time-precision-huge", time_value(precision=str(2**70)), None),
    (
        "time-precision-200-in-qualifier",
        qualified(
            obj(
                (
                    "P585",
                    "[" + snak("P585", dv("time", ("time", q("+2000")), ("precision", "200")), "time") + "]",
                )
            )
        ),
        None,
    ),
    ("time-deep-past", time_value(time=q("-13798000000-00-00T00:00:00Z"), precision="3"), True),
    # lastrevid
    ("lastrevid-huge", entity(lastrevid=str(2**70)), None),
    ("lastrevid-int64-max", entity(lastrevid=str(2**63 - 1)), None),
    ("lastrevid-int64-overflow", entity(lastrevid=str(2**63)), None),
    ("lastrevid-int64-min", entity(lastrevid=str(-(2**63))), None),
    ("lastrevid-below-int64", entity(lastrevid=str(-(2**63) - 1)), None),
    ("lastrevid-18-digits", entity(lastrevid="999999999999999999"), True),
    ("lastrevid-negative", entity(lastrevid="-5"), True),
    ("lastrevid-minus-zero", entity(lastrevid="-0"), True),
    ("lastrevid-float", entity(lastrevid="1.0"), None),
    ("lastrevid-exponent", entity(lastrevid="1e3"), None),
    ("lastrevid-string", entity(lastrevid=q("123")), None),
    # coordinates
    ("latitude-exponent", coord(latitude="5.25e1", longitude="-1.5E-3", precision="1.0e-5"), True),
    ("latitude-int", coord(latitude="52", longitude="-13", precision="1"), True),
    ("latitude-int-15-digits", coord(latitude="123456789012345"), True),
    ("latitude-int-16-digits", coord(latitude="1234567890123456"), None),
    ("latitude-int-2-60", coord(latitude=str(2**60)), None),
    ("latitude-int-2-70", coord(latitude=str(2**70)), None),
    ("latitude-minus-zero-float", coord(latitude="-0.0", longitude="-0e0", precision="-0.0e5"), True),
    ("latitude-minus-zero-int", coord(latitude="-0"), None),
    (
        "coord-minus-zero-int-in-qualifier",
        qualified(
            obj(
                (
                    "P625",
                    "["
                    + snak(
                        "P625",
                        dv("globecoordinate", ("latitude", "1"), ("longitude", "-0"), ("precision", "-0")),
                        "globe-coordinate",
                    )
                    + "]",
                )
            )
        ),
        None,
    ),
    ("latitude-overflow", coord(latitude="1e400"), None),
    ("latitude-underflow", coord(latitude="1e-400"), None),
    ("latitude-subnormal", coord(latitude="5e-324"), None),
    ("latitude-long-mantissa", coord(latitude="0." + "1" * 80), None),
    (
        "latitude-rounding",
        coord(latitude="0.1000000000000000055511151231257827", longitude="9007199254740993.0"),
        True,
    ),
    ("latitude-string", coord(latitude=q("52")), None),
    ("latitude-leading-zero", coord(latitude="01"), None),
    ("latitude-leading-dot", coord(latitude=".5"), None),
    ("latitude-plus", coord(latitude="+5"), None),
    ("latitude-bool", coord(latitude="true"), None),
    # URIs of calendarmodel / unit / globe (the reference strips `^https?://.*/`)
    *uri_cases(),
    # line framing
    ("trailing-garbage", entity() + b" x", None),
    ("trailing-second-object", entity() + b"{}", None),
    ("trailing-two-commas", entity() + b",,", None),
    ("only-comma", b",", None),
    ("only-whitespace", b" \t ", None),
    ("bom-entity", b"\xef\xbb\xbf" + entity(), None),
    ("bom-bracket", b"\xef\xbb\xbf[", None),
    ("bracket-comma", b"[,", None),
    ("close-bracket-comma", b"],", None),
    ("whitespace-around", b" \t" + entity() + b" \r", True),
    ("vertical-tab-around", b"\x0b" + entity() + b"\x0c", None),  # embedded: "\x0c," stays inside
    ("comma-cr", entity() + b",\r", None),  # embedded: "},\r," is a line with two commas
    ("space-before-comma", entity() + b" ,", None),
    (
        "inner-whitespace",
        entity().replace(b'":', b'" :\t').replace(b',"', b' ,\r "').replace(b"{", b"{ "),
        True,
    ),
    ("json-array", b'[{"id":"Q1"}]', None),
    ("json-number", b"42", None),
    ("json-string", b'"Q1"', None),
    ("json-null", b"null", None),
    ("json-true", b"true", None),
    ("empty-object", b"{}", None),
    ("unclosed-object", entity()[:-1], None),
    ("deep-nesting", with_members(entity(), ("deep", "[" * 300 + "]" * 300)), None),
    ("nesting-150", with_members(entity(), ("deep", "[" * 150 + "]" * 150)), None),
    ("nesting-200-objects", with_members(entity(), ("deep", '{"a":' * 199 + "1" + "}" * 199)), True),
    ("nesting-5000", with_members(entity(), ("deep", "[" * 5000 + "]" * 5000)), None),
    ("file-separator-around", b"\x1c" + entity() + b"\x1f", None),
    ("nul-before", b"\x00" + entity(), None),
    # ids and types
    ("id-Q0", entity("Q0"), None),
    ("id-lowercase", entity("q5"), None),
    ("id-bad-suffix", entity("Q5-X"), None),
    ("id-trailing-newline", entity("Q5\n"), None),
    ("id-leading-zero", entity("Q05"), None),
    ("id-empty", entity(""), None),
    ("id-number", entity(id="5"), None),
    ("id-absent", entity(id=None), None),
    ("id-form", entity("L1-F2", type=None), True),
    ("id-sense", entity("L1-S2", type=None), True),
    ("id-other-subentity", entity("L1-Z2", type=None), True),
    ("id-unknown-prefix", entity("X9", type=None), True),
    *((f"type-inferred-{ident}", entity(ident, type=None), True) for ident in ("Q5", "P5", "L5", "M5", "E5")),
    ("type-empty", entity("P7", type=q("")), True),
    ("type-odd", entity(type=q("whatever")), True),
    ("type-number", entity(type="5"), None),
]
_CASE_IDS = [case_id for case_id, _, _ in EDGE_CASES]
assert len(_CASE_IDS) == len(set(_CASE_IDS)), "duplicate edge-case ids"
