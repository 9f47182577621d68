"""Synthetic MediaWiki `pages-articles` XML dumps for the Wikipedia scan benchmark.

    python bench/wikipedia/gen_xml.py --mb 64 --out /tmp/enwiki-synth.xml [--language zh]
        [--compress none|bz2|multistream]

The dump has the real layout (`<mediawiki>` with an enwiki/zhwiki `<siteinfo>`, `<page>` with
`<revision>`, `<text bytes=… xml:space="preserve">`) and the wikitext constructs entbench must
handle, in realistic proportions: about 40% redirect pages; articles with an infobox, paragraphs
of sentences with roughly one link per twenty words (plain, piped, link trails, `#section`, lower-case
first letter, underscores, HTML entities, `-{…}-` on zh), `<ref>` with citation templates,
comments, headings, lists, a table, an image with a linked caption, categories and interlanguage
links. Everything comes from one seeded `random.Random`, so a (size, seed, language) triple
always gives the same bytes. `generate` also returns, per article, the anchors a correct renderer
must find (`tests/bench/test_gen_wikipedia.py` checks entbench against them).
"""

from __future__ import annotations

import argparse
import bz2
import hashlib
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

GENERATOR_VERSION = 2
SYLLABLES = (
    "ka",
    "ri",
    "to",
    "mo",
    "na",
    "se",
    "lu",
    "vi",
    "an",
    "el",
    "or",
    "is",
    "ber",
    "gen",
    "dal",
    "mar",
    "tin",
    "ost",
    "wel",
    "fra",
    "hol",
    "lin",
    "dor",
    "ran",
    "sta",
    "par",
    "ver",
    "mon",
    "cla",
    "rus",
    "tem",
    "pol",
    "gra",
    "nor",
    "vik",
    "ser",
    "lan",
    "cor",
    "mir",
)
FUNCTION_WORDS = (
    "the",
    "of",
    "and",
    "in",
    "to",
    "a",
    "is",
    "was",
    "for",
    "on",
    "as",
    "with",
    "by",
    "that",
    "from",
    "at",
    "which",
    "were",
    "his",
    "its",
    "an",
    "be",
)
#: Common Chinese characters (the most frequent few hundred), for zh text.
CJK = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下"
    "过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都"
    "两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重"
    "新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想"
    "已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知"
    "较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处府研南济织华"
)


@dataclass
class Page:
    """One generated page and what a renderer must find in it."""

    page_id: int
    title: str
    redirect: str | None
    text: str
    anchors: list[tuple[str, str]] = field(default_factory=list)  # (normalised target, anchor)


class Vocabulary:
    """Seeded words and titles for one language."""

    def __init__(self, rng: random.Random, language: str, titles: int = 20000) -> None:
        self.rng = rng
        self.language = language
        if language == "zh":
            self.words = ["".join(rng.choice(CJK) for _ in range(rng.randint(1, 3))) for _ in range(3000)]
        else:
            self.words = [
                "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3)))) for _ in range(3000)
            ]
        self.titles = [self._title() for _ in range(titles)]

    def _title(self) -> str:
        rng = self.rng
        if self.language == "zh":
            base = "".join(rng.choice(CJK) for _ in range(rng.randint(2, 5)))
            return base + (f" ({rng.choice(self.words)})" if rng.random() < 0.1 else "")
        words = [rng.choice(self.words).capitalize() for _ in range(rng.choice((1, 1, 2, 2, 3)))]
        title = " ".join(words)
        if rng.random() < 0.1:
            title += f" ({rng.choice(self.words)})"
        if rng.random() < 0.03:
            title += " & " + rng.choice(self.words).capitalize()
        return title

    def word(self) -> str:
        return self.rng.choice(self.words) if self.rng.random() < 0.8 else self.rng.choice(FUNCTION_WORDS)


class ArticleWriter:
    """Writes one article's wikitext, recording the article links a reader will see."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.rng = vocab.rng
        self.zh = vocab.language == "zh"
        self.sep = "" if self.zh else " "

    def _link(self, anchors: list[tuple[str, str]]) -> str:
        """One article link in running text; returns wikitext, records (target, anchor)."""
        rng, vocab = self.rng, self.vocab
        title = rng.choice(vocab.titles)
        kind = rng.random()
        written = title.replace("&", "&amp;")
        if kind < 0.35:
            anchors.append((title, title))
            return f"[[{written}]]"
        if kind < 0.65:
            label = self.sep.join(vocab.word() for _ in range(rng.randint(1, 3)))
            if self.zh and rng.random() < 0.2:
                simplified, traditional = label, label[::-1]
                anchors.append((title, simplified))
                return f"[[{written}|-{{zh-cn:{simplified};zh-tw:{traditional}}}-]]"
            anchors.append((title, label))
            return f"[[{written}|{label}]]"
        if kind < 0.75 and not self.zh:
            word = rng.choice(vocab.words)
            anchors.append((word[0].upper() + word[1:], word + "s"))
            return f"[[{word}]]s"
        if kind < 0.85:
            label = self.sep.join(vocab.word() for _ in range(rng.randint(1, 2)))
            anchors.append((title, label))
            return f"[[{written}#{rng.choice(vocab.words).capitalize()}|{label}]]"
        if kind < 0.93:
            anchors.append((title, title.replace(" ", "_")))
            return f"[[{written.replace(' ', '_')}]]"
        lower = title[0].lower() + title[1:]
        anchors.append((title[0].upper() + title[1:], lower))
        return f"[[{lower.replace('&', '&amp;')}]]"

    def _ref(self) -> str:
        rng, vocab = self.rng, self.vocab
        title = " ".join(vocab.word() for _ in range(5))
        inner = f"[[{rng.choice(vocab.titles)}]]" if rng.random() < 0.3 else rng.choice(vocab.words)
        return (
            f'<ref name="r{rng.randint(1, 999)}">{{{{cite web '
            f"|url=https://example.org/{rng.randint(1, 10**6)} "
            f"|title={title} |publisher={inner} |last={rng.choice(vocab.words).capitalize()} "
            f"|first={rng.choice(vocab.words).capitalize()} "
            f"|date={rng.randint(1990, 2016)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} "
            "|access-date=2016-05-01}}</ref>"
        )

    def sentence(self, anchors: list[tuple[str, str]]) -> str:
        rng, vocab = self.rng, self.vocab
        parts: list[str] = []
        for _ in range(rng.randint(8, 24)):
            roll = rng.random()
            if roll < 0.05:
                parts.append(self._link(anchors))
            elif roll < 0.07:
                parts.append(f"''{vocab.word()}''")
            elif roll < 0.08:
                parts.append(f"{{{{convert|{rng.randint(1, 900)}|km|mi}}}}")
            elif roll < 0.085:
                parts.append(f"<!-- {vocab.word()} [[{rng.choice(vocab.titles)}]] -->")
            elif roll < 0.09:
                parts.append(f"{vocab.word()}&nbsp;{vocab.word()}")
            else:
                parts.append(vocab.word())
        text = self.sep.join(parts)
        text = text[:1].upper() + text[1:]
        end = "。" if self.zh else "."
        if rng.random() < 0.5:
            return text + end + self._ref()
        return text + end

    def paragraph(self, anchors: list[tuple[str, str]]) -> str:
        return self.sep.join(self.sentence(anchors) for _ in range(self.rng.randint(2, 7)))

    def article(self, title: str) -> tuple[str, list[tuple[str, str]]]:
        rng, vocab = self.rng, self.vocab
        anchors: list[tuple[str, str]] = []
        lines = []
        if self.zh and rng.random() < 0.3:
            lines.append("{{noteTA\n|G1=Country\n|1=zh-cn:甲;zh-tw:乙;\n}}")
        lines.append("{{Infobox thing")
        for key in ("name", "type", "location", "founder"):
            lines.append(f"| {key} = [[{rng.choice(vocab.titles)}]] {{{{small|{vocab.word()}}}}}")
        lines.append("}}")
        lines.append(f"'''{title}''' " + self.paragraph(anchors))
        for section in range(rng.randint(1, 5)):
            lines.append("")
            heading = " ".join(rng.choice(vocab.words).capitalize() for _ in range(2))
            lines.append(f"== {heading} ==")
            if section == 0 and rng.random() < 0.5:
                caption: list[tuple[str, str]] = []
                lines.append(
                    f"[[File:{rng.choice(vocab.words)}.jpg|thumb|{self._link(caption)} {vocab.word()}]]"
                )
            for _ in range(rng.randint(1, 3)):
                lines.append(self.paragraph(anchors))
                lines.append("")
            if rng.random() < 0.3:
                for _ in range(rng.randint(2, 5)):
                    lines.append("* " + self.sentence(anchors))
            if rng.random() < 0.15:
                table: list[tuple[str, str]] = []
                lines.append('{| class="wikitable"\n|-\n! ' + vocab.word() + " !! " + vocab.word())
                for _ in range(rng.randint(2, 6)):
                    lines.append(f"|-\n| {self._link(table)} || {rng.randint(1, 10**4)}")
                lines.append("|}")
        lines.append("")
        lines.append("== References ==\n{{reflist}}")
        for _ in range(rng.randint(1, 4)):
            lines.append(f"[[Category:{rng.choice(vocab.titles)}]]")
        for code in rng.sample(["de", "fr", "ja", "es", "ru", "zh" if not self.zh else "en"], 2):
            lines.append(f"[[{code}:{rng.choice(vocab.titles)}]]")
        return "\n".join(lines), anchors


HEADERS = {
    "en": ("enwiki", "https://en.wikipedia.org/wiki/Main_Page"),
    "zh": ("zhwiki", "https://zh.wikipedia.org/wiki/Wikipedia:%E9%A6%96%E9%A1%B5"),
}
NAMESPACES = [
    (-2, "Media"),
    (-1, "Special"),
    (0, ""),
    (1, "Talk"),
    (2, "User"),
    (3, "User talk"),
    (4, "Wikipedia"),
    (5, "Wikipedia talk"),
    (6, "File"),
    (7, "File talk"),
    (8, "MediaWiki"),
    (9, "MediaWiki talk"),
    (10, "Template"),
    (11, "Template talk"),
    (12, "Help"),
    (13, "Help talk"),
    (14, "Category"),
    (15, "Category talk"),
    (100, "Portal"),
    (101, "Portal talk"),
    (828, "Module"),
    (829, "Module talk"),
]


def header(language: str) -> str:
    """The `<mediawiki>` opening and `<siteinfo>` of an export-0.10 dump."""
    dbname, base = HEADERS[language]
    ns = "\n".join(
        f'      <namespace key="{k}" case="first-letter"{">" + name + "</namespace>" if name else " />"}'
        for k, name in NAMESPACES
    )
    return (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.10/ '
        'http://www.mediawiki.org/xml/export-0.10.xsd" version="0.10" '
        f'xml:lang="{language}">\n  <siteinfo>\n    <sitename>Wikipedia</sitename>\n'
        f"    <dbname>{dbname}</dbname>\n    <base>{base}</base>\n"
        "    <generator>MediaWiki 1.27.0-wmf.22</generator>\n    <case>first-letter</case>\n"
        f"    <namespaces>\n{ns}\n    </namespaces>\n  </siteinfo>\n"
    )


def page_xml(page: Page) -> str:
    """One `<page>` element."""
    text = page.text.encode("utf-8")
    redirect = f"    <redirect title={quoteattr(page.redirect)} />\n" if page.redirect else ""
    return (
        f"  <page>\n    <title>{escape(page.title)}</title>\n    <ns>0</ns>\n    <id>{page.page_id}</id>\n"
        f"{redirect}    <revision>\n      <id>{page.page_id * 7 + 1}</id>\n"
        "      <timestamp>2016-05-01T00:00:00Z</timestamp>\n"
        f"      <contributor>\n        <username>Synth</username>\n        <id>1</id>\n      </contributor>\n"
        "      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
        f'      <text bytes="{len(text)}" xml:space="preserve">{escape(page.text)}</text>\n'
        f"      <sha1>{hashlib.sha1(text).hexdigest()[:31]}</sha1>\n    </revision>\n  </page>\n"
    )


def pages(target_bytes: int, seed: int = 1, language: str = "en", titles: int = 20000) -> Iterator[Page]:
    """Pages until about `target_bytes` of XML have been produced; page titles and link targets
    are drawn from a vocabulary of `titles` titles (the default gives the generator's usual bytes)."""
    rng = random.Random(seed * 1009 + GENERATOR_VERSION)
    vocab = Vocabulary(rng, language, titles)
    writer = ArticleWriter(vocab)
    written = len(header(language))
    page_id = 10
    used: set[str] = set()
    while written < target_bytes:
        title = rng.choice(vocab.titles)
        if title in used:
            title = f"{title} {page_id}"
        used.add(title)
        if rng.random() < 0.4:
            target = rng.choice(vocab.titles)
            page = Page(page_id, title, target, f"#REDIRECT [[{target}]]\n\n{{{{R from alternative name}}}}")
        else:
            text, anchors = writer.article(title)
            page = Page(page_id, title, None, text, anchors)
        yield page
        written += len(page_xml(page).encode("utf-8"))
        page_id += rng.randint(1, 5)


def generate(
    out: Path,
    mb: float,
    *,
    seed: int = 1,
    language: str = "en",
    compress: str = "none",
    titles: int = 20000,
) -> dict[str, object]:
    """Write a dump (`compress`: none, bz2 or multistream) and return a summary of its content.

    `multistream` writes Wikimedia's layout: the header in its own bz2 stream, then streams of
    100 pages, then `</mediawiki>`, and the `…-index.txt.bz2` next to the dump. `titles` is the
    size of the title vocabulary pages and links draw from (scale it with `mb` for a world whose
    titles grow with the dump). The summary's `page_titles` lists every page as (title, redirect
    target or None), and `anchors` the links a renderer must find per article.
    """
    target = int(mb * (1 << 20))
    summary: dict[str, object] = {"generator": GENERATOR_VERSION, "seed": seed, "language": language}
    n_pages = n_redirects = n_links = 0
    anchors: dict[int, list[tuple[str, str]]] = {}
    page_titles: list[tuple[str, str | None]] = []
    head = header(language).encode("utf-8")
    index_lines: list[str] = []
    with open(out, "wb") as f:
        if compress == "none":
            f.write(head)
        elif compress == "bz2":
            stream = bz2.BZ2Compressor(9)
            f.write(stream.compress(head))
        else:
            f.write(bz2.compress(head, 9))
        batch: list[Page] = []

        def flush_stream() -> None:
            if not batch:
                return
            offset = f.tell()
            body = "".join(page_xml(p) for p in batch).encode("utf-8")
            f.write(bz2.compress(body, 9))
            index_lines.extend(f"{offset}:{p.page_id}:{p.title}\n" for p in batch)
            batch.clear()

        for page in pages(target, seed, language, titles):
            n_pages += 1
            page_titles.append((page.title, page.redirect))
            if page.redirect:
                n_redirects += 1
            else:
                anchors[page.page_id] = page.anchors
                n_links += len(page.anchors)
            data = page_xml(page).encode("utf-8")
            if compress == "none":
                f.write(data)
            elif compress == "bz2":
                f.write(stream.compress(data))
            else:
                batch.append(page)
                if len(batch) == 100:
                    flush_stream()
        footer = b"</mediawiki>\n"
        if compress == "none":
            f.write(footer)
        elif compress == "bz2":
            f.write(stream.compress(footer) + stream.flush())
        else:
            flush_stream()
            f.write(bz2.compress(footer, 9))
    if compress == "multistream":
        index = out.with_name(out.name[: -len(".xml.bz2")] + "-index.txt.bz2")
        index.write_bytes(bz2.compress("".join(index_lines).encode("utf-8"), 9))
    summary.update(
        {
            "pages": n_pages,
            "redirects": n_redirects,
            "articles": n_pages - n_redirects,
            "article_links": n_links,
        }
    )
    summary["anchors"] = anchors
    summary["page_titles"] = page_titles
    return summary


def main() -> None:
    """Command line: write one dump, print its summary (without the per-page anchors)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=64.0, help="approximate uncompressed XML size")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--language", choices=sorted(HEADERS), default="en")
    parser.add_argument("--compress", choices=("none", "bz2", "multistream"), default="none")
    parser.add_argument("--titles", type=int, default=20000, help="size of the title vocabulary")
    args = parser.parse_args()
    if args.compress == "multistream" and not args.out.name.endswith(".xml.bz2"):
        sys.exit("a multistream dump must be named *.xml.bz2 (its index is *-index.txt.bz2)")
    summary = generate(
        args.out, args.mb, seed=args.seed, language=args.language, compress=args.compress, titles=args.titles
    )
    summary.pop("anchors")
    summary.pop("page_titles")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
