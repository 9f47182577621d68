"""`{{convert}}` and `{{cvt}}` as MediaWiki shows them (issue 32): the value and unit as written, then
the converted value where the unit table (`convert_units.toml`) covers both units.

`{{convert|1300|mi|km}}` -> "1,300 miles (2,100 km)"; `{{cvt|66|to|883|km2}}` -> "66 to 883 km²
(25 to 341 sq mi)"; `{{convert|20|C}}` -> "20 °C (68 °F)". What is followed, from `Module:Convert`
(https://en.wikipedia.org/wiki/Module:Convert and its documentation, `Template:Convert`):

* arguments: value, optional range words and values (`to`, `-`, `and`, `or`, `by`, `x`, `+/-`),
  the input unit (`5|ft|10|in`: a foot-and-inch composite), the output unit(s) (default: the unit's
  own default), a precision; named `abbr` (`on`, `off`, `in`, `out`, `values`; default `out`: the
  input unit by name, the output by symbol; `cvt` is `abbr=on`), `adj=on` ("10-mile"), `disp`
  (`b`, `or`, `flip`, `out`/`output only`, `number`/`output number only`, `sqbr`, `comma`),
  `order=flip`, `sp=us` (US spellings), `sigfig`, `round`;
* numbers are shown with thousands separators and a minus sign (−); a value of exactly 1 takes
  the singular name;
* the default rounding of the module (`default_precision`): the input's own precision (decimals,
  or minus the trailing zeros of an integer), plus log10(input / output) + log10 2, at least two
  significant figures (three in kelvin for temperatures), the same for every value of a range.

A unit not in the table shows the value and the unit as written, and no conversion.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from importlib import resources

from entbench.readers.wikitext.template_args import Args

_NUMBER = re.compile(r"^[+\-−]?(?:\d[\d,]*)?(?:\.\d+)?(?:e[+\-]?\d+)?$", re.I)
_FRACTION = re.compile(r"^([+\-−]?\d+)?\s*\+?\s*(\d+)/(\d+)$")
#: Range words and how they show between two values.
RANGE_WORDS = {
    "to": " to ",
    "-": "–",
    "–": "–",
    "to(-)": " to ",
    "and": " and ",
    "and(-)": " and ",
    "or": " or ",
    "or(-)": " or ",
    "by": " by ",
    "x": " × ",
    "×": " × ",
    "+/-": " ± ",
    "±": " ± ",
    "&": " & ",
    ",": ", ",
}
_FUDGE = 1e-14


@dataclass(frozen=True)
class Unit:
    """A unit of the table."""

    code: str
    group: str
    name: str
    plural: str
    us: str
    us_plural: str
    symbol: str
    scale: float
    offset: float | None
    default: str
    prefer_symbol: bool


def _load_units() -> dict[str, Unit]:
    data = tomllib.loads(
        resources.files("entbench.readers.wikitext").joinpath("convert_units.toml").read_text("utf-8")
    )
    units: dict[str, Unit] = {}
    for group, entries in data.items():
        for code, entry in entries.items():
            name = entry["name"]
            plural = entry.get("plural", name + "s")
            us = entry.get("us", name)
            unit = Unit(
                code=code,
                group=group,
                name=name,
                plural=plural,
                us=us,
                us_plural=entry.get("us_plural", plural if us == name else us + "s"),
                symbol=entry["symbol"],
                scale=float(entry["scale"]),
                offset=float(entry["offset"]) if "offset" in entry else None,
                default=entry["default"],
                prefer_symbol=group == "temperature",
            )
            for key in (code, *entry.get("aliases", ())):
                units[key] = unit
    return units


#: Unit code (and aliases) -> unit.
UNITS: dict[str, Unit] = _load_units()


@dataclass
class _Value:
    shown: str  # as the page shows the input
    value: float
    clean: str  # digits for the precision rule (no sign, no separators)


def _parse_value(raw: str) -> _Value | None:
    text = raw.strip().replace("&minus;", "−")
    if not text:
        return None
    fraction = _FRACTION.match(text)
    if fraction:
        whole = fraction.group(1) or "0"
        sign = -1 if whole.startswith(("-", "−")) else 1
        value = abs(float(whole.replace("−", "-"))) + int(fraction.group(2)) / max(1, int(fraction.group(3)))
        shown = f"{whole.lstrip('+')}+{fraction.group(2)}⁄{fraction.group(3)}" if fraction.group(1) else text
        return _Value(shown.replace("-", "−"), sign * value, "0")
    if not _NUMBER.match(text) or not any(c.isdigit() for c in text):
        return None
    plain = text.replace(",", "").replace("−", "-").lstrip("+")
    value = float(plain)
    shown = group_digits(plain) if "," not in text else text.lstrip("+")
    return _Value(shown.replace("-", "−"), value, plain.lstrip("-"))


def group_digits(number: str) -> str:
    """`1300.5` -> `1,300.5` (thousands separators in the integer part; exponents left alone)."""
    if "e" in number.lower():
        return number
    sign = "-" if number.startswith("-") else ""
    digits = number.lstrip("-")
    integer, dot, decimals = digits.partition(".")
    if len(integer) >= 4:
        integer = f"{int(integer):,}"
    return sign + integer + dot + decimals


def _precision(value: _Value, unit_in: Unit, unit_out: Unit, out: float, subunit: bool) -> int:
    """Module:Convert's `default_precision` (the module's own procedure, in its own terms)."""
    integer, dot, decimals = value.clean.lower().split("e")[0].partition(".")
    prec = (0 if subunit else -(len(integer) - len(integer.rstrip("0")))) if not dot else len(decimals)
    if "e" in value.clean.lower():
        prec -= int(value.clean.lower().split("e")[1])
    if unit_in.offset is not None and unit_out.offset is not None:
        kelvin = abs((value.value + unit_in.offset) * unit_in.scale)
        minprec = 2 if kelvin < 1e-8 else 2 - math.floor(math.log10(kelvin) + _FUDGE)
        return max(math.floor(prec), minprec)
    if value.value == 0 or out <= 0:
        return 0
    adjust = math.log10(unit_out.scale) + 2 if subunit else math.log10(abs(value.value / out))
    adjust += math.log10(2)
    minprec = 1 - math.floor(math.log10(out) + _FUDGE)
    return max(math.floor(prec + adjust), minprec)


def _convert(value: float, unit_in: Unit, unit_out: Unit) -> float:
    if unit_in.offset is not None and unit_out.offset is not None:
        return (value + unit_in.offset) * unit_in.scale / unit_out.scale - unit_out.offset
    return value * unit_in.scale / unit_out.scale


def _show(number: float, precision: int) -> str:
    negative = number < 0
    number = abs(number)
    if precision >= 0:
        shown = f"{number + (2e-14 if precision <= 8 else 0):.{precision}f}"
    else:
        shown = f"{number / 10**-precision:.0f}"
        if shown != "0":
            shown += "0" * -precision
    shown = group_digits(shown)
    return ("−" if negative and shown.strip("0.,") else "") + shown


def _round(number: float, args: Args) -> str | None:
    sigfig = args.named.get("sigfig", "").strip()
    if sigfig.isdigit() and int(sigfig) > 0 and number:
        digits = int(sigfig) - 1 - math.floor(math.log10(abs(number)))
        return _show(round(number, digits), max(digits, 0)) if digits >= 0 else _show(number, digits)
    step = args.named.get("round", "").strip()
    try:
        size = float(step) if step else 0.0
    except ValueError:
        size = 0.0
    if size > 0:
        rounded = math.floor(abs(number) / size + 0.5) * size * (1 if number >= 0 else -1)
        return _show(rounded, 1 if size == 0.5 and rounded % 1 else 0)
    return None


def _label(unit: Unit | None, code: str, symbol: bool, plural: bool, us: bool) -> str:
    if unit is None:
        return code
    if symbol:
        return unit.symbol
    if us:
        return unit.us_plural if plural else unit.us
    return unit.plural if plural else unit.name


def _side(shown: list[str], seps: list[str], label: str, symbol: bool, adj: bool) -> str:
    parts = [shown[0]]
    for sep, value in zip(seps, shown[1:], strict=True):
        parts.append(RANGE_WORDS[sep] + value)
    number = "".join(parts)
    if not label:
        return number
    if adj and not symbol:
        return f"{number}-{label}"
    return f"{number}&nbsp;{label}" if symbol else f"{number} {label}"


def render_convert(args: Args, abbr_default: str) -> str:
    """What `{{convert|…}}` shows, as wikitext (see the module docstring); "" when it is not a
    conversion at all (no number first)."""
    positional = [args.get(i).strip() for i in range(1, args.count() + 1)]
    first = _parse_value(positional[0]) if positional else None
    if first is None:
        return ""
    values, seps = [first], []
    i = 1
    while i + 1 < len(positional) and positional[i] in RANGE_WORDS:
        nxt = _parse_value(positional[i + 1])
        if nxt is None:
            break
        seps.append(positional[i])
        values.append(nxt)
        i += 2
    code_in = positional[i] if i < len(positional) else ""
    i += 1
    unit_in = UNITS.get(code_in)
    subunit = None
    if code_in == "ft" and i + 1 < len(positional) and positional[i + 1] == "in":
        sub = _parse_value(positional[i])
        if sub is not None:
            subunit = sub
            i += 2
    code_out = ""
    if i < len(positional) and _parse_value(positional[i]) is None:
        code_out = positional[i]
        i += 1
    precision = positional[i] if i < len(positional) else ""
    named = args.named
    abbr = named.get("abbr", abbr_default).strip() or abbr_default
    us = named.get("sp", "").strip() == "us"
    adj = named.get("adj", "").strip() in ("on", "mid", "yes")
    disp = named.get("disp", "b").strip()
    flip = named.get("order", "").strip() == "flip" or disp == "flip"
    in_symbol = abbr in ("on", "in", "values") or (
        unit_in is not None and unit_in.prefer_symbol and abbr != "off"
    )
    singular = (abs(values[-1].value) == 1 and subunit is None) or adj  # "a 10-kilometre race"
    in_label = "" if abbr == "values" else _label(unit_in, code_in, in_symbol, not singular, us)
    if subunit is not None and unit_in is not None:
        inch = UNITS["in"]
        in_text = _side([v.shown for v in values], seps, in_label, in_symbol, False)
        sub_label = _label(inch, "in", in_symbol, subunit.value != 1, us)
        in_text += " " + _side([subunit.shown], [], sub_label, in_symbol, False)
    else:
        in_text = _side([v.shown for v in values], seps, in_label, in_symbol, adj)
    outs = [UNITS.get(code) for code in (code_out or (unit_in.default if unit_in else "")).split()]
    if unit_in is None or not outs or any(out is None or out.group != unit_in.group for out in outs):
        return in_text
    out_symbol = abbr in ("on", "out", "values") or (abbr not in ("off", "in") and not flip)
    out_texts = []
    for unit_out in outs:
        assert unit_out is not None
        numbers = [v.value if subunit is None else v.value + subunit.value / 12 for v in values]
        converted = [_convert(n, unit_in, unit_out) for n in numbers]
        rounded = [_round(c, args) for c in converted]
        if precision.lstrip("-").isdigit():
            shown = [_show(c, int(precision)) for c in converted]
        elif all(r is not None for r in rounded):
            shown = [str(r) for r in rounded]
        else:
            best = max(
                _precision(v, unit_in, unit_out, abs(c), subunit is not None)
                for v, c in zip(values, converted, strict=True)
            )
            shown = [_show(c, best) for c in converted]
        plural = shown[-1].lstrip("−") not in ("1", "1.0", "1.00")
        label = "" if abbr == "values" else _label(unit_out, unit_out.code, out_symbol, plural, us)
        out_texts.append(_side(shown, seps, label, out_symbol, False))
    out_text = "; ".join(out_texts)
    if disp in ("out", "output only", "number", "output number only"):
        return out_text if disp in ("out", "output only") else out_text.split("&nbsp;")[0].split(" ")[0]
    if flip:
        in_text, out_text = out_text, in_text
    if disp == "or":
        return f"{in_text} or {out_text}"
    if disp == "sqbr":
        return f"{in_text} &#91;{out_text}&#93;"
    if disp == "comma":
        return f"{in_text}, {out_text}"
    return f"{in_text} ({out_text})"
