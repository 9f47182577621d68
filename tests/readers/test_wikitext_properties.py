"""Property-based tests of the link parser and renderer: no input crashes them, offsets stay valid."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from entbench.readers.mediawiki.xml_dump import SiteInfo
from entbench.readers.wikitext.markup import resolve_conversions, strip_templates, template_spans
from entbench.readers.wikitext.render import RenderConfig, Rendered, render
from entbench.readers.wikitext.templates import MARK, is_inline

#: Markup pieces that interact (brackets, braces, tags, conversion markup, namespaces, quotes).
TOKENS = [
    "[[",
    "]]",
    "|",
    "{{",
    "}}",
    "{{{",
    "}}}",
    "{|",
    "|}",
    "-{",
    "}-",
    "zh-cn:",
    "zh-tw:",
    ";",
    "<ref>",
    "</ref>",
    "<ref name=a/>",
    "<!--",
    "-->",
    "<nowiki>",
    "</nowiki>",
    "<br/>",
    "<span>",
    "''",
    "'''",
    "\n",
    "\n\n",
    "==",
    "* ",
    "#",
    ":",
    "&amp;",
    "&nbsp;",
    "&",
    "Category:",
    "File:",
    "分類:",
    "wikt:",
    "de:",
    "[http://example.org ",
    "]",
    "%41",
    "_",
    " ",
    "s",
    "北京",
    "Berlin",
    "(x)",
    "#sec",
    "__NOTOC__",
    # issue 21: inline templates that keep their text, image captions over lines, wikilinked URLs
    "{{nowrap|",
    "{{lang|fr|",
    "{{transl|ar|ALA|",
    "{{nihongo|",
    "{{mdash}}",
    "{{nbsp|3}}",
    "{{'s}}",
    "{{sfn|a}}",
    "[[File:x.jpg|thumb|",
    "[http://example.org/p?a=1 ",
    "\x01",
]

wikitext = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=4)), max_size=60).map("".join)


def _config(language: str) -> RenderConfig:
    site = SiteInfo(
        dbname=f"{language}wiki",
        language=language,
        case="first-letter",
        namespaces=((0, "", "first-letter"), (6, "File", "first-letter"), (14, "Category", "first-letter")),
    )
    return RenderConfig(site.namespace_table(), conversion=language == "zh")


EN, ZH = _config("en"), _config("zh")


def check(r: Rendered) -> None:
    text = r.text
    assert MARK not in text
    assert text == text.strip(" \n")
    assert "\n\n\n" not in text
    starts = r.paragraph_starts
    assert starts == sorted(set(starts))
    assert (starts[:1] == [0]) if text else not starts
    assert text.count("\n\n") == max(0, len(starts) - 1)
    for i, start in enumerate(starts[1:], 1):
        assert text[start - 2 : start] == "\n\n", i
    for link in r.links:
        assert 0 <= link.start < link.end <= len(text)
        assert text[link.start : link.end] == link.anchor
        assert link.anchor == link.anchor.strip(" \n")
        assert 0 <= link.paragraph < len(starts)
        assert starts[link.paragraph] <= link.start
        if link.paragraph + 1 < len(starts):
            assert link.end <= starts[link.paragraph + 1] - 2
        assert link.target_normalized
        assert "#" not in link.target_normalized


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wikitext)
def test_render_never_crashes_and_offsets_are_valid_en(source: str) -> None:
    check(render(source, EN))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wikitext)
def test_render_never_crashes_and_offsets_are_valid_zh(source: str) -> None:
    check(render(source, ZH))


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_render_arbitrary_unicode(source: str) -> None:
    check(render(source, EN))
    check(render(source, ZH))


@settings(max_examples=150, deadline=None)
@given(wikitext)
@example("0{{sfn|a}}0")
def test_template_spans_are_disjoint_and_brace_delimited(source: str) -> None:
    spans = template_spans(source)
    for (_, end1), (start2, _) in itertools.pairwise(spans):
        assert end1 <= start2
    for start, end in spans:
        assert source[start : start + 2] == "{{"
        assert source[end - 2 : end] == "}}"
    if not any(is_inline(source[s + 2 : e - 2].split("|", maxsplit=1)[0]) for s, e in spans):
        # removing only: what is left is at most the text outside the spans (quote marks enclosing
        # a template go with it), plus a MARK where a template followed a link and one space where
        # a removed template stood between two words ("0{{sfn|a}}0" -> "0 0": words never join)
        out = strip_templates(source)
        assert len(out.replace(MARK, "")) <= len(source) - sum(e - s for s, e in spans) + len(spans)


@settings(max_examples=150, deadline=None)
@given(wikitext)
def test_conversion_never_grows_markup(source: str) -> None:
    out = resolve_conversions(source)
    assert len(out) <= len(source)


def test_quotes_go_with_the_template_they_enclose_and_only_then() -> None:
    assert strip_templates("x ''{{a}}'' y") == "x  y"
    assert strip_templates("x '''{{a}}{{b|c}}''' y") == "x  y"  # adjacent templates: one run
    assert strip_templates("'''''{{a}}''''' y") == " y"
    assert strip_templates("''a {{b}}'' c") == "''a '' c"  # the run holds text too: marks stay
    assert strip_templates("''{{a}}''' b") == "''''' b"  # unequal runs are not a pair
    assert strip_templates("l'{{a}}'s") == "l''s"  # single apostrophes are text


# --- issue 21: inline templates, image captions, external links around wikilinks ----------------
word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6)
words = st.lists(
    st.one_of(word, st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=4)),
    min_size=1,
    max_size=3,
).map(" ".join)
#: Templates that keep their text, each with its text as the last argument.
WRAPPERS = ["nowrap", "Nowrap", "lang|fr", "transl|ar|ALA", "transl|ar", "small", "resize|80%", "abbr", "sup"]
#: Templates after which a link trail must stop: shown ones and removed ones.
AFTER_LINK = [
    "mdash",
    "ndash",
    "snd",
    "nbsp",
    "·",
    "'s",
    "sfn|Smith|2001",
    "cite web|url=http://x",
    "lang-fr|x",
]


@settings(max_examples=150, deadline=None)
@given(word, st.sampled_from(AFTER_LINK + [f"{w}|q" for w in WRAPPERS]), word)
def test_no_link_trail_crosses_a_template(label: str, template: str, after: str) -> None:
    r = render(f"a [[{label}]]{{{{{template}}}}}{after} b", EN)
    check(r)
    assert [link.anchor for link in r.links] == [label]


@settings(max_examples=150, deadline=None)
@given(word, st.sampled_from(WRAPPERS), words, st.sampled_from(["", "''", "'''"]))
def test_a_wrapper_template_makes_an_anchor(target: str, wrapper: str, text: str, quotes: str) -> None:
    r = render(f"x [[{target}|{quotes}{{{{{wrapper}|{text}}}}}{quotes}]] y", EN)
    check(r)
    assert [link.anchor for link in r.links] == [text]
    assert r.text == f"x {text} y"


CAPTION_PIECES = [
    "word",
    " ",
    "\n",
    "\n\n",
    "{{legend|#fff|[[a|b]]}}",
    "[[c]]",
    "''",
    "{{nowrap|d}}",
    "[[e|f]]s",
]


@settings(max_examples=150, deadline=None)
@given(words, st.lists(st.sampled_from(CAPTION_PIECES), max_size=12).map("".join), words)
def test_an_image_link_is_dropped_whole_whatever_its_caption(before: str, caption: str, after: str) -> None:
    for image in ("File:x.jpg|thumb|", "Image:y.png|left|200px|"):
        r = render(f"{before}\n[[{image}{caption}]]\n{after}", EN)
        check(r)
        assert r.text == f"{before}\n{after}"
        assert r.links == []


@settings(max_examples=150, deadline=None)
@given(words, word, words, words)
def test_an_external_link_around_a_wikilink_shows_its_text(
    pre: str, target: str, label: str, post: str
) -> None:
    r = render(f"see [http://example.org/p?q=1 {pre} [[{target}|{label}]] {post}] now", EN)
    check(r)
    assert r.text == f"see {pre} {label} {post} now"
    assert [link.anchor for link in r.links] == [label]
    assert r.text[r.links[0].start : r.links[0].end] == label
