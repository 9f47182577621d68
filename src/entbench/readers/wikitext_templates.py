"""The inline templates whose visible text is kept (spec §3, "Plain text"); every other one is dropped.

Templates are removed from the text (`wikitext_markup.strip_templates`) except a short list of
templates that only format or wrap text: their output on a rendered page is characters of the
sentence (a dash, a non-breaking space, the words they wrap). Dropping those left holes in the text,
lost anchors made of them (`[[29th parallel north|{{nowrap|29° N}}]]` kept no anchor) and let a link
trail run across them (`[[Weimar]]{{mdash}}the` gave the anchor "Weimarthe"). The list, with what
each template shows (positional arguments numbered from 1, as MediaWiki does; `1=` counts as the
first):

| template (and the redirects accepted) | shows |
|---|---|
| `mdash` (`em dash`, `emdash`, `—`) | — |
| `ndash` (`en dash`, `endash`, `–`) | – |
| `spaced ndash` (`spaced en dash`, `snd`, `sndash`, `spnd`) | no-break space, –, space |
| `spaced mdash` (`spaced em dash`) | no-break space, —, space |
| `nbsp`, `spaces` | argument 1 (default 1, at most 20) no-break spaces |
| `·`, `•` | no-break space, · or •, space (list separators) |
| `'`, `'s` | an apostrophe, "'s" |
| `nowrap` (`nobr`, `nobreak`), `small`, `smaller`, `big`, `larger`, `sup`, `sub` | argument 1 |
| `nobold`, `noitalic`, `vanchor`, `abbr` | argument 1 |
| `resize` | argument 2, or 1 when there is one argument |
| `lang`, `rtl-lang` | argument 2 (`{{lang|fr|X}}` -> X) |
| `transl` (`transliteration`) | argument 3, or 2 when there are two: `{{transl|ar|ALA|X}}` -> X |
| `angbr` (`angle bracket`) | ⟨argument 1⟩ |
| `nihongo`, `nihongo3` | as `Module:Nihongo` lays it out, see `_nihongo` |

zhwiki uses these templates under the same (English) names, which its articles write as `{{lang|…}}`,
`{{Lang|…}}`, `{{nowrap|…}}`; the `模板:` prefix is accepted beside `Template:`. Names match as
MediaWiki matches them: the first letter in either case, `_` or runs of spaces as one space.
Not in the list on purpose: `lang-xx` (it adds the language's name in the wiki's own words, e.g.
"French:" / "英语："), link templates (`le`, `link-en`, `ill`: they are links, and which text they
show depends on whether the local article exists), `convert` and other templates that compute text.

A kept template's text goes back into the wikitext as wikitext (entities such as `&mdash;` are
decoded with the rest of the text, links in it are parsed as links) and is itself rendered by the
same rule (`{{nowrap|{{lang|de|X}}}}` -> X).

MARK is put where a removed or kept template meets a link's closing `]]`: in MediaWiki a template
always expands to something (a span, a footnote marker, an entity) that ends the link trail, so no
trail may cross one. MARK is U+0001, a character XML 1.0 forbids (it never occurs in a dump); the
renderer drops it from the input first and from the text last.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

#: Ends a link trail where a template was; removed from the rendered text.
MARK = "\x01"

_NAME_PREFIX = re.compile(r"^(?:template|模板|樣板|样板)\s*:\s*", re.I)
_NAME_SPACES = re.compile(r"[\s_]+")
#: What `normalize_name` changes in a stripped name beyond its first letter.
_UNUSUAL_SPELLING = re.compile(r"[:_]|\s\s|[^\S ]")
_ARG_TOKEN = re.compile(r"\{\{|\}\}|\[\[|\]\]|\|")
#: Cap on `{{nbsp|n}}`: large counts are layout, not text.
MAX_REPEAT = 20


@dataclass(frozen=True)
class Args:
    """A template's arguments: positional (1-based, `1=` included) and named (trimmed)."""

    positional: Mapping[int, str]
    named: Mapping[str, str]

    def get(self, n: int) -> str:
        """Positional argument `n`, or "" when absent."""
        return self.positional.get(n, "")

    def count(self) -> int:
        """The highest positional index given (0 when none)."""
        return max(self.positional, default=0)


def normalize_name(raw: str) -> str:
    """A template name in lookup form: no `Template:` prefix, spaces collapsed, first letter lower."""
    name = _NAME_SPACES.sub(" ", raw).strip()
    if ":" in name:
        name = _NAME_PREFIX.sub("", name)
    return name[:1].lower() + name[1:]


def split_arguments(inner: str) -> list[str]:
    """`inner` (a template without its braces) split at its own pipes.

    Pipes inside nested templates and inside `[[…]]` belong to them, as in MediaWiki's preprocessor:
    `{{nowrap|[[a|b]]}}` has one argument. An unclosed `[[` protects nothing."""
    parts: list[str] = []
    braces = links = 0
    last = 0
    cuts: list[int] = []
    for m in _ARG_TOKEN.finditer(inner):
        token = m.group()
        if token == "{{":
            braces += 1
        elif token == "}}":
            braces = max(0, braces - 1)
        elif token == "[[":
            links += braces == 0
        elif token == "]]":
            links = max(0, links - (braces == 0))
        elif braces == 0:
            cuts.append(m.start())
            if links == 0:
                parts.append(inner[last : m.start()])
                last = m.start() + 1
    if links:  # an unclosed `[[`: its pipes were template pipes after all
        parts, last = [], 0
        for cut in cuts:
            parts.append(inner[last:cut])
            last = cut + 1
    parts.append(inner[last:])
    return parts


def parse_arguments(parts: list[str]) -> Args:
    """Arguments of `parts[1:]` (`parts[0]` is the name): `key=value` is named unless key is a number."""
    positional: dict[int, str] = {}
    named: dict[str, str] = {}
    n = 0
    for part in parts[1:]:
        eq = part.find("=")
        if eq >= 0 and "{{" not in part[:eq] and "[[" not in part[:eq]:
            key, value = part[:eq].strip(), part[eq + 1 :].strip()
            if key.isdigit():
                positional[int(key)] = value
            else:
                named[key] = value
            continue
        n += 1
        positional[n] = part
    return Args(positional, named)


Renderer = Callable[[Args], str]


def _fixed(text: str) -> Renderer:
    return lambda args: text


def _argument(n: int) -> Renderer:
    return lambda args: args.get(n)


def _repeated(text: str) -> Renderer:
    def render(args: Args) -> str:
        raw = args.get(1).strip()
        times = int(raw) if raw.isdigit() else 1
        return text * max(1, min(times, MAX_REPEAT))

    return render


def _resize(args: Args) -> str:
    return args.get(2) if args.count() >= 2 else args.get(1)


def _transl(args: Args) -> str:
    return args.get(3) if args.count() >= 3 else args.get(2)


def _angbr(args: Args) -> str:
    return f"&#x27E8;{args.get(1)}&#x27E9;"


def _nihongo(primary: int, secondary: int) -> Renderer:
    """`{{nihongo|English|日本語|rōmaji|extra|extra2}}` as `Module:Nihongo` lays it out.

    The lead is the primary text (nihongo: English, nihongo3: rōmaji), else the secondary one; the
    Japanese, the secondary text when both are there, and `extra` follow in parentheses; `extra2`
    after them: nihongo `English (日本語, rōmaji, extra) extra2`, nihongo3 `rōmaji (日本語, English)`,
    nihongo without English `rōmaji (日本語)`. Without Japanese and rōmaji the module shows an error
    message, which is dropped. The `Japanese:`/`Hepburn:` labels of `lead=yes` and the old help link
    ("?") are page furniture, not text, and are left out."""

    def render(args: Args) -> str:
        japanese, lead, second = (args.get(i).strip() for i in (2, primary, secondary))
        if not (japanese or args.get(3).strip()):
            return ""
        extra = (args.named.get("extra") or args.get(4)).strip()
        extra2 = (args.named.get("extra2") or args.get(5)).strip()
        if not lead:
            lead, second = second, ""
        inside = ", ".join(part for part in (japanese, second, extra) if part)
        return " ".join(part for part in (lead, f"({inside})" if inside else "", extra2) if part)

    return render


def _table() -> dict[str, Renderer]:
    rules: dict[tuple[str, ...], Renderer] = {
        ("mdash", "em dash", "emdash", "—"): _fixed("&mdash;"),
        ("ndash", "en dash", "endash", "–"): _fixed("&ndash;"),
        ("spaced ndash", "spaced en dash", "snd", "sndash", "spnd"): _fixed("&nbsp;&ndash; "),
        ("spaced mdash", "spaced em dash"): _fixed("&nbsp;&mdash; "),
        ("nbsp", "spaces"): _repeated("&nbsp;"),
        ("·",): _fixed("&nbsp;&middot; "),
        ("•",): _fixed("&nbsp;&bull; "),
        ("'",): _fixed("&#39;"),
        ("'s",): _fixed("&#39;s"),
        (
            "nowrap",
            "nobr",
            "nobreak",
            "small",
            "smaller",
            "big",
            "larger",
            "sup",
            "sub",
            "nobold",
            "noitalic",
            "vanchor",
            "abbr",
        ): _argument(1),
        ("resize",): _resize,
        ("lang", "rtl-lang"): _argument(2),
        ("transl", "transliteration"): _transl,
        ("angbr", "angle bracket"): _angbr,
        ("nihongo",): _nihongo(1, 3),
        ("nihongo3",): _nihongo(3, 1),
    }
    return {normalize_name(name): render for names, render in rules.items() for name in names}


#: Lookup form of each kept template's name -> what it shows, as wikitext.
INLINE_TEMPLATES: dict[str, Renderer] = _table()
#: Longest name in the table: longer names are not looked up at all.
_LONGEST = max(map(len, INLINE_TEMPLATES))
#: The names as most pages write them (either first letter), found without normalising.
_AS_WRITTEN = frozenset(
    spelling for name in INLINE_TEMPLATES for spelling in (name, name[:1].upper() + name[1:])
)


def is_inline(raw_name: str) -> bool:
    """Whether a template name (as written) is one of the kept templates."""
    name = raw_name.strip()
    if name in _AS_WRITTEN:
        return True
    if len(name) > _LONGEST + 20 or not _UNUSUAL_SPELLING.search(name):
        return False  # nothing normalising would change: pages hold hundreds of other templates
    return normalize_name(name) in INLINE_TEMPLATES


def visible_wikitext(inner: str) -> str | None:
    """What a kept template shows, as wikitext (its own templates not yet handled); None = drop it.

    `inner` is the template without its outer braces."""
    parts = split_arguments(inner)
    render = INLINE_TEMPLATES.get(normalize_name(parts[0])) if len(parts[0]) <= _LONGEST + 20 else None
    if render is None:
        return None
    return render(parse_arguments(parts))
