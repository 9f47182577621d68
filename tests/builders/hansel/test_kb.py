"""The pure parts of the entity KB (Hansel §3.3, §4.1): first paragraphs, article URLs, text status."""

from __future__ import annotations

import pytest

from entbench.builders.hansel.kb import article_url, first_paragraph, text_status, wikipedia_host
from tests.builders.hansel.support import corpus


def test_first_paragraph_is_the_text_up_to_the_first_blank_line() -> None:
    text = "柏林（）是德意志聯邦共和國首都。\n\n柏林是欧盟區內人口第2多的城市。\n\n历史"
    assert first_paragraph(text) == "柏林（）是德意志聯邦共和國首都。"
    assert first_paragraph("  只有一段。\n") == "只有一段。"
    assert first_paragraph("") == ""
    # A line break inside a paragraph stays (only a blank line separates paragraphs).
    assert first_paragraph("第一行\n第二行\n\n下一段") == "第一行\n第二行"


def test_first_paragraph_on_real_zhwiki_text() -> None:
    # The corpus texts are real zhwiki plain text whose lines are paragraphs; joined by blank
    # lines they have the Wikipedia scan's layout.
    for text in corpus().values():
        lines = [line.strip() for line in text.split("\n") if line.strip()]
        assert first_paragraph("\n\n".join(lines)) == lines[0]


@pytest.mark.parametrize(
    ("site", "title", "url"),
    [
        ("zhwiki", "柏林", "https://zh.wikipedia.org/wiki/%E6%9F%8F%E6%9E%97"),
        ("zhwiki", "P/NP问题", "https://zh.wikipedia.org/wiki/P/NP%E9%97%AE%E9%A2%98"),
        (
            "zhwiki",
            "莱比锡广场 (柏林)",
            "https://zh.wikipedia.org/wiki/%E8%8E%B1%E6%AF%94%E9%94%A1%E5%B9%BF%E5%9C%BA_(%E6%9F%8F%E6%9E%97)",
        ),
        ("enwiki", "AC/DC", "https://en.wikipedia.org/wiki/AC/DC"),
        ("enwiki", "Who's Who?", "https://en.wikipedia.org/wiki/Who%27s_Who%3F"),
        ("zh_yuewiki", "香港", "https://zh-yue.wikipedia.org/wiki/%E9%A6%99%E6%B8%AF"),
    ],
)
def test_article_urls_are_written_as_mediawiki_writes_them(site: str, title: str, url: str) -> None:
    assert article_url(site, title) == url


@pytest.mark.parametrize("site", ["wikidatawiki", "commonswiki", "zh.wiki", "enwikiquote", ""])
def test_only_wikipedias_have_article_urls(site: str) -> None:
    with pytest.raises(ValueError, match="Wikipedia"):
        wikipedia_host(site)


def test_text_status_names_the_first_reason() -> None:
    assert text_status(False, False, False, "") == "no_sitelink"
    assert text_status(True, False, False, "") == "page_not_in_dump"
    assert text_status(True, True, True, "") == "page_is_redirect"
    assert text_status(True, True, False, "") == "page_without_text"
    assert text_status(True, True, False, "文学") == "page"
