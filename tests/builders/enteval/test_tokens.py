"""Word tokens and sentences (spaCy blank English + sentencizer) as the loaders need them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from entbench.builders.enteval.tokens import Tokenizer, safe_words


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer()


# Text made of words, punctuation and every kind of whitespace str.split() cuts on.
TEXT = st.lists(
    st.sampled_from(
        [
            "Berlin",
            "U.S.",
            "co-author",
            "it's",
            "(",
            ")",
            ".",
            ",",
            "384–322",
            "\xa0",
            " ",
            "  ",
            "\n",
            "\t",
            "\u2028",
            "\x1c",
            "BC",
            "Dr.",
            "naïve",
            "don't",
            "!",
            "?",
            '"q"',
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=60, deadline=None)
@given(text=TEXT)
def test_words_survive_the_loaders_split(text: str) -> None:
    tokenizer = Tokenizer.shared()
    tokens = tokenizer.tokens(text)
    words = [t.text for t in tokens]
    assert " ".join(words).split() == words
    assert all(text[t.start : t.end] == t.text for t in tokens)
    # Every non-space character is in exactly one token.
    covered = sorted(i for t in tokens for i in range(t.start, t.end))
    assert covered == [i for i, c in enumerate(text) if not c.isspace()]


@settings(max_examples=40, deadline=None)
@given(text=TEXT, n=st.integers(min_value=1, max_value=12))
def test_first_words_is_a_prefix_of_the_full_tokenisation(text: str, n: int) -> None:
    tokenizer = Tokenizer.shared()
    assert tokenizer.first_words(text, n) == tokenizer.words(text)[:n]


def test_first_words_on_a_long_text_cuts_at_whitespace(tokenizer: Tokenizer) -> None:
    text = " ".join(f"Sentence {i} is about the U.S.-based firm's (early) plans." for i in range(200))
    full = tokenizer.words(text)
    assert len(full) > 2000
    for n in (1, 99, 100, 101, 1000):
        assert tokenizer.first_words(text, n) == full[:n]


def test_sentences_follow_the_sentencizer(tokenizer: Tokenizer) -> None:
    text = "Berlin is a city. It is large!  Is it old? Yes."
    [analysis] = list(tokenizer.analyse([text]))
    assert [text[a:b] for a, b in analysis.sentences] == [
        "Berlin is a city.",
        "It is large!",
        " Is it old?",  # the sentencizer keeps the extra space with the next sentence
        "Yes.",
    ]
    assert [t.text for t in analysis.tokens][:5] == ["Berlin", "is", "a", "city", "."]


def test_safe_words_cut_words_holding_whitespace() -> None:
    assert safe_words(["New York", "", "a\u00a0b", "c"]) == ["New", "York", "a", "b", "c"]
