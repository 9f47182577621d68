"""Fuzzing the wikitext link parser and renderer with mutated real pages (spec §3).

`tests/readers/test_wikitext_properties.py` feeds the renderer soups of markup tokens; this
complements it with real article wikitext from four fixture dumps (English and Chinese, with
templates, tables, refs, `-{…}-` conversion markup, localised namespaces; the English 2016 one is
the whole gensim head, with Afghanistan's multi-line image caption and Aldous Huxley's external
link around a wikilink), cut to a window and mutated: ranges deleted or duplicated, markup pieces
inserted, brackets unbalanced, stretches wrapped in templates, image links or external links.
Whatever the input, the rendered text and its links keep the invariants of that module's `check`
(offsets inside the text, `text[start:end] == anchor`, links inside their paragraph, no marker
left), which are reused here.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entbench.builders.wikipedia.stages.scan import WikipediaScanParams, render_config
from entbench.readers.mediawiki.xml_dump import read_dump
from entbench.readers.wikitext.render import RenderConfig, render
from tests.readers.test_wikitext_properties import TOKENS, check

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wikipedia"
#: (dump, language override): the zh DBpedia minidump's header claims to be English.
DUMPS = (
    ("enwiki-201605.pages-articles1.gensim-head.xml.bz2", ""),
    ("enwiki.dbpedia-minidump.part.xml.bz2", ""),
    ("zhwiki-201807.wiki-dump-reader.part1.xml.bz2", ""),
    ("zhwiki.dbpedia-minidump.xml.bz2", "zh"),
)
#: Openings and closings put around a stretch of a page: inline templates that keep their text,
#: ones that do not, image links and external links (issue 21).
WRAPS = (
    ("{{nowrap|", "}}"),
    ("{{lang|de|", "}}"),
    ("{{transl|ar|ALA|", "}}"),
    ("{{nihongo|", "|漢字|kanji}}"),
    ("{{sfn|", "}}"),
    ("[[File:x.jpg|thumb|", "]]"),
    ("[http://example.org/p ", "]"),
    ("[[Target|", "]]"),
)
WINDOW = 3000  # characters of a page per example: long enough for nested markup, quick to render


@functools.cache
def seeds() -> tuple[tuple[str, RenderConfig], ...]:
    """Every non-redirect page of the real fixture dumps, with its wiki's render configuration."""
    found = []
    for name, language in DUMPS:
        site, pages = read_dump(str(FIXTURES / name))
        if language:
            site = dataclasses.replace(site, language=language)
        config = render_config(WikipediaScanParams(language=language), site)
        found += [(page.text, config) for page in pages if page.text and not page.redirect]
    return tuple(found)


@st.composite
def mutated_pages(draw: st.DrawFn) -> tuple[str, RenderConfig]:
    text, config = draw(st.sampled_from(seeds()))
    start = draw(st.integers(0, max(0, len(text) - WINDOW)))
    chars = list(text[start : start + WINDOW])
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(("delete", "duplicate", "insert", "insert", "swap", "wrap")))
        pos = draw(st.integers(0, len(chars)))
        if kind == "delete":
            del chars[pos : pos + draw(st.integers(1, 40))]
        elif kind == "duplicate":
            chars[pos:pos] = chars[pos : pos + draw(st.integers(1, 80))]
        elif kind == "insert":
            chars[pos:pos] = list(draw(st.sampled_from(TOKENS)))
        elif kind == "wrap":  # a stretch of the page put inside a template, image or external link
            end = pos + draw(st.integers(0, 60))
            opening, closing = draw(st.sampled_from(WRAPS))
            chars[pos:end] = [*opening, *chars[pos:end], *closing]
        elif pos + 1 < len(chars):
            chars[pos], chars[pos + 1] = chars[pos + 1], chars[pos]
    return "".join(chars), config


def test_every_real_page_keeps_the_invariants() -> None:
    assert len(seeds()) > 20
    for text, config in seeds():
        check(render(text, config))


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(mutated_pages())
def test_mutated_real_pages_render_with_valid_offsets(page: tuple[str, RenderConfig]) -> None:
    text, config = page
    check(render(text, config))
