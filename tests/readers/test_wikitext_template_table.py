"""Templates that show words (issue 32), rendered from `inline_templates.toml`: each expectation is
what the template's documentation page (the table's `source`) says MediaWiki shows, written out by
hand; and no words glued where a template was removed, on real pages.
"""

from __future__ import annotations

import bz2
import re
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from entbench.readers.mediawiki.xml_dump import SiteInfo, read_dump
from entbench.readers.wikitext.markup import template_spans
from entbench.readers.wikitext.render import RenderConfig, render
from entbench.readers.wikitext.templates import is_inline
from tests.readers.test_wikitext_properties import EN, ZH, check

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wikipedia"
NBSP = "\xa0"


def en(source: str) -> str:
    rendered = render(source, EN)
    check(rendered)
    return rendered.text


@pytest.mark.parametrize(
    ("source", "text"),
    [
        # Module:Convert: input by name, output by symbol, its default rounding
        (
            "Andorra's land area is {{convert|468|km2|sqmi}}.",
            f"Andorra's land area is 468 square kilometres (181{NBSP}sq mi).",
        ),
        ("At {{convert|1300|mi|km}}, Alabama", f"At 1,300 miles (2,100{NBSP}km), Alabama"),
        ("{{convert|1000|ft|m}} {{convert|10|km}}", f"1,000 feet (300{NBSP}m) 10 kilometres (6.2{NBSP}mi)"),
        ("from {{cvt|66|to|883|km2}}", f"from 66 to 883{NBSP}km² (25 to 341{NBSP}sq mi)"),
        ("{{convert|20|C}} and {{convert|-10|C|F}}", f"20{NBSP}°C (68{NBSP}°F) and −10{NBSP}°C (14{NBSP}°F)"),
        ("{{convert|5|ft|10|in|cm}}", f"5 feet 10 inches (178{NBSP}cm)"),
        ("a {{convert|10|km|mi|adj=on}} race", f"a 10-kilometre (6.2{NBSP}mi) race"),
        ("{{convert|1|mi|disp=or}}", f"1 mile or 1.6{NBSP}km"),
        ("{{convert|3|furlong}}", "3 furlong"),  # not in the unit table: as written
        # languages and pronunciation
        ("({{lang-ca|Principat d'Andorra}})", "(Catalan: Principat d'Andorra)"),
        ("{{lang-ru|Андрей|Andrey}}", "Russian: Андрей, romanized: Andrey"),
        (
            "{{IPA-ca|ənˈdorə|lang}}, {{IPA-el|akʰilːéu̯s|pron}}",
            "Catalan pronunciation: [ənˈdorə], pronounced [akʰilːéu̯s]",
        ),
        ("{{IPA-de|tʃ|}}", "[tʃ]"),
        ("Albedo ({{IPAc-en|æ|l|ˈ|b|iː|d|oʊ}})", "Albedo (/ælˈbiːdoʊ/)"),
        ("{{respell|a(w)l|BAY|nee-ə}}", "a(w)l-BAY-nee-ə"),
        ("{{zh|c=民航|l=Civilian Air Transportation}}", "Chinese: 民航; lit. 'Civilian Air Transportation'"),
        # dates, numbers, formulas
        ("diagnosed {{as of|2014|lc=y}}, a", "diagnosed as of 2014, a"),
        ("{{As of|2010|5|3}} {{as of|2010|5|3|df=US}}", "As of 3 May 2010 As of May 3, 2010"),
        ("{{val|6.241|e=18}} {{val|1.2|0.3|u=m}}", f"6.241×10¹⁸ 1.2±0.3{NBSP}m"),
        ("{{frac|1|2}} {{frac|3|1|2}} {{sfrac|3n + 1|2}}", "1⁄2 3+1⁄2 3n + 1/2"),
        ("{{chem|C|''n''|H|2''n''+2}}", "CnH2n+2"),
        (
            "mean of <math>x</math> and <math>y</math> is <math>\\frac{x+y}{2}</math>,",
            "mean of x and y is \\frac{x+y}{2},",
        ),
        ("<math>a^{{b}}</math>", "a^{ {b} }"),  # no `{{` reaches the text
        ("at {{coord|13|19|N|169|9|W|type:event}}, in", "at 13°19′N 169°9′W, in"),
        ("{{coord|43.65|-79.38|display=title}}x", "x"),
        ("{{RailGauge|1435mm}} gauge", f"1,435{NBSP}mm (4 ft 8+1⁄2 in) gauge"),
        ("({{formatnum: 3003}} m)", "(3,003 m)"),
        ("A{{Music|flat}}4 {{sic}}", "A♭4 [sic]"),
        ("state{{mdashb}}the {{snds}}x {{nnbsp}}y", f"state—the {NBSP}– x \u202fy"),
        ("{{ISBN|978-3-95972-065-6}}", "ISBN 978-3-95972-065-6"),
    ],
)
def test_each_template_shows_what_its_documentation_says(source: str, text: str) -> None:
    assert en(source) == text


def test_templates_that_are_links() -> None:
    r = render("alongside {{HMS|Ajax|22|6}} and [[:en:God|Godt]]", EN)
    assert r.text == "alongside Ajax (22) and Godt"
    assert [(link.target_normalized, link.anchor) for link in r.links] == [
        ("HMS Ajax (22)", "Ajax (22)"),
        ("God", "Godt"),
    ]
    # zhwiki: the local name is shown and linked (title_qid resolves it, or counts a red link)
    z = render(
        "犹太哲学家{{le|吉尔松尼德|Gersonides}}和{{tsl|en|Bulletin of the AMS|美國數學會通報}}，"
        "{{lang-en|Nation}}",
        ZH,
    )
    check(z)
    assert z.text == "犹太哲学家吉尔松尼德和美國數學會通報，英语：Nation"
    assert [(link.target_normalized, link.anchor) for link in z.links] == [
        ("吉尔松尼德", "吉尔松尼德"),
        ("美國數學會通報", "美國數學會通報"),
    ]
    assert render("{{link-en|希腊化哲学|Hellenistic_philosophy|希腊化}}时期", ZH).links[0].anchor == "希腊化"


def test_every_table_entry_names_its_documentation_page() -> None:
    table = tomllib.loads(
        resources.files("entbench.readers.wikitext").joinpath("inline_templates.toml").read_text("utf-8")
    )
    for entry in table["template"]:
        assert entry["source"].startswith("https://"), entry
        assert entry.get("names") or entry.get("prefixes"), entry


def test_the_united_kingdom_has_no_glued_words() -> None:
    # "…the only part of the UK that shares a land border with another sovereign state{{mdashb}}the
    # Republic of Ireland." (the demo world's United Kingdom page, wtf_wikipedia's wikitext)
    source = bz2.decompress((FIXTURES / "wtf_wikipedia.United-Kingdom.txt.bz2").read_bytes()).decode()
    text = render(source, RenderConfig(SiteInfo("enwiki", "en", "first-letter", ()).namespace_table())).text
    assert "another sovereign state—the Republic of Ireland." in text
    assert "statethe" not in text


def test_no_removed_template_glues_two_words_on_real_pages() -> None:
    # Each removed template written between two letters (one in the gensim head) leaves the words apart.
    site, pages = read_dump(str(FIXTURES / "enwiki-201605.pages-articles1.gensim-head.xml.bz2"))
    config = RenderConfig(site.namespace_table())
    checked = 0
    for page in pages:
        if page.ns or page.redirect:
            continue
        text = render(page.text, config).text
        for start, end in template_spans(page.text):
            before, after = page.text[:start].removesuffix("]]"), page.text[end:]
            if not (before[-1:].isalpha() and after[:1].isalpha()):
                continue
            if is_inline(page.text[start + 2 : end - 2].split("|")[0]):
                continue
            left, right = re.search(r"\w+$", before), re.match(r"\w+", after)
            assert left and right
            glued = left.group() + right.group()
            if glued not in page.text.replace(page.text[start:end], ""):
                assert glued not in text, (page.title, glued)
            checked += 1
    assert checked == 1
