"""The title-matching ladder: exact, redirect, casefold, fuzzy (rapidfuzz), unmatched with the near miss."""

from __future__ import annotations

import pytest
from rapidfuzz import fuzz, utils

from entbench.builders.enteval.titles import TitleMatcher, TitleTarget, title_key

ARTICLES = [("Abraham Lincoln", 307), ("Academy Awards", 324), ("Ayn Rand", 339), ("Aristotle", 308)]
EXACT = {
    "Abraham Lincoln": TitleTarget(307, "Abraham Lincoln", 0),
    "Academy Awards": TitleTarget(324, "Academy Awards", 0),
    "Ayn Rand": TitleTarget(339, "Ayn Rand", 0),
    "AynRand": TitleTarget(339, "Ayn Rand", 1),  # a redirect in the 2016 dump
    "Aristotle": TitleTarget(308, "Aristotle", 0),
}


@pytest.fixture
def matcher() -> TitleMatcher:
    return TitleMatcher(EXACT, ARTICLES, min_score=90.0)


def test_title_key_is_mediawiki_normalisation() -> None:
    assert title_key("ayn_Rand ") == "Ayn_Rand".replace("_", " ")
    assert title_key("Queen_(chess)") == "Queen (chess)"
    assert title_key("S%C3%A3o_Paulo") == "São Paulo"


def test_the_ladder(matcher: TitleMatcher) -> None:
    exact = matcher.match("Ayn_Rand")
    assert (exact.method, exact.page_id, exact.score) == ("exact", 339, 100.0)
    redirect = matcher.match("AynRand")
    assert (redirect.method, redirect.page_id, redirect.title) == ("redirect", 339, "Ayn Rand")
    folded = matcher.match("academy awards")
    assert (folded.method, folded.page_id) == ("casefold", 324)
    fuzzy = matcher.match("Abraham Lincon")
    expected = fuzz.ratio("Abraham Lincon", "Abraham Lincoln", processor=utils.default_process)
    assert (fuzzy.method, fuzzy.page_id, fuzzy.score) == ("fuzzy", 307, expected)
    assert 90.0 <= fuzzy.score < 100.0
    missing = matcher.match("Steve Jobs")
    assert (missing.method, missing.page_id, missing.title) == ("unmatched", None, None)
    assert missing.best_title in {t for t, _ in ARTICLES} and missing.best_score is not None
    assert missing.best_score < 90.0 and not missing.matched


def test_fuzzy_ties_go_to_the_first_title_in_sorted_order() -> None:
    matcher = TitleMatcher({}, [("Bbc", 2), ("Abc", 1)], min_score=50.0)
    first = matcher.match("Xbc")
    assert first.best_title == "Abc"  # equal scores: sorted order decides, not input order
    again = TitleMatcher({}, [("Abc", 1), ("Bbc", 2)], min_score=50.0).match("Xbc")
    assert first == again


def test_casefold_collisions_take_the_lowest_page_id() -> None:
    matcher = TitleMatcher({}, [("ABBA", 9), ("Abba", 3)], min_score=100.0)
    assert matcher.match("abba").page_id == 3
