"""Inline templates, image captions and external links in the renderer (spec §3, issue 21).

Each expected text is what MediaWiki shows for the wikitext (the template's documented output: e.g.
`Template:Spaced en dash` is `&nbsp;&ndash;&#32;`, `Module:Nihongo` lays out `English (日本語,
rōmaji)`), written out by hand.
"""

from __future__ import annotations

import pytest

from entbench.readers.wikitext.markup import strip_templates
from entbench.readers.wikitext.render import Rendered, render
from entbench.readers.wikitext.templates import (
    INLINE_TEMPLATES,
    MARK,
    is_inline,
    normalize_name,
    parse_arguments,
    split_arguments,
)
from tests.readers.test_wikitext_properties import EN, ZH, check

NBSP = "\xa0"


def en(source: str) -> Rendered:
    rendered = render(source, EN)
    check(rendered)
    return rendered


def anchors(rendered: Rendered) -> list[tuple[str, str]]:
    return [(link.target_normalized, link.anchor) for link in rendered.links]


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("a{{mdash}}b", "a—b"),
        ("a{{em dash}}b {{—}}", "a—b —"),
        ("1775{{ndash}}1783 {{En dash}}", "1775–1783 –"),
        ("sign){{snd}} based", f"sign){NBSP}– based"),
        ("x{{spaced ndash}}y {{spaced mdash}}z", f"x{NBSP}– y {NBSP}— z"),
        ("15{{nbsp}}September 2.5{{nbsp|3}}m", f"15{NBSP}September 2.5{NBSP * 3}m"),
        ("RCH3{{spaces|5}}(R)", f"RCH3{NBSP * 5}(R)"),
        ("[[Buddhism]]{{·}}[[Kant]]", f"Buddhism{NBSP}· Kant"),
        ("a{{•}}b", f"a{NBSP}• b"),
        ("''Eagle''{{'s}} footpad, l{{'}}homme", "Eagle's footpad, l'homme"),
        ("is {{nowrap|160 cm}} tall", "is 160 cm tall"),
        ("{{nobr|a b}} {{nobreak|c}}", "a b c"),
        ("{{small|(1832)}} {{smaller|(for ''Brave New World'')}}", "(1832) (for Brave New World)"),
        ("{{big|B}}{{larger|L}}{{sup|a}}{{sub|2}}", "BLa2"),
        ("{{resize|70%|(Pashto)}} {{resize|text}}", "(Pashto) text"),
        ("{{nobold|n}} {{noitalic|i}} {{vanchor|1|el1}} {{abbr|GEN|genitive}}", "n i 1 GEN"),
        ("the Greek {{lang|grc|ἀναρχία}}, i.e.", "the Greek ἀναρχία, i.e."),
        ("{{lang|fr|text|italic=no}} {{rtl-lang|ar|الله}}", "text الله"),
        ("{{transl|ar|ALA|ilāh}} / {{transl|ar|al-Jazā'ir}}", "ilāh / al-Jazā'ir"),
        ("the letter {{angbr|a}} represents", "the letter ⟨a⟩ represents"),
        ("{{nihongo|'''Aikido'''|合気道|Aikidō|lead=yes}} is", "Aikido (合気道, Aikidō) is"),
        ("{{Nihongo|headquarters|本部道場|honbu dōjō}}", "headquarters (本部道場, honbu dōjō)"),
        ("{{nihongo||東京|Tōkyō}}", "Tōkyō (東京)"),
        ("{{nihongo|Tokyo|東京}} {{nihongo|Tokyo||Tōkyō}}", "Tokyo (東京) Tokyo (Tōkyō)"),
        ("{{nihongo|A|漢字|kanji|extra|extra2}}", "A (漢字, kanji, extra) extra2"),
        ("{{nihongo|A|漢字|kanji|extra=e|extra2=f}}", "A (漢字, kanji, e) f"),
        ("{{nihongo3|Tokyo|東京|Tōkyō}}", "Tōkyō (東京, Tokyo)"),
        ("x {{nihongo|English only}} y", "x y"),  # the module's error message: dropped
    ],
)
def test_each_inline_template_shows_its_text(source: str, text: str) -> None:
    assert en(source).text == text


@pytest.mark.parametrize(
    "source",
    [
        "{{cite web|url=http://x|title=T}}",
        "{{le|柏林墙|Berlin Wall}}",  # zhwiki's link template: not one of enwiki's
        "{{sfn|Smith|2001|p=3}}",
        "{{citation needed|date=May 2016}}",
        "{{{1}}}",
        "{{nowrap}}",
        "{{small|{{cite web|url=http://x}}}}",  # a wrapper of nothing shows nothing
    ],
)
def test_other_templates_are_dropped(source: str) -> None:
    assert en(f"a {source} b").text == "a b"


def test_names_are_matched_as_mediawiki_matches_them() -> None:
    for spelling in ("nowrap", "Nowrap", " Nowrap ", "Template:Nowrap", "template : nowrap", "模板:Nowrap"):
        assert is_inline(spelling), spelling
    assert is_inline("Spaced_ndash") and is_inline("spaced  ndash") and is_inline("Em dash")
    assert not is_inline("NoWrap")  # beyond the first letter, case matters (another page)
    assert not is_inline("cite web") and not is_inline("le") and is_inline("le", "zh")
    assert is_inline("lang-en") and is_inline("Lang-fr") and is_inline("IPA-de") and not is_inline("lang-")
    assert all(name == normalize_name(name) for name in INLINE_TEMPLATES)
    assert en("{{Template:Nowrap|ok}} {{Lang|de|Berlin}} {{nowrap\n|w}}").text == "ok Berlin w"


def test_arguments_split_at_the_templates_own_pipes() -> None:
    assert split_arguments("nowrap|[[a|b]] {{x|y}}|c") == ["nowrap", "[[a|b]] {{x|y}}", "c"]
    assert split_arguments("nowrap|[[a|b") == ["nowrap", "[[a", "b"]  # unclosed: no protection
    args = parse_arguments(split_arguments("lang|fr| X |italic=yes| 3 = z "))
    assert (args.get(1), args.get(2), args.get(3), args.named) == ("fr", " X ", "z", {"italic": "yes"})
    assert en("{{nowrap|1=a=b}}").text == "a=b"


def test_anchors_made_of_templates_are_kept() -> None:
    # Afghanistan: "between latitudes [[29th parallel north|{{nowrap|29° N}}]] and …";
    # Allah: "[[Insha'Allah|{{transl|ar|ALA|in shā’ Allāh}}]]"
    r = en(
        "latitudes [[29th parallel north|{{nowrap|29° N}}]] and "
        "''[[Insha'Allah|{{transl|ar|ALA|in shā’ Allāh}}]]''."
    )
    assert r.text == "latitudes 29° N and in shā’ Allāh."
    assert anchors(r) == [("29th parallel north", "29° N"), ("Insha'Allah", "in shā’ Allāh")]
    assert "links_empty_anchor" not in r.counts


def test_no_link_trail_crosses_a_template() -> None:
    r = en("[[Weimar]]{{mdash}}the then centre of [[German literature]]{{mdash}}to enjoy")
    assert r.text == "Weimar—the then centre of German literature—to enjoy"
    assert anchors(r) == [("Weimar", "Weimar"), ("German literature", "German literature")]
    # a removed template ends the trail too (MediaWiki shows a footnote marker or a span there),
    # and leaves a space between the words
    r = en("[[Weimar]]{{sfn|Smith|2001}}the")
    assert (r.text, anchors(r)) == ("Weimar the", [("Weimar", "Weimar")])
    assert anchors(en("[[Weimar]]''{{sfn}}''the")) == [("Weimar", "Weimar")]
    assert anchors(en("[[bus]]{{nowrap|es}}")) == [("Bus", "bus")]
    # a link a template wraps ends with the template
    assert anchors(en("{{nowrap|[[bus]]}}es {{lang|de|[[Ich bin ein Berliner]]}}s")) == [
        ("Bus", "bus"),
        ("Ich bin ein Berliner", "Ich bin ein Berliner"),
    ]
    assert anchors(en("[[bus]]es")) == [("Bus", "buses")]  # and the trail itself still works


def test_wrapped_templates_and_quotes() -> None:
    assert en("{{nowrap|{{lang|de|Berliner}} Dom}}").text == "Berliner Dom"
    r = en("called ''{{lang|es|[[La Voz de la Mujer]]}}'' (English)")
    assert r.text == "called La Voz de la Mujer (English)"
    assert anchors(r) == [("La Voz de la Mujer", "La Voz de la Mujer")]
    assert strip_templates("x ''{{sfn|a}}'' y") == "x  y"  # a removed one still takes its marks
    # words either side of a removed template never join; a link's last letter counts as a word's
    assert strip_templates("[[a]]{{sfn}}b") == f"[[a]]{MARK} b"
    assert strip_templates("state{{mdashb-typo}}the, a{{sfn}}, 中{{sfn}}文") == "state the, a, 中文"


def test_chinese_pages_use_the_same_names() -> None:
    # 柏林: "尼迪]]就是在此发表其著名的“{{lang|de|[[Ich bin ein Berliner]]}}”（我是一个柏林人）"
    r = render("发表其著名的“{{lang|de|[[Ich bin ein Berliner]]}}”（我是一个柏林人）", ZH)
    check(r)
    assert r.text == "发表其著名的“Ich bin ein Berliner”（我是一个柏林人）"
    assert anchors(r) == [("Ich bin ein Berliner", "Ich bin ein Berliner")]


def test_the_reserved_mark_never_reaches_the_text() -> None:
    assert en(f"a{MARK}b [[c{MARK}d]]").text == "ab cd"


def test_an_image_caption_over_several_lines_is_dropped_whole() -> None:
    # The shape of IKEA's and Afghanistan's images: a caption with templates and links, whose
    # templates leave blank lines once removed.
    source = (
        "IKEA is a company.\n"
        "[[File:IKEA Logo.svg|thumb|The logo,\n"
        "{{legend|#0051ba|blue of the [[Flag of Sweden|Swedish flag]]}}\n\n"
        "{{legend|#ffda1a|yellow}}]]\nIt sells furniture.\n\n[[Image:Shop.jpg|thumb|A [[shop]]\n\nin Sweden]]"
    )
    r = en(source)
    assert r.text == "IKEA is a company.\nIt sells furniture."
    assert r.links == []
    assert r.counts["links_file"] == 2
    # unclosed, it is not an image: MediaWiki shows the text
    assert en("[[File:X.jpg|thumb|never closed\n\nnext").text == "[[File:X.jpg|thumb|never closed\n\nnext"


def test_an_external_link_around_a_wikilink_shows_its_text() -> None:
    # Aldous Huxley: "[http://dpg.lib.berkeley.edu/…keyword=huxley "The Ultimate Revolution" (talk at
    # [[UC Berkeley]], 20 March 1962)]": the wikilink stays a link (MediaWiki's page links it).
    r = en('* [http://x.org/a?b=1&c=2 "The Ultimate Revolution" (talk at [[UC Berkeley]], 20 March 1962)]')
    assert r.text == '"The Ultimate Revolution" (talk at UC Berkeley, 20 March 1962)'
    assert anchors(r) == [("UC Berkeley", "UC Berkeley")]
    r = en("see [//example.org/p the [[Paris|city]] and [[Lyon]]s] now; [http://y.org plain]")
    assert r.text == "see the city and Lyons now; plain"
    assert anchors(r) == [("Paris", "city"), ("Lyon", "Lyons")]
