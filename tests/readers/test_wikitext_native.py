"""The native inline renderer (`entbench._wtrender`) against the Python one: identical output.

Both paths render every page of every fixture dump and hypothesis-generated wikitext (the markup
pieces of the property tests, arbitrary Unicode, whitespace runs), under the enwiki rules, the
zhwiki ones (no link trail, conversion markup) and a link-trail rule the C code calls back for.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from entbench.builders.wikipedia.stages.scan import WikipediaScanParams, render_config
from entbench.readers.mediawiki.xml_dump import SiteInfo, read_dump
from entbench.readers.wikitext import markup as wikitext_markup
from entbench.readers.wikitext import native as wikitext_native
from entbench.readers.wikitext.markup import template_spans_python
from entbench.readers.wikitext.render import Link, RenderConfig, Rendered, render
from tests.fuzz.budget import fuzz_settings
from tests.readers.test_wikitext_properties import EN, TOKENS, ZH, check

pytestmark = pytest.mark.skipif(
    not wikitext_native.native_available(), reason="the native renderer is not built (no C compiler)"
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: Every MediaWiki dump among the fixtures (plain XML or .bz2).
DUMPS = sorted(
    p.relative_to(FIXTURES).as_posix() for pattern in ("*.xml", "*.xml.bz2") for p in FIXTURES.rglob(pattern)
)
#: A link-trail rule other than enwiki's `[a-z]+`: the C code calls `NamespaceTable.trail_at` back.
DE = RenderConfig(dataclasses.replace(EN.table, linktrail="[a-zäöüß]+"))


@functools.cache
def fixture_pages(name: str) -> tuple[SiteInfo, tuple[str, ...]]:
    """The site info and page texts of the fixture dump `name`, read once per process: three tests
    read every dump (its pages rendered, their template spans, their template names), and the
    largest takes ~0.8 CPU s to decompress and parse (twice that under `make sanitize`)."""
    site, pages = read_dump(str(FIXTURES / name))
    return site, tuple(page.text for page in pages)


def _python_render(source: str, config: RenderConfig) -> Rendered:
    """The page rendered by the Python path alone, as `ENTBENCH_NATIVE=0` selects it."""
    saved = os.environ.get("ENTBENCH_NATIVE")
    os.environ["ENTBENCH_NATIVE"] = "0"
    try:
        return render(source, config)
    finally:
        if saved is None:
            del os.environ["ENTBENCH_NATIVE"]
        else:
            os.environ["ENTBENCH_NATIVE"] = saved


def _fresh(config: RenderConfig) -> RenderConfig:
    """The config with empty caches: each path classifies every target itself."""
    return dataclasses.replace(config, targets={}, template_keys={})


def both(source: str, config: RenderConfig) -> Rendered:
    """Render both ways; they must agree in every field. Returns the native result."""
    python = _python_render(source, _fresh(config))
    native = render(source, _fresh(config), native=True)
    assert native.text == python.text
    assert native.paragraph_starts == python.paragraph_starts
    assert native.links == python.links
    assert all(type(link) is Link for link in native.links)
    assert native.counts == python.counts
    assert list(native.counts) == list(python.counts)  # the same order of first counts too
    return native


def test_the_fixture_dumps_are_all_here() -> None:
    assert len(DUMPS) >= 8
    assert "world/enwiki.xml.bz2" in DUMPS and "hansel/zhwiki-fixture.xml.bz2" in DUMPS


@pytest.mark.parametrize("name", DUMPS)
def test_every_fixture_page_renders_the_same_both_ways(name: str) -> None:
    site, pages = fixture_pages(name)
    config = render_config(WikipediaScanParams(), site)
    # also under the other wiki's rules: the zh rules read conversion markup and have no trail
    other = ZH if site.language.startswith("en") else EN
    links = chars = 0
    for text in pages:
        rendered = both(text, config)
        both(text, other)
        links += len(rendered.links)
        chars += len(rendered.text)
    assert chars > 0 and links > 0


wikitext = st.lists(
    st.one_of(
        st.sampled_from(TOKENS),
        st.sampled_from([" ", "  ", "\t", "\r\n", "\n \n", "\x0b", "\x0c", "\u3000", "\xa0", "a", "s", "ä"]),
        st.text(max_size=4),
    ),
    max_size=60,
).map("".join)


@fuzz_settings(300)
@given(wikitext)
def test_markup_renders_the_same_both_ways(source: str) -> None:
    for config in (EN, ZH, DE):
        check(both(source, config))


@fuzz_settings(150)
@given(st.text(max_size=200))
def test_arbitrary_unicode_renders_the_same_both_ways(source: str) -> None:
    for config in (EN, ZH, DE):
        check(both(source, config))


def test_the_inline_renderer_takes_no_keyword_arguments() -> None:
    # positional only, as `new_inline` passes them: a keyword is refused, not silently ignored
    with pytest.raises(TypeError, match=r"Inline\(\) takes no keyword arguments"):
        wikitext_native._wtrender.Inline(cache_limit=10)


def test_entbench_native_0_selects_the_python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENTBENCH_NATIVE", "0")
    assert not wikitext_native.native_enabled()
    monkeypatch.setenv("ENTBENCH_NATIVE", "1")
    assert wikitext_native.native_enabled()


def test_trail_modes() -> None:
    assert wikitext_native.trail_mode(None) == wikitext_native.TRAIL_NONE
    assert wikitext_native.trail_mode("[a-z]+") == wikitext_native.TRAIL_ASCII_LOWER
    assert wikitext_native.trail_mode("[a-zäöüß]+") == wikitext_native.TRAIL_CALL
    # each mode gives the Python trail: "[[bus]]es" -> "buses" (en), "bus" (zh), "[[Bär]]ä" (de)
    assert both("[[bus]]es", EN).links[0].anchor == "buses"
    assert both("[[bus]]es", ZH).links[0].anchor == "bus"
    assert both("[[Bus]]ßä x", DE).links[0].anchor == "Busßä"


def test_the_c_entity_table_decodes_as_html_unescape() -> None:
    from entbench import _wtrender  # type: ignore[attr-defined]

    assert len(_wtrender.ENTITIES) >= 10
    for name, char in _wtrender.ENTITIES.items():
        assert html.unescape(f"&{name};") == char, name
        # in a segment, next to quotes and marks, both paths agree
        both(f"a ''&{name};'' [[b|&{name};\x01x]]&{name}", EN)


@fuzz_settings(300)
@given(st.one_of(wikitext, st.text(alphabet="{}|a\n", max_size=60)))
def test_template_spans_are_the_same_both_ways(source: str) -> None:
    assert wikitext_native.native_template_spans(source) == template_spans_python(source)


@pytest.mark.parametrize("name", DUMPS)
def test_template_spans_of_every_fixture_page_are_the_same_both_ways(name: str) -> None:
    spans = 0
    for text in fixture_pages(name)[1]:
        found = wikitext_native.native_template_spans(text)
        assert found == template_spans_python(text)
        spans += len(found)
    assert spans > 0


@fuzz_settings(500)
@given(st.text(alphabet="=*#:;- a\n\t\u3000\x85[]|", max_size=40))
def test_block_structure_renders_the_same_both_ways(source: str) -> None:
    # headings (`=` runs of every length on either side), list markers, `----` rules, blank lines
    # of Unicode spaces: the C block loop against the Python one
    for config in (EN, ZH):
        check(both(source, config))


#: A wiki whose main-namespace titles keep their first letter as written.
CASE_SENSITIVE = RenderConfig(dataclasses.replace(EN.table, case={**EN.table.case, 0: "case-sensitive"}))
titles = st.text(alphabet="aAzé ßǆ_#ıİ:&x\u00a0\u3000\u200e北", min_size=1, max_size=8)


@fuzz_settings(500)
@given(titles, titles)
def test_plain_titles_are_classified_the_same_both_ways(first: str, second: str) -> None:
    # the C shortcut for plain titles (first letter upper-cased, `_` as a space, `#section` cut)
    for config in (EN, ZH, CASE_SENSITIVE):
        rendered = both(f"[[{first}]] and [[{second}|x]], [[{first}]]s", config)
        check(rendered)


def test_first_letters_beyond_ascii() -> None:
    # "ß".upper() is "SS": MediaWiki's ucfirst then leaves the title as written; others upper-case
    assert [link.target_normalized for link in both("[[ßa]] [[ǆb]] [[éc]] [[ıd]]", EN).links] == [
        "ßa",
        "Ǆb",
        "Éc",
        "Id",
    ]
    assert both("[[ab]]", CASE_SENSITIVE).links[0].target_normalized == "ab"


@fuzz_settings(500)
@given(st.one_of(wikitext, st.text(alphabet="{}| \n\ta\u3000x\x1c", max_size=40)))
def test_template_names_are_the_same_both_ways(source: str) -> None:
    # the C scan against the regex it replaces, spaces and line breaks around names included
    assert wikitext_native.native_template_names(source) == wikitext_markup._TEMPLATE_NAME.findall(source)


@pytest.mark.parametrize("name", DUMPS)
def test_template_names_of_every_fixture_page_are_the_same_both_ways(name: str) -> None:
    for text in fixture_pages(name)[1]:
        assert wikitext_native.native_template_names(text) == wikitext_markup._TEMPLATE_NAME.findall(text)
