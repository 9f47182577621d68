"""Holes in the plain text of real pages: an independent count over entbench's rendering (issue 32).

    .venv/bin/python bench/text_holes.py PAGES… [--language zh] [--examples 5]

PAGES are MediaWiki XML dumps (`.xml`, `.xml.bz2`) or bare wikitext files (`.txt`, `.txt.bz2`,
the title being the file name). Each article is rendered by `entbench.readers.wikitext.render.render`;
nothing else of entbench is used to judge the result. The count is deliberately simple and
independent of the renderer: it looks for the marks a template leaves when it is removed from a
sentence instead of being shown.

* **Prose sentences** (en): paragraphs of at least 6 words that end like a sentence, cut after
  `.`, `!` or `?` (and any closing quote or bracket) before whitespace and a capital, digit or
  opening quote. (zh: paragraphs ending in `。`, cut after `。！？`.)
* **Hole patterns** (`PATTERNS`, exactly the issue's list): empty brackets; an opening bracket
  followed by `,`/`;`/`:` ("( ,"); two separators with nothing between (", ,"); a function word
  right before punctuation ("the area is ."); a space before `,`, `;` or `:`. For zh: empty
  brackets and doubled separators (`、、`, `，，`).
* **`convert` values**: the share of `{{convert|V|…}}`/`{{cvt|V|…}}` first values in the wikitext
  (outside tables, comments and `<ref>`s) whose digits appear in the page's text (thousands
  separators ignored on both sides).
* **zhwiki interlanguage-link names**: the share of the local names of `{{le}}`, `{{link-xx}}`
  and `{{tsl}}` (the display text when given) that appear in the page's text.

`tests/readers/test_wikitext_holes.py` pins the figures on the real pages copied into fixtures.
"""

from __future__ import annotations

import argparse
import bz2
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from entbench.readers.mediawiki.xml_dump import SiteInfo, read_dump
from entbench.readers.wikitext.markup import CONVERTER_LANGUAGES
from entbench.readers.wikitext.render import RenderConfig, render

#: The hole patterns of issue 32's "Must show", per language.
PATTERNS: dict[str, dict[str, re.Pattern[str]]] = {
    "en": {
        "empty brackets": re.compile(r"\(\s*\)|\[\s*\]"),
        "( ,": re.compile(r"\(\s*[,;:]"),
        ", ,": re.compile(r"[,;]\s*[,;]"),
        "function word before punctuation": re.compile(
            r"\b(?:the|a|an|of|to|in|at|by|for|from|with|as|is|are|was|were|and|or|than|about)\s+[.,;:)]"
        ),
        "space before , ; :": re.compile(r"\s[,;:]"),
    },
    "zh": {
        "empty brackets": re.compile(r"[(（]\s*[)）]|\[\s*\]"),
        "( ,": re.compile(r"[(（]\s*[,;:，；：、]"),
        ", ,": re.compile(r"[,;，；、]\s*[,;，；、。]"),
    },
}
_EN_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[A-Z0-9\"“‘(\[])")
_ZH_SENTENCE_END = re.compile(r"(?<=[。！？])[”’」』）)]*")
_CONVERT = re.compile(r"\{\{\s*(?:convert|cvt)\s*\|\s*([-+−]?[\d,.]+)", re.I)
_BRACES = re.compile(r"\{\{|\}\}")
_ILH = re.compile(
    r"\{\{\s*(le|link-[a-z]{2,3}|tsl)\s*\|([^{}]*)\}\}",
    re.I,
)
#: A number as text shows it (thousands separators, a sign).
_NUMBER = re.compile(r"(?<![\d.,])[-+−]?\d[\d,]*(?:\.\d+)?(?![\d])")
_REF = re.compile(r"<ref[^>/]*/>|<ref[^>]*>.*?</ref\s*>", re.S | re.I)
_COMMENT = re.compile(r"<!--.*?-->", re.S)


@dataclass
class Tally:
    """The counts of one set of pages."""

    articles: int = 0
    sentences: int = 0
    flagged: int = 0
    by_pattern: Counter[str] = field(default_factory=Counter)
    examples: list[tuple[str, str, str]] = field(default_factory=list)
    convert_values: int = 0
    convert_found: int = 0
    ilh_names: int = 0
    ilh_found: int = 0
    missing: list[tuple[str, str]] = field(default_factory=list)


def articles(path: Path, language: str, from_page: int = 1) -> Iterator[tuple[str, str, RenderConfig, str]]:
    """(title, wikitext, render config, language) of every article of a dump or bare wikitext file,
    from its `from_page`-th page on (1-based, in dump order, redirects included)."""
    name = path.name
    if name.endswith((".txt", ".txt.bz2")):
        raw = bz2.decompress(path.read_bytes()) if name.endswith(".bz2") else path.read_bytes()
        lang = language or "en"
        site = SiteInfo(dbname=f"{lang}wiki", language=lang, case="first-letter", namespaces=())
        yield name.split(".txt")[0].replace("-", " "), raw.decode("utf-8"), _config(site), lang
        return
    site, pages = read_dump(str(path))
    if language:
        site = SiteInfo(site.dbname, language, site.case, site.namespaces)
    config = _config(site)
    for number, page in enumerate(pages, 1):
        if (
            number >= from_page
            and page.ns == 0
            and page.redirect is None
            and not page.text.lstrip().upper().startswith("#REDIRECT")
        ):
            yield page.title, page.text, config, site.language


def _config(site: SiteInfo) -> RenderConfig:
    return RenderConfig(site.namespace_table(), conversion=site.language in CONVERTER_LANGUAGES)


def sentences(text: str, language: str) -> Iterator[str]:
    """The prose sentences of a rendered text (see the module docstring)."""
    for raw in text.split("\n\n"):
        paragraph = raw.strip()
        if language == "zh":
            if not paragraph.endswith("。"):
                continue
            parts = _ZH_SENTENCE_END.split(paragraph)
        else:
            if len(paragraph.split()) < 6 or paragraph[-1] not in ".!?\"'”’)":
                continue
            parts = _EN_SENTENCE_END.split(paragraph)
        yield from (part.strip() for part in parts if part.strip())


def _digits(value: str) -> str:
    return value.replace(",", "").replace("−", "-").lstrip("+")


def count(paths: list[Path], language: str = "", examples: int = 0, from_page: int = 1) -> Tally:
    """Render every article of `paths` and count its holes, `convert` values and zh link names."""
    tally = Tally()
    for path in paths:
        for title, wikitext, config, lang in articles(path, language, from_page):
            patterns = PATTERNS["zh" if lang == "zh" else "en"]
            tally.articles += 1
            text = render(wikitext, config).text
            for sentence in sentences(text, lang):
                tally.sentences += 1
                hits = [name for name, pattern in patterns.items() if pattern.search(sentence)]
                if hits:
                    tally.flagged += 1
                    tally.by_pattern.update(hits)
                    if len(tally.examples) < examples:
                        tally.examples.append((title, hits[0], sentence))
            source = prose_source(wikitext)
            values = Counter(_digits(m.group(1)).rstrip(".") for m in _CONVERT.finditer(source))
            numbers = Counter(_digits(m.group()) for m in _NUMBER.finditer(text))
            for value, n in values.items():
                if not value.strip("-."):
                    continue
                tally.convert_values += n
                tally.convert_found += min(n, numbers[value])
                if numbers[value] < n:
                    tally.missing.append((title, f"convert {value} x{n - numbers[value]}"))
            for m in _ILH.finditer(source):
                args = [a.strip() for a in m.group(2).split("|") if "=" not in a]
                local = _ilh_local_name(m.group(1).lower(), args)
                if not local:
                    continue
                tally.ilh_names += 1
                if local in text:
                    tally.ilh_found += 1
                else:
                    tally.missing.append((title, m.group()))
    return tally


def prose_source(wikitext: str) -> str:
    """The wikitext of the prose: no comments, `<ref>`s, tables (`{|` … `|}` lines) or templates
    inside other templates (an infobox's `{{convert}}` is not text); top-level templates kept."""
    source = _REF.sub("", _COMMENT.sub("", wikitext))
    lines, depth = [], 0
    for line in source.split("\n"):
        head = line.lstrip(": ")
        if head.startswith("{|"):
            depth += 1
        elif depth and head.startswith("|}"):
            depth -= 1
        elif not depth:
            lines.append(line)
    source = "\n".join(lines)
    kept, level, start = [], 0, 0
    for m in _BRACES.finditer(source):
        if m.group() == "{{":
            if level == 0:
                kept.append(source[start : m.start()])
                start = m.start()
            level += 1
        elif level:
            level -= 1
            if level == 0:
                inner = source[start + 2 : m.start()]
                kept.append("{{" + _BRACES.sub("", inner) + "}}" if "{{" not in inner else "{{}}")
                start = m.end()
    kept.append(source[start:])
    return "".join(kept)


def _ilh_local_name(name: str, args: list[str]) -> str:
    if name == "tsl":  # {{tsl|lang|foreign|local|display}}
        return (args[3] if len(args) > 3 and args[3] else args[2] if len(args) > 2 else "").strip()
    return (args[2] if len(args) > 2 and args[2] else args[0] if args else "").strip()


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.2%})" if whole else "0/0"


def main() -> None:
    """Print the counts of the given pages."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="+", type=Path)
    parser.add_argument("--language", default="", help="the wiki's language (default: the dump's; en)")
    parser.add_argument("--examples", type=int, default=0, help="print this many flagged sentences")
    parser.add_argument("--from-page", type=int, default=1, help="skip a dump's pages before this one")
    args = parser.parse_args()
    tally = count(args.pages, args.language, args.examples, args.from_page)
    print(f"articles: {tally.articles}")
    print(f"prose sentences with a hole pattern: {_share(tally.flagged, tally.sentences)}")
    for name, n in tally.by_pattern.most_common():
        print(f"  {name}: {n}")
    print(f"convert values in the text: {_share(tally.convert_found, tally.convert_values)}")
    print(f"le/link-xx/tsl local names in the text: {_share(tally.ilh_found, tally.ilh_names)}")
    for title, hit, sentence in tally.examples:
        print(f"- [{title}] ({hit}) {sentence}")
    if args.examples:
        for title, source in tally.missing[: args.examples]:
            print(f"- missing [{title}] {source}")


if __name__ == "__main__":
    main()
