"""The link parser and renderer on real pages: one hand-checked expectation per spec §3 construct.

Every expectation below was read off the page's wikitext in the fixture dump (quoted in the test)
and the rendered text; nothing is derived from the code under test.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import pytest

from entbench.builders.wikipedia.stages.scan import WikipediaScanParams, render_config
from entbench.readers.mediawiki.xml_dump import RawPage, read_dump
from entbench.readers.wikitext.render import Link, Rendered, is_disambiguation, render
from entbench.readers.wikitext.titles import normalize_title

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wikipedia"
EN_2016 = "enwiki-201605.pages-articles1.head-part.xml.bz2"
EN_DBPEDIA = "enwiki.dbpedia-minidump.part.xml.bz2"
ZH_2018 = "zhwiki-201807.wiki-dump-reader.part1.xml.bz2"
ZH_DBPEDIA = "zhwiki.dbpedia-minidump.xml.bz2"  # its header says enwiki/en: the page is zhwiki's 柏林


@functools.cache
def dump(name: str, language: str = "") -> dict[str, tuple[RawPage, Rendered]]:
    site, pages = read_dump(str(FIXTURES / name))
    if language:
        site = dataclasses.replace(site, language=language)
    config = render_config(WikipediaScanParams(language=language), site)
    return {page.title: (page, render(page.text, config)) for page in pages}


def page(name: str, title: str, language: str = "") -> tuple[RawPage, Rendered]:
    return dump(name, language)[title]


def links_to(rendered: Rendered, normalized: str) -> list[Link]:
    return [link for link in rendered.links if link.target_normalized == normalized]


@pytest.mark.parametrize(
    ("name", "language"), [(EN_2016, ""), (EN_DBPEDIA, ""), (ZH_2018, ""), (ZH_DBPEDIA, "zh")]
)
def test_every_anchor_is_at_its_offsets(name: str, language: str) -> None:
    total = 0
    for _, rendered in dump(name, language).values():
        text = rendered.text
        assert "\n\n\n" not in text
        for link in rendered.links:
            assert link.anchor
            assert text[link.start : link.end] == link.anchor
            start = rendered.paragraph_starts[link.paragraph]
            end = (
                rendered.paragraph_starts[link.paragraph + 1] - 2
                if link.paragraph + 1 < len(rendered.paragraph_starts)
                else len(text)
            )
            assert start <= link.start < link.end <= end
            total += 1
        for i, start in enumerate(rendered.paragraph_starts):
            assert i == 0 or text[start - 2 : start] == "\n\n"
    assert total > 250


def test_plain_link_with_first_letter_case() -> None:
    # "...is a [[political philosophy]] that advocates [[self-governance|self-governed]]..."
    _, r = page(EN_2016, "Anarchism")
    (link,) = links_to(r, "Political philosophy")[:1]
    assert (link.target, link.anchor) == ("political philosophy", "political philosophy")
    assert r.text.startswith("Anarchism is a political philosophy that advocates self-governed societies")


def test_piped_link() -> None:
    _, r = page(EN_2016, "Anarchism")
    link = links_to(r, "Self-governance")[0]
    assert (link.target, link.anchor) == ("self-governance", "self-governed")


def test_link_trails() -> None:
    # "[[oxymoron]]ic", "[[market (economics)|market]]s", "[[trade union]]ism"
    _, r = page(EN_2016, "Anarchism")
    assert links_to(r, "Oxymoron")[0].anchor == "oxymoronic"
    assert "markets" in {link.anchor for link in links_to(r, "Market (economics)")}
    assert links_to(r, "Trade union")[0].anchor == "trade unionism"
    # "[[suffix]]es" on the Berlin page
    _, berlin = page(EN_DBPEDIA, "Berlin")
    assert links_to(berlin, "Suffix")[0].anchor == "suffixes"


def test_no_link_trail_in_chinese() -> None:
    # zhwiki has no link trail: "[[柏林墙]]围住" keeps 围住 out of the anchor.
    _, r = page(ZH_DBPEDIA, "柏林", "zh")
    link = links_to(r, "柏林墙")[0]
    assert link.anchor == "柏林墙"
    assert r.text[link.end] == "围"


def test_section_link_targets_the_page() -> None:
    # "[[Anarchism in France#The Fourth Republic (1945–1958)|France]]"
    _, r = page(EN_2016, "Anarchism")
    (link,) = [link for link in links_to(r, "Anarchism in France") if "#" in link.target]
    assert link.target == "Anarchism in France#The Fourth Republic (1945–1958)"
    assert link.anchor == "France"


def test_html_entities_in_targets() -> None:
    # "[[Stralsund&nbsp;– Nordvorpommern&nbsp;– Rügen (electoral district)|Stralsund – …]]"
    _, r = page(EN_DBPEDIA, "Angela Merkel")
    (link,) = links_to(r, "Stralsund – Nordvorpommern – Rügen (electoral district)")
    assert link.target.startswith("Stralsund&nbsp;")
    assert link.anchor == "Stralsund – Nordvorpommern – Rügen"


def test_underscores_in_redirect_targets() -> None:
    # AssistiveTechnology: "#REDIRECT [[Assistive_technology]]"
    p, _ = page(EN_2016, "AssistiveTechnology")
    assert "Assistive_technology" in p.text
    site, _pages = read_dump(str(FIXTURES / EN_2016))
    assert normalize_title("Assistive_technology", site.namespace_table()) == "Assistive technology"


def test_leading_colon_category_shows_text_but_is_not_an_article_link() -> None:
    # "* [[:Category:Video games set in Berlin]]" versus "[[Category:Berlin| ]]"
    _, r = page(EN_DBPEDIA, "Berlin")
    assert "Category:Video games set in Berlin" in r.text
    assert not [link for link in r.links if "Category" in link.target_normalized]
    assert r.counts["links_category"] > 0


def test_file_links_and_their_captions_leave_no_text() -> None:
    # "[[File:Rotes_Rathaus.jpg|thumb|left|[[Rotes Rathaus]] (''Red City Hall''), seat of the Senate…]]"
    _, r = page(EN_DBPEDIA, "Berlin")
    assert "seat of the Senate and Mayor of Berlin" not in r.text
    assert "Rotes_Rathaus.jpg" not in r.text
    assert r.counts["links_file"] > 0


def test_interwiki_link_shows_text_only() -> None:
    # "[[:Wiktionary:märchenhaft|märchenhaft]]"
    _, r = page(EN_DBPEDIA, "Ranma ½")
    assert "fun and märchenhaft" in r.text
    assert not [link for link in r.links if "märchenhaft" in link.target]


def test_chinese_localised_namespaces_are_not_article_links() -> None:
    # 柏林: "[[分類:北大西洋公約組織會員國首都]]" and "[[Category:歐洲首都]]" categorise the page;
    # "[[File:Berlinermauer.jpg|thumb|left|220px|1986年时的柏林墙]]" is an image.
    _, r = page(ZH_DBPEDIA, "柏林", "zh")
    assert "北大西洋公約組織會員國首都" not in r.text
    assert "歐洲首都" not in r.text
    assert "1986年时的柏林墙" not in r.text
    assert r.counts["links_category"] == 8
    # with English namespace names only, 分類: would wrongly count as an article
    _, en_reading = page(ZH_DBPEDIA, "柏林")
    assert "北大西洋公約組織會員國首都" in {
        link.target_normalized.split(":")[-1] for link in en_reading.links
    }


def test_chinese_project_and_special_namespaces() -> None:
    # Wikipedia:翻譯指引: "[[維基百科:新手入門|新手入門]]", "[[特殊:内容翻译|内容翻译功能]]"
    _, r = page(ZH_2018, "Wikipedia:翻譯指引")
    assert "内容翻译功能" in r.text
    assert not [link for link in r.links if link.target.startswith(("維基百科:", "特殊:"))]


def test_conversion_markup_in_anchors() -> None:
    # 数学: "[[域 (數學)|-{zh-cn:域;zh-tw:體}-]]"
    _, math = page(ZH_2018, "数学")
    assert {link.anchor for link in links_to(math, "域 (數學)")} == {"域"}
    # 柏林: "[[联邦州 (德国)|-{zh-hans:联邦州; zh-hant:邦}-]]", "[[德国联邦议院|德国联-{}-邦议院]]"
    _, berlin = page(ZH_DBPEDIA, "柏林", "zh")
    assert links_to(berlin, "联邦州 (德国)")[0].anchor == "联邦州"
    assert links_to(berlin, "德国联邦议院")[0].anchor == "德国联邦议院"


def test_conversion_markup_around_a_link() -> None:
    # Wikipedia:宣告/2005年: "…是日文的-{[[wikisource:北海道舊土人保護法|北海道舊土人保護法]]}-。"
    _, r = page(ZH_2018, "Wikipedia:宣告/2005年")
    assert "是日文的北海道舊土人保護法。" in r.text


@pytest.mark.parametrize(("name", "language"), [(ZH_2018, ""), (ZH_DBPEDIA, "zh")])
def test_no_conversion_markup_or_template_leaks(name: str, language: str) -> None:
    pages = dump(name, language)
    assert any("noteTA" in p.text for p, _ in pages.values())
    for p, r in pages.values():
        for leak in ("noteTA", "{{", "}}", "<ref", "{|", "<!--"):
            assert leak not in r.text, leak
        # the only `-{` left are the ones a page shows on purpose inside <nowiki>
        assert r.text.count("-{") == p.text.count("<nowiki>-{")
        assert r.text.count("}-") == p.text.count("}-</nowiki>")


def test_templates_refs_tables_and_comments_removed_in_english() -> None:
    for _, r in dump(EN_DBPEDIA).values():
        for leak in ("{{", "}}", "<ref", "</ref>", "{|", "|}", "<!--", "'''"):
            assert leak not in r.text, leak


def test_unclosed_link_is_literal_text() -> None:
    # Kerala Agricultural University: "*[[College of Forestry]], Vellanikkara, [[Thrissur]" (a typo
    # on the page): MediaWiki shows the broken brackets, and the list item's real link still counts.
    _, r = page(EN_DBPEDIA, "Kerala Agricultural University")
    assert "College of Forestry, Vellanikkara, [[Thrissur]" in r.text
    assert links_to(r, "College of Forestry")


def test_disambiguation_flags() -> None:
    food, _ = page(EN_DBPEDIA, "Food (disambiguation)")  # ends with "{{disambiguation}}"
    berlin, _ = page(EN_DBPEDIA, "Berlin")
    assert is_disambiguation(food.text, ("disambiguation",))
    assert not is_disambiguation(berlin.text, ("disambiguation",))


def test_traditional_titles_are_kept_as_written() -> None:
    titles = set(dump(ZH_2018))
    assert {"文學", "Wikipedia:方針與指引", "Wikipedia:翻譯指引"} <= titles


def test_a_wrapper_template_keeps_its_text_and_no_quote_mark_leaks() -> None:
    # Anarchism: "published the newspaper called ''{{lang|es|[[La Voz de la Mujer]]}}'' (English: …";
    # International Atomic Time: "from the French name
    # '''{{lang|fr|''Temps Atomique International''}}'''<ref>…";
    # 柏林: "再細分成為分區（''{{lang|en|Stadtteile}}''），". `lang` shows its second argument
    # (in italics on the page): the words stay, the link inside stays a link, no quote mark leaks.
    _, anarchism = page(EN_2016, "Anarchism")
    assert "the newspaper called La Voz de la Mujer (English: The Woman's Voice)" in anarchism.text
    assert [link.anchor for link in links_to(anarchism, "La Voz de la Mujer")] == ["La Voz de la Mujer"]
    _, tai = page(EN_2016, "International Atomic Time")
    assert "(TAI, from the French name Temps Atomique International) is a high-precision" in tai.text
    _, berlin = page(ZH_DBPEDIA, "柏林", "zh")
    assert "再細分成為分區（Stadtteile），代表着傳統" in berlin.text
