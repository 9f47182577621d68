"""Page titles: namespaces, interwiki prefixes and MediaWiki's title normalisation (spec §3).

A link target is classified before anything else: only targets in the main namespace (0) are
article links. Namespace names come from the dump's `<siteinfo>` plus the canonical English names
every wiki accepts and each wiki's well-known local aliases (`readers.mediawiki.xml_dump` builds the
table); prefixes are matched case-insensitively with `_` and spaces equivalent, as MediaWiki does.

Normalisation follows `MediaWikiTitleCodec::splitTitleString`: HTML entities decoded,
percent-escapes decoded, runs of `_` and Unicode spaces become one space, bidi marks removed,
trimmed, `#fragment` dropped, namespace prefix in its canonical spelling, first letter upper-cased
where the namespace is `first-letter` (the default on Wikipedia).
"""

from __future__ import annotations

import enum
import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

_SPACES = re.compile(r"[ _\u00a0\u1680\u180e\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_BIDI = re.compile(r"[\u200e\u200f\u202a-\u202e]")
#: Characters MediaWiki never allows in a title (a target containing one is not a link).
_ILLEGAL = re.compile(r"[<>\[\]{}|\n\r\t\ufffd]")


class LinkKind(enum.Enum):
    """What a `[[…]]` target points to."""

    ARTICLE = "article"  # main namespace: the only kind written to `links`
    FILE = "file"  # File:/Image: without a leading colon: an embedded image, not text
    CATEGORY = "category"  # Category: without a leading colon: page categorisation, not text
    INTERLANGUAGE = "interlanguage"  # `[[de:Berlin]]`: sidebar link, not text
    INTERWIKI = "interwiki"  # `[[wikt:word|word]]`: shown inline, other project
    NAMESPACE = "namespace"  # any other namespace (User:, Wikipedia:, Help:, :Category:, …)
    SELF = "self"  # `[[#Section]]`: a section of the same page
    INVALID = "invalid"  # not a title: MediaWiki shows the brackets as text


@dataclass(frozen=True)
class NamespaceTable:
    """Namespace and interwiki prefixes of one wiki, and its case and link-trail rules."""

    names: Mapping[str, int]  # folded prefix -> namespace id
    display: Mapping[int, str]  # namespace id -> canonical prefix as written in titles
    case: Mapping[int, str]  # namespace id -> "first-letter" | "case-sensitive"
    interwiki: frozenset[str] = frozenset()
    languages: frozenset[str] = frozenset()
    language: str = "en"
    linktrail: str | None = "[a-z]+"
    _trail: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.linktrail:
            object.__setattr__(self, "_trail", re.compile(self.linktrail))

    def trail_at(self, text: str, pos: int) -> int:
        """End of the link trail starting at `pos` (= `pos` when there is none)."""
        if self._trail is None or pos >= len(text) or not text[pos].isalpha():
            return pos
        m = self._trail.match(text, pos)
        return m.end() if m else pos

    def namespace_of(self, prefix: str) -> int | None:
        """The namespace id of a prefix as written (`category`, `分類`, `User_talk`), or None."""
        return self.names.get(fold_prefix(prefix))

    def first_letter(self, ns: int) -> bool:
        """Whether titles in namespace `ns` have their first letter upper-cased."""
        return self.case.get(ns, "first-letter") == "first-letter"


def fold_prefix(prefix: str) -> str:
    """A namespace or interwiki prefix in lookup form: spaces/underscores collapsed, casefolded."""
    return _SPACES.sub(" ", prefix).strip().casefold()


def ucfirst(text: str) -> str:
    """Upper-case the first character when that keeps it one character (MediaWiki's ucfirst)."""
    if not text:
        return text
    head = text[0].upper()
    return (head + text[1:]) if len(head) == 1 else text


def clean_title_text(raw: str) -> str:
    """Entity- and percent-decoded, spaces collapsed and trimmed, bidi marks removed."""
    text = html.unescape(raw) if "&" in raw else raw
    if "%" in text:
        try:
            decoded = unquote(text, errors="strict")
        except UnicodeDecodeError:  # not UTF-8 percent-escapes: MediaWiki keeps the text as is
            decoded = text
        if not _ILLEGAL.search(decoded):
            text = decoded
    text = _BIDI.sub("", text)
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True)
class LinkTarget:
    """A classified link target."""

    kind: LinkKind
    ns: int = 0
    title: str = ""  # normalised title, canonical namespace prefix included (ns != 0)
    leading_colon: bool = False


#: A character of a title that normalisation leaves as it is.
_PLAIN_CHAR = r"[^\s&%_:#<>\[\]{}|\ufffd\u00a0\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f\u3000]"
#: A target whose normalised title is its first group with `_` read as a space: words separated by
#: single spaces or underscores, then maybe a `#section` without entities, escapes or illegal
#: characters. Most targets are; they skip the general path below.
_PLAIN_TARGET = re.compile(rf"((?:{_PLAIN_CHAR}+[ _])*{_PLAIN_CHAR}+)(?: ?#[^&%<>\[\]{{}}|\n\r\t\ufffd]*)?")


def classify_target(raw: str, table: NamespaceTable) -> LinkTarget:
    """Classify and normalise the target part of `[[target|…]]`."""
    plain = _PLAIN_TARGET.fullmatch(raw)
    if plain:
        title = plain.group(1)
        if "_" in title:
            title = title.replace("_", " ")
        return LinkTarget(LinkKind.ARTICLE, 0, ucfirst(title) if table.first_letter(0) else title, False)
    text = clean_title_text(raw)
    colon = text.startswith(":")
    if colon:
        text = text[1:].lstrip()
    if _ILLEGAL.search(text):
        return LinkTarget(LinkKind.INVALID, leading_colon=colon)
    hash_at = text.find("#")
    if hash_at >= 0:
        text = text[:hash_at].rstrip()
    if not text:
        return LinkTarget(LinkKind.SELF if hash_at >= 0 else LinkKind.INVALID, leading_colon=colon)
    sep = text.find(":")
    if sep > 0:
        prefix = fold_prefix(text[:sep])
        rest = text[sep + 1 :].strip()
        ns = table.names.get(prefix)
        if ns is not None and ns != 0:
            title = f"{table.display.get(ns, text[:sep])}:{ucfirst(rest) if table.first_letter(ns) else rest}"
            if colon:
                return LinkTarget(LinkKind.NAMESPACE, ns, title, colon)
            if ns == 6:
                return LinkTarget(LinkKind.FILE, ns, title, colon)
            if ns == 14:
                return LinkTarget(LinkKind.CATEGORY, ns, title, colon)
            return LinkTarget(LinkKind.NAMESPACE, ns, title, colon)
        if prefix == table.language and rest:
            # The wiki's own language prefix is a local interwiki (`[[:en:God|Godt]]` on enwiki):
            # MediaWiki drops it and reads the rest as a link with a leading colon.
            return classify_target(rest if rest.startswith(":") else ":" + rest, table)
        if prefix in table.languages:
            kind = LinkKind.INTERWIKI if colon else LinkKind.INTERLANGUAGE
            return LinkTarget(kind, 0, text, colon)
        if prefix in table.interwiki:
            return LinkTarget(LinkKind.INTERWIKI, 0, text, colon)
    title = ucfirst(text) if table.first_letter(0) else text
    return LinkTarget(LinkKind.ARTICLE, 0, title, colon)


def normalize_title(raw: str, table: NamespaceTable) -> str:
    """The canonical form of a page title or redirect target (namespace prefix canonicalised)."""
    target = classify_target(raw, table)
    if target.kind in (LinkKind.INVALID, LinkKind.SELF):
        return clean_title_text(raw)
    return target.title


def split_namespace(title: str, table: NamespaceTable) -> tuple[int, str]:
    """(namespace id, title without prefix) of a normalised title."""
    sep = title.find(":")
    if sep > 0:
        ns = table.names.get(fold_prefix(title[:sep]))
        if ns is not None:
            return ns, title[sep + 1 :]
    return 0, title
