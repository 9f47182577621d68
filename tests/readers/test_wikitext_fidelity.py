"""Issue 21 on real pages: inline templates, multi-line image captions, external links with wikilinks.

The whole gensim head of enwiki (May 2016) holds the pages the issue names (Afghanistan, Aldous
Huxley, Allah); every expectation quotes the page's wikitext and was read off it by hand.
"""

from __future__ import annotations

import re

import pytest

from entbench.readers.wikitext.markup import strip_comments, strip_tags, template_spans
from entbench.readers.wikitext.templates import MARK
from tests.readers.test_wikitext_real_pages import (
    EN_2016,
    EN_DBPEDIA,
    ZH_2018,
    ZH_DBPEDIA,
    dump,
    links_to,
    page,
)

EN_HEAD = "enwiki-201605.pages-articles1.gensim-head.xml.bz2"
ALL_DUMPS = [(EN_HEAD, ""), (EN_2016, ""), (EN_DBPEDIA, ""), (ZH_2018, ""), (ZH_DBPEDIA, "zh")]
#: `[[Target]]` or `[[Target|label]]`, plain, then a template (quote marks around it allowed), then
#: letters: in MediaWiki the template ends the link, so those letters are no link trail.
_LINK_TEMPLATE_WORD = re.compile(
    r"\[\[([^\[\]{}|\n]+)(?:\|([^\[\]{}'\n]+))?\]\](?:'')?\{\{[^{}]*\}\}(?:'')?([a-z]+)"
)


@pytest.mark.parametrize(("name", "language"), ALL_DUMPS)
def test_no_markup_leaks_into_article_text(name: str, language: str) -> None:
    articles = [(p, r) for p, r in dump(name, language).values() if p.ns == 0 and not p.redirect]
    assert articles
    for p, r in articles:
        for leak in ("[[File:", "[[Image:", "[[文件:", "[http", "[//", "{{", "}}", "]]", MARK):
            assert leak not in r.text, (p.title, leak)
        for link in r.links:
            assert "[[" not in link.anchor and MARK not in link.anchor


def test_anchors_made_of_a_template_are_kept() -> None:
    # Afghanistan: "which lies between latitudes [[29th parallel north|{{nowrap|29° N}}]] and
    # [[39th parallel north|{{nowrap|39° N}}]], and longitudes [[60th meridian east|{{nowrap|60° E}}]]
    # and [[75th meridian east|{{nowrap|75° E}}]]."
    _, afghanistan = page(EN_HEAD, "Afghanistan")
    assert "lies between latitudes 29° N and 39° N, and longitudes 60° E and 75° E." in afghanistan.text
    for target, anchor in [
        ("29th parallel north", "29° N"),
        ("39th parallel north", "39° N"),
        ("60th meridian east", "60° E"),
        ("75th meridian east", "75° E"),
    ]:
        assert [link.anchor for link in links_to(afghanistan, target)] == [anchor]
    # Allah: "Most Muslims use the untranslated Arabic phrase ''[[Insha'Allah|{{transl|ar|ALA|in shā’
    # Allāh}}]]'' (meaning 'if God wills')"
    _, allah = page(EN_HEAD, "Allah")
    assert "the untranslated Arabic phrase in shā’ Allāh (meaning 'if God wills')" in allah.text
    assert [link.anchor for link in links_to(allah, "Insha'Allah")] == ["in shā’ Allāh"]
    assert "links_empty_anchor" not in afghanistan.counts
    assert "links_empty_anchor" not in allah.counts


def test_no_anchor_is_glued_to_the_word_after_a_template() -> None:
    # Angela Merkel: "(CSU){{Em dash}}the sister party of Merkel's [[Christian Democratic Union of
    # Germany|Christian Democratic Union]]{{Em dash}}and then-[[Bavaria]]n Minister"
    _, merkel = page(EN_DBPEDIA, "Angela Merkel")
    assert "(CSU)—the sister party of Merkel's Christian Democratic Union—and then-Bavarian" in merkel.text
    cdu = links_to(merkel, "Christian Democratic Union of Germany")
    assert "Christian Democratic Union" in [link.anchor for link in cdu]
    assert not [link for link in cdu if link.anchor.endswith("and")]
    assert links_to(merkel, "Bavaria")[0].anchor == "Bavarian"  # the trail rule still applies
    # Every such place in the English pages, outside templates (whose links are not rendered)
    checked = 0
    for name in (EN_HEAD, EN_DBPEDIA):
        for p, r in dump(name).values():
            source = strip_tags(strip_comments(p.text))
            spans = template_spans(source)
            rendered = {(link.target, link.anchor) for link in r.links}
            for m in _LINK_TEMPLATE_WORD.finditer(source):
                if any(start <= m.start() < end for start, end in spans):
                    continue
                target, label, word = m.group(1).strip(), m.group(2) or m.group(1), m.group(3)
                assert (target, label + word) not in rendered, (p.title, m.group())
                assert (target, label) in rendered, (p.title, m.group())
                checked += 1
    assert checked >= 4  # GQ''{{'}}s, Working Mother''{{'}}s, Anime Insider''{{'}}s, Merkel's CDU


def test_an_image_caption_over_several_lines_leaves_nothing() -> None:
    # Afghanistan: "[[File:Taliban insurgency in Afghanistan (2015–present).svg|thumb|Current military
    # situation, as of 27 February 2016.\n{{legend|#ebc0b3|Under control of the [[Politics of
    # Afghanistan|Afghan Government]], …}}\n{{legend|…}}]]\nAfghanistan is an Islamic republic …"
    p, afghanistan = page(EN_HEAD, "Afghanistan")
    assert "Current military situation" in p.text
    assert "Current military situation" not in afghanistan.text
    assert (
        "\n\nGovernance\n\nAfghanistan is an Islamic republic consisting of three branches"
        in afghanistan.text
    )
    assert not [link for link in afghanistan.links if link.anchor == "Afghan Government"]


def test_an_external_link_around_a_wikilink_shows_its_text() -> None:
    # Aldous Huxley: "[http://dpg.lib.berkeley.edu/webdb/mrc/search_vod?avr=1&keyword=huxley "The Ultimate
    # Revolution" (talk at [[University of California, Berkeley|UC Berkeley]], 20 March 1962)]"
    p, huxley = page(EN_HEAD, "Aldous Huxley")
    assert "[[University of California, Berkeley|UC Berkeley]], 20 March 1962)]" in p.text
    assert '\n\n"The Ultimate Revolution" (talk at UC Berkeley, 20 March 1962)\n\n' in huxley.text
    assert "UC Berkeley" in [link.anchor for link in links_to(huxley, "University of California, Berkeley")]


def test_wrappers_on_real_pages() -> None:
    # Aikido: "{{Nihongo|'''Aikido'''|合気道|Aikidō|lead=yes}} {{IPA-ja|a.i.ki.doː|}} is a modern …"
    # (an empty second argument: the IPA in brackets without a label)
    _, aikido = page(EN_HEAD, "Aikido")
    assert aikido.text.startswith("Aikido (合気道, Aikidō) [a.i.ki.doː] is a modern Japanese martial art")
    # Android (robot): "She is {{nowrap|160 cm}} tall and weighs {{nowrap|50 kg}}, matching"
    _, android = page(EN_HEAD, "Android (robot)")
    assert "She is 160 cm tall and weighs 50 kg, matching" in android.text
    # Animal Farm: "''[[The Times Literary Supplement]]'' on 15{{nbsp}}September 1972"
    _, farm = page(EN_HEAD, "Animal Farm")
    assert "Times Literary Supplement on 15\xa0September 1972" in farm.text
    # 数学: "源自於[[古希臘語]]的{{lang|el|μάθημα}}（{{lang|la|máthēma}}），"
    _, math = page(ZH_2018, "数学")
    assert "的μάθημα（máthēma），" in math.text
