"""What a page's wikitext says about the page: a redirect's target, a disambiguation page (spec §3)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from entbench.readers.wikitext.markup import template_names
from entbench.readers.wikitext.titles import NamespaceTable, fold_prefix

_REDIRECT = re.compile(
    r"^\s*#\s*(?:REDIRECT|重定向|重新导向|重新導向|転送|RINVIA|WEITERLEITUNG|REDIRECTION)\s*:?\s*"
    r"\[\[([^\]|\n]+)",
    re.I,
)

#: Templates marking a disambiguation page (spec §3), compared casefolded; `__DISAMBIG__` too.
DEFAULT_DISAMBIGUATION_TEMPLATES = (
    "disambiguation",
    "disambig",
    "disamb",
    "dab",
    "hndis",
    "geodis",
    "numberdis",
    "letter-numbercombdisambig",
    "letter disambiguation",
    "hospital disambiguation",
    "school disambiguation",
    "mil-unit-dis",
    "species latin name disambiguation",
    "disambiguation cleanup",
    "消歧义",
    "消歧義",
    "disambig-cleanup",
    "地名消歧义",
    "地名消歧義",
    "人名消歧义",
    "人名消歧義",
)


def redirect_target(wikitext: str) -> str | None:
    """The target of `#REDIRECT [[Target]]` (English and zh spellings), for dumps without `<redirect>`."""
    m = _REDIRECT.match(wikitext)
    return m.group(1).strip() if m else None


def is_disambiguation(wikitext: str, templates: Iterable[str], table: NamespaceTable | None = None) -> bool:
    """Whether a page is a disambiguation page: `__DISAMBIG__` or one of `templates` (spec §3)."""
    return disambiguation(wikitext, frozenset(t.casefold() for t in templates), table, {})


def disambiguation(
    wikitext: str, wanted: frozenset[str], table: NamespaceTable | None, folded_names: dict[str, str]
) -> bool:
    """`is_disambiguation` with casefolded `wanted` names, caching folded names in `folded_names`."""
    if "__DISAMBIG__" in wikitext:
        return True
    for name in template_names(wikitext):
        folded = folded_names.get(name)
        if folded is None:
            if len(folded_names) > 500_000:
                folded_names.clear()
            folded = folded_names[name] = _template_key(name, table)
        if folded in wanted:
            return True
    return False


def _template_key(name: str, table: NamespaceTable | None) -> str:
    """A template name as the disambiguation list spells it: folded, without a `Template:` prefix."""
    folded = fold_prefix(name)
    sep = folded.find(":")
    if sep > 0 and table is not None and table.names.get(folded[:sep]) == 10:
        folded = folded[sep + 1 :].strip()
    return folded
