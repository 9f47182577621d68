"""`place_links`: links into sentences as token offsets whose tokens are exactly the anchor."""

from __future__ import annotations

from pathlib import Path

from entbench.builders.enteval.tokens import Tokenizer
from entbench.builders.enteval.wikient import LinkSpan, anchor_core, place_links
from entbench.builders.wikipedia.stages.scan import WikipediaScanParams, render_config
from entbench.readers.mediawiki.xml_dump import read_dump
from entbench.readers.wikitext.render import render

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


def spans(paragraph: str, *anchors: tuple[int, str]) -> list[LinkSpan]:
    """Links given as (ordinal, anchor) located by their first occurrence at or after the last one."""
    result, at = [], 0
    for ordinal, anchor in anchors:
        start = paragraph.index(anchor, at)
        result.append(LinkSpan(ordinal, start, start + len(anchor)))
        at = start
    return result


def place(paragraph: str, links: list[LinkSpan]):  # type: ignore[no-untyped-def]
    [analysis] = list(Tokenizer.shared().analyse([paragraph]))
    return place_links(paragraph, analysis.tokens, analysis.sentences, links)


def test_every_link_of_a_sentence_shares_one_tokenisation() -> None:
    text = "Trains run from Berlin to Karlsruhe. The city has dogs."
    placement = place(text, spans(text, (3, "Berlin"), (4, "Karlsruhe"), (9, "dogs")))
    assert [s.words for s in placement.sentences] == [
        ["Trains", "run", "from", "Berlin", "to", "Karlsruhe", "."],
        ["The", "city", "has", "dogs", "."],
    ]
    assert placement.sentences[0].links == {3: (3, 4), 4: (5, 6)}
    assert placement.sentences[1].links == {9: (3, 4)}
    assert placement.dropped == {} and placement.tokens_split == 0


def test_an_anchor_edge_inside_a_word_cuts_that_word() -> None:
    # "co[[Book|author]]s" renders as one word "coauthors" with the anchor "author".
    text = "It is known for coauthors of comic books."
    start = text.index("author")
    placement = place(text, [LinkSpan(0, start, start + len("author"))])
    [sentence] = placement.sentences
    assert sentence.words[4:7] == ["co", "author", "s"]
    assert sentence.links == {0: (5, 6)}
    assert placement.tokens_split == 1


def test_multi_word_and_punctuated_anchors() -> None:
    text = "He lived in Washington, D.C. (the capital) and in New York City."
    placement = place(text, spans(text, (0, "Washington, D.C."), (1, "New York City")))
    [sentence] = placement.sentences
    a, b = sentence.links[0]
    assert "".join(sentence.words[a:b]) == "Washington,D.C."
    a, b = sentence.links[1]
    assert sentence.words[a:b] == ["New", "York", "City"]


def test_drops_have_reasons() -> None:
    text = "History of Scotland. The kingdom is long.  Also   here."
    start = text.index("Scotland. The")
    links = [
        LinkSpan(0, start, start + len("Scotland. The")),  # the sentencizer splits inside it
        LinkSpan(1, text.index("  Also"), text.index("  Also") + 2),  # whitespace only
        LinkSpan(2, text.index("kingdom") - 1, text.index("kingdom") + len("kingdom") + 1),  # padded
    ]
    placement = place(text, links)
    assert placement.dropped == {0: "link_crosses_sentence", 1: "empty_anchor"}
    [sentence] = placement.sentences
    assert sentence.links == {2: (1, 2)} and sentence.words[1] == "kingdom"


def test_anchor_core_trims_whitespace() -> None:
    assert anchor_core("a  Berlin ", 1, 10) == (3, 9)
    assert anchor_core("a   b", 1, 4) == (4, 4)


def test_on_every_link_of_real_pages_the_mention_is_the_token_span() -> None:
    """All links of the 2016 gensim head (22k, resolvable or not): wherever the tokenizer splits an
    anchor (quotes, brackets, hyphens), the mention is the tokens its offsets select, and those
    tokens come back from the sentence written with one space between tokens (issue 21)."""
    site, pages = read_dump(str(FIXTURES / "wikipedia" / "enwiki-201605.pages-articles1.gensim-head.xml.bz2"))
    config = render_config(WikipediaScanParams(), site)
    split = {"quote": 0, "bracket": 0, "hyphen": 0}
    placed = 0
    for page in pages:
        if page.ns != 0 or page.redirect:
            continue
        rendered = render(page.text, config)
        starts = [*rendered.paragraph_starts, len(rendered.text) + 2]
        for p, begin in enumerate(rendered.paragraph_starts):
            paragraph = rendered.text[begin : starts[p + 1] - 2]
            links = {i: link for i, link in enumerate(rendered.links) if link.paragraph == p}
            if not links:
                continue
            spans = [LinkSpan(i, link.start - begin, link.end - begin) for i, link in links.items()]
            for sentence in place(paragraph, spans).sentences:
                tokens = " ".join(sentence.words).split()
                for i, (a, b) in sentence.links.items():
                    mention = sentence.mention(i)
                    assert mention == " ".join(tokens[a:b])
                    anchor = links[i].anchor
                    assert "".join(mention.split()) == "".join(anchor.split())
                    placed += 1
                    for kind, chars in (("quote", "'\""), ("bracket", "()[]"), ("hyphen", "-–")):
                        if mention != anchor and any(c in anchor for c in chars):
                            split[kind] += 1
    assert placed > 20000
    assert min(split.values()) > 10, split
