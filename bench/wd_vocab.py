"""Static vocabulary of the synthetic Wikidata dump: languages and scripts, sites, properties with
their datatypes, reference shapes, time precisions and units. No randomness here."""

from __future__ import annotations

import random

WD = "http://www.wikidata.org/entity/"
#: The entity URI prefix as the dumps write it (PHP `json_encode` escapes `/`).
WDX = WD.replace("/", "\\/")
GREGORIAN = WDX + "Q1985727"
JULIAN = WDX + "Q1985786"
EARTH = WDX + "Q2"
MOON = WDX + "Q405"

# --- languages and scripts --------------------------------------------------------------------
#: (first code point, step) per script: letters a-z map to `first + i * step`, a cheap
#: transliteration that gives labels the byte and escape profile of real multi-script text.
SCRIPTS: dict[str, tuple[int, int]] = {
    "cyrl": (0x430, 1),
    "grek": (0x3B1, 1),
    "arab": (0x627, 1),
    "hebr": (0x5D0, 1),
    "deva": (0x915, 1),
    "beng": (0x995, 1),
    "guru": (0xA15, 1),
    "gujr": (0xA95, 1),
    "taml": (0xB95, 1),
    "telu": (0xC15, 1),
    "knda": (0xC95, 1),
    "mlym": (0xD15, 1),
    "thai": (0xE01, 1),
    "tibt": (0xF40, 1),
    "mymr": (0x1000, 1),
    "geor": (0x10D0, 1),
    "ethi": (0x1200, 3),
    "armn": (0x561, 1),
    "hang": (0xAC00, 397),
    "hani": (0x4E00, 389),
    "kana": (0x30A2, 2),
}
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _script_table(script: str) -> dict[int, str]:
    first, step = SCRIPTS[script]
    table = {ord(c): chr(first + i * step) for i, c in enumerate(_LETTERS)}
    table.update({ord(c.upper()): chr(first + i * step) for i, c in enumerate(_LETTERS)})
    if script in ("hani", "kana"):
        table[ord(" ")] = ""  # no spaces in CJK names
    return table


#: str.translate tables per script ("latn" = unchanged, "latx" = Latin with diacritics).
TABLES: dict[str, dict[int, str]] = {s: _script_table(s) for s in SCRIPTS}
TABLES["latn"] = {}
TABLES["latx"] = {ord(k): v for k, v in {"e": "é", "u": "ü", "o": "ø", "l": "ł", "s": "ş", "c": "č"}.items()}

_LANG_GROUPS: list[tuple[str, str]] = [
    # Ordered roughly by how often Wikidata entities carry the language (popular first).
    ("en", "latn"), ("fr", "latx"), ("de", "latx"), ("nl", "latn"), ("es", "latx"), ("it", "latn"),
    ("zh", "hani"), ("ru", "cyrl"), ("ja", "kana"), ("pl", "latx"), ("sv", "latx"), ("pt", "latx"),
    ("ar", "arab"), ("uk", "cyrl"), ("ca", "latx"), ("zh-hans", "hani"), ("zh-hant", "hani"),
    ("ko", "hang"), ("fa", "arab"), ("cs", "latx"), ("he", "hebr"), ("fi", "latx"), ("hu", "latx"),
    ("nb", "latx"), ("da", "latx"), ("id", "latn"), ("tr", "latx"), ("ro", "latx"), ("vi", "latx"),
    ("en-gb", "latn"), ("en-ca", "latn"), ("zh-cn", "hani"), ("zh-tw", "hani"), ("zh-hk", "hani"),
    ("sr", "cyrl"), ("bg", "cyrl"), ("el", "grek"), ("eo", "latx"), ("eu", "latn"), ("gl", "latx"),
    ("sk", "latx"), ("sl", "latx"), ("hr", "latx"), ("lt", "latx"), ("lv", "latx"), ("et", "latx"),
    ("hi", "deva"), ("bn", "beng"), ("ta", "taml"), ("te", "telu"), ("ml", "mlym"), ("kn", "knda"),
    ("mr", "deva"), ("ne", "deva"), ("pa", "guru"), ("gu", "gujr"), ("th", "thai"), ("ka", "geor"),
    ("hy", "armn"), ("be", "cyrl"), ("be-tarask", "cyrl"), ("mk", "cyrl"), ("kk", "cyrl"),
    ("ky", "cyrl"), ("tg", "cyrl"), ("tt", "cyrl"), ("ba", "cyrl"), ("ce", "cyrl"), ("mn", "cyrl"),
    ("ur", "arab"), ("ps", "arab"), ("ckb", "arab"), ("arz", "arab"), ("azb", "arab"), ("ug", "arab"),
    ("yi", "hebr"), ("my", "mymr"), ("bo", "tibt"), ("am", "ethi"), ("ms", "latn"), ("af", "latn"),
    ("sq", "latx"), ("is", "latx"), ("ga", "latn"), ("cy", "latn"), ("br", "latn"), ("oc", "latx"),
    ("la", "latn"), ("lb", "latx"), ("fy", "latx"), ("nds", "latn"), ("ast", "latx"), ("an", "latx"),
    ("wa", "latx"), ("co", "latn"), ("scn", "latn"), ("nap", "latn"), ("vec", "latn"), ("lmo", "latn"),
    ("pms", "latn"), ("lij", "latn"), ("fur", "latn"), ("rm", "latx"), ("gsw", "latx"), ("bar", "latx"),
    ("ksh", "latx"), ("stq", "latn"), ("frr", "latn"), ("sco", "latn"), ("gd", "latn"), ("kw", "latn"),
    ("gv", "latn"), ("mt", "latx"), ("tl", "latn"), ("ceb", "latn"), ("war", "latn"), ("ilo", "latn"),
    ("pam", "latn"), ("bcl", "latn"), ("min", "latn"), ("jv", "latn"), ("su", "latn"), ("mg", "latn"),
    ("sw", "latn"), ("yo", "latx"), ("ig", "latx"), ("ha", "latn"), ("zu", "latn"), ("xh", "latn"),
    ("so", "latn"), ("om", "latn"), ("rw", "latn"), ("ln", "latn"), ("wo", "latn"), ("qu", "latn"),
    ("ay", "latn"), ("gn", "latx"), ("ht", "latn"), ("pap", "latn"), ("io", "latn"), ("ia", "latn"),
    ("ie", "latn"), ("vo", "latx"), ("jbo", "latn"), ("uz", "latn"), ("tk", "latx"), ("az", "latx"),
    ("ku", "latx"), ("se", "latx"), ("fo", "latx"), ("nn", "latx"), ("vls", "latn"), ("li", "latn"),
    ("hsb", "latx"), ("dsb", "latx"), ("csb", "latx"), ("szl", "latx"), ("sgs", "latx"),
    ("vro", "latx"), ("nds-nl", "latn"), ("roa-tara", "latn"), ("pt-br", "latx"), ("de-ch", "latx"),
    ("sr-el", "latx"), ("sr-ec", "cyrl"), ("yue", "hani"), ("wuu", "hani"), ("gan", "hani"),
    ("lzh", "hani"), ("nan", "latx"), ("hak", "latx"), ("cdo", "latx"), ("zh-sg", "hani"),
    ("zh-mo", "hani"), ("zh-my", "hani"),
]  # fmt: skip
LANGS: tuple[str, ...] = tuple(code for code, _ in _LANG_GROUPS)
SCRIPT_OF: dict[str, str] = dict(_LANG_GROUPS)
#: Wikis a sitelink can point to besides the `<lang>wiki` ones.
EXTRA_SITES = ("commonswiki", "specieswiki", "enwikiquote", "dewikisource", "frwikivoyage", "metawiki")
BADGES = ("Q17437796", "Q17437798", "Q70893996")

# --- properties -------------------------------------------------------------------------------
#: (property, datatype, value kind, weight for items). Kinds are rendered by `gen_wikidata.Gen`.
PROPERTIES: tuple[tuple[str, str, str, float], ...] = (
    ("P17", "wikibase-item", "item", 6), ("P131", "wikibase-item", "item", 5),
    ("P27", "wikibase-item", "item", 3), ("P106", "wikibase-item", "item", 4),
    ("P50", "wikibase-item", "item", 3), ("P361", "wikibase-item", "item", 2),
    ("P527", "wikibase-item", "item", 2), ("P1343", "wikibase-item", "item", 2),
    ("P1659", "wikibase-property", "property", 0.4), ("P6254", "wikibase-lexeme", "lexeme", 0.3),
    ("P5830", "wikibase-form", "form", 0.2), ("P5137", "wikibase-sense", "sense", 0.2),
    ("P373", "string", "commonscat", 2), ("P2093", "string", "name", 1.5),
    ("P528", "string", "catalog", 1), ("P214", "external-id", "digits", 6),
    ("P227", "external-id", "gnd", 4), ("P244", "external-id", "lccn", 4),
    ("P213", "external-id", "isni", 3), ("P646", "external-id", "freebase", 5),
    ("P2671", "external-id", "kg", 4), ("P356", "external-id", "doi", 2),
    ("P345", "external-id", "imdb", 1), ("P1566", "external-id", "digits", 2),
    ("P268", "external-id", "bnf", 2), ("P856", "url", "url", 2), ("P973", "url", "url", 1),
    ("P18", "commonsMedia", "media", 2), ("P41", "commonsMedia", "media", 0.5),
    ("P2534", "math", "math", 0.2), ("P6604", "musical-notation", "music", 0.05),
    ("P4179", "tabular-data", "tabular", 0.05), ("P3896", "geo-shape", "geoshape", 0.1),
    ("P569", "time", "time", 2), ("P570", "time", "time", 1), ("P571", "time", "time", 2),
    ("P577", "time", "time", 2), ("P585", "time", "time", 0.5),
    ("P1082", "quantity", "count", 2), ("P2044", "quantity", "length", 1),
    ("P2048", "quantity", "length", 0.5), ("P2067", "quantity", "mass", 0.5),
    ("P2046", "quantity", "area", 1), ("P625", "globe-coordinate", "coord", 3),
    ("P1476", "monolingualtext", "mono", 1.5), ("P1448", "monolingualtext", "mono", 1),
    ("P1705", "monolingualtext", "mono", 0.5),
)  # fmt: skip
#: Qualifier properties (property, datatype, kind).
QUALIFIERS: tuple[tuple[str, str, str], ...] = (
    ("P580", "time", "time"), ("P582", "time", "time"), ("P585", "time", "time"),
    ("P1545", "string", "ordinal"), ("P642", "wikibase-item", "item"), ("P518", "wikibase-item", "item"),
    ("P1114", "quantity", "count"), ("P407", "wikibase-item", "item"), ("P625", "globe-coordinate", "coord"),
    ("P1810", "string", "name"), ("P1932", "string", "name"), ("P2241", "wikibase-item", "item"),
)  # fmt: skip
#: Properties with a fixed role: the type hierarchy (P31, P279) and property examples (P1855).
SPECIAL_PROPERTIES: tuple[tuple[str, str, str], ...] = (
    ("P31", "wikibase-item", "class"),
    ("P279", "wikibase-item", "class"),
    ("P1855", "wikibase-item", "item"),
)
#: Reference snaks (property, datatype, kind); a reference uses one of `REFERENCE_SHAPES`.
REFERENCE_PROPS: dict[str, tuple[str, str]] = {
    "P143": ("wikibase-item", "item"),
    "P248": ("wikibase-item", "item"),
    "P813": ("time", "retrieved"),
    "P214": ("external-id", "digits"),
    "P854": ("url", "url"),
    "P1476": ("monolingualtext", "mono"),
    "P407": ("wikibase-item", "item"),
}
REFERENCE_SHAPES: tuple[tuple[str, ...], ...] = (
    ("P143",),  # imported from Wikimedia project
    ("P143",),
    ("P248", "P813"),  # stated in + retrieved
    ("P248", "P214", "P813"),
    ("P854", "P813"),  # reference URL + retrieved
    ("P854", "P813", "P1476", "P407"),
)
_TERNARY = (*QUALIFIERS, *SPECIAL_PROPERTIES)
DATATYPE_OF: dict[str, str] = {p: dt for p, dt, _, _ in PROPERTIES} | {p: dt for p, dt, _ in _TERNARY}
KIND_OF: dict[str, str] = {p: k for p, _, k, _ in PROPERTIES} | {p: k for p, _, k in _TERNARY}
ITEM_PIDS: tuple[str, ...] = tuple(p for p, _, _, _ in PROPERTIES)
ITEM_CUM_WEIGHTS: tuple[float, ...] = tuple(
    sum(w for _, _, _, w in PROPERTIES[: i + 1]) for i in range(len(PROPERTIES))
)
ALL_PIDS: tuple[str, ...] = tuple(
    dict.fromkeys([p for p, _, _ in SPECIAL_PROPERTIES] + list(ITEM_PIDS) + [p for p, _, _ in QUALIFIERS])
)

#: Time precisions (Wikibase: 3 = million years, 6 = millennium, 7 = century, 8 = decade,
#: 9 = year, 10 = month, 11 = day) with their relative weights.
TIME_PRECISIONS = (11, 9, 10, 8, 7, 6, 3)
TIME_CUM_WEIGHTS = (50, 75, 85, 91, 97, 99, 100)
DEEP_TIME_YEARS = (13798000000, 4540000000, 66000000, 2500000)
UNITS: dict[str, tuple[str, ...]] = {
    "length": (WDX + "Q11573", WDX + "Q828224", WDX + "Q3710"),
    "mass": (WDX + "Q11570", WDX + "Q41803"),
    "area": (WDX + "Q712226", WDX + "Q35852"),
}
#: Coordinate precisions as written in dumps (PHP float spelling, and null).
COORD_PRECISIONS = ("0.0001", "1.0e-5", "0.00027777777777778", "0.01", "1", "null")

_SYLLABLES = tuple(
    c + v
    for c in ("b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "ch", "sh")
    for v in ("a", "e", "i", "o", "u", "ai", "ou", "an", "er")
)


def _make_words(n: int) -> tuple[str, ...]:
    rng = random.Random(0x5EED)  # the vocabulary is fixed, independent of --seed
    return tuple("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(n))


WORDS: tuple[str, ...] = _make_words(4096)
CAP_WORDS: tuple[str, ...] = tuple(w.capitalize() for w in WORDS)
