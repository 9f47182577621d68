"""Wikitext to plain text with article links at code-point offsets (spec §3).

`render(wikitext, config)` returns the page's plain text, where each paragraph starts, and one
`Link` per article link whose anchor is in the text: `text[link.start:link.end] == link.anchor`
always holds, because anchors are placed by the same builder that writes the text.

Block structure (after `wikitext.markup.preprocess` removed templates, tables, refs, comments and
conversion markup): a heading, a list item, or a run of consecutive plain lines is a paragraph;
paragraphs are separated by exactly "\\n\\n" and never contain it. Runs of ASCII whitespace
collapse to one space (one "\\n" if they contain a line break).

Links (spec §3): `[[Target]]`, `[[Target|anchor]]`, link trails (`[[bus]]es` -> "buses", with
the wiki's trail rule: `[a-z]+` on enwiki, none on zhwiki), `[[Target#Section|…]]` (target
Target), a leading colon, first-letter case, underscores, HTML entities and percent-escapes in the
target. Files, categories and interlanguage links leave no text: they are cut out whole before the
page is split into lines, so an image caption spanning lines (with templates and links in it) goes
with its image. Links to other namespaces and interwiki links leave their text but are not article
links; the counts of each kind are returned with the result. An external link `[url text]` shows
its text; a wikilink inside that text stays a link (MediaWiki parses wikilinks first and its page
links them).

Templates are gone before this pass (`wikitext.markup`), except the inline ones that show text
(`wikitext.templates`); where a template met a link's `]]` it left `wikitext.templates.MARK`, which
ends the link trail (`[[Weimar]]{{mdash}}the`: anchor "Weimar") and is dropped from the text.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from entbench.readers.wikitext.flags import (
    DEFAULT_DISAMBIGUATION_TEMPLATES,
    disambiguation,
    is_disambiguation,
    redirect_target,
)
from entbench.readers.wikitext.markup import DEFAULT_ZH_VARIANTS, preprocess
from entbench.readers.wikitext.native import native_enabled, new_inline, trail_mode
from entbench.readers.wikitext.templates import MARK
from entbench.readers.wikitext.titles import (
    LinkKind,
    NamespaceTable,
    classify_target,
)

__all__ = [
    "DEFAULT_DISAMBIGUATION_TEMPLATES",  # with the two below, from wikitext.flags, as they always were here
    "TARGET_CACHE_LIMIT",
    "Link",
    "RenderConfig",
    "Rendered",
    "clean_plain",
    "flatten",
    "is_disambiguation",
    "redirect_target",
    "render",
]

_LINK_TOKEN = re.compile(r"\[\[|\]\]")
#: Entries of a config's cache of classified targets: past it the cache is cleared. Each entry
#: holds ~260 bytes of live objects and pins more of the allocator's pages (a process kept ~370 MB
#: through a 1 GB enwiki scan at 500k entries, ~50k distinct targets an 8 MB task). The hits hardly
#: save CPU: plain titles are classified in C (`wtrender.c`), and a 268 MB enwiki scan took the
#: same CPU with 20k, 50k or 500k entries (32.5-32.8 s).
TARGET_CACHE_LIMIT = 50_000
#: Links that leave no text: images, categorisation, interlanguage links.
_HIDDEN = frozenset({LinkKind.FILE, LinkKind.CATEGORY, LinkKind.INTERLANGUAGE})
_EXTLINK = re.compile(
    r"\[(?:https?:|ftp:|ftps:|sftp:|//|mailto:|irc:|ircs:|news:|gopher:|svn:|git:|ssh:|telnet:|urn:|"
    r"xmpp:|tel:|sms:|worldwind:|geo:|magnet:)[^\s\[\]<>\"]*(?:[ \t]+([^\]\n]*))?\]",
    re.I,
)
#: An external link whose text may hold wikilinks: `[http://… "Title" (talk at [[UC Berkeley]], 1962)]`.
_EXTLINK_AROUND_LINKS = re.compile(
    r"\[(?:https?:|ftp:|ftps:|sftp:|//|mailto:|irc:|ircs:|news:|gopher:|svn:|git:|ssh:|telnet:|urn:|"
    r"xmpp:|tel:|sms:|worldwind:|geo:|magnet:)[^\s\[\]<>\"]*[ \t]+"
    r"((?:[^\[\]\n]|\[(?!\[)|\[\[[^\[\]\n]*\]\])*)\]",
    re.I,
)
#: A `[[` whose target has a colon: the only links that can be files, categories or interlanguage.
_PREFIXED_LINK = re.compile(r"\[\[([^\[\]{}|\n]*:[^\[\]{}|\n]*)(?:\||\]\])")
_QUOTES = re.compile(r"'{2,}")
_HEADING = re.compile(r"^(=+)(.+?)(=+)$")
_NL_RUN = re.compile(r"[ \t\r\f\v]*\n[ \t\r\n\f\v]*")
_SP_RUN = re.compile(r"[ \t\r\f\v]{2,}|[\t\r\f\v]")


@dataclass(frozen=True)
class RenderConfig:
    """How to read one wiki's wikitext: its namespaces, and `-{…}-` handling with variant order."""

    table: NamespaceTable
    conversion: bool = False
    variants: tuple[str, ...] = DEFAULT_ZH_VARIANTS
    #: Classified targets by their raw text: titles repeat across pages, classifying is not free.
    targets: dict[str, _Classified] = field(default_factory=dict, compare=False, repr=False)
    #: Template names as written -> folded (`_template_key`): pages repeat the same few hundred.
    template_keys: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def is_disambiguation(self, wikitext: str, wanted: frozenset[str]) -> bool:
        """`is_disambiguation` with casefolded `wanted` names and a per-config cache of folded names."""
        return disambiguation(wikitext, wanted, self.table, self.template_keys)

    def classify(self, raw: str) -> _Classified:
        """`classify_target` with a per-config cache (bounded: cleared past `TARGET_CACHE_LIMIT`)."""
        found = self.targets.get(raw)
        if found is None:
            if len(self.targets) > TARGET_CACHE_LIMIT:
                self.targets.clear()
            target = classify_target(raw, self.table)
            kind = target.kind
            found = self.targets[raw] = _Classified(
                target.title,
                f"links_{kind.value}",
                kind in _HIDDEN,
                kind is LinkKind.ARTICLE,
                kind is LinkKind.INVALID,
            )
        return found


class _Classified(NamedTuple):
    # the C renderer builds these too, for plain titles (wtrender.c: classify_plain)
    title: str  # the normalised title (`LinkTarget.title`)
    count_key: str
    hidden: bool
    article: bool
    invalid: bool


class Link(NamedTuple):
    """An article link found in a page: offsets are code points into the rendered text."""

    target: str  # as written in the wikitext (trimmed)
    target_normalized: str
    anchor: str
    start: int
    end: int
    paragraph: int


@dataclass
class Rendered:
    """The result of rendering one page."""

    text: str
    paragraph_starts: list[int]
    links: list[Link]
    counts: dict[str, int] = field(default_factory=dict)


class _Builder:
    """Accumulates text with whitespace collapsed and paragraph breaks; places anchors."""

    __slots__ = ("length", "open", "paragraph_starts", "parts", "pending")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.pending = ""  # whitespace owed before the next text ("", " " or "\n")
        self.open = False  # whether the current paragraph has text yet
        self.paragraph_starts: list[int] = []

    def new_paragraph(self) -> None:
        self.open = False
        self.pending = ""

    def _space(self, ws: str) -> None:
        if self.open:
            self.pending = "\n" if ("\n" in ws or self.pending == "\n") else " "

    def _emit(self, core: str) -> int:
        if not self.open:
            if self.length:
                self.parts.append("\n\n")
                self.length += 2
            self.paragraph_starts.append(self.length)
            self.open = True
        elif self.pending:
            self.parts.append(self.pending)
            self.length += 1
        self.pending = ""
        start = self.length
        self.parts.append(core)
        self.length += len(core)
        return start

    def add(self, piece: str) -> tuple[int, int] | None:
        """Append text; returns the span of its non-whitespace core, if any."""
        if not piece:
            return None
        if "\n" in piece:
            piece = _NL_RUN.sub("\n", piece)
        if "  " in piece or "\t" in piece or "\r" in piece or "\f" in piece or "\v" in piece:
            piece = _SP_RUN.sub(" ", piece)
        core = piece.strip(" \n")
        if len(core) == len(piece):  # the common case: no surrounding whitespace
            start = self._emit(core)
            return start, self.length
        if not core:
            self._space(piece)
            return None
        if piece[0] in " \n":
            self._space(piece[: len(piece) - len(piece.lstrip(" \n"))])
        start = self._emit(core)
        if piece[-1] in " \n":
            self._space(piece[len(piece.rstrip(" \n")) :])
        return start, self.length

    def text(self) -> str:
        return "".join(self.parts)


class _Renderer:
    def __init__(self, config: RenderConfig, native: bool) -> None:
        self.table = config.table
        self.config = config
        self.out = _Builder()
        self.spans: list[tuple[str, str, int, int, int]] = []
        self.counts: dict[str, int] = {}
        # The C inline renderer (wikitext.native): the same work as `_paragraph` below, calling back
        # into this module's functions for what is rare.
        self.native: Any = None
        if native:
            table = self.table
            self.native = new_inline(
                config.targets,
                config.classify,
                clean_plain,
                lambda label: flatten(label, table),
                _around_links,
                trail_mode(table.linktrail),
                table.trail_at,
                self.counts,
                Link,
                _Classified,
                f"links_{LinkKind.ARTICLE.value}",
                table.first_letter(0),
                TARGET_CACHE_LIMIT,
            )

    def count(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    # --- blocks ------------------------------------------------------------------------------
    def render(self, wikitext: str) -> Rendered:
        text = preprocess(
            wikitext,
            conversion=self.config.conversion,
            variants=self.config.variants,
            language=self.table.language,
            counts=self.counts,
        )
        if self.native is not None:  # all that follows in C, the inline pass of each paragraph too
            self.native.blocks(text)
            full, starts, found = self.native.result()
            return Rendered(full, starts, found, self.counts)
        if "[[" in text and ":" in text:
            text = self._drop_hidden_links(text)
        block: list[str] = []
        for line in text.split("\n"):
            s = line.strip()
            if not s:
                self._flush(block)
                continue
            first = s[0]
            if first == "=":
                m = _HEADING.match(s)
                if m:
                    n = min(len(m.group(1)), len(m.group(3)))
                    self._flush(block)
                    self._paragraph(s[n:-n].strip())
                    continue
            elif first in "*#:;":
                self._flush(block)
                self._paragraph(s.lstrip("*#:;").strip())
                continue
            elif s.startswith("----"):
                self._flush(block)
                rest = s.lstrip("-").strip()
                if rest:
                    block.append(rest)
                continue
            block.append(line)
        self._flush(block)
        full = self.out.text()
        links = [
            Link(target, normalized, full[start:end], start, end, paragraph)
            for target, normalized, start, end, paragraph in self.spans
        ]
        return Rendered(full, self.out.paragraph_starts, links, self.counts)

    def _drop_hidden_links(self, text: str) -> str:
        """Files, categories and interlanguage links cut out whole before the text is split into
        lines: an image caption may span lines and hold templates and links (MediaWiki pairs the
        brackets over the whole page). Each leaves MARK, so its line stays a line of its block."""
        parts: list[str] = []
        pos = 0
        search = _PREFIXED_LINK.search
        m = search(text)
        while m is not None:
            found = self.config.classify(m.group(1))
            end = _matching_close(text, m.start()) if found.hidden else -1
            if end < 0:  # not hidden, or never closed (then MediaWiki shows it as text)
                m = search(text, m.start() + 2)
                continue
            self.count(found.count_key)
            parts.append(text[pos : m.start()])
            parts.append(MARK)
            pos = end + 2
            m = search(text, pos)
        if not parts:
            return text
        parts.append(text[pos:])
        return "".join(parts)

    def _flush(self, block: list[str]) -> None:
        if block:
            self._paragraph("\n".join(block))
            block.clear()

    def _paragraph(self, raw: str) -> None:
        if self.native is not None:
            self.native.paragraph(raw)
            return
        self.out.new_paragraph()
        self.inline(raw)
        self.out.new_paragraph()

    # --- inline ------------------------------------------------------------------------------
    def inline(self, s: str) -> None:
        if "[[" in s and ":" in s:
            # MediaWiki parses wikilinks before external links, so `[http://… text [[Link]] text]`
            # shows its text with the link in it; without the URL and brackets here, the wikilink
            # is parsed as any other (it stays a link: MediaWiki's page shows it as one).
            s = _around_links(s)
        pos = 0
        find = s.find
        add = self.out.add
        while True:
            i = find("[[", pos)
            if i < 0:
                break
            j = find("]]", i + 2)
            if j >= 0 and find("[[", i + 2, j) >= 0:
                j = _matching_close(s, i)  # nested links (image captions): count the brackets
            if j < 0:  # an unclosed `[[` is literal text; keep scanning after it
                add(clean_plain(s[pos : i + 2]))
                pos = i + 2
                continue
            if i > pos:
                add(clean_plain(s[pos:i]))
            pos = self.link(s[i + 2 : j], s, j + 2)
        add(clean_plain(s[pos:]))

    def link(self, inner: str, s: str, after: int) -> int:
        """Render one `[[inner]]`; returns where the text after it (and its trail) continues."""
        pipe = inner.find("|")
        target_raw = inner if pipe < 0 else inner[:pipe]
        if MARK in target_raw:
            target_raw = target_raw.replace(MARK, "")
        found = self.config.classify(target_raw)
        counts = self.counts
        counts[found.count_key] = counts.get(found.count_key, 0) + 1
        if found.hidden:
            return after
        if found.invalid:
            self.out.add("[[")
            self.inline(inner)
            self.out.add("]]")
            return after
        # An empty label shows nothing: dumps hold saved text, where MediaWiki's pipe trick
        # (`[[A (b)|]]`) has already been expanded, so `[[A|]]` only arises from a removed template.
        label = target_raw.strip().lstrip(":") if pipe < 0 else inner[pipe + 1 :]
        trail_end = self.table.trail_at(s, after)
        shown = flatten(label, self.table) + s[after:trail_end]
        if not found.article:
            self.out.add(shown)
            return trail_end
        span = self.out.add(shown)
        if span is None:
            self.count("links_empty_anchor")
            return trail_end
        self.spans.append(
            (target_raw.strip(), found.title, span[0], span[1], len(self.out.paragraph_starts) - 1)
        )
        return trail_end


def _around_links(s: str) -> str:
    return _EXTLINK_AROUND_LINKS.sub(_external_link_text, s)


def _external_link_text(m: re.Match[str]) -> str:
    """`[url text]` -> text when the text holds a wikilink (else left for `clean_plain`)."""
    label = m.group(1)
    return label if "[[" in label else m.group()


def _matching_close(s: str, i: int) -> int:
    """Index of the `]]` closing the `[[` at `i` (nested links counted), or -1."""
    depth = 0
    for m in _LINK_TOKEN.finditer(s, i):
        if m.group() == "[[":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


def _quote(m: re.Match[str]) -> str:
    n = len(m.group())
    # '' italic, ''' bold, ''''' both; four = an apostrophe then bold; more = apostrophes + both.
    if n == 4:
        return "'"
    return "'" * (n - 5) if n > 5 else ""


def clean_plain(seg: str) -> str:
    """Inline markup of a link-free segment: external links -> label, no quotes, entities decoded."""
    if not seg:
        return seg
    if "[" in seg:
        seg = _EXTLINK.sub(lambda m: m.group(1) or "", seg)
    if "''" in seg:
        seg = _QUOTES.sub(_quote, seg)
    if MARK in seg:  # after the quotes: marks a template left between them are not one run
        seg = seg.replace(MARK, "")
    if "&" in seg:
        seg = html.unescape(seg)
    return seg


def flatten(label: str, table: NamespaceTable) -> str:
    """A link label as text: nested links replaced by what they show (no link rows)."""
    if "[[" not in label:
        return clean_plain(label)
    parts: list[str] = []
    pos = 0
    while True:
        i = label.find("[[", pos)
        if i < 0:
            break
        j = _matching_close(label, i)
        if j < 0:
            parts.append(clean_plain(label[pos : i + 2]))
            pos = i + 2
            continue
        parts.append(clean_plain(label[pos:i]))
        inner = label[i + 2 : j]
        pipe = inner.find("|")
        target = classify_target(inner if pipe < 0 else inner[:pipe], table)
        if target.kind not in _HIDDEN:
            shown = inner.strip().lstrip(":") if pipe < 0 else inner[pipe + 1 :]
            parts.append(flatten(shown, table))
        pos = j + 2
    parts.append(clean_plain(label[pos:]))
    return "".join(parts)


def render(wikitext: str, config: RenderConfig, native: bool | None = None) -> Rendered:
    """Render one page's wikitext to plain text, paragraph starts and article links.

    `native`: whether the C inline renderer does the inline pass (the same output); by default
    when it is built and `ENTBENCH_NATIVE` is not 0 (`wikitext.native`)."""
    return _Renderer(config, native_enabled() if native is None else native).render(wikitext)
