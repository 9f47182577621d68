"""The rules of `inline_templates.toml` (issue 32): what a kind of template shows, as wikitext.

Each rule takes the template's arguments, the table entry (its fields) and the wiki's language,
and returns the wikitext MediaWiki's page shows in the template's place ("" = nothing). The table
says which template follows which rule, with the template's documentation page; the docstrings here
say what each rule shows.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

from entbench.readers.wikitext.convert import group_digits, render_convert
from entbench.readers.wikitext.template_args import Args

Rule = Callable[[Args, Mapping[str, Any], str], str]
#: Cap on `{{nbsp|n}}`: large counts are layout, not text.
MAX_REPEAT = 20
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_SUPERSCRIPT = str.maketrans("0123456789-−+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁻⁺")
_MONTHS = tuple(
    "January February March April May June July August September October November December".split()  # noqa: SIM905
)
_LANGUAGES: dict[str, dict[str, str]] = tomllib.loads(
    resources.files("entbench.readers.wikitext").joinpath("template_languages.toml").read_text("utf-8")
)


def language_name(code: str, wiki: str) -> str:
    """A language's name as `wiki`'s templates show it ("" when the table has no name for it)."""
    names = _LANGUAGES.get(wiki) or _LANGUAGES["en"]
    code = code.strip()
    return names.get(code) or names.get(code.lower()) or names.get(code.split("-")[0].lower(), "")


def _text(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    return str(entry["text"])


def _repeat(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    raw = args.get(1).strip()
    times = int(raw) if raw.isdigit() else 1
    return str(entry["text"]) * max(1, min(times, MAX_REPEAT))


def _format(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    """`format` with `{1}`, `{2|1}` (the first non-empty of the two) and `{name}` filled in; "" when
    every placeholder is empty."""
    filled: list[bool] = []

    def value(m: re.Match[str]) -> str:
        for key in m.group(1).split("|"):
            found = args.get(int(key)) if key.isdigit() else args.named.get(key, "")
            if found.strip():
                filled.append(True)
                return found
        return ""

    shown = _PLACEHOLDER.sub(value, str(entry["format"]))
    return shown if filled else ""


def _join(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    """The positional arguments joined by `separator`, `_` read as a space (`{{respell|…}}`)."""
    parts = [args.get(i).strip() for i in range(1, args.count() + 1)]
    return str(entry["separator"]).join(p for p in parts if p).replace("_", " ")


def _choice(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    choices: Mapping[str, str] = entry["choices"]
    return choices.get(args.get(1).strip(), "")


def _convert(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    return render_convert(args, str(entry.get("abbr", "off")))


def _lang_xx(args: Args, entry: Mapping[str, Any], wiki: str, code: str = "") -> str:
    """`{{lang-fr|text}}` -> "French: text" (zhwiki: "法语：text"); a second argument is the
    romanization (", romanized: …"), a third or `lit=` the literal translation (", lit. '…'");
    `label=none` drops the language name, `p=` adds the IPA (", IPA: […]")."""
    text = args.get(1).strip()
    if not text:
        return ""
    label = args.named.get("label", "").strip() or language_name(code, wiki)
    if label.lower() == "none":
        label = ""
    colon = "：" if wiki == "zh" else ": "
    shown = f"{label}{colon}{text}" if label else text
    translit = (args.get(2) or args.named.get("translit", "")).strip()
    if translit:
        shown += f", romanized: {translit}"
    ipa = args.named.get("p", "").strip()
    if ipa:
        shown += f", IPA: &#91;{ipa}&#93;"
    literal = (args.get(3) or args.named.get("lit", "") or args.named.get("translation", "")).strip()
    if literal:
        shown += f", lit. &#39;{literal}&#39;"
    return shown


def _ipa_xx(args: Args, entry: Mapping[str, Any], wiki: str, code: str = "") -> str:
    """`{{IPA-de|ˈbɛʁlɪn}}` -> "German pronunciation: [ˈbɛʁlɪn]"; the second argument picks the
    label: empty -> none, `pron` -> "pronounced", `lang` -> the language's, `local` -> "locally",
    `IPA` -> "IPA:". The audio link (third argument) is page furniture."""
    ipa = args.get(1).strip()
    if not ipa:
        return ""
    shown = ipa if ipa[0] in "/[" else f"&#91;{ipa}&#93;"
    label = args.get(2).strip() if 2 in args.positional else "lang"
    prefix = {
        "": "",
        "pron": "pronounced ",
        "local": "locally ",
        "IPA": "IPA: ",
        "lang": f"{language_name(code, wiki)} pronunciation: " if language_name(code, wiki) else "",
    }.get(label, "")
    return prefix + shown


#: `{{IPAc-en}}` labels before the transcription.
_IPAC_LABELS = {
    "lang": "English pronunciation: ",
    "pron": "pronounced ",
    "local": "locally ",
    "also": "also ",
}


def _ipac(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    """`{{IPAc-en|æ|l|ˈ|b|iː|d|oʊ}}` -> "/ælˈbiːdoʊ/": the pieces joined, `_` a space, leading
    labels (`lang`, `pron`, `US`, `UK`, …) before it; `audio=` is a link, not text."""
    pieces = [args.get(i) for i in range(1, args.count() + 1)]
    labels = []
    while pieces and (pieces[0].strip() in _IPAC_LABELS or re.fullmatch(r"[A-Z]{2,3}", pieces[0].strip())):
        head = pieces.pop(0).strip()
        labels.append(_IPAC_LABELS.get(head, f"{head}: "))
    ipa = "".join(pieces).replace("_", " ").strip()
    return "".join(labels) + f"/{ipa}/" if ipa else ""


def _as_of(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    """`{{As of|2014|5|3}}` -> "As of 3 May 2014" (`df=US`: "May 3, 2014"; month alone: "May
    2014"); `lc=y` lower-cases "as", `since=y` says "Since", `alt=` replaces the whole text,
    `pre=`/`post=` go around the date."""
    if args.named.get("alt", "").strip():
        return args.named["alt"].strip()
    year = args.get(1).strip()
    if not year:
        return ""
    month_raw, day = args.get(2).strip(), args.get(3).strip().lstrip("0")
    month = _MONTHS[int(month_raw) - 1] if month_raw.isdigit() and 1 <= int(month_raw) <= 12 else month_raw
    if month and day:
        date = (
            f"{month} {day}, {year}"
            if args.named.get("df", "").strip().upper() == "US"
            else f"{day} {month} {year}"
        )
    else:
        date = f"{month} {year}" if month else year
    pre = args.named.get("pre", "").strip()
    date = f"{pre} {date}" if pre else date
    word = "Since" if args.named.get("since", "").strip() else "As of"
    if args.named.get("lc", "").strip():
        word = word.lower()
    return f"{word} {date}{args.named.get('post', '').strip()}"


def _val(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    """`{{val|6.241|e=18}}` -> "6.241×10¹⁸"; `{{val|1.2|0.3}}` -> "1.2±0.3", `{{val|1.2|+0.3|-0.2}}`
    -> "1.2+0.3−0.2"; `u=`/`ul=` a unit after a no-break space, `up=`/`upl=` a per-unit ("/s"),
    `p=` and `s=` text before and after."""
    number = args.get(1).strip()
    if not number:
        return ""
    shown = args.named.get("p", "") + number.replace("-", "−")
    second, third = args.get(2).strip(), args.get(3).strip()
    if second and third:
        shown += f"{second}{third.replace('-', '−')}"
    elif second:
        shown += f"±{second}"
    exponent = args.named.get("e", "").strip()
    if exponent:
        shown += "×10" + exponent.translate(_SUPERSCRIPT)
    unit = (args.named.get("u") or args.named.get("ul") or "").strip()
    if unit:
        shown += f"&nbsp;{unit}"
    per = (args.named.get("up") or args.named.get("upl") or "").strip()
    if per:
        shown += f"/{per}"
    return shown + args.named.get("s", "")


def _frac(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    """`{{frac|1|2}}` -> "1⁄2", `{{frac|3|1|2}}` -> "3+1⁄2", `{{frac|4}}` -> "1⁄4" (`sfrac`: "/")."""
    slash = str(entry["slash"])
    parts = [args.get(i).strip() for i in range(1, min(args.count(), 3) + 1)]
    if len(parts) == 1:
        return f"1{slash}{parts[0]}" if parts[0] else ""
    if len(parts) == 2:
        return f"{parts[0]}{slash}{parts[1]}"
    if len(parts) == 3:
        return f"{parts[0]}+{parts[1]}{slash}{parts[2]}"
    return ""


def _coord(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    """`{{coord|13|19|N|169|9|W}}` -> "13°19′N 169°9′W", `{{coord|43.65|-79.38}}` -> "43.65°N
    79.38°W"; nothing when `display=title` puts it only beside the page title."""
    display = args.named.get("display", "inline").replace(" ", "")
    if "inline" not in display and display not in ("i", "it", "ti"):
        return ""
    parts = []
    for i in range(1, args.count() + 1):
        part = args.get(i).strip()
        if ":" in part:
            break
        parts.append(part)
    hemispheres = [i for i, p in enumerate(parts) if p.upper() in ("N", "S", "E", "W")]
    if len(hemispheres) == 2:
        lat, lon = parts[: hemispheres[0] + 1], parts[hemispheres[0] + 1 : hemispheres[1] + 1]
        return f"{_dms(lat)} {_dms(lon)}"
    if len(parts) >= 2:
        try:
            lat_v, lon_v = float(parts[0]), float(parts[1])
        except ValueError:
            return ""
        lat_h, lon_h = ("N" if lat_v >= 0 else "S"), ("E" if lon_v >= 0 else "W")
        return f"{parts[0].lstrip('-')}°{lat_h} {parts[1].lstrip('-')}°{lon_h}"
    return ""


def _dms(parts: list[str]) -> str:
    marks = ("°", "′", "″")
    return (
        "".join(f"{value}{mark}" for value, mark in zip(parts[:-1], marks, strict=False)) + parts[-1].upper()
    )


#: Track gauges `{{RailGauge}}` knows, by the codes articles use: (metric, imperial) as shown.
_GAUGES = {
    ("1435mm", "1435", "sg", "ussg", "standard", "4ft8.5in", "4ft8+1/2in"): ("1,435 mm", "4 ft 8+1⁄2 in"),
    ("1000mm", "1000", "metre", "meter", "mg"): ("1,000 mm", "3 ft 3+3⁄8 in"),
    ("1067mm", "1067", "3ft6in", "cape"): ("1,067 mm", "3 ft 6 in"),
    ("1520mm", "1520", "russian"): ("1,520 mm", "4 ft 11+27⁄32 in"),
    ("1524mm", "1524", "5ft"): ("1,524 mm", "5 ft"),
    ("1600mm", "1600", "5ft3in", "irish"): ("1,600 mm", "5 ft 3 in"),
    ("1668mm", "1668", "iberian"): ("1,668 mm", "5 ft 5+21⁄32 in"),
    ("1676mm", "1676", "5ft6in", "indian"): ("1,676 mm", "5 ft 6 in"),
    ("914mm", "914", "3ft"): ("914 mm", "3 ft"),
    ("762mm", "762", "2ft6in"): ("762 mm", "2 ft 6 in"),
    ("750mm", "750"): ("750 mm", "2 ft 5+1⁄2 in"),
    ("610mm", "610", "2ft"): ("610 mm", "2 ft"),
    ("600mm", "600"): ("600 mm", "1 ft 11+5⁄8 in"),
}
_GAUGE = {code: shown for codes, shown in _GAUGES.items() for code in codes}


def _rail_gauge(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    """`{{RailGauge|1435mm}}` -> "1,435 mm (4 ft 8+1⁄2 in)" (an imperial code shows the imperial
    size first); an unknown code shows as written."""
    code = args.get(1).strip()
    found = _GAUGE.get(code.lower().replace(" ", ""))
    if found is None:
        return code
    metric, imperial = found
    first, second = (
        (metric, imperial) if (code[:1].isdigit() and "mm" in code) or code.isdigit() else (imperial, metric)
    )
    return f"{first} ({second})".replace(" ", "&nbsp;", 1)


def _ship(args: Args, entry: Mapping[str, Any], wiki: str, prefix: str = "") -> str:
    """`{{HMS|Ajax|22}}` -> a link to "HMS Ajax (22)" showing "HMS Ajax (22)"; the third argument
    (1 prefix + 2 name + 4 pennant) picks what is shown: `{{HMS|Ajax|22|6}}` -> "Ajax (22)".
    `{{ship|HMS|Ajax|22}}` names the prefix first."""
    positional = [args.get(i).strip() for i in range(1, args.count() + 1)]
    if prefix == "ship":
        if not positional:
            return ""
        prefix, positional = positional[0], positional[1:]
    if not positional or not positional[0]:
        return ""
    name = positional[0]
    pennant = positional[1] if len(positional) > 1 else ""
    code = positional[2] if len(positional) > 2 and positional[2].isdigit() else ""
    target = f"{prefix} {name}" + (f" ({pennant})" if pennant else "")
    show = int(code) if code else (7 if pennant else 3)
    shown = " ".join(
        part
        for bit, part in ((1, prefix), (2, f"''{name}''"), (4, f"({pennant})" if pennant else ""))
        if show & bit and part
    )
    return f"[[{target}|{shown}]]" if shown else ""


_ZH_LABELS = (
    ("t", "traditional Chinese"),
    ("s", "simplified Chinese"),
    ("c", "Chinese"),
    ("p", "pinyin"),
    ("w", "Wade–Giles"),
    ("j", "Jyutping"),
)


def _zh(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    """`{{zh|c=民航|l=Civil Aviation}}` -> "Chinese: 民航; lit. 'Civil Aviation'" (`labels=no`: the
    values alone)."""
    labels = args.named.get("labels", "yes").strip() != "no"
    parts = []
    for key, label in _ZH_LABELS:
        value = args.named.get(key, "").strip()
        if value:
            parts.append(f"{label}: {value}" if labels else value)
    literal = args.named.get("l", "").strip()
    if literal:
        parts.append(f"lit. &#39;{literal}&#39;")
    return "; ".join(parts)


def _ilh(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    """An interlanguage link template (`{{le|本地名|English name|显示名}}`, `{{tsl|en|English
    name|本地名|显示名}}`, enwiki's `{{ill|Local|de|Foreign}}`) -> `[[本地名|显示名]]`: MediaWiki shows
    the local name, linked when the local article exists; which it is, the dump says downstream
    (`title_qid` resolves the link, or counts it a red link). The foreign name MediaWiki adds after a
    missing article ("（英语：…）") is left out: it depends on that existence."""
    local_at = int(entry["local"])
    display_key = str(entry["display"])
    if (
        entry.get("kind") == "ilh"
        and local_at == 1
        and args.count() >= 3
        and re.fullmatch(r"[a-z]{2,3}", args.get(1).strip())
        and wiki == "en"
    ):
        local_at, display_key = 2, "4"  # the old `{{ill|de|Local|Foreign|Display}}`
    local = args.get(local_at).strip()
    if not local:
        return ""
    display = (
        args.get(int(display_key)) if display_key.isdigit() else args.named.get(display_key, "")
    ).strip()
    display = display or args.named.get("d", "").strip() or args.named.get("lt", "").strip()
    return f"[[{local}|{display}]]" if display and display != local else f"[[{local}]]"


def _nihongo(args: Args, entry: Mapping[str, Any], wiki: str) -> str:
    """`{{nihongo|English|日本語|rōmaji|extra|extra2}}` as `Module:Nihongo` lays it out.

    The lead is the primary text (nihongo: English, nihongo3: rōmaji), else the secondary one; the
    Japanese, the secondary text when both are there, and `extra` follow in parentheses; `extra2`
    after them: nihongo `English (日本語, rōmaji, extra) extra2`, nihongo3 `rōmaji (日本語, English)`,
    nihongo without English `rōmaji (日本語)`. Without Japanese and rōmaji the module shows an error
    message, which is dropped. The `Japanese:`/`Hepburn:` labels of `lead=yes` and the old help link
    ("?") are page furniture, not text, and are left out."""
    primary, secondary = int(entry["primary"]), int(entry["secondary"])
    japanese, lead, second = (args.get(i).strip() for i in (2, primary, secondary))
    if not (japanese or args.get(3).strip()):
        return ""
    extra = (args.named.get("extra") or args.get(4)).strip()
    extra2 = (args.named.get("extra2") or args.get(5)).strip()
    if not lead:
        lead, second = second, ""
    inside = ", ".join(part for part in (japanese, second, extra) if part)
    return " ".join(part for part in (lead, f"({inside})" if inside else "", extra2) if part)


def formatnum(value: str) -> str:
    """`{{formatnum:3003}}` -> "3,003" (`|R` reverses: separators removed)."""
    number, _, flag = value.partition("|")
    number = number.strip()
    if flag.strip() == "R":
        return number.replace(",", "")
    return group_digits(number) if re.fullmatch(r"-?\d+(?:\.\d+)?", number) else number


RULES: dict[str, Rule] = {
    "text": _text,
    "repeat": _repeat,
    "format": _format,
    "join": _join,
    "choice": _choice,
    "convert": _convert,
    "ipac": _ipac,
    "as_of": _as_of,
    "val": _val,
    "frac": _frac,
    "coord": _coord,
    "rail_gauge": _rail_gauge,
    "zh": _zh,
    "ilh": _ilh,
    "nihongo": _nihongo,
}
#: Rules that also take the rest of the template's name after its table name or prefix (the
#: language code of `lang-xx`, the ship prefix).
NAMED_RULES: dict[str, Callable[..., str]] = {"lang_xx": _lang_xx, "ipa_xx": _ipa_xx, "ship": _ship}
