"""The renderer's Python fast paths give what the plain definitions they replace give.

Each fast path (a shortcut for the common case, a faster regex) is checked against the simple form
it replaced, kept here as the reference, on hypothesis inputs built from the characters that matter.
The inputs are short runs of those pieces (at most 30 tags, 12-character titles), so a few hundred
fresh examples per run reach the combinations that matter; every `make test` draws new ones.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from entbench.readers.mediawiki.xml_dump import SiteInfo
from entbench.readers.wikitext import markup as wikitext_markup
from entbench.readers.wikitext import titles as wikitext_titles
from entbench.readers.wikitext.markup import DROPPED_TAGS, strip_tags

TABLE = SiteInfo(
    dbname="enwiki",
    language="en",
    case="first-letter",
    namespaces=((0, "", "first-letter"), (6, "File", "first-letter"), (14, "Category", "first-letter")),
).namespace_table()

#: The pairs of dropped tags as first written: the content up to the first closing tag, lazily.
LAZY_PAIRED = re.compile(r"<(" + "|".join(DROPPED_TAGS) + r")(?:\s[^<>]*)?(?<!/)>.*?</\1\s*>", re.S | re.I)

TAG_PIECES = [
    "<math>",
    "</math>",
    "<ref>",
    "</ref>",
    "<REF>",
    "</Ref >",
    "<ref name=a>",
    "<ref/>",
    "<ref name=x/>",
    "<references>",
    "</references>",
    "<math>",
    "</math>",
    "<pre>",
    "</pre >",
    "</ref",
    "<br>",
    "<br/>",
    "<small>",
    "</small>",
    "<",
    ">",
    "/",
    "/>",
    "a",
    " ",
    "\n",
    "ſ",  # matches `s` under re.I: a tag name spelled with it is still that tag
    "<ſection>",
    "</section>",
]
tags = st.lists(st.sampled_from(TAG_PIECES), max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(tags)
def test_paired_tags_regex_matches_the_lazy_one(source: str) -> None:
    assert wikitext_markup._DROPPED_PAIRED.sub("", source) == LAZY_PAIRED.sub("", source)


@settings(max_examples=400, deadline=None)
@given(tags)
def test_strip_tags_skipping_passes_is_running_them_all(source: str) -> None:
    text = wikitext_markup._FORMULA.sub(wikitext_markup._formula_text, source)
    text = LAZY_PAIRED.sub("", text)
    for pattern, replacement in (
        (wikitext_markup._DROPPED_SELF_CLOSING, ""),
        (wikitext_markup._DROPPED_STRAY, ""),
        (wikitext_markup._BR, "\n"),
        (wikitext_markup._KEPT_TAG, ""),
    ):
        text = pattern.sub(replacement, text)
    assert strip_tags(source) == text


def _general(raw: str) -> wikitext_titles.LinkTarget:
    """classify_target without its plain-title shortcut."""
    saved = wikitext_titles._PLAIN_TARGET
    wikitext_titles._PLAIN_TARGET = re.compile(r"(?!)")
    try:
        return wikitext_titles.classify_target(raw, TABLE)
    finally:
        wikitext_titles._PLAIN_TARGET = saved


@settings(max_examples=800, deadline=None)
@given(st.text(max_size=12) | st.text(alphabet=" _ab:#&%<|\u00a0\u200e\u3000\x1c\x85Aé", max_size=8))
def test_plain_titles_classify_as_the_general_path_does(raw: str) -> None:
    assert wikitext_titles.classify_target(raw, TABLE) == _general(raw)


def test_the_shortcut_takes_plain_titles() -> None:
    for raw in ("Berlin Wall", "北京", "Berlin_Wall", "Berlin Wall#History", "A #b: c", "A#"):
        assert wikitext_titles._PLAIN_TARGET.fullmatch(raw), raw
        assert wikitext_titles.classify_target(raw, TABLE) == _general(raw)
    general = ("Berlin  Wall", " Berlin", "Berlin__Wall", "Category:X", "#b", "A#&amp;", "%41", "A\u00a0B")
    general += ("A_#b",)
    for raw in general:
        assert not wikitext_titles._PLAIN_TARGET.fullmatch(raw), raw
        assert wikitext_titles.classify_target(raw, TABLE) == _general(raw)
