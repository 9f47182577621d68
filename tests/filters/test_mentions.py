"""Mention normalisation and Traditional->Simplified on real text (UD Chinese GSD pairs, zhwiki pages)."""

from __future__ import annotations

import functools
from pathlib import Path

from entbench.builders.wikipedia_scan import WikipediaScanParams, render_config
from entbench.filters.mentions import MentionNormalizer, t2s, t2s_chars, t2s_many
from entbench.readers.mediawiki_xml import read_dump
from entbench.readers.wikitext import render

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PAIRS = FIXTURES / "zh-text" / "ud-zh-gsd.dev.hant-hans.tsv"


@functools.cache
def pairs() -> list[tuple[str, str]]:
    lines = PAIRS.read_text(encoding="utf-8").splitlines()[1:]
    return [(hant, hans) for _, hant, hans in (line.split("\t") for line in lines)]


def char_accuracy(convert: object) -> float:
    assert callable(convert)
    right = total = 0
    for hant, hans in pairs():
        out = convert(hant)
        assert len(out) == len(hant) == len(hans)  # code points preserved
        right += sum(a == b for a, b in zip(out, hans, strict=True))
        total += len(hans)
    return right / total


def test_t2s_against_real_simplified_pairs() -> None:
    assert len(pairs()) == 500
    unconverted = sum(a == b for hant, hans in pairs() for a, b in zip(hant, hans, strict=True)) / sum(
        len(h) for _, h in pairs()
    )
    phrase = char_accuracy(t2s)
    chars = char_accuracy(t2s_chars)
    # Measured on the 500 UD GSD dev pairs (20,022 characters): the numbers go in the README.
    assert unconverted < 0.85
    assert phrase >= 0.994
    assert chars >= 0.994
    assert t2s_many([h for h, _ in pairs()]) == [t2s(h) for h, _ in pairs()]


def test_t2s_keeps_link_offsets_on_real_pages() -> None:
    site, pages = read_dump(str(FIXTURES / "wikipedia" / "zhwiki-201807.wiki-dump-reader.part1.xml.bz2"))
    config = render_config(WikipediaScanParams(), site)
    checked = 0
    for page in pages:
        rendered = render(page.text, config)
        converted = t2s(rendered.text)
        assert len(converted) == len(rendered.text)
        for link in rendered.links:
            assert converted[link.start : link.end] == t2s(link.anchor)
            checked += 1
    assert checked > 1500
    assert t2s("文學") == "文学" and t2s("方針與指引") == "方针与指引"


def test_hansel_normalisation() -> None:
    norm = MentionNormalizer("hansel", chinese=True)
    assert norm("  澳大利亞網球公開賽 ") == "澳大利亚网球公开赛"
    assert norm("ＡＴＰ\u3000男單") == "ATP 男单"  # NFKC folds full-width letters and the ideographic space
    assert norm("New\n  York") == "New York"
    assert norm("iPhone") == "iPhone"  # case kept
    assert MentionNormalizer("hansel")("文學") == "文學"  # no conversion outside zh


def test_mgenre_normalisation() -> None:
    norm = MentionNormalizer("mgenre", chinese=True)
    assert norm("丹尼爾•馬克．內斯特") == "丹尼尔·马克·内斯特"
    assert norm("乾隆") == "干隆"  # character by character, as HanziConv (OpenCC's phrases give 乾隆)
    assert t2s("乾隆") == "乾隆"
    assert norm("Café") == "Cafe\u0301"  # NFKD
