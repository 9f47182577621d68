"""Exact alias matching for the few-shot slice: offsets, normalisation, longest on overlap (Hansel app. A)."""

from __future__ import annotations

import unicodedata
from array import array

import ahocorasick
from hypothesis import given
from hypothesis import strategies as st

from entbench.builders.alias.matching import (
    build_automaton,
    build_matcher,
    find_occurrences,
    longest_first,
    match,
    normalize_with_offsets,
    segments,
)
from entbench.filters.mentions import MentionNormalizer
from tests.builders.hansel.support import corpus

HANSEL = MentionNormalizer("hansel", chinese=True)


def brute_force(text: str, keys: list[str], normalizer: MentionNormalizer) -> list[tuple[int, int, str]]:
    """Every occurrence by str.find on the normalised text, then longest first, by exhaustive search."""
    norm, origin = normalize_with_offsets(normalizer, text)
    found = []
    for key in keys:
        pos = norm.find(key)
        while pos >= 0:
            found.append((pos, pos + len(key), key))
            pos = norm.find(key, pos + 1)
    kept: list[tuple[int, int, str]] = []
    for span in sorted(found, key=lambda s: (s[0] - s[1], s[0], s[2])):
        if all(span[1] <= a or span[0] >= b for a, b, _ in kept):
            kept.append(span)
    return sorted((origin[a], origin[b - 1] + 1, k) for a, b, k in kept)


def test_longest_wins_over_leftmost() -> None:
    # "AB" starts first but "BCD" is longer: the paper favours long mentions on overlap.
    keys = ["AB", "BCD", "D"]
    kept = longest_first([(0, 2, 0), (1, 4, 1), (3, 4, 2)])
    assert kept == [(1, 4, 1)]
    assert leftmost_longest(keys, "ABCD") == ["AB", "D"]  # mention_stats' rule differs
    automaton = build_automaton(keys)
    occ = find_occurrences(automaton, keys, MentionNormalizer("hansel"), "ABCD")
    assert [(o.start, o.end, keys[o.key]) for o in occ] == [(1, 4, "BCD")]


def leftmost_longest(keys: list[str], text: str, links: tuple[tuple[int, int], ...] = ()) -> list[str]:
    """`match` over `text` with link anchors at `links`: the keys found, unlinked then linked."""
    linked, unlinked = array("q"), array("q")
    match(build_matcher(keys), text, segments(len(text), links), linked, unlinked)
    return [keys[i] for i in unlinked] + [keys[i] for i in linked]


def brute_leftmost_longest(keys: list[str], text: str) -> list[str]:
    """Scanning left to right: the longest key starting here, then on after it; else one step on."""
    found, pos = [], 0
    while pos < len(text):
        key = max((k for k in keys if k and text.startswith(k, pos)), key=len, default="")
        if key:
            found.append(key)
        pos += len(key) or 1
    return found


def test_leftmost_longest_finds_a_key_after_an_unfinished_longer_one() -> None:
    # pyahocorasick's `iter_long` (mention_stats' matcher before) reports nothing here: having
    # followed "cdd" towards "cdda" it skips the "d"s it passed.
    assert leftmost_longest(["cdda", "d"], "cdd") == ["d", "d"]
    assert leftmost_longest(["长江", "江", "长江三峡大坝"], "长江三峡的江") == ["长江", "江"]


def test_leftmost_longest_matches_inside_each_segment_only() -> None:
    keys = ["ab", "b", "bc"]
    # "abc" with "bc" an anchor: unlinked "a" finds nothing, the anchor finds "bc"
    assert leftmost_longest(keys, "abc", ((1, 3),)) == ["bc"]
    assert leftmost_longest(keys, "abc") == ["ab"]
    assert leftmost_longest(["", "a"], "aa") == ["a", "a"]  # an empty key never matches


@given(
    st.lists(st.text(alphabet="abcd", min_size=1, max_size=5), min_size=1, max_size=8, unique=True),
    st.text(alphabet="abcd", max_size=30),
)
def test_leftmost_longest_agrees_with_brute_force(keys: list[str], text: str) -> None:
    assert leftmost_longest(keys, text) == brute_leftmost_longest(keys, text)


def test_ties_go_to_the_leftmost() -> None:
    assert longest_first([(1, 3, 0), (0, 2, 1), (2, 4, 2)]) == [(0, 2, 1), (2, 4, 2)]


def test_real_text_matches_agree_with_brute_force() -> None:
    text = corpus()["299"]  # 计算语言学
    keys = sorted(
        {"计算", "计算语言学", "语言", "语言学", "计算机", "人工智能", "自然语言", "自然语言处理", "学"}
    )
    automaton = build_automaton(keys)
    occ = find_occurrences(automaton, keys, HANSEL, text)
    got = [(o.start, o.end, keys[o.key]) for o in occ]
    assert got == brute_force(text, keys, HANSEL)
    assert any(k == "计算语言学" for _, _, k in got) and any(k == "语言" for _, _, k in got)
    # inside a longer match, the shorter keys are not reported
    long_spans = [(a, b) for a, b, k in got if k == "计算语言学"]
    assert not any(a < s < b or a < e < b for s, e, k in got for a, b in long_spans if k != "计算语言学")
    for start, end, key in got:
        assert text[start:end] == key  # this text is Simplified and NFKC-stable at the matches


def test_offsets_survive_normalisation_that_changes_length() -> None:
    # Real lines with fullwidth digits (NFKC ４ -> 4), an ellipsis (… -> ...) and ⑴ (-> (1)).
    cases = [
        ("137", "4名美军", "４名美军"),
        ("299", "......从计算", "……从计算"),
        ("397", "(1)永久的人口", "⑴永久的人口"),
    ]
    for doc, key, surface in cases:
        text = corpus()[doc]
        norm, origin = normalize_with_offsets(HANSEL, text)
        assert len(origin) == len(norm) + 1 and origin[-1] == len(text)
        for i, ch in enumerate(norm):
            raw = text[origin[i]]
            assert ch == " " if raw.isspace() else ch in unicodedata.normalize("NFKC", raw)
        automaton = build_automaton([key])
        (occ,) = find_occurrences(automaton, [key], HANSEL, text)
        assert text[occ.start : occ.end] == surface


def test_traditional_text_matches_simplified_keys() -> None:
    keys = ["加长型礼车", "公司"]
    text = "大多數的加長型禮車則是租車公司的財產。"  # UD Chinese GSD dev-s2 (real)
    occ = find_occurrences(build_automaton(keys), keys, HANSEL, text)
    assert [(text[o.start : o.end], keys[o.key]) for o in occ] == [
        ("加長型禮車", "加长型礼车"),
        ("公司", "公司"),
    ]


def test_whitespace_is_one_space_per_character() -> None:
    keys = ["Linux 内核"]
    text = "Linux  内核 与 Linux 内核"
    occ = find_occurrences(build_automaton(keys), keys, HANSEL, text)
    second = text.index("Linux 内核")
    assert [(o.start, o.end) for o in occ] == [(second, second + len(keys[0]))]


def test_empty_inputs() -> None:
    assert find_occurrences(build_automaton([]), [], HANSEL, "文本") == []
    assert find_occurrences(build_automaton(["文本"]), ["文本"], HANSEL, "") == []
    assert longest_first([]) == []
    assert isinstance(build_automaton(["a"]), ahocorasick.Automaton)
