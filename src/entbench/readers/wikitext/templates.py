"""The inline templates whose visible text is kept (spec §3, "Plain text"; issues 21, 32); every other
one is dropped.

Templates are removed from the text (`wikitext.markup.strip_templates`) except those whose output on
a rendered page is words of the sentence: dashes and spaces, wrappers (`nowrap`, `lang`, `small`),
numbers with units (`convert`), dates (`as of`), pronunciations (`IPAc-en`, `IPA-xx`, `respell`),
language labels (`lang-xx`), formulas (`chem`, `frac`, `val`), coordinates, and links written as
templates (ship names; zhwiki's `le`/`link-xx`/`tsl`). Removing them left holes ("Andorra's land
area is ."), lost anchors made of them and let link trails run across them.

Which templates are kept, what each shows and the documentation page that says so is data:
`inline_templates.toml`, one entry per template (with its redirects), naming a rule of
`wikitext.template_rules` and that rule's fields. Names match as MediaWiki matches them: the first
letter in either case, `_` or runs of spaces as one space, with or without `Template:` (`模板:` on
zhwiki). Entries may be limited to some wikis (`wikis`): zhwiki's `le` is a link template, and
`lang-xx` names the language in the wiki's own words ("French:" / "法语：").

A kept template's text goes back into the wikitext as wikitext (entities such as `&mdash;` are
decoded with the rest of the text, links in it are parsed as links) and is itself rendered by the
same rule (`{{nowrap|{{lang|de|X}}}}` -> X).

MARK is put where a removed or kept template meets a link's closing `]]`: in MediaWiki a template
always expands to something (a span, a footnote marker, an entity) that ends the link trail, so no
trail may cross one. MARK is U+0001, a character XML 1.0 forbids (it never occurs in a dump); the
renderer drops it from the input first and from the text last.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from importlib import resources
from typing import Any

from entbench.readers.wikitext.template_args import Args, normalize_name, parse_arguments, split_arguments
from entbench.readers.wikitext.template_rules import MAX_REPEAT, NAMED_RULES, RULES, formatnum

__all__ = [
    "INLINE_TEMPLATES",
    "MARK",
    "MAX_REPEAT",
    "Args",
    "is_inline",
    "normalize_name",
    "parse_arguments",
    "split_arguments",
    "template_key",
    "visible_wikitext",
]

#: Ends a link trail where a template was; removed from the rendered text.
MARK = "\x01"


def _load_table() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    data = tomllib.loads(
        resources.files("entbench.readers.wikitext").joinpath("inline_templates.toml").read_text("utf-8")
    )
    names: dict[str, dict[str, Any]] = {}
    prefixes: dict[str, dict[str, Any]] = {}
    for entry in data["template"]:
        kind = entry["kind"]
        if kind not in RULES and kind not in NAMED_RULES and kind != "formatnum":
            raise ValueError(f"inline_templates.toml: unknown kind {kind!r}")
        if not entry.get("source"):
            raise ValueError(f"inline_templates.toml: {entry} has no source")
        for name in entry.get("names", ()):
            names[normalize_name(name)] = {**entry, "name": name}
        for prefix in entry.get("prefixes", ()):
            prefixes[normalize_name(prefix)] = {**entry, "name": prefix}
    return names, prefixes


#: Lookup form of each kept template's name -> its table entry (with `name` as the table writes it).
INLINE_TEMPLATES, _PREFIXES = _load_table()
#: Longest name in the table: longer names are not looked up at all.
_LONGEST = max(map(len, INLINE_TEMPLATES)) + 20


@functools.lru_cache(maxsize=1 << 16)
def _lookup(raw_name: str, language: str) -> tuple[Mapping[str, Any], str] | None:
    """The table entry of a template name as written, and the rest of the name after a prefix
    entry's prefix (`lang-fr` -> "fr"); None when the template is not kept on this wiki."""
    if len(raw_name) > _LONGEST * 2:
        return None
    name = normalize_name(raw_name)
    if name.lower().startswith("formatnum:"):  # a parser function: its argument is in the name
        return INLINE_TEMPLATES["formatnum"], name.split(":", 1)[1]
    entry = INLINE_TEMPLATES.get(name)
    rest = ""
    if entry is None:
        for prefix, candidate in _PREFIXES.items():
            if name.startswith(prefix) and len(name) > len(prefix):
                entry, rest = candidate, name[len(prefix) :]
                break
        else:
            return None
    wikis = entry.get("wikis")
    if wikis and language.split("-", maxsplit=1)[0] not in wikis:
        return None
    return entry, rest


def is_inline(raw_name: str, language: str = "en") -> bool:
    """Whether a template name (as written) is one of the kept templates on a wiki of `language`."""
    return _lookup(raw_name.strip(), language) is not None


def template_key(raw_name: str) -> str:
    """A template name as the scan counts it (lookup form, at most 60 characters)."""
    return normalize_name(raw_name)[:60]


def visible_wikitext(inner: str, language: str = "en") -> str | None:
    """What a kept template shows, as wikitext (its own templates not yet handled); None = drop it.

    `inner` is the template without its outer braces."""
    parts = split_arguments(inner)
    found = _lookup(parts[0].strip(), language)
    if found is None:
        return None
    entry, rest = found
    kind = entry["kind"]
    if kind == "formatnum":
        return formatnum(rest + ("|" + "|".join(parts[1:]) if len(parts) > 1 else ""))
    args = parse_arguments(parts)
    wiki = language.split("-", maxsplit=1)[0]
    if kind in NAMED_RULES:
        return NAMED_RULES[kind](args, entry, wiki, rest or str(entry["name"]))
    return RULES[kind](args, entry, wiki)
