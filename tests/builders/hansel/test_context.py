"""Context windows and Simplified conversion on real Chinese text (spec §5; Hansel §3.2)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from entbench.builders.hansel.context import context_bounds, cut_context, to_simplified
from entbench.filters.mentions import t2s
from tests.builders.hansel.support import corpus, hant_hans

NOBEL = "158"  # 诺贝尔奖, real zhwiki text with several lines


def occurrences(text: str, needle: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(needle), text)]


def line_of(text: str, pos: int) -> str:
    """The line holding `pos`, found independently of the code under test."""
    offset = 0
    for line in text.split("\n"):
        if offset <= pos < offset + len(line):
            return line
        offset += len(line) + 1
    raise AssertionError(pos)


def test_paragraph_is_the_line_of_the_mention() -> None:
    text = corpus()[NOBEL]
    starts = occurrences(text, "诺贝尔")
    assert len(starts) > 10
    for start in starts:
        ctx = cut_context(text, start, start + 3, "paragraph", paragraph_sep="\n")
        assert ctx.text == line_of(text, start).strip()
        assert ctx.mention == "诺贝尔" == ctx.text[ctx.start : ctx.end]
        assert text[ctx.doc_start : ctx.doc_start + len(ctx.text)] == ctx.text


def test_paragraphs_of_wikipedia_text_are_double_newline_separated() -> None:
    # The scan's text separates paragraphs by "\n\n"; a single "\n" stays inside a paragraph.
    text = corpus()[NOBEL]
    start = text.index("诺贝尔", 200)
    lo, hi = context_bounds(text, start, start + 3, "paragraph", paragraph_sep="\n\n")
    assert "\n\n" not in text[lo:hi]
    assert lo == 0 or text[lo - 2 : lo] == "\n\n" or text[lo - 1].isspace()
    assert hi == len(text) or text[hi:].startswith("\n\n") or text[hi].isspace()


def split_sentences(line: str) -> list[tuple[int, int]]:
    """Sentence spans of a line, computed with a split rather than a scan."""
    pieces = re.split(r"((?:[。！？!?]+)[”’」』）)》〉\"']*)", line)
    spans, pos = [], 0
    for i in range(0, len(pieces), 2):
        piece = pieces[i] + (pieces[i + 1] if i + 1 < len(pieces) else "")
        if piece:
            spans.append((pos, pos + len(piece)))
        pos += len(piece)
    return spans


def test_sentence_is_the_sentence_holding_the_mention() -> None:
    checked = 0
    for text in corpus().values():
        for start in occurrences(text, "的")[:40]:
            lo, hi = context_bounds(text, start, start + 1, "sentence", paragraph_sep="\n")
            line_start = text.rfind("\n", 0, start) + 1
            line = line_of(text, start)
            s, e = next(
                (a, b) for a, b in split_sentences(line) if a <= start - line_start < b
            )  # the sentence holding the mention
            expected = line[s:e].strip()
            assert text[lo:hi] == expected
            checked += 1
    assert checked > 300


def test_sentence_spans_every_sentence_the_mention_touches() -> None:
    text = corpus()[NOBEL]
    end_of_sentence = text.index("。") + 1
    start = end_of_sentence - 3
    lo, hi = context_bounds(text, start, end_of_sentence + 2, "sentence", paragraph_sep="\n")
    assert lo <= start and hi >= end_of_sentence + 2
    assert text[lo:hi].count("。") >= 1


def test_window_is_clipped_to_the_document() -> None:
    text = corpus()[NOBEL]
    lo, hi = context_bounds(text, 5, 8, "window", window=20)
    assert lo == 0 and hi <= 28
    middle = len(text) // 2
    lo, hi = context_bounds(text, middle, middle + 2, "window", window=20)
    assert middle - 20 <= lo <= middle and middle + 2 <= hi <= middle + 22
    lo, hi = context_bounds(text, len(text) - 2, len(text), "window", window=20)
    assert hi == len(text)


def test_edges_are_trimmed_but_never_into_the_mention() -> None:
    text = "\n  " + corpus()[NOBEL][:40] + "  \n"
    lo, hi = context_bounds(text, 3, 6, "window", window=100)
    assert (lo, hi) == (3, len(text) - 3)
    lo, hi = context_bounds(text, 0, 2, "window", window=100)  # the mention is whitespace itself
    assert lo == 0


def test_conversion_keeps_length_and_is_a_fixed_point_on_real_traditional_text() -> None:
    for hant, hans in hant_hans():
        simplified, converged = to_simplified(hant)
        assert converged
        assert len(simplified) == len(hant) == len(hans)
        assert t2s(simplified) == simplified
    agree = sum(
        a == b for hant, hans in hant_hans() for a, b in zip(to_simplified(hant)[0], hans, strict=True)
    )
    assert agree / sum(len(hans) for _, hans in hant_hans()) > 0.99


def test_cut_context_converts_the_traditional_mention_in_place() -> None:
    hant, hans = hant_hans()[1]  # 大多數的加長型禮車則是租車公司的財產。
    start = hant.index("禮車")
    ctx = cut_context(hant, start, start + 2, "sentence")
    assert ctx.text == hans and ctx.mention == "礼车"
    assert ctx.text[ctx.start : ctx.end] == ctx.mention


@settings(max_examples=200, deadline=None)
@given(doc=st.sampled_from(sorted(corpus())), data=st.data())
def test_any_span_of_real_text(doc: str, data: st.DataObject) -> None:
    text = corpus()[doc]
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start, min(len(text), start + 12)))
    mode = data.draw(st.sampled_from(["paragraph", "sentence", "window"]))
    ctx = cut_context(text, start, end, mode, paragraph_sep="\n", window=30)
    assert ctx.doc_start <= start and ctx.doc_start + len(ctx.text) >= end
    assert ctx.text[ctx.start : ctx.end] == ctx.mention
    assert len(ctx.mention) == end - start
    assert t2s(ctx.text) == ctx.text
    if mode != "window" and "\n" not in text[start:end]:
        assert "\n" not in ctx.text


#: A real paragraph of enwiki's Anarchism (2017; fixtures/hansel-en), as the scan renders it.
ANARCHISM = (
    "Numerous heads of state were assassinated between 1881 and 1914 by members of the anarchist "
    "movement. For example, U.S. President McKinley's assassin Leon Czolgosz claimed to have been "
    "influenced by anarchist and feminist Emma Goldman. Bombings were associated in the media with "
    "anarchists because international terrorism arose during this time period with the widespread "
    "distribution of dynamite. This image remains to this day."
)


def test_english_sentences_are_spacys_not_the_chinese_rule() -> None:
    """On an English wiki a sentence ends at `.` too, but not inside "U.S."; the Chinese rule
    (。！？!?) would have taken the whole paragraph."""
    start = ANARCHISM.index("Leon Czolgosz")
    ctx = cut_context(ANARCHISM, start, start + 13, "sentence", converter="none", language="en")
    assert ctx.text == (
        "For example, U.S. President McKinley's assassin Leon Czolgosz claimed to have been influenced "
        "by anarchist and feminist Emma Goldman."
    )
    assert ctx.mention == "Leon Czolgosz" and ctx.doc_start == ANARCHISM.index("For example")
    assert context_bounds(ANARCHISM, start, start + 13, "sentence") == (0, len(ANARCHISM))  # zh rule
    # a mention across two sentences takes both
    across = ANARCHISM.index("movement. For")
    lo, hi = context_bounds(ANARCHISM, across, across + 13, "sentence", language="en")
    assert (lo, ANARCHISM[hi - 13 : hi]) == (0, "Emma Goldman.")
    last = ANARCHISM.index("this day")
    assert context_bounds(ANARCHISM, last, last + 8, "sentence", language="en") == (
        ANARCHISM.index("This image"),
        len(ANARCHISM),
    )


def test_japanese_and_chinese_variants_keep_the_full_stop_rule() -> None:
    text = corpus()[NOBEL]
    for start in occurrences(text, "诺贝尔")[:10]:
        zh = context_bounds(text, start, start + 3, "sentence", paragraph_sep="\n")
        assert text[zh[0] : zh[1]].count("。") <= 1
        for language in ("ja", "zh-yue", "zh-hans"):
            bounds = context_bounds(text, start, start + 3, "sentence", paragraph_sep="\n", language=language)
            assert bounds == zh


def test_converter_none_is_the_text_itself() -> None:
    hant, _ = hant_hans()[1]
    assert to_simplified(hant, "none") == (hant, True)
    start = hant.index("禮車")
    assert cut_context(hant, start, start + 2, "sentence", converter="none").mention == "禮車"


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown context mode"):
        context_bounds("abc", 0, 1, "document")
    with pytest.raises(ValueError, match="outside"):
        context_bounds("abc", 2, 5, "window")
